"""The JupyterLab copies of the chapters (``make lab``, ``make lab-student``).

``scripts/sync_notebooks.py --lab DIR`` prepares a copy: besides the kernel's metadata,
it writes every citation role of the markdown cells as plain author-year text, since
jupyterlab-myst has no bibliography and shows ``{cite:t}`key``` as an orange warning
label. The chapters themselves keep their roles (the book build resolves them).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
pytest.importorskip("pybtex")  # the citations come from references.bib (not in the floors run)
import make_portable  # noqa: E402
import sync_notebooks  # noqa: E402

BIB = ROOT / "references.bib"


@pytest.fixture(scope="module")
def cites():
    return make_portable.cite_texts(BIB)


def test_citation_roles_become_author_year_text(cites):
    who, year = cites["ahn2023transformers"]
    assert year == "2023" and who.startswith("Ahn")
    text = "As {cite:t}`ahn2023transformers` show, it holds {cite}`dobriban2018high,hastie2022surprises`."
    plain = sync_notebooks.plain_citations(text, cites)
    assert "{cite" not in plain and "`" not in plain
    assert plain.startswith(f"As {who} (2023) show, it holds (")
    d_who, d_year = cites["dobriban2018high"]
    h_who, h_year = cites["hastie2022surprises"]
    assert plain.endswith(f"({d_who}, {d_year}; {h_who}, {h_year}).")
    # {cite:p} is parenthetical like {cite}
    assert sync_notebooks.plain_citations("{cite:p}`ahn2023transformers`", cites) == f"({who}, 2023)"
    # an unknown key is refused, not shown as its key
    with pytest.raises(ValueError, match="nokey2099"):
        sync_notebooks.plain_citations("{cite:t}`nokey2099`", cites)


def _cites_in(path: Path) -> list[str]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [
        m.group(0)
        for c in nb["cells"]
        if c["cell_type"] == "markdown"
        for m in sync_notebooks.CITE_ROLE.finditer("".join(c["source"]))
    ]


def test_lab_copy_has_no_citation_roles(tmp_path, cites):
    # a copy of every chapter with a citation, as `make lab` makes it
    chapters = [p for p in sorted((ROOT / "book").rglob("*.ipynb")) if _cites_in(p)]
    assert len(chapters) >= 5, chapters
    for path in chapters:
        target = tmp_path / path.relative_to(ROOT / "book")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    assert sync_notebooks.main(["--lab", str(tmp_path)]) == 0
    left = {str(p): _cites_in(p) for p in tmp_path.rglob("*.ipynb") if _cites_in(p)}
    assert not left, left
    # every key's text is there (section 2.1 cites Ahn et al. 2023), code cells unchanged
    model = tmp_path / "linear" / "model.ipynb"
    nb = json.loads(model.read_text(encoding="utf-8"))
    src = json.loads((ROOT / "book" / "linear" / "model.ipynb").read_text(encoding="utf-8"))
    text = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    who, year = cites["ahn2023transformers"]
    assert f"{who} ({year})" in text
    code = lambda book: ["".join(c["source"]) for c in book["cells"] if c["cell_type"] == "code"]  # noqa: E731
    # (but for comments naming the book's targets, given a built book: by their numbers)
    html = ROOT / "_build" / "html"
    ids = make_portable.book_targets(html) if (html / "objects.inv").is_file() else {}
    hidden = ["remove-input" in c["metadata"].get("tags", []) for c in src["cells"] if c["cell_type"] == "code"]
    expected = [make_portable.comment_labels(c, ids, strings=h) if ids else c for c, h in zip(code(src), hidden)]
    assert code(nb) == expected
    # a second run changes nothing (make lab runs it on every start)
    assert sync_notebooks.stamp_lab_copy(tmp_path) == []
    # the chapters keep their roles
    assert _cites_in(ROOT / "book" / "linear" / "model.ipynb")


def test_make_lab_says_it_is_the_instructor_edition():
    # Run All in `make lab` opens every solution: a student studying alone may land there
    make = shutil.which("make")
    if make is None:
        pytest.skip("no make")
    import subprocess

    dry = subprocess.run([make, "-n", "lab"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    echoed = [line for line in dry.splitlines() if line.startswith("echo ")]
    said = " ".join(echoed)
    assert "INSTRUCTOR edition" in said and "make lab-student" in said, dry
    # said before JupyterLab starts
    lines = dry.splitlines()
    assert lines.index(echoed[-1]) < next(i for i, ln in enumerate(lines) if "jupyter lab" in ln)


def test_students_are_pointed_to_lab_student():
    import make_student

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "use `make lab-student`" in readme and "`make lab` is the instructor edition" in readme
    page = (ROOT / "book" / "student.md").read_text(encoding="utf-8")
    # the full book tells a student with a clone to use lab-student, not lab ...
    assert "`make lab-student`" in page and "Do not use `make lab`" in page
    # ... and the student edition, whose readers hold handed-out notebooks, drops it
    student = make_student.strip_instructor_only(page, "book/student.md")
    assert "make lab" not in student
