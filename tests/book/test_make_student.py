"""Tests for scripts/make_student.py: the student edition has no solution content."""

import ast
import copy
import importlib.util
import json
import os
from pathlib import Path
from shutil import copytree as shutil_copytree

import nbformat
import pytest
import yaml

from lib.teaching import labs

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("make_student", ROOT / "scripts/make_student.py")
make_student = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_student)

LAB = '''def coefficient(m, n_points=80):
    """The Hermite coefficient a_m of ReLU by Gauss-Hermite quadrature."""
    # --- solution ---
    z, w = np.polynomial.hermite_e.hermegauss(n_points)
    a_m = np.sum(w * np.maximum(z, 0) * hermite_function(m, z))
    return float(a_m / np.sqrt(2 * np.pi))
    # --- end solution ---
'''


def _toy_notebook():
    nb = nbformat.v4.new_notebook()
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    nb.cells = [
        md("# A chapter\n\nText."),
        code("import numpy as np\nfrom lib.hermite import hermite_function\nfrom lib.teaching import labs"),
        md(
            "## Exercises\n\n````{exercise} ★ First\n:label: ex-first\nDo it.\n````\n\n"
            "```{solution-start} ex-first\n:class: dropdown\n```\nSECRET prose one."
        ),
        code("secret_value = 42  # SECRET code"),
        md(
            "More SECRET prose.\n\n```{solution-end}\n```\n\n"
            "````{exercise} ★★ Second\n:label: ex-second\nAnd this.\n````"
        ),
        md("```{solution-start} ex-second\n:class: dropdown\n```"),
        code("print('SECRET')"),
        md("```{solution-end}\n```"),
        md("````{exercise} ★ Lab: a coefficient\n:label: lab-coefficient\nWrite it.\n````"),
        code(LAB, metadata={"tags": ["lab-solution"]}),
        code("labs.check(coefficient, lambda m: 0.5, [(1,)], name='a_1 of ReLU')"),
    ]
    return nb


def test_toy_notebook_loses_its_solutions_and_keeps_its_exercises():
    student = make_student.student_notebook(_toy_notebook(), "toy.ipynb")
    text = "\n".join(c.source for c in student.cells)
    assert "SECRET" not in text and "{solution" not in text
    for label in ("ex-first", "ex-second", "lab-coefficient"):
        assert f":label: {label}" in text
    assert make_student.has_solution_content(student) == []
    # the skeleton is tagged as one: no student cell names a solution in its metadata
    assert not any("lab-solution" in c.metadata.get("tags", []) for c in student.cells)
    lab = next(c for c in student.cells if "lab-skeleton" in c.metadata.get("tags", []))
    assert "hermegauss" not in lab.source and '"""The Hermite coefficient' in lab.source
    assert f"    {make_student.SKELETON_COMMENT}\n    ...\n" in lab.source
    assert make_student.solution_markers(lab.source) == []  # no marker shown to students
    assert make_student.solution_markers(LAB) == ["# --- solution ---", "# --- end solution ---"]


def test_a_surviving_solution_marker_is_caught():
    """Any solution-marker comment left in a student code cell is refused."""
    student = make_student.student_notebook(_toy_notebook(), "toy.ipynb")
    assert make_student.has_solution_content(student) == []
    lab = next(i for i, c in enumerate(student.cells) if "lab-skeleton" in c.metadata.get("tags", []))
    for marker in ("# --- solution ---", "    # --- end solution ---", "# solution code", "# BEGIN SOLUTION"):
        bad = copy.deepcopy(student)
        bad.cells[lab].source += "\n" + marker
        assert [p.split(": ")[0] for p in make_student.has_solution_content(bad)] == [f"cell {lab}"], marker
    bad = copy.deepcopy(student)  # in any code cell, not only a lab's
    i = next(i for i, c in enumerate(bad.cells) if c.source.startswith("import numpy"))
    bad.cells[i].source = "# solution code\n" + bad.cells[i].source
    assert make_student.has_solution_content(bad) == [f"cell {i}: the solution marker '# solution code'"]
    bad = copy.deepcopy(student)  # a lab cell still tagged as the instructor's solution
    bad.cells[lab].metadata["tags"] = ["lab-solution"]
    assert make_student.has_solution_content(bad) == [f"cell {lab}: the tag 'lab-solution'"]
    bad.cells[lab].source = bad.cells[lab].source.replace("    ...\n", "    return 0.5\n")
    assert len(make_student.has_solution_content(bad)) == 2  # and code in place of '...'
    # comments that only mention a solution are no markers
    for fine in ("# the lab's reference solution: lib's fit", "x = 1  # solution", "# solutions of eq. (3)"):
        assert make_student.solution_markers(fine) == [], fine


def test_markers_are_found_in_built_html_and_downloads(tmp_path):
    """The check run on the student HTML after its build (pygments markup, _sources)."""
    page = tmp_path / "book" / "ch.html"
    page.parent.mkdir()
    line = '<span class="w">    </span><span class="c1"># --- end solution ---</span>'
    page.write_text(f'<div class="highlight"><pre><span></span>def f():\n{line}\n</pre></div>')
    (tmp_path / "clean.html").write_text("<p>The solution of eq. 3.</p><h2>Solutions<a>#</a></h2>")
    nb = make_student.student_notebook(_toy_notebook(), "toy.ipynb")
    (tmp_path / "_sources").mkdir()
    nbformat.write(nb, tmp_path / "_sources" / "clean.ipynb")
    assert make_student.html_solution_markers(tmp_path) == ["book/ch.html: # --- end solution ---"]
    nb.cells[-1].source += "\n# --- solution ---"
    nbformat.write(nb, tmp_path / "_sources" / "ch.ipynb")
    assert make_student.html_solution_markers(tmp_path)[0] == "_sources/ch.ipynb: # --- solution ---"


