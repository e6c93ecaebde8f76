"""The student edition names no path or command of the repository a student lacks.

A student holds the handed-out notebooks and package (``lib``, with ``lib/data/``), not
the repository: ``scripts/make_training.py``, ``bench/``, ``tests/test_theory.py`` or
``make data`` mean nothing there. ``scripts/make_student.py`` rewrites them
(``student_paths``) in the notebooks' markdown, the pages, the bibliography's notes and,
as an extension of the student build, the API reference's docstrings. Checked here on
examples, on the staged student notebooks and pages (no build needed) and on the built
student HTML (``html``: after ``make student``; ``STUDENT_HTML``, default
``_build/student/html``).
"""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("make_student", ROOT / "scripts/make_student.py")
make_student = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_student)

STUDENT_HTML = Path(os.environ.get("STUDENT_HTML", ROOT / "_build" / "student" / "html"))


def _make_targets() -> list[str]:
    phony = re.search(r"^\.PHONY:(.*)$", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M)
    return phony.group(1).split()


#: A repository path or command in a student's text: a file or folder of the repository
#: that the handed-out package lacks (``lib/`` other than ``lib/data``, which it holds),
#: or ``make`` with a target of the Makefile ("make the check vacuous" is English).
REPO_REF = re.compile(
    r"(?<![\w/.-])(?:(?:book|scripts|bench|tests|_build|binder|slides)/[\w./<>*\\-]*"
    r"|lib/(?!data\b)[\w./-]+"
    rf"|make (?:{'|'.join(map(re.escape, _make_targets()))})(?![\w-]))"
)
#: Repository paths the student edition may show, by page, with the reason.
#: Repository paths a student page may show (none: the teaching page marks its
#: build paths instructor-only).
ALLOWED: dict[str, set[str]] = {}


def _refs(text: str) -> list[str]:
    return [m.group(0) for m in REPO_REF.finditer(text)]


@pytest.mark.parametrize(
    ("text", "student"),
    [
        (
            "made by `scripts/make_finite_size.py teachers h2_study`; `lib/data/README.md` gives",
            "made by the book's script `make_finite_size.py`; `lib/data/README.md` gives",
        ),
        (
            "made by `python scripts/make_bayes.py` in {eval}`bay_cpu_txt` of CPU time.",
            "made by the book's script `make_bayes.py` in {eval}`bay_cpu_txt` of CPU time.",
        ),
        (
            "stored in `a.csv`, made by `scripts/make_training.py` (`make data`) with",
            "stored in `a.csv`, made by the book's script `make_training.py` with",
        ),
        (
            "scripts in `bench/`. It runs `bench/bench_solvers.py`, `bench/bench_theory.py`.",
            "scripts in the book's repository. It runs `bench_solvers.py`, `bench_theory.py`.",
        ),
        (
            "a lower bound for `make bench`: when a new `make bench` run fails",
            "a lower bound for a benchmark run: when a new benchmark run fails",
        ),
        # a span over a line break
        (
            "by `python scripts/make_training.py controls --groups 1 --labels\n'h2 d=16'`. At",
            "by the book's script `make_training.py`. At",
        ),
        # reStructuredText (docstrings): double backticks, a sentence that starts with one
        (
            "Reports of ``make bench``.\n``make bench`` runs them.",
            "Reports of a benchmark run.\nA benchmark run runs them.",
        ),
        (
            "(see bench/). Checked by tests/test_theory.py.",
            "(see the book's repository). Checked by the book's test test_theory.py.",
        ),
        ("(``tests/test_simulation.py`` counts)", "(the book's test ``test_simulation.py`` counts)"),
        ("at 390 px, book/_static/book.js shows", "at 390 px, the book's page script shows"),
        # a BibTeX note escapes its underscores
        (
            r"(evaluated by scripts/make\_source\_values.py, in lib/data/x.csv)",
            r"(evaluated by the book's script make\_source\_values.py, in lib/data/x.csv)",
        ),
        (
            "One command regenerates them:\n\n```bash\nmake bench\n```\n\nIt runs",
            "A benchmark run (in the book's repository) regenerates them.\n\n\nIt runs",
        ),
        # roles, their targets, other code spans and English are kept
        (
            "| {doc}`lib.teaching.benchmarks <benchmarks>` | reports of `make bench` |",
            "| {doc}`lib.teaching.benchmarks <benchmarks>` | reports of a benchmark run |",
        ),
        (
            "{doc}`scripts/x` and `np.mean` make the check vacuous",
            "{doc}`scripts/x` and `np.mean` make the check vacuous",
        ),
    ],
)
def test_student_paths_rewrites_repository_paths(text, student):
    assert make_student.student_paths(text) == student
    assert not _refs(make_student.student_paths(text).replace("{doc}`scripts/x`", ""))


