"""Tests for scripts/make_student.py: the student edition has no solution content."""

import ast
import copy
import importlib.util
import os
from pathlib import Path

import nbformat
import pytest
import yaml

from lib import labs

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
        code("import numpy as np\nfrom lib.hermite import hermite_function\nfrom lib import labs"),
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
    lab = next(c for c in student.cells if "lab-solution" in c.metadata.get("tags", []))
    assert "hermegauss" not in lab.source and '"""The Hermite coefficient' in lab.source
    assert "# --- solution ---\n    ...\n    # --- end solution ---" in lab.source


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
    lab = next(c for c in student.cells if "lab-solution" in c.metadata.get("tags", []))
    lab.source = lab.source.replace("    ...\n", "    return 0.25\n")
    check = student.cells.index(lab) + 1
    student.cells[check].source = "labs.check(coefficient, lambda m: 0.5, [(1,), (2,)], name='a_1 of ReLU')"
    text = _run(student, tmp_path)
    lines = [ln for ln in text.splitlines() if ln.startswith("FAIL")]
    assert [ln.split(": the output")[0] for ln in lines] == [
        "FAIL: a_1 of ReLU: case 1 of 2 (1)",
        "FAIL: a_1 of ReLU: case 2 of 2 (2)",
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
    written = make_student.stage(tmp_path)
    assert len(written) == len(list((ROOT / "book").rglob("*.ipynb")))
    assert os.path.exists(tmp_path / "src" / "_toc.yml")
    config = yaml.safe_load((tmp_path / "src" / "_config.yml").read_text())
    assert config["launch_buttons"]["binderhub_url"] == ""
    labs_found = []
    for path in written:
        nb = nbformat.read(path, as_version=4)
        assert make_student.has_solution_content(nb) == [], path
        assert nb.metadata["lib_labs"]["edition"] == "student"
        assert [c.metadata.get("book_sync") for c in nb.cells[:3]] == [
            "setup",
            "student",
            "macros",
        ], path
        original = nbformat.read(ROOT / "book" / path.relative_to(tmp_path / "notebooks"), 4)
        assert nb.metadata["lib_labs"]["labs"] == make_student.lab_names(original)
        labs_found += nb.metadata["lib_labs"]["labs"]
        n_ex = sum(c.source.count("{exercise}") for c in original.cells)
        assert sum(c.source.count("{exercise}") for c in nb.cells) == n_ex, path
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None
                if "lab-solution" in cell.metadata.get("tags", []):
                    _skeleton_functions_return_none(cell.source)
    assert len(labs_found) >= 9 and "dMMSE predictor" in labs_found


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
