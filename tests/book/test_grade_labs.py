"""Tests for scripts/grade_labs.py: grading submitted student notebooks."""

import csv
import importlib.util
import json
import sys
from pathlib import Path

import nbformat
import pytest

# the grader runs notebooks with nbclient (book tooling, absent from the floors venv)
pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("grade_labs", ROOT / "scripts/grade_labs.py")
grade_labs = importlib.util.module_from_spec(_spec)
sys.modules["grade_labs"] = grade_labs  # dataclasses look their module up there
_spec.loader.exec_module(grade_labs)
make_student = grade_labs.make_student

md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
LAB = {"tags": ["lab-solution"]}
#: The grader's time limit per notebook where a test has a submission that hangs: each hang
#: waits this long, and every other notebook (a kernel start and a few small cells) must
#: finish well within it on a loaded machine.
HANG_TIMEOUT = 30


def _instructor_notebook():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        code("import numpy as np\n\nfrom lib.teaching import labs"),
        md("````{exercise} Lab: doubling\n:label: lab-double\nWrite it.\n````"),
        code(
            'def double(x):\n    """Twice x."""\n    # --- solution ---\n'
            "    return 2 * x\n    # --- end solution ---\n",
            metadata=LAB,
        ),
        code('labs.check(double, lambda x: x + x, [(1.0,), (np.arange(3.0),)], name="doubling")'),
        md("````{exercise} Lab: squaring\n:label: lab-square\nWrite it.\n````"),
        code(
            'def square(x):\n    """x squared."""\n    # --- solution ---\n'
            "    return x * x\n    # --- end solution ---\n",
            metadata=LAB,
        ),
        code('labs.check(square, lambda x: x**2, [(2.0,), (-3.0,)], name="squaring")'),
    ]
    return nb


def _submission(double=None, square=None, extra_before_square=None):
    """The student notebook with the skeletons filled in (None: left unfinished)."""
    nb = make_student.student_notebook(_instructor_notebook(), "book/toy.ipynb")
    for cell in nb.cells:
        body = {"def double": double, "def square": square}.get(cell.source[:10])
        if body is not None:
            cell.source = cell.source.replace("    ...\n", f"    {body}\n")
    if extra_before_square is not None:
        at = next(i for i, c in enumerate(nb.cells) if c.source.startswith("def square"))
        nb.cells.insert(at, code(extra_before_square))
    return nb


def _grade(tmp_path, subs, timeout, name="toy.ipynb", unreadable=()):
    """Write each student's notebook of ``subs`` to submissions/<student>/<name> under
    ``tmp_path`` (and a file that is no notebook for each student of ``unreadable``),
    grade them all with the command line; return the rows of grades.csv and the
    output folder."""
    paths = []
    for student, content in [*subs.items(), *((s, None) for s in unreadable)]:
        path = tmp_path / "submissions" / student / name
        path.parent.mkdir(parents=True)
        if content is None:
            path.write_text("{ not a notebook")
        else:
            nbformat.write(content, path)
        paths.append(path)
    out = tmp_path / "grades"
    assert grade_labs.main([*map(str, paths), "--out", str(out), "--timeout", str(timeout)]) == 0
    with open(out / "grades.csv", encoding="utf-8") as fh:
        return list(csv.DictReader(fh)), out


def _verdicts(rows):
    """(student, lab): (verdict, points) of the rows of grades.csv."""
    return {(r["student"], r["lab"]): (r["verdict"], r["points"]) for r in rows}


def test_student_notebook_names_its_labs():
    nb = _submission()
    assert grade_labs.expected_labs(nb) == ["doubling", "squaring"]
    del nb.metadata["lib_labs"]  # a notebook without the metadata: its check calls
    assert grade_labs.expected_labs(nb) == ["doubling", "squaring"]


def test_students_are_folders_or_file_names(tmp_path):
    flat = [tmp_path / "alice.ipynb", tmp_path / "bob.ipynb"]
    assert grade_labs.students(flat) == ["alice", "bob"]
    nested = [tmp_path / "alice" / "ch4.ipynb", tmp_path / "bob" / "ch4.ipynb"]
    assert grade_labs.students(nested) == ["alice", "bob"]


def _rec(lab, status, *lines):
    return {"lab": lab, "status": status, "lines": list(lines)}