def test_student_build_rewrites_the_api_docstrings():
    # the student build loads make_student as an extension (local_extensions) ...
    config = make_student.yaml.safe_load(
        make_student.student_config((ROOT / "_config.yml").read_text(encoding="utf-8"), "r.json")
    )
    assert config["sphinx"]["local_extensions"]["make_student"] == str(ROOT / "scripts")
    # ... whose autodoc handler rewrites a docstring's lines in place
    lines = ["The stored tables of ``scripts/make_bayes.py``.", "", "Reads ``lib/data/bayes_error.csv``."]
    make_student._student_docstring(None, "module", "lib.bayes", None, {}, lines)
    assert lines == [
        "The stored tables of the book's script ``make_bayes.py``.",
        "",
        "Reads ``lib/data/bayes_error.csv``.",
    ]


def test_staged_student_sources_name_no_repository_path(tmp_path):
    pytest.importorskip("pybtex", reason="handed-out notebooks cite as text: pybtex (a book-build dependency)")
    # what the handed-out notebooks and the student pages say (no build needed)
    import nbformat

    make_student.stage(tmp_path)
    found = {}
    for path in sorted((tmp_path / "src" / "book").rglob("*")):
        if path.suffix == ".ipynb":
            cells = nbformat.read(path, as_version=4).cells
            text = "\n".join(c.source for c in cells if c.cell_type == "markdown")
        elif path.suffix == ".md" and "_ext" not in path.parts:
            text = path.read_text(encoding="utf-8")
        else:
            continue
        page = path.relative_to(tmp_path / "src").with_suffix(".html").as_posix()
        # a fenced code block of a page is code (the install commands of the student page)
        text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
        bad = set(_refs(text)) - ALLOWED.get(page, set())
        if bad:
            found[page] = sorted(bad)
    assert not found, found
    bib = (tmp_path / "src" / "references.bib").read_text(encoding="utf-8")
    assert not _refs(bib.replace("\\_", "_")), _refs(bib)


@pytest.mark.html
def test_student_html_names_no_repository_path():
    from bs4 import BeautifulSoup

    if not (STUDENT_HTML / "index.html").is_file():
        pytest.skip(f"no student edition at {STUDENT_HTML} (run make student)")
    found = {}
    pages = sorted(
        p for p in STUDENT_HTML.rglob("*.html") if p.relative_to(STUDENT_HTML).parts[0] not in ("_static", "_sources")
    )
    assert len(pages) > 20
    for path in pages:
        soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
        main = soup.select_one('[role="main"]')
        if main is None:
            continue
        # the page's text as a reader sees it: not its code cells' source, nor the
        # header's buttons (the download link names the notebook's file)
        for junk in main.select("script, style, div.cell_input, div.highlight, .bd-header-article, .prev-next-area"):
            junk.decompose()
        text = re.sub(r"\s+", " ", main.get_text(" "))
        page = path.relative_to(STUDENT_HTML).as_posix()
        bad = set(_refs(text)) - ALLOWED.get(page, set())
        if bad:
            found[page] = sorted(bad)
    assert not found, f"repository paths in the student HTML: {found}"