def test_lab_skeleton_returns_none_and_the_check_says_not_attempted(capsys, monkeypatch):
    student = make_student.student_notebook(_toy_notebook(), "toy.ipynb")
    # no LIB_LABS_STUDENT: the notebook's own first cell makes the check lenient
    monkeypatch.delenv("LIB_LABS_STUDENT", raising=False)
    monkeypatch.setattr(labs, "_student_override", None)
    namespace = {}
    for cell in student.cells:
        if cell.cell_type == "code":
            exec(cell.source, namespace)
    assert namespace["coefficient"](1) is None
    assert "secret_value" not in namespace
    assert capsys.readouterr().out.startswith("NOT ATTEMPTED: a_1 of ReLU")


def test_student_notebooks_carry_their_edition():
    nb = _toy_notebook()
    nb.cells.insert(0, nbformat.v4.new_code_cell("pass", metadata={"book_sync": "setup"}))
    student = make_student.student_notebook(nb, "book/toy.ipynb")
    cell = student.cells[1]
    assert cell.metadata["book_sync"] == "student"
    assert cell.source == make_student.STUDENT_CELL_SOURCE
    assert "remove-cell" in cell.metadata["tags"]
    assert student.metadata["lib_labs"] == {
        "edition": "student",
        "source": "book/toy.ipynb",
        "labs": ["a_1 of ReLU"],
    }
    assert "lib_labs" not in nb.metadata  # the instructor notebook is unchanged


def _run(nb, tmp_path):
    """Execute a notebook in a fresh kernel without LIB_LABS_STUDENT; its outputs."""
    nbclient = pytest.importorskip("nbclient")
    env = {k: v for k, v in os.environ.items() if k != "LIB_LABS_STUDENT"}
    client = nbclient.NotebookClient(
        nb,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": tmp_path}},
    )
    client.execute(env=env)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert [o for o in outputs if o.output_type == "error"] == []
    return "".join(o.get("text", "") for o in outputs if o.output_type == "stream")


@pytest.mark.slow
def test_student_notebook_runs_to_the_end_unfinished_and_wrong(tmp_path):
    student = make_student.student_notebook(_toy_notebook(), "toy.ipynb")
    student.cells.append(nbformat.v4.new_code_cell("print('REACHED THE END')"))
    text = _run(copy.deepcopy(student), tmp_path)
    assert "NOT ATTEMPTED: a_1 of ReLU" in text and "REACHED THE END" in text
    lab = next(c for c in student.cells if "lab-skeleton" in c.metadata.get("tags", []))
    lab.source = lab.source.replace("    ...\n", "    return 0.25\n")
    check = student.cells.index(lab) + 1
    student.cells[check].source = "labs.check(coefficient, lambda m: 0.5, [(1,), (2,)], name='a_1 of ReLU')"
    text = _run(student, tmp_path)
    lines = [ln for ln in text.splitlines() if ln.startswith(("FAIL", "    case"))]
    assert [ln.split(": the output")[0] for ln in lines] == [
        "FAIL: a_1 of ReLU: 2 of 2 cases disagree with the reference:",
        "    case 1 of 2 (1)",
        "    case 2 of 2 (2)",
    ]
    assert "Traceback" not in text and "REACHED THE END" in text


def test_student_config_has_no_launch_or_repository_buttons():
    text = (ROOT / "_config.yml").read_text(encoding="utf-8")
    original, student = (
        yaml.safe_load(text),
        yaml.safe_load(make_student.student_config(text)),
    )
    launch = student["launch_buttons"]
    assert not any(launch.get(k) for k in ("binderhub_url", "colab_url", "jupyterhub_url"))
    assert not any(student["html"][k] for k in ("use_repository_button", "use_issues_button", "use_edit_page_button"))
    for key in ("launch_buttons", "html"):
        original.pop(key), student.pop(key)
    # the one extension more: make_student rewrites the API docstrings' repository paths
    assert student["sphinx"]["local_extensions"].pop("make_student") == str(ROOT / "scripts")
    assert student == original  # everything else as in the book


def test_bad_sources_are_refused():
    nb = _toy_notebook()
    nb.cells[7].source = "no end here"
    with pytest.raises(make_student.StudentEditionError, match="never closed"):
        make_student.student_notebook(nb, "toy.ipynb")
    nb = _toy_notebook()
    nb.cells[9].source = "def f():\n    return 1\n"
    with pytest.raises(make_student.StudentEditionError, match="marker lines"):
        make_student.student_notebook(nb, "toy.ipynb")


def _skeleton_functions_return_none(source):
    """Every function in a skeleton cell has only a docstring, comments and `...`."""
    tree = ast.parse(source)
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    for fn in functions:
        body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        assert body == [], f"{fn.name} still has code: {ast.unparse(fn)}"
    return len(functions)