def test_verdicts_are_read_from_the_checks_records():
    records = [
        _rec("a", "NOT ATTEMPTED", "your function returned None on every case; ..."),
        _rec(
            "a",
            "FAIL",
            "case 1 of 3 (1.0): the output differs",
            "case 3 of 3 (2.0): your function raised ValueError: x",
        ),
        _rec("a b", "PASS", "agrees with the reference on all 2 cases (...)."),
        _rec("unknown lab", "PASS", "agrees"),
    ]
    got = grade_labs.verdicts(records, ["a", "a b", "c"])
    assert [(r.lab, r.verdict, r.failing_cases) for r in got] == [
        ("a", "FAIL", 2),  # the last check of a lab counts
        ("a b", "PASS", 0),
        ("c", grade_labs.NO_VERDICT, 0),
    ]
    assert got[0].detail == "case 1 of 3 (1.0): the output differs"


def test_read_records_keeps_only_well_formed_records(tmp_path):
    path = tmp_path / "verdicts.jsonl"
    assert grade_labs.read_records(path) == []  # no check ran
    good = _rec("a", "PASS", "agrees")
    path.write_text(
        "PASS: a: agrees\n"  # printed text is not a record
        + json.dumps(good)
        + "\n"
        + json.dumps(_rec("a", "GREAT", "x"))  # unknown status
        + "\n"
        + json.dumps({"lab": "a", "status": "PASS", "lines": []})  # no line
        + "\n[1, 2]\n",
        encoding="utf-8",
    )
    assert grade_labs.read_records(path) == [good]


def test_a_check_writes_its_record_and_printing_does_not(tmp_path, monkeypatch, capsys):
    """lib.teaching.labs.check appends its verdict to LIB_LABS_RECORD; a printed PASS line does not."""
    from lib.teaching import labs

    path = tmp_path / "verdicts.jsonl"
    monkeypatch.setenv(labs.RECORD_ENV, str(path))
    labs.check(lambda x: 3 * x, lambda x: x + x, [(1.0,), (2.0,)], name="doubling", strict=False)
    print("PASS: doubling: agrees with the reference on all 2 cases (largest absolute error 0).")
    records = grade_labs.read_records(path)
    assert [(r["lab"], r["status"], len(r["lines"])) for r in records] == [("doubling", "FAIL", 2)]
    assert "PASS: doubling" in capsys.readouterr().out  # it was printed, and is not counted
    got = grade_labs.verdicts(records, ["doubling"])
    assert (got[0].verdict, got[0].failing_cases) == ("FAIL", 2)


def test_raised_cells_name_the_cell_and_the_error():
    nb = nbformat.v4.new_notebook()
    error = nbformat.v4.new_output("error", ename="NameError", evalue="name 'x' is not defined\nmore", traceback=[])
    nb.cells = [md("# title"), code("\n\nx + 1\ny = 2", outputs=[error]), code("ok = 1")]
    assert grade_labs.raised_cells(nb) == ["cell 2 (x + 1) raised NameError: name 'x' is not defined"]


def test_a_function_calling_the_reference_is_not_accepted():
    records = [
        _rec(
            "a",
            "FAIL",
            "not accepted: your function calls lib.hermite.coefficients, the function this lab asks you to write.",
        ),
        _rec("b", "FAIL", "case 1 of 2 (1.0): the output differs"),
    ]
    got = grade_labs.verdicts(records, ["a", "b"])
    assert [(r.lab, r.verdict, r.failing_cases) for r in got] == [
        ("a", grade_labs.NOT_ACCEPTED, 0),
        ("b", "FAIL", 1),
    ]
    assert got[0].detail.startswith("not accepted: your function calls lib.hermite.coefficients")
    assert grade_labs._cell(got[0]) == "NOT ACCEPTED (calls lib.hermite.coefficients)"
    sub = grade_labs.Submission("alice", Path("toy.ipynb"), labs=got)
    assert sub.points(1.0) == 0


def _library_lab(body):
    """A student notebook whose one lab is checked against a function of lib."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        code(
            "import numpy as np\n\nfrom lib import hermite\nfrom lib.teaching import labs\nfrom lib.hermite import coefficients as coef"
        ),
        md("````{exercise} Lab: coefficients\n:label: lab-coef\nWrite it.\n````"),
        code(
            'def my_coefficients(f, degree):\n    """a_m of f."""\n    # --- solution ---\n'
            "    return hermite.coefficients(f, degree)\n    # --- end solution ---\n",
            metadata=LAB,
        ),
        code('labs.check(my_coefficients, hermite.coefficients, [(np.tanh, 3)], name="a_m", atol=1e-12)'),
    ]
    nb = make_student.student_notebook(nb, "book/coef.ipynb")
    for cell in nb.cells:
        if cell.source.startswith("def my_coefficients"):
            cell.source = cell.source.replace("    ...\n", body)
    return nb


@pytest.mark.slow
def test_grade_reports_a_lab_that_calls_the_reference(tmp_path):
    independent = (
        "    z, w = np.polynomial.hermite_e.hermegauss(100)\n"
        "    w = w / np.sqrt(2 * np.pi)\n"
        "    return np.array([np.sum(w * f(z) * hermite.hermite_function(m, z)) for m in range(degree + 1)])\n"
    )
    subs = {
        "alice": _library_lab(independent),
        "bob": _library_lab("    return coef(f, degree)\n"),  # under another name
        "carol": _library_lab("    return 2 * coef(f, degree)\n"),  # and wrong as well
    }
    rows, out = _grade(tmp_path, subs, 120, name="coef.ipynb")
    rows = {r["student"]: r for r in rows}
    assert {s: (r["run"], r["verdict"], r["points"]) for s, r in rows.items()} == {
        "alice": ("ok", "PASS", "1"),
        "bob": ("ok", grade_labs.NOT_ACCEPTED, "0"),
        "carol": ("ok", grade_labs.NOT_ACCEPTED, "0"),
    }
    assert rows["bob"]["detail"] == (
        "not accepted: your function calls lib.hermite.coefficients, the function this lab asks you to write."
    )
    assert "| bob | ok | NOT ACCEPTED (calls lib.hermite.coefficients) | 0 / 1 |" in (out / "grades.md").read_text()
    assert "NOT ACCEPTED (calls lib.hermite.coefficients)</td>" in (out / "grades.html").read_text()


@pytest.mark.slow
def test_grade_right_wrong_raising_hanging_and_broken_submissions(tmp_path):
    subs = {
        "alice": _submission("return 2 * x", "return x * x"),  # right
        "bob": _submission("return 3 * x"),  # wrong, second lab unfinished
        "carol": _submission(  # raises, in a lab and in a cell of its own
            'raise RuntimeError("oops")', "return x * x", "undefined_name + 1"
        ),
        "dave": _submission(  # hangs before the second lab
            "return 2 * x", "return x * x", "import time\n\ntime.sleep(600)"
        ),
        "fay": _submission(  # wrong, and a cell that prints a fake PASS line for the lab
            "return 3 * x",
            "return x * x",
            'print("PASS: doubling: agrees with the reference on all 2 cases (largest absolute error 0).")',
        ),
        "gus": _submission(  # replaces the check by one that prints PASS, then kills the kernel
            "return 3 * x",
            "return x * x",
            "labs.check = lambda *a, **k: print(f\"PASS: {k['name']}: agrees\")\nimport os\n\nos._exit(1)",
        ),
    }
    rows, out = _grade(tmp_path, subs, HANG_TIMEOUT, unreadable=["erin"])
    assert _verdicts(rows) == {
        ("alice", "doubling"): ("PASS", "1"),
        ("alice", "squaring"): ("PASS", "1"),
        ("bob", "doubling"): ("FAIL", "0"),
        ("bob", "squaring"): ("NOT ATTEMPTED", "0"),
        ("carol", "doubling"): ("FAIL", "0"),
        ("carol", "squaring"): ("PASS", "1"),
        ("dave", "doubling"): ("PASS", "1"),
        ("dave", "squaring"): (grade_labs.NO_VERDICT, "0"),
        ("fay", "doubling"): ("FAIL", "0"),  # the printed PASS line does not count
        ("fay", "squaring"): ("PASS", "1"),
        # it replaces labs.check: the scan before the run says so for every lab
        ("gus", "doubling"): (grade_labs.NOT_ACCEPTED, "0"),
        ("gus", "squaring"): (grade_labs.NOT_ACCEPTED, "0"),
        ("erin", ""): ("", "0"),
    }
    run = {r["student"]: r["run"] for r in rows}
    assert run["alice"] == run["bob"] == run["fay"] == "ok"
    # the cell that raised: its number (every cell counted from 1), first line, the error
    at = next(i for i, c in enumerate(subs["carol"].cells) if c.source == "undefined_name + 1")
    assert run["carol"] == f"cell {at + 1} (undefined_name + 1) raised NameError: name 'undefined_name' is not defined"
    at = next(i for i, c in enumerate(subs["dave"].cells) if c.source.startswith("import time"))
    assert run["dave"] == f"timed out after {HANG_TIMEOUT} s in cell {at + 1} (import time)"
    at = next(i for i, c in enumerate(subs["gus"].cells) if c.source.startswith("labs.check = "))
    first = subs["gus"].cells[at].source.splitlines()[0]
    assert run["gus"] == (
        f"kernel died in cell {at + 1} ({first}); cell {at + 1} modifies the grading library "
        f"(line 1: `{first}`): assigns an attribute or item of labs: every lab NOT ACCEPTED"
    )
    assert run["erin"].startswith("unreadable")
    failing = {r["student"]: r["failing_cases"] for r in rows if r["lab"] == "doubling"}
    assert failing["bob"] == failing["carol"] == failing["fay"] == "2" and failing["gus"] == "0"
    summary = (out / "grades.md").read_text()
    assert "| alice | 1 | 2 / 2 |" in summary  # the totals: 1 notebook, 2 of 2
    assert "| carol | ok" not in summary and "FAIL (2 cases)" in summary
    page = (out / "grades.html").read_text()
    assert page.count("<tr>") == 7 + 1 + 7 + 1  # toy table, totals table
    assert (out / "executed" / "alice" / "toy.ipynb").exists()


def test_reports_show_the_cause_of_a_failure(tmp_path):
    cause = (
        "case 1 of 4 (x = 1.0): your function raised ValueError: n must be > 0; got -1 "
        "(in my_effective_noise, line 18 of your cell)."
    )
    sub = grade_labs.Submission("carol", Path("toy.ipynb"))
    sub.labs = [
        grade_labs.LabResult("doubling", "FAIL", failing_cases=4, detail=cause + "\nmore"),
        grade_labs.LabResult("squaring", "PASS", detail="PASS: squaring: agrees"),
    ]
    grade_labs.write_markdown([sub], tmp_path / "grades.md", 1.0)
    grade_labs.write_html([sub], tmp_path / "grades.html", 1.0)
    summary = (tmp_path / "grades.md").read_text()
    assert f"| carol | ok | FAIL (4 cases): {cause} | PASS | 1 / 2 |" in summary
    page = (tmp_path / "grades.html").read_text()
    assert '<td style="background:#f8d7d7">FAIL (4 cases): case 1 of 4' in page
    assert "your function raised ValueError: n must be &gt; 0" in page and "more" not in page


def test_a_timed_out_check_names_the_students_function_cell():
    nb = _submission("while True:\n        pass", "return x * x")
    check = next(i for i, c in enumerate(nb.cells) if c.source.startswith("labs.check(double"))
    lab = next(i for i, c in enumerate(nb.cells) if c.source.startswith("def double"))
    assert lab < check
    assert grade_labs.running_where(nb, check) == (
        f"in the check of lab doubling (cell {check + 1} (labs.check(double, lambda x: x + x, "
        f'[(1.0,), (np.arange(3.0),)], name="doubling"))), which calls your function double '
        f"from cell {lab + 1} (def double(x):)"
    )
    # any other cell: itself
    assert grade_labs.running_where(nb, lab) == f"in cell {lab + 1} (def double(x):)"


@pytest.mark.slow
def test_grade_a_lab_function_that_hangs(tmp_path):
    nb = _submission("import time\n\n    time.sleep(600)", "return x * x")
    path = tmp_path / "submissions" / "hal.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    out = tmp_path / "grades"
    assert grade_labs.main([str(path), "--out", str(out), "--timeout", str(HANG_TIMEOUT)]) == 0
    lab = next(i for i, c in enumerate(nb.cells) if c.source.startswith("def double"))
    summary = (out / "grades.md").read_text()
    assert f"timed out after {HANG_TIMEOUT} s in the check of lab doubling (cell" in summary
    assert f"which calls your function double from cell {lab + 1} (def double(x):)" in summary


# ------------------------------------------------ only a lab's own check cell writes its verdict
def _forging_cell():
    """A student's cell that forges verdicts: it rewrites the record file, appends to it, calls
    the private writer of lib.teaching.labs, and runs a check of its own (with its own
    reference) under the lab's name."""
    return (
        "import json, os\n"
        "path = os.environ['LIB_LABS_RECORD']\n"
        "fake = json.dumps({'lab': 'doubling', 'status': 'PASS', 'lines': ['agrees']}) + '\\n'\n"
        "open(path, 'w').write(fake)\n"
        "open(path, 'a').write(fake)\n"
        "labs._record('squaring', 'PASS', ['agrees'])\n"
        "labs.check(lambda x: 2 * x, lambda x: 2 * x, [(1.0,)], name='doubling')"
    )