def test_the_books_student_notebooks(tmp_path):
    pytest.importorskip("pybtex", reason="handed-out notebooks cite as text: pybtex (a book-build dependency)")
    written = make_student.stage(tmp_path)
    assert len(written) == len(list((ROOT / "book").rglob("*.ipynb")))
    assert os.path.exists(tmp_path / "src" / "_toc.yml")
    config = yaml.safe_load((tmp_path / "src" / "_config.yml").read_text())
    assert config["launch_buttons"]["binderhub_url"] == ""
    labs_found = []
    n_skeletons = 0
    for path in written:
        nb = nbformat.read(path, as_version=4)
        assert make_student.has_solution_content(nb) == [], path
        code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
        assert make_student.solution_markers(code) == [], path
        assert nb.metadata["lib_labs"]["edition"] == "student"
        assert [c.metadata.get("book_sync") for c in nb.cells[:3]] == [
            "setup",
            "student",
            "macros",
        ], path
        original = nbformat.read(ROOT / "book" / path.relative_to(tmp_path / "notebooks"), 4)
        assert nb.metadata["lib_labs"]["labs"] == make_student.lab_names(original)
        labs_found += nb.metadata["lib_labs"]["labs"]
        assert not any("{cite" in c.source for c in nb.cells if c.cell_type == "markdown"), path
        n_ex = sum(c.source.count("{exercise}") for c in original.cells)
        assert sum(c.source.count("{exercise}") for c in nb.cells) == n_ex, path
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None
                assert "lab-solution" not in cell.metadata.get("tags", []), path
                if "lab-skeleton" in cell.metadata.get("tags", []):
                    _skeleton_functions_return_none(cell.source)
                    n_skeletons += 1
    assert len(labs_found) >= 9 and "dMMSE predictor" in labs_found
    # the control: the instructor notebooks' lab cells do show the markers, and each
    # became one skeleton
    n_labs = 0
    for path in (ROOT / "book").rglob("*.ipynb"):
        for cell in nbformat.read(path, 4).cells:
            if "lab-solution" in cell.metadata.get("tags", []):
                assert make_student.solution_markers(cell.source), path
                n_labs += 1
    assert n_skeletons == n_labs >= 9


def test_instructor_only_passages_are_dropped():
    text = "Keep.\n\n% instructor-only\nRun `make lab`.\n% end instructor-only\n\nKeep too.\n"
    assert make_student.strip_instructor_only(text, "x.md") == "Keep.\n\n\nKeep too.\n"
    assert make_student.strip_instructor_only("No markers.\n", "x.md") == "No markers.\n"
    for bad, message in (
        ("% instructor-only\nA\n", "never closed"),
        ("A\n% end instructor-only\n", "without a start"),
        ("% instructor-only\n% instructor-only\n% end instructor-only\n", "nested"),
    ):
        with pytest.raises(make_student.StudentEditionError, match=message):
            make_student.strip_instructor_only(bad, "x.md")
    # in a notebook's markdown cell as well
    nb = _toy_notebook()
    nb.cells[0].source += "\n\n% instructor-only\nINSTRUCTOR ONLY\n% end instructor-only"
    student = make_student.student_notebook(nb, "toy.ipynb")
    assert not any("INSTRUCTOR ONLY" in c.source for c in student.cells)
    assert any("Text." in c.source for c in student.cells)


#: What the student edition cannot offer (its HTML has no launch buttons; students work
#: as book/student.md says, not in a clone with make).
INSTRUCTOR_ONLY_WORDS = ("make lab", "rocket", "launch button", "Binder", "Colab", "pip install -e")


def test_student_pages_send_students_only_where_they_can_go(tmp_path):
    pytest.importorskip("pybtex", reason="handed-out notebooks cite as text: pybtex (a book-build dependency)")
    make_student.stage(tmp_path)
    staged = tmp_path / "src" / "book"
    for page in ("student.md", "syllabus.md", "teaching.md"):
        text = (staged / page).read_text(encoding="utf-8")
        found = [w for w in INSTRUCTOR_ONLY_WORDS if w.lower() in text.lower()]
        assert not found, f"the student edition's {page} mentions {found}"
        assert not any(line.strip().startswith("% instructor-only") for line in text.splitlines())
    # the student page is in both editions' table of contents, linked from the syllabus
    toc = yaml.safe_load((tmp_path / "src" / "_toc.yml").read_text())
    front = [c["file"] for c in toc["parts"][0]["chapters"]]
    assert "book/student" in front
    assert "{doc}`student`" in (staged / "syllabus.md").read_text(encoding="utf-8")


# --------------------------------------------------------------------------------------
# the student build reuses the instructor build's execution (no second execution)
# --------------------------------------------------------------------------------------
def _eval_notebook():
    """The toy chapter with {eval} roles (one inside a solution) and a plain cell."""
    nb = _toy_notebook()
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    nb.cells[1:1] = [
        code("x_txt, y_txt = '1.5', '2 < 3'"),
        md("x is {eval}`x_txt`, y is {eval}`y_txt`, x again {eval}`x_txt`."),
    ]
    # inside the second solution span: removed in the student edition
    nb.cells[7].source = "```{solution-start} ex-second\n:class: dropdown\n```\nSo {eval}`x_txt`."
    return nb


def _executed(nb):
    """The notebook as the instructor build leaves it: every code cell with an output."""
    done = copy.deepcopy(nb)
    for i, cell in enumerate(done.cells):
        if cell.cell_type == "code":
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"OUT{i}\n")]
            cell.execution_count = i
    return done


RECORD = {
    "version": 1,
    "docs": {
        "book/toy": [
            {"expr": "x_txt", "text": "1.5"},
            {"expr": "y_txt", "text": "2 < 3"},
            {"expr": "x_txt", "text": "1.5"},
            {"expr": "x_txt", "text": "1.5"},
        ]
    },
}


def _toy_book(tmp_path, record=RECORD):
    root = tmp_path / "root"
    (root / "book").mkdir(parents=True)
    for name in ("_config.yml", "references.bib"):
        (root / name).write_text((ROOT / name).read_text())
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/toy\n")
    nb = _eval_notebook()
    nbformat.write(nb, root / "book" / "toy.ipynb")
    executed = root / "_build" / "jupyter_execute"
    (executed / "book").mkdir(parents=True)
    nbformat.write(_executed(nb), executed / "book" / "toy.ipynb")
    if record is not None:
        (executed / "book_evals.json").write_text(json.dumps(record))
    return root, executed


def _append_markdown(root, executed, text: str) -> None:
    """Add a Markdown cell to the toy chapter, in its source and in its executed copy."""
    for path in (root / "book" / "toy.ipynb", executed / "book" / "toy.ipynb"):
        nb = nbformat.read(path, 4)
        nb.cells.append(nbformat.v4.new_markdown_cell(text))
        nbformat.write(nb, path)