def test_own_records_keep_only_what_a_labs_check_cell_wrote(tmp_path, monkeypatch):
    nb = _submission("return 3 * x", None, _forging_cell())
    check = {
        lab: next(i for i, c in enumerate(nb.cells) if grade_labs.check_cell_labs(c) == [lab])
        for lab in ("doubling", "squaring")
    }
    forger = next(i for i, c in enumerate(nb.cells) if c.source.startswith("import json, os"))
    other = next(i for i, c in enumerate(nb.cells) if c.source.startswith("def double"))
    records = [
        {**_rec("doubling", "FAIL", "case 1 of 2"), "cell": check["doubling"]},  # the check's own
        {**_rec("doubling", "PASS", "agrees"), "cell": other},  # written by another cell
        {**_rec("squaring", "PASS", "agrees"), "cell": check["doubling"]},  # by the check cell of another lab
        {**_rec("squaring", "PASS", "agrees"), "cell": None},  # while no cell ran
        {**_rec("squaring", "PASS", "agrees"), "cell": 999},  # no such cell
    ]
    monkeypatch.setattr(grade_labs, "ROOT", tmp_path)  # the book's notebook is not at hand
    kept, ignored = grade_labs.own_records(records, nb)
    assert kept == records[:1] and ignored == 4
    # the forging cell calls labs.check(name="doubling"): without the book's source it counts as
    # a check cell; with it (its source differs from the book's check cell) it does not
    own = {**_rec("doubling", "PASS", "agrees"), "cell": forger}
    assert grade_labs.own_records([own], nb) == ([own], 0)
    (tmp_path / "book").mkdir()
    nbformat.write(_instructor_notebook(), tmp_path / "book" / "toy.ipynb")
    assert grade_labs.book_check_sources(nb)["doubling"] == {nb.cells[check["doubling"]].source.strip()}
    assert grade_labs.own_records([own, records[0]], nb) == ([records[0]], 1)


def test_records_by_cell_reads_each_cells_chunk():
    line = json.dumps(_rec("a", "PASS", "agrees")).encode() + b"\n"
    got = grade_labs.records_by_cell([(3, line + b"PASS: a: printed\n"), (None, line)])
    assert [r["cell"] for r in got] == [3, None]


@pytest.mark.slow
def test_grade_ignores_verdicts_forged_by_a_students_cell(tmp_path, monkeypatch):
    # before, every one of these forgeries earned the point: the grader read every JSON line
    # of the record file, whoever wrote it
    monkeypatch.setattr(grade_labs, "ROOT", tmp_path)
    (tmp_path / "book").mkdir()
    nbformat.write(_instructor_notebook(), tmp_path / "book" / "toy.ipynb")
    subs = {
        "alice": _submission("return 2 * x", "return x * x"),  # right: still graded PASS
        "hal": _submission("return 3 * x", None, _forging_cell()),  # wrong, forges both labs
    }
    rows, _ = _grade(tmp_path, subs, 120)
    assert _verdicts(rows) == {
        ("alice", "doubling"): ("PASS", "1"),
        ("alice", "squaring"): ("PASS", "1"),
        ("hal", "doubling"): ("FAIL", "0"),
        ("hal", "squaring"): ("NOT ATTEMPTED", "0"),
    }
    run = {r["student"]: r["run"] for r in rows}
    assert run["alice"] == "ok"
    assert run["hal"] == "4 verdict record(s) ignored (not the record of a lab's own check cell run to its end)"


@pytest.mark.parametrize(
    "extra, message",
    [  # before: inf seconds made every run "could not run: OverflowError", nan/inf points were
        # written into the grades, a path given twice was graded and counted twice, nan seconds
        # and an --out that is a file raised tracebacks
        (["--timeout", "inf"], "--timeout must be a finite number > 0; got inf"),
        (["--timeout", "nan"], "--timeout must be a finite number > 0; got nan"),
        (["--timeout", "0"], "--timeout must be a finite number > 0; got 0.0"),
        (["--points", "nan"], "--points must be a finite number > 0; got nan"),
        (["--points", "inf"], "--points must be a finite number > 0; got inf"),
        (["--points", "-1"], "--points must be a finite number > 0; got -1.0"),
        (["SAME"], "is given twice"),
        (["--out", "FILE"], "is a file; it must be a folder"),
    ],
)
def test_the_command_line_refuses_bad_settings(tmp_path, capsys, extra, message):
    nb = tmp_path / "alice.ipynb"
    nb.write_text("{", encoding="utf-8")
    if extra == ["SAME"]:
        argv = [str(nb), str(nb), "--out", str(tmp_path / "grades")]
    elif extra == ["--out", "FILE"]:
        argv = [str(nb), "--out", str(nb)]
    else:
        argv = [str(nb), "--out", str(tmp_path / "grades"), *extra]
    with pytest.raises(SystemExit) as info:
        grade_labs.main(argv)
    assert info.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "grades").exists()  # nothing graded