def test_handed_out_notebooks_show_citations_as_text(tmp_path):
    """jupyterlab-myst has no bibliography: a citation role shows as a warning label.
    The handed-out notebooks get author-year text (as the lab copies of `make lab`);
    the HTML build's copy keeps the roles, which the book links to its bibliography."""
    pytest.importorskip("pybtex", reason="the citations need pybtex (a dependency of the book build)")
    root, executed = _toy_book(tmp_path)
    _append_markdown(root, executed, "As {cite:t}`lu2025asymptotic` show {cite:p}`lu2025asymptotic`.")
    out = tmp_path / "out"
    (handout,) = make_student.stage(out, root, executed)
    given = "\n".join(c.source for c in nbformat.read(handout, 4).cells if c.cell_type == "markdown")
    assert "{cite" not in given
    assert "As Lu et al. (2025) show (Lu et al., 2025)." in given
    staged = "\n".join(c.source for c in nbformat.read(out / "src" / "book" / "toy.ipynb", 4).cells)
    assert "{cite:t}`lu2025asymptotic`" in staged


def test_student_build_sources_come_from_the_executed_notebooks(tmp_path):
    pytest.importorskip("pybtex", reason="handed-out notebooks cite as text: pybtex (a book-build dependency)")
    root, executed = _toy_book(tmp_path)
    out = tmp_path / "out"
    (handout,) = make_student.stage(out, root, executed)
    # the handed-out notebook: no outputs, the {eval} roles as in the book
    given = nbformat.read(handout, 4)
    assert all(c.outputs == [] for c in given.cells if c.cell_type == "code")
    text = "\n".join(c.source for c in given.cells)
    assert "{eval}`x_txt`" in text and "eval-recorded" not in text
    # the build's copy: executed outputs kept, but not those of the lab and its check
    staged = nbformat.read(out / "src" / "book" / "toy.ipynb", 4)
    text = "\n".join(c.source for c in staged.cells if c.cell_type == "markdown")
    assert "{eval}" not in text
    assert "x is {eval-recorded}`0`, y is {eval-recorded}`1`, x again {eval-recorded}`2`." in text
    outputs = {c.source.split("\n")[0]: [o.text for o in c.outputs] for c in staged.cells if c.cell_type == "code"}
    assert outputs["x_txt, y_txt = '1.5', '2 < 3'"] == ["OUT1\n"]
    assert outputs["import numpy as np"] == ["OUT3\n"]
    assert outputs["def coefficient(m, n_points=80):"] == []  # the skeleton
    assert outputs["labs.check(coefficient, lambda m: 0.5, [(1,)], name='a_1 of ReLU')"] == []
    assert "OUT5" not in json.dumps(outputs)  # the solution's code cell is gone
    assert make_student.has_solution_content(staged) == []
    config = yaml.safe_load((out / "src" / "_config.yml").read_text())
    assert config["execute"]["execute_notebooks"] == "off"
    assert config["sphinx"]["config"]["book_evals_record"] == "book_evals.json"
    assert json.loads((out / "src" / "book_evals.json").read_text()) == RECORD
    assert "book_evals" in config["sphinx"]["local_extensions"]


def test_downloads_are_the_handed_out_notebooks(tmp_path):
    """After the build, each chapter's download (_sources) is replaced by the notebook
    handed out; a download that keeps the build-internal {eval-recorded} role is refused."""
    pytest.importorskip("pybtex", reason="handed-out notebooks cite as text: pybtex (a book-build dependency)")
    root, executed = _toy_book(tmp_path)
    out = tmp_path / "out"
    (handout,) = make_student.stage(out, root, executed)
    html_dir = out / "html"
    served = html_dir / "_sources" / "book" / "toy.ipynb"
    served.parent.mkdir(parents=True)
    # what the build serves: a copy of the staged chapter (counters, instructor outputs)
    (out / "src" / "book" / "toy.ipynb").replace(served)
    (html_dir / "book").mkdir()
    (html_dir / "book" / "toy.html").write_text("<p>x is <span>1.5</span></p>")
    assert make_student.html_solution_markers(html_dir) == []  # the old scan saw nothing
    assert make_student.html_problems(html_dir) == [
        "_sources/book/toy.ipynb: the build-internal role {eval-recorded} in cell(s) 3"  # after the student cell
    ]
    # a handed-out chapter the build skipped gets no download
    skipped = out / "notebooks" / "extra" / "skipped.ipynb"
    skipped.parent.mkdir()
    skipped.write_bytes(handout.read_bytes())
    assert make_student.serve_handouts(html_dir, out / "notebooks") == [served]
    assert served.read_bytes() == handout.read_bytes()
    assert not (html_dir / "_sources" / "book" / "extra").exists()
    assert make_student.html_problems(html_dir) == []
    given = nbformat.read(served, 4)
    assert "x is {eval}`x_txt`" in given.cells[3].source
    assert all(c.outputs == [] for c in given.cells if c.cell_type == "code")
    # solution markers are still reported, with what they are
    given.cells[-1].source += "\n# --- solution ---"
    nbformat.write(given, served)
    assert make_student.html_problems(html_dir) == ["_sources/book/toy.ipynb: # --- solution --- (a solution marker)"]


def test_without_an_instructor_build_the_script_says_so(tmp_path, capsys):
    root, executed = _toy_book(tmp_path, record=None)
    with pytest.raises(make_student.StudentEditionError, match="make book"):
        make_student.stage(tmp_path / "out", root, executed)
    assert make_student.main(["--root", str(root), "--out", str(tmp_path / "out")]) == 2
    assert "run `make book` first" in capsys.readouterr().err