@pytest.mark.parametrize("timeout", [float("nan"), float("inf"), True, 0, -1.0, "60"])
def test_grade_refuses_a_bad_timeout(tmp_path, timeout):
    with pytest.raises(ValueError, match=r"^timeout must be a finite number of seconds > 0"):
        grade_labs.grade([tmp_path / "x.ipynb"], tmp_path, timeout=timeout)


# ------------------------- a record the student's function writes while the check runs it
#: A cell that defines ``_forge(lab)``: append a PASS record for ``lab`` to the record file.
_FORGE = (
    "import json, os, threading, time\n"
    "def _forge(lab):\n"
    "    with open(os.environ['LIB_LABS_RECORD'], 'a') as fh:\n"
    "        fh.write(json.dumps({'lab': lab, 'status': 'PASS', 'lines': ['agrees']}) + '\\n')\n"
)
#: A thread that waits for the check's record, then appends a forged one at once.
_WATCH = (
    "def _watch():\n"
    "    path = os.environ['LIB_LABS_RECORD']\n"
    "    size = lambda: os.path.getsize(path) if os.path.exists(path) else 0\n"
    "    start = size()\n"
    "    while size() == start:\n"
    "        time.sleep(0.0005)\n"
    "    _forge('doubling')\n"
    "threading.Thread(target=_watch, daemon=True).start()\n"
)


def test_own_records_ignore_a_check_cell_that_raised_or_wrote_more_than_it_checks(tmp_path, monkeypatch):
    monkeypatch.setattr(grade_labs, "ROOT", tmp_path)  # the book's notebook is not at hand
    nb = _submission("return 3 * x")
    at = next(i for i, c in enumerate(nb.cells) if grade_labs.check_cell_labs(c) == ["doubling"])
    fail, forged = _rec("doubling", "FAIL", "case 1 of 2"), _rec("doubling", "PASS", "agrees")
    # one record of the cell's one check: kept
    assert grade_labs.own_records([{**fail, "cell": at}], nb) == ([{**fail, "cell": at}], 0)
    # two records, one check: the student's function wrote one (before or after the check's)
    two = [{**forged, "cell": at}, {**fail, "cell": at}]
    assert grade_labs.own_records(two, nb) == ([], 2)
    assert grade_labs.own_records(two[::-1], nb) == ([], 2)
    # a cell that checks the lab twice writes two records: both kept
    twice = nbformat.v4.new_notebook(cells=[code(nb.cells[at].source + "\n" + nb.cells[at].source)])
    both = [{**fail, "cell": 0}, {**forged, "cell": 0}]
    assert grade_labs.own_records(both, twice) == (both, 0)
    # the check cell raised (a check does not, in the student edition): its record is ignored
    nb.cells[at].outputs = [nbformat.v4.new_output("error", ename="KeyboardInterrupt", evalue="", traceback=[])]
    assert grade_labs.own_records([{**forged, "cell": at}], nb) == ([], 1)


@pytest.mark.slow
def test_grade_ignores_a_record_the_students_function_writes_during_the_check(tmp_path, monkeypatch):
    # before, each of these wrong submissions earned the point: the function the check calls
    # wrote a PASS record and then stopped the check before it wrote its own (a raise the check
    # lets through, a hang, a dead kernel), or a thread appended one right after the check's
    monkeypatch.setattr(grade_labs, "ROOT", tmp_path)
    (tmp_path / "book").mkdir()
    nbformat.write(_instructor_notebook(), tmp_path / "book" / "toy.ipynb")

    def student(body, extra=""):
        return _submission(None, None, _FORGE + extra + "def double(x):\n" + body)

    subs = {
        "alice": _submission("return 2 * x", "return x * x"),  # right: still graded PASS
        "ike": student("    _forge('doubling')\n    raise KeyboardInterrupt\n"),
        "jan": student("    _forge('doubling')\n    os._exit(0)\n"),
        "kim": student("    _forge('doubling')\n    time.sleep(10**6)\n"),
        "lou": student("    _forge('doubling')\n    return 3 * x\n"),  # the check writes FAIL after it
        "max": student("    return 3 * x\n", _WATCH),
    }
    # the forging cell comes before the square cell; move it before the doubling check
    for nb in subs.values():
        at = next((i for i, c in enumerate(nb.cells) if c.source.startswith(_FORGE)), None)
        if at is not None:
            cell = nb.cells.pop(at)
            check = next(i for i, c in enumerate(nb.cells) if grade_labs.check_cell_labs(c) == ["doubling"])
            nb.cells.insert(check, cell)
    rows, _ = _grade(tmp_path, subs, HANG_TIMEOUT)
    got = {student: verdict for (student, lab), (verdict, _) in _verdicts(rows).items() if lab == "doubling"}
    assert got == {
        "alice": "PASS",
        "ike": grade_labs.NO_VERDICT,
        "jan": grade_labs.NO_VERDICT,
        "kim": grade_labs.NO_VERDICT,
        "lou": grade_labs.NO_VERDICT,
        "max": grade_labs.NO_VERDICT,
    }
    run = {r["student"]: r["run"] for r in rows}
    assert run["alice"] == "ok"
    for name in ("ike", "jan", "kim", "lou", "max"):
        assert "verdict record(s) ignored" in run[name], (name, run[name])


def test_grade_names_a_json_file_that_is_no_notebook(tmp_path):
    path = tmp_path / "alice.ipynb"
    path.write_text("[]")  # JSON, but no notebook (before: a bare AttributeError)
    (sub,) = grade_labs.grade([path], tmp_path / "out", timeout=5)
    assert sub.run.startswith("unreadable: not a Jupyter notebook (a JSON object); ")


# ------------------------------------------- a cell that changes the grading library is named
#: Student cells that replace or change the grading function before the check cell runs,
#: each with the line (of the cell, from 1) the grader names. Every one of them ran and,
#: with a check that writes a PASS record, earned the point before the scan.
TAMPERING = [
    ("labs.check = lambda *a, **k: labs._record(k['name'], 'PASS', ['agrees'])", 1),
    ("from lib.teaching import labs as L\n\nL.check = print", 3),
    ("import lib.teaching.labs as L\n\nL._record = print", 3),
    ("import lib\n\nlib.teaching.labs.check = print", 3),
    ("x = 1\nsetattr(labs, 'check', print)", 2),
    ("delattr(labs, '_record')", 1),
    ("M = labs\nM.check = print", 2),
    ("labs.check.__code__ = (lambda *a, **k: None).__code__", 1),
    ("labs._record += 0", 1),
    ("del labs.check", 1),
    ("import sys\n\nsys.modules['lib.teaching.labs'] = sys", 3),
    ("import sys\n\nfake = sys.modules", 3),
    ("import importlib\n\nimportlib.reload(labs)", 3),
    ("from importlib import reload", 1),
    ("exec('labs.check = print')", 1),
    ("eval('1')", 1),
    ("code = compile('labs.check = print', '<x>', 'exec')", 1),
    ("globals()['labs'] = None", 1),
    ("import builtins\n\nbuiltins.print = None", 1),
    ("__builtins__.print = None", 1),
    ("from lib.teaching.labs import check\n\ncheck = print", 3),
    ("from lib.teaching.labs import check\n\n\ndef check(*a, **k):\n    pass", 4),
    ("labs = None", 1),
    ("def f():\n    global labs\n    labs = None", 3),
    ("np.allclose = lambda *a, **k: True", 1),
    ("import matplotlib.pyplot as plt\n\nplt.np.allclose = print", 3),
    ("x = 1\n%time labs.check = print", 2),
    ("%%capture\nx = 1\nlabs.check = print", 3),
    ("%run forge.py", 1),
    ("get_ipython().run_cell('labs.check = print')", 1),
    ("object.__setattr__(labs, 'check', print)", 1),
    ("print.__self__.print = None", 1),
    ("g = getattr(labs.check, '__globals__')", 1),
    ("import sys\n\nsys.settrace(None)", 3),
    ("import sys\n\nframe = sys._getframe(0)", 3),
]