def test_a_chapter_changed_since_the_instructor_build_is_refused(tmp_path):
    pytest.importorskip("pybtex", reason="handed-out notebooks cite as text: pybtex (a book-build dependency)")
    root, executed = _toy_book(tmp_path)
    nb = nbformat.read(root / "book" / "toy.ipynb", 4)
    nb.cells[1].source = "x_txt, y_txt = '1.6', '2 < 3'"
    nbformat.write(nb, root / "book" / "toy.ipynb")
    with pytest.raises(make_student.StudentEditionError, match="changed since the instructor build"):
        make_student.stage(tmp_path / "out", root, executed)


def test_eval_roles_and_records_must_match():
    nb = _eval_notebook()
    entries = RECORD["docs"]["book/toy"]
    replayed = make_student.replay_evals(nb, entries, "toy")
    assert "So {eval-recorded}`3`." in replayed.cells[7].source
    with pytest.raises(make_student.StudentEditionError, match="no value recorded"):
        make_student.replay_evals(nb, entries[:3], "toy")
    with pytest.raises(make_student.StudentEditionError, match="not in the notebook"):
        make_student.replay_evals(nb, [*entries, {"expr": "z_txt", "text": "0"}], "toy")


@pytest.mark.slow
def test_student_html_shows_the_instructor_builds_eval_texts(tmp_path):
    """End to end on a one-chapter book: inline instructor build, then the student build.

    The student build executes nothing (a cell that would fail if executed is left in
    place, with the output the instructor build recorded), and its page shows each
    {eval} value with the same markup as the instructor page.
    """
    import re
    import subprocess
    import sys

    root = tmp_path / "root"
    (root / "book").mkdir(parents=True)
    for name in ("_config.yml", "references.bib"):
        (root / name).write_text((ROOT / name).read_text())
    shutil_copytree(ROOT / "book" / "_ext", root / "book" / "_ext")
    shutil_copytree(ROOT / "book" / "_static", root / "book" / "_static")
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/toy\n")
    nb = _eval_notebook()
    nb.cells[0].source = "# A chapter\n\nText."
    nb.cells.insert(
        4,
        nbformat.v4.new_code_cell(
            "import os\nassert 'LIB_BOOK_INSTRUCTOR_RUN' in os.environ, 'executed twice'\nprint('RAN ONCE')"
        ),
    )
    nbformat.write(nb, root / "book" / "toy.ipynb")
    jb = str(Path(sys.executable).with_name("jupyter-book"))
    env = {**os.environ, "LIB_BOOK_INSTRUCTOR_RUN": "1"}
    subprocess.run([jb, "build", str(root), "-W", "-n", "--keep-going"], check=True, env=env, capture_output=True)
    env.pop("LIB_BOOK_INSTRUCTOR_RUN")
    out = root / "_build" / "student"
    assert make_student.main(["--root", str(root), "--out", str(out), "--", "-W", "-n", "--keep-going"]) == 0
    spans = re.compile(r'<span class="output text_plain">[^<]*</span>')
    teacher = (root / "_build" / "html" / "book" / "toy.html").read_text()
    student = (out / "html" / "book" / "toy.html").read_text()
    assert spans.findall(teacher) == [
        '<span class="output text_plain">1.5</span>',
        '<span class="output text_plain">2 &lt; 3</span>',
        '<span class="output text_plain">1.5</span>',
        '<span class="output text_plain">1.5</span>',
    ]
    assert spans.findall(student) == spans.findall(teacher)[:3]  # the 4th is in a solution
    # the cell's source and its output, recorded by the instructor build
    assert student.count("RAN ONCE") == teacher.count("RAN ONCE") == 2
    assert "AssertionError" not in student
    assert "{eval" not in student and "eval-recorded" not in student
    # the lab skeleton shows no solution marker, in the page or its download
    assert "# --- solution ---" in teacher and make_student.SKELETON_COMMENT in student
    assert make_student.html_solution_markers(out / "html") == []
    # the download button gives the handed-out notebook: {eval} roles, no outputs
    (link,) = set(re.findall(r'href="([^"]*_sources/[^"]*\.ipynb)"', student))
    served = (out / "html" / "book" / link).resolve()
    assert served.read_bytes() == (out / "notebooks" / "toy.ipynb").read_bytes()
    assert make_student.html_problems(out / "html") == []
    text = "\n".join(c.source for c in nbformat.read(served, 4).cells)
    assert "{eval}`x_txt`" in text and "eval-recorded" not in text


def test_student_pages_have_no_slide_links_or_grading():
    """The student HTML has no slides (they are the instructor's) and no grading notes."""
    for page in ("syllabus.md", "teaching.md", "student.md"):
        text = make_student.strip_instructor_only((ROOT / "book" / page).read_text(), page)
        text = make_student.SLIDES_LINK.sub("", text)
        assert "slides-link" not in text and "../slides/" not in text, page
        assert ";)" not in text, page
    teaching = make_student.strip_instructor_only((ROOT / "book" / "teaching.md").read_text(), "teaching.md")
    assert "rejects calls to it, not copies" not in teaching


def test_package_to_hand_out_has_no_book(tmp_path):
    dest = make_student.write_package(tmp_path / "package")
    names = {p.name for p in dest.iterdir()}
    assert names == set(make_student.PACKAGE_FILES)
    assert not list(dest.rglob("*.ipynb")) and not list(dest.rglob("__pycache__"))