@pytest.mark.parametrize("source, line", TAMPERING)
def test_a_cell_that_changes_the_grading_library_is_named(source, line):
    nb = _submission("return 2 * x", "return x * x", source)
    at = next(i for i, c in enumerate(nb.cells) if c.source == source)
    found = grade_labs.tampering(nb)
    assert found is not None and (found.cell, found.line) == (at, line)
    text = source.splitlines()[line - 1].strip()
    assert found.describe(nb).startswith(f"cell {at + 1} modifies the grading library (line {line}: `{text}`): ")


@pytest.mark.parametrize(
    "source",
    [  # a student's ordinary code: nothing to report
        "import numpy as np\n\nfrom lib.teaching import labs",
        "from lib.teaching.labs import check\n\ncheck(double, lambda x: x + x, [(1.0,)], name='d')",
        "def f(x):\n    check = x + 1  # a local name\n    return check",
        "a = np.zeros(3)\na[0] = 1.0\nlabs.check(double, lambda x: x + x, [(a,)], name='d')",
        "!ls\nx = 1\n%matplotlib inline",
        "import importlib.util\n\nimportlib.util.find_spec('lib')",
        "%%time\ny = double(2.0)",
        "import matplotlib as mpl\nimport matplotlib.pyplot as plt\n\nplt.rcParams['font.size'] = 9\nmpl.rcParams['axes.grid'] = True",
    ],
)
def test_ordinary_code_is_not_reported(source):
    assert grade_labs.tampering(_submission("return 2 * x", "return x * x", source)) is None


def test_the_books_student_notebooks_are_not_reported():
    """Every notebook of the book, as the student edition hands it out (its setup cell, the
    hidden student-mode cell, the skeletons, the checks), and as the instructor runs it."""
    paths = sorted((ROOT / "book").rglob("*.ipynb"))
    assert len(paths) >= 9
    labs = 0
    for path in paths:
        name = str(path.relative_to(ROOT))
        book = nbformat.read(path, as_version=4)
        student = make_student.student_notebook(book, name)
        labs += len(grade_labs.expected_labs(student))
        assert grade_labs.tampering(student) is None, name
        assert grade_labs.tampering(book) is None, name
    assert labs >= 9  # the book's labs are among them


@pytest.mark.slow
def test_grade_reports_a_submission_that_replaces_the_check(tmp_path, monkeypatch):
    # before, ivy's wrong function earned the point: her cell replaced labs.check by a
    # function that writes a PASS record, which the book's own check cell then wrote
    monkeypatch.setattr(grade_labs, "ROOT", tmp_path)
    (tmp_path / "book").mkdir()
    nbformat.write(_instructor_notebook(), tmp_path / "book" / "toy.ipynb")
    forge = TAMPERING[0][0]
    subs = {
        "alice": _submission("return 2 * x", "return x * x"),  # right
        "bob": _submission("return 3 * x"),  # wrong, second lab unfinished
        "ivy": _submission("return 3 * x", None, forge),
    }
    at = next(i for i, c in enumerate(subs["ivy"].cells) if c.source == forge)
    check = next(i for i, c in enumerate(subs["ivy"].cells) if grade_labs.check_cell_labs(c) == ["doubling"])
    subs["ivy"].cells.insert(check, subs["ivy"].cells.pop(at))  # before both checks
    rows, out = _grade(tmp_path, subs, 120)
    assert _verdicts(rows) == {
        ("alice", "doubling"): ("PASS", "1"),
        ("alice", "squaring"): ("PASS", "1"),
        ("bob", "doubling"): ("FAIL", "0"),
        ("bob", "squaring"): ("NOT ATTEMPTED", "0"),
        ("ivy", "doubling"): (grade_labs.NOT_ACCEPTED, "0"),
        ("ivy", "squaring"): (grade_labs.NOT_ACCEPTED, "0"),
    }
    where = f"cell {check + 1} modifies the grading library (line 1: `{forge}`): assigns an attribute or item of labs"
    rows = {(r["student"], r["lab"]): r for r in rows}
    assert rows["alice", "doubling"]["run"] == rows["bob", "doubling"]["run"] == "ok"
    assert rows["ivy", "doubling"]["run"] == f"{where}: every lab NOT ACCEPTED"
    assert rows["ivy", "squaring"]["detail"] == f"not accepted: {where}"
    assert f"| ivy | {where}: every lab NOT ACCEPTED | NOT ACCEPTED: {where} |" in (out / "grades.md").read_text()
    page = (out / "grades.html").read_text()
    assert '<td style="background:#f8d7d7">NOT ACCEPTED: cell' in page