def _sync_notebooks():
    spec = importlib.util.spec_from_file_location("sync_notebooks", ROOT / "scripts/sync_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("training", [False, True])
def test_student_setup_cell_installs_nothing(training):
    """The instructor's setup cell installs from the repository (Colab); the student's
    stops where lib is missing, with the student page's command."""
    sync = _sync_notebooks()
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    nb = _toy_notebook()
    if training:
        nb.cells.append(nbformat.v4.new_code_cell("from lib.training import train_linear_attention"))
    instructor_setup = sync.setup_source(config, training)
    nb.cells.insert(0, nbformat.v4.new_code_cell(instructor_setup, metadata={"book_sync": "setup"}))
    student = make_student.student_notebook(nb, "book/toy.ipynb")
    setup = student.cells[0]
    assert setup.metadata["book_sync"] == "setup"
    assert nb.cells[0].source == instructor_setup and "pip" in instructor_setup  # instructor unchanged
    assert "subprocess" not in setup.source and "git+" not in setup.source
    # where lib is importable it does nothing ...
    exec(compile(setup.source, "setup", "exec"), {})
    # ... where it is not, it stops, naming the page and its command
    missing = setup.source.replace('find_spec("lib")', 'find_spec("lib_not_installed_anywhere")')
    assert missing != setup.source
    with pytest.raises(ModuleNotFoundError) as info:
        exec(compile(missing, "setup", "exec"), {})
    extras = "lab,training" if training else "lab"
    command = f'pip install -c constraints.txt ".[{extras}]"'
    assert command in str(info.value) and make_student.STUDENT_PAGE in str(info.value)
    page = (ROOT / "book" / "student.md").read_text()
    assert f"# {make_student.STUDENT_PAGE}" in page and f'".[{extras}]"' in page


def test_student_package_has_its_own_readme(tmp_path):
    dest = make_student.write_package(tmp_path / "package")
    readme = (dest / "README.md").read_text()
    assert readme != (ROOT / "README.md").read_text()
    for word in make_student.INSTRUCTOR_ONLY_WORDS + ("make book", "make lab", "make grade", "rocket"):
        assert word.lower() not in readme.lower(), word
    assert 'pip install -c constraints.txt ".[lab]"' in readme
    assert make_student.STUDENT_PAGE in readme and "notebooks/" in readme
    # the command is the student page's
    assert 'pip install -c constraints.txt ".[lab]"' in (ROOT / "book" / "student.md").read_text()


def _stream(text, name="stdout"):
    return nbformat.v4.new_output("stream", name=name, text=text)


def test_stream_chunks_merged_by_the_build_are_not_shown_twice():
    """MyST-NB merges later stream chunks into the first one in place and stores both:
    the student and portable builds drop the later chunks, and only those."""
    # as the instructor build stores it: the first chunk already holds the second
    stored = [_stream("a = 1\nb = 2\n"), _stream("b = 2\n"), _stream("warning\n", "stderr")]
    kept = make_student.drop_merged_streams(stored)
    assert [o["text"] for o in kept] == ["a = 1\nb = 2\n", "warning\n"]
    # a copy that was not merged keeps every chunk (the control: nothing to drop)
    unmerged = [_stream("a = 1\n"), _stream("b = 2\n")]
    assert make_student.drop_merged_streams(unmerged) == unmerged
    # a chunk that equals the whole first output is not taken for a merged one
    same = [_stream("b = 2\n"), _stream("b = 2\n")]
    assert make_student.drop_merged_streams(same) == same


def test_the_book_build_merges_streams_in_place():
    """The reason for drop_merged_streams: MyST-NB's coalesce_streams enlarges the first
    output it is given (if a MyST-NB upgrade stops doing so, this fails and the repair can go)."""
    # the book's toolchain: the floors run (requirements-min.txt) has no MyST-NB
    coalesce_streams = pytest.importorskip("myst_nb.core.utils").coalesce_streams

    outputs = [_stream("a = 1\n"), _stream("b = 2\n")]
    coalesce_streams(outputs)
    assert outputs[0]["text"] == "a = 1\nb = 2\n" and len(outputs) == 2


# --------------------------------------------------------------------------------------
# handed-out notebooks: references as the book numbers them (jupyterlab-myst renders
# each notebook alone, and numbers its statements from 1)
# --------------------------------------------------------------------------------------
#: The targets of a toy HTML book (make_portable.book_targets): this chapter is section
#: 3.2, another is section 2.2; numbers continue across the pages of a chapter.
TARGETS = {
    "doc:book/ch3/here": ("book/ch3/here.html", "3.2. This chapter"),
    "doc:book/ch2/other": ("book/ch2/other.html", "2.2. Learning curves"),
    "thm-here": ("book/ch3/here.html", "Theorem 3.4"),
    "equation-eq-here": ("book/ch3/here.html", "(3.7)"),
    "fig-here": ("book/ch3/here.html", "Fig. 3.5"),
    "ex-here": ("book/ch3/here.html", "Exercise 3.6"),
    "thm-other": ("book/ch2/other.html", "Theorem 2.1"),
    "equation-eq-m-other": ("book/ch2/other.html", "(2.13)"),  # sphinx: lower case
    "sec-other": ("book/ch2/other.html", "The ridgeless limit at $\\kappa = \\infty$"),
    "secnum:sec-other": ("book/ch2/other.html", "2.2.3"),
    "term:ICL error": ("book/glossary.html#term-ICL-error", "ICL error"),
    "book/ch2/other-solution-1": ("book/ch2/other.html", ""),
    "par-here": ("book/ch3/here.html", ""),  # a label before a paragraph: no title
}
HANDOUT_MD = [
    "---\ndescription: macros\n\n  <!--\nmath:\n  '\\E': '\\mathbb{E}'\n# -->\n---\n$\\def\\E{\\mathbb{E}}$",
    "(par-here)=\n**A paragraph.** It is a target of the book, not of jupyterlab-myst: see {ref}`it <par-here>`.",
    "See {prf:ref}`thm-other`, {eq}`eq-M-other`, {ref}`sec-other`, {ref}`that limit <sec-other>`,\n"
    "{doc}`../ch2/other`, {term}`ICL error` and, here, {prf:ref}`thm-here`, {eq}`eq-here`, "
    "{numref}`fig-here`, {numref}`ex-here`.",
    "```{prf:theorem} Local\n:label: thm-here\n\nIt holds:\n\n:::{math}\n:label: dummy-not-numbered\nx\n:::\n```",
    "$$\na = b\n$$ (eq-here)\n\n```{prf:proof}\nTrivial, by\n$$\nc = d\n$$\n```",
    ":::{figure}\n:label: fig-here\nA caption.\n:::\n\n````{exercise} Try\n:label: ex-here\nDo it.\n````",
]


def _handout_toy():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(s) for s in HANDOUT_MD]
    nb.cells.append(
        nbformat.v4.new_code_cell(
            'def f():\n    """As in (eq-M-other) and (not-a-label)."""\n', metadata={"tags": ["lab-skeleton"]}
        )
    )
    nb.cells.append(nbformat.v4.new_code_cell("x = (eq-here)"))  # not a lab: unchanged
    return nb


def test_handed_out_references_are_the_books_numbers():
    refs = make_student.BookReferences(TARGETS)
    out = make_student.handout_notebook(_handout_toy(), {}, refs, "book/ch3/here")
    text = "\n".join(c.source for c in out.cells if c.cell_type == "markdown")
    # outside the notebook: the book's text and where it is, no role left
    assert (
        "See Theorem 2.1, (2.13), "  # the {doc} reference later in the clause gives the place
        "*The ridgeless limit at $\\kappa = \\infty$*, that limit,\n"
        "section 2.2, *Learning curves*, ICL error and, here," in text
    )
    # inside: the roles stay (jupyterlab-myst resolves them) ...
    assert "{prf:ref}`thm-here`, {eq}`eq-here`, {numref}`fig-here`, {numref}`ex-here`." in text
    assert not any(f"`{t}`" in text for t in ("thm-other", "eq-M-other", "sec-other", "../ch2/other", "ICL error"))
    # ... and each numbered directive carries the book's number, not jupyterlab-myst's 1, 2, ...
    assert "```{prf:theorem} Local\n:label: thm-here\n:enumerator: 3.4\n" in text
    assert ":::{figure}\n:label: fig-here\n:enumerator: 3.5\n" in text
    assert "````{exercise} Try\n:label: ex-here\n:enumerator: 3.6\n" in text
    assert "```{math}\n:label: eq-here\n:enumerator: 3.7\n:enumerated: true\na = b\n```" in text
    assert "$$ (eq-here)" not in text
    # ... and the display equations without a label are not numbered (nor in the book)
    assert out.cells[0].source.startswith(
        "---\ndescription: macros\n\n  <!--\nmath:\n  '\\E': '\\mathbb{E}'\nnumbering:\n  equation: false\n# -->\n---\n"
    )
    # a label before a paragraph targets nothing in jupyterlab-myst: the text, as elsewhere
    assert "see it." in text
    assert ":label: dummy-not-numbered\nx\n" in text  # a target the book does not number: as it was
    assert "```{prf:proof}\n:nonumber:\nTrivial, by\n$$\nc = d\n$$\n```" in text  # the book numbers no proof
    # the labs' docstrings name the book's equation numbers
    assert out.cells[-2].source == 'def f():\n    """As in (2.13) and (not-a-label)."""\n'
    assert out.cells[-1].source == "x = (eq-here)"
    assert refs.unresolved == []


def test_handed_out_references_link_to_the_student_html_where_published():
    base = "https://school.example/icl/"
    refs = make_student.BookReferences(TARGETS, base, hidden={"book/ch2/other-solution-1"})
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(
            "{prf:ref}`thm-other`, {ref}`sec-other`, {doc}`../ch2/other`, {term}`ICL error`, "
            "{ref}`its solution <book/ch2/other-solution-1>`, {ref}`gone <sec-missing>`."
        )
    ]
    text = make_student.handout_notebook(nb, {}, refs, "book/ch3/here").cells[0].source
    assert text == (
        f"[Theorem 2.1]({base}book/ch2/other.html#thm-other), "
        f"[The ridgeless limit at $\\kappa = \\infty$]({base}book/ch2/other.html#sec-other), "
        f"[Learning curves]({base}book/ch2/other.html), [ICL error]({base}book/glossary.html#term-ICL-error), "
        "its solution (section 2.2, *Learning curves*), gone."  # no solution in the student HTML
    )
    assert refs.unresolved == ["book/ch3/here: {ref}`gone <sec-missing>`"]


def test_stage_resolves_the_handouts_references_from_the_html_book(tmp_path):
    pytest.importorskip("pybtex", reason="handed-out notebooks cite as text: pybtex (a book-build dependency)")
    root, executed = _toy_book(tmp_path)
    _append_markdown(root, executed, "As {prf:ref}`thm-far` says, see {numref}`ex-first`.")
    html = root / "_build" / "html" / "book"
    html.mkdir(parents=True)
    (html.parent / "objects.inv").write_bytes(b"")
    (html / "toy.html").write_text(
        '<title>1. Toy &#8212; b</title><div class="exercise admonition" id="ex-first">'
        '<p class="admonition-title"><span class="caption-number">Exercise 1.3 </span></p></div>'
    )
    (html / "far.html").write_text(
        '<title>2. Far &#8212; b</title><div class="proof theorem admonition" id="thm-far">'
        '<p class="admonition-title"><span class="caption-number">Theorem 2.1 </span></p></div>'
    )
    out = tmp_path / "out"
    (handout,) = make_student.stage(out, root, executed, html.parent)
    text = "\n".join(c.source for c in nbformat.read(handout, 4).cells if c.cell_type == "markdown")
    assert "As Theorem 2.1 (chapter 2, *Far*) says, see {numref}`ex-first`." in text
    assert ":label: ex-first\n:enumerator: 1.3\n" in text
    # the HTML build's sources keep the roles, which the book resolves
    staged = "\n".join(c.source for c in nbformat.read(out / "src" / "book" / "toy.ipynb", 4).cells)
    assert "{prf:ref}`thm-far`" in staged and ":enumerator:" not in staged
    # without the HTML book the roles stay (the control)
    (handout,) = make_student.stage(tmp_path / "bare", root, executed)
    assert "{prf:ref}`thm-far`" in "\n".join(c.source for c in nbformat.read(handout, 4).cells)


def test_handed_out_citations_decode_latex_accents(tmp_path):
    pytest.importorskip("pybtex", reason="the citations need pybtex (a dependency of the book build)")
    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@article{a, author = {Ravent{\\'o}s, Allan and Paul, M.}, title = {T}, year = {2023}}\n"
        '@article{b, author = {Aky\\"urek, Ekin}, title = {U}, year = {2023}}\n'
    )
    cites = make_student.citation_texts(bib)
    assert cites == {"a": ("Raventós and Paul", "2023"), "b": ("Akyürek", "2023")}
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("As {cite:t}`a` and {cite:p}`b` show.")]
    text = make_student.handout_notebook(nb, cites).cells[0].source
    assert text == "As Raventós and Paul (2023) and (Akyürek, 2023) show."


def _each_handed_out_alone(cells: list[str], refs) -> list[str]:
    """Each markdown cell handed out in a notebook of its own (a page's title is given
    once per notebook), as its text."""
    out = []
    for i, cell in enumerate(cells):
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_markdown_cell(cell)]
        out.append(make_student.handout_notebook(nb, {}, refs, f"book/ch3/alone{i}").cells[0].source)
    return out


def test_handed_out_references_do_not_repeat_the_place_their_text_names():
    """A reference whose own text, or the words just before it, name its section gets
    no second mention of it (the front-end passes found "section 3.2 (section 3.2,
    *Testing ...*)" and "in chapter 5 (Proposition 5.3 (chapter 5, ...))")."""
    refs = make_student.BookReferences(TARGETS)
    cells = [
        "Read {doc}`section 2.2 <../ch2/other>` first.",
        "Read {doc}`Chapter 2.2 <../ch2/other>` first.",
        "As in section 2.2 ({prf:ref}`thm-other`).",
        "The quadratic {eq}`eq-M-other` of {doc}`section 2.2 <../ch2/other>`.",
        "So {prf:ref}`thm-other` of {doc}`section 2.2 <../ch2/other>` says, and {prf:ref}`thm-other` in section 2.2.",
        "Use {prf:ref}`Theorem 2.1 <thm-other>` and {doc}`the curves <../ch2/other>`.",
    ]
    out = _each_handed_out_alone(cells, refs)
    assert out == [
        "Read section 2.2 (*Learning curves*) first.",
        "Read Chapter 2.2 (*Learning curves*) first.",
        "As in section 2.2 (Theorem 2.1).",
        "The quadratic (2.13) of section 2.2 (*Learning curves*).",
        "So Theorem 2.1 of section 2.2 (*Learning curves*) says, and Theorem 2.1 in section 2.2.",
        # the control: a text that does not name the place keeps it
        "Use Theorem 2.1 and the curves (section 2.2, *Learning curves*).",  # given once
    ]


def test_handed_out_references_give_a_page_title_once_per_notebook():
    """The second and later references of a notebook to one page name only its number
    (the front-end pass counted "(section 3.1, *...*)" 17 times in section 3.2); another
    notebook (the control) gets the title again."""
    refs = make_student.BookReferences(TARGETS)
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("By {prf:ref}`thm-other`."),
        nbformat.v4.new_markdown_cell("Again {prf:ref}`thm-other`, and {doc}`the curves <../ch2/other>`."),
        nbformat.v4.new_markdown_cell("As {doc}`../ch2/other` says."),
    ]
    first = [c.source for c in make_student.handout_notebook(nb, {}, refs, "book/ch3/here").cells]
    assert first == [
        "By Theorem 2.1 (section 2.2, *Learning curves*).",
        "Again Theorem 2.1, and the curves (section 2.2).",
        "As section 2.2 says.",
    ]
    other = make_student.handout_notebook(nb, {}, refs, "book/ch3/there").cells[0].source
    assert other == "By Theorem 2.1 (section 2.2, *Learning curves*)."


def test_handed_out_references_give_a_place_once_a_paragraph():
    """The fourth front-end pass's cases: the words after a reference name its place
    (", section 2.2;"), a {doc} reference to its page follows at once, the paragraph has
    named it already, or the reference sits in brackets (no brackets within brackets).
    The control: a new paragraph gives the place again."""
    refs = make_student.BookReferences(TARGETS)
    cells = [
        "As before ({prf:ref}`thm-other`, section 2.2; not needed now).",
        "The quadratic {eq}`eq-M-other` ({doc}`../ch2/other`).",
        "By {prf:ref}`thm-other`, whose curves {doc}`../ch2/other` checks, and {eq}`eq-M-other`.",
        "A remark (on {prf:ref}`thm-other`).\n\nAgain {prf:ref}`thm-other`.",
        "As {prf:ref}`thm-other` (after rescaling) shows.",
    ]
    out = _each_handed_out_alone(cells, refs)
    assert out == [
        "As before (Theorem 2.1, section 2.2; not needed now).",
        "The quadratic (2.13) (section 2.2, *Learning curves*).",
        "By Theorem 2.1, whose curves section 2.2, *Learning curves* checks, and (2.13).",
        "A remark (on Theorem 2.1, section 2.2, *Learning curves*).\n\nAgain Theorem 2.1 (section 2.2).",
        "As Theorem 2.1, section 2.2, *Learning curves* (after rescaling) shows.",  # no two brackets
    ]
