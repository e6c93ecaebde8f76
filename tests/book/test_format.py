"""The code is formatted and linted with the pinned ruff: the chapters' code cells (ruff format
at 88 characters a line and ruff check, with book/ruff.toml) like lib, tests, scripts, bench and
the book's Sphinx extensions (book/_ext).
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The Python code under ruff (the Makefile's LINT_PATHS; the notebooks are checked below).
PYTHON_PATHS = ("lib", "tests", "scripts", "bench", "book/_ext")


def test_notebook_code_is_ruff_formatted():
    # ruff is pinned in requirements.txt; the floors environment (requirements-min.txt)
    # does not have it and skips this test
    pytest.importorskip("ruff")
    notebooks = sorted(str(p) for p in (ROOT / "book").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    assert notebooks, "no notebooks found under book/"
    out = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "--line-length", "88", "--diff", *notebooks],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 0, (
        "notebook code cells are not ruff-formatted; run `.venv/bin/ruff format "
        "--line-length 88 book/` and commit:\n" + out.stdout[-3000:] + out.stderr[-2000:]
    )


def _notebooks() -> list[str]:
    return sorted(str(p) for p in (ROOT / "book").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def test_notebook_code_passes_ruff_check():
    # ruff reads the code cells of .ipynb files; book/ruff.toml (lib's rules, `lib` first-party)
    # applies to every notebook under book/
    pytest.importorskip("ruff")
    notebooks = _notebooks()
    assert notebooks, "no notebooks found under book/"
    out = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--output-format", "concise", *notebooks],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 0, (
        "`ruff check` fails on the notebooks' code cells; fix them (`.venv/bin/ruff check "
        "--fix book/` fixes the imports), then run scripts/sync_notebooks.py:\n"
        + out.stdout[-3000:]
        + out.stderr[-2000:]
    )


def test_notebook_code_does_not_write_globals():
    """A name the text reads ({eval}) is assigned where a reader sees it, not made by globals()."""
    used = []
    for path in _notebooks():
        for i, cell in enumerate(json.loads(Path(path).read_text(encoding="utf-8"))["cells"]):
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            if cell["cell_type"] == "code" and re.search(r"\b(globals|locals|vars)\(\)", source):
                used.append(f"{Path(path).relative_to(ROOT)}, cell {i}")
    assert not used, f"globals()/locals()/vars() in code cells: {used}"


# Functions a chapter may define in its code cells besides the reader's own (cells tagged
# lab-solution, functions named my_*): none at present (a lab's reference or an exercise's
# objective is a lambda around lib). Analysis helpers belong in lib.
ALLOWED_DEFS: set[tuple[str, str]] = set()


def test_notebooks_define_no_helper_functions():
    """Chapters import their analysis from lib: a def in a code cell is the reader's or a check."""
    found = []
    for path in _notebooks():
        rel = Path(path).relative_to(ROOT).as_posix()
        for i, cell in enumerate(json.loads(Path(path).read_text(encoding="utf-8"))["cells"]):
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            if cell["cell_type"] != "code" or "lab-solution" in cell.get("metadata", {}).get("tags", []):
                continue
            for name in re.findall(r"^def (\w+)", source, flags=re.M):
                if not name.startswith("my_") and (rel, name) not in ALLOWED_DEFS:
                    found.append(f"{rel}, cell {i}: def {name}")
    assert not found, f"functions defined in chapter code cells (move them to lib): {found}"


@pytest.mark.parametrize("command", [["format", "--check", "--diff"], ["check"]], ids=["format", "check"])
def test_python_code_is_ruff_clean(command):
    # lib, tests, scripts and bench with the settings of pyproject.toml ([tool.ruff]), and
    # the book's Sphinx extensions book/_ext with book/ruff.toml's; the pinned ruff of
    # requirements.txt
    pytest.importorskip("ruff")
    out = subprocess.run(
        [sys.executable, "-m", "ruff", *command, *PYTHON_PATHS],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 0, (
        f"`ruff {' '.join(command)}` fails; run `make lint-fix` (ruff format and ruff check --fix on "
        f"{' '.join(PYTHON_PATHS)}):\n" + out.stdout[-3000:] + out.stderr[-2000:]
    )


def test_no_code_cell_is_tagged_remove_cell():
    """The inline build does not execute a code cell tagged remove-cell, so a hidden check
    must be tagged remove-input/remove-output instead (else its {eval} names are undefined
    and its claims never run)."""
    bad = []
    for path in sorted((ROOT / "book").rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        nb = json.loads(path.read_text(encoding="utf-8"))
        for i, cell in enumerate(nb["cells"]):
            if cell["cell_type"] == "code" and "remove-cell" in cell.get("metadata", {}).get("tags", []):
                bad.append(f"{path.relative_to(ROOT)} cell {i}")
    assert not bad, "code cells tagged remove-cell (not executed by the build): " + ", ".join(bad)


#: Matplotlib methods whose return value (an artist) would be shown as a second output.
ARTIST_CALLS = {
    "legend",
    "set",
    "set_xlabel",
    "set_ylabel",
    "set_title",
    "plot",
    "text",
    "annotate",
    "axhline",
    "axvline",
    "scatter",
    "errorbar",
    "fill_between",
    "imshow",
    "suptitle",
}


def test_figure_cells_end_with_a_semicolon():
    """A cell with a figure caption (mystnb figure metadata) must show the figure alone: a
    last top-level expression without ``;`` adds its value's repr as a second output, and
    MyST-NB then defines the figure's label twice (the strict build fails on the duplicate
    target; ruff's plain formatter drops such semicolons)."""
    import ast

    bad = []
    for path in sorted((ROOT / "book").rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        nb = json.loads(path.read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            if cell["cell_type"] != "code" or not cell.get("metadata", {}).get("mystnb", {}).get("figure"):
                continue
            src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            body = ast.parse(src).body
            last = body[-1] if body else None
            # a matplotlib call that returns an artist (legend, set_ylabel, ...) adds an
            # output; with ';' the next text cell must hold no {eval} role (the test below)
            returns_artist = (
                isinstance(last, ast.Expr)
                and isinstance(last.value, ast.Call)
                and isinstance(last.value.func, ast.Attribute)
                and last.value.func.attr in ARTIST_CALLS
            )
            if returns_artist and not src.rstrip().endswith(";"):
                bad.append(f"{path.relative_to(ROOT)} {cell.get('id')}: {ast.unparse(body[-1])[:60]}")
    assert not bad, "figure cells ending in an expression without ';':\n" + "\n".join(bad)


def test_no_eval_text_follows_a_cell_ending_with_a_semicolon():
    """IPython decides whether to show a value by looking at the last input in its
    history, and MyST-NB evaluates ``{eval}`` roles without storing them in the history:
    after a code cell whose source ends with ``;`` every role of the next text cells
    evaluates to nothing (seen in section 3.1 after ``fig.legend(...);``, earlier after
    ``plotting.plain_log_ticks(...);``). End such a cell with an assignment
    (``_ = fig.legend(...)``) instead, or put a code cell between."""
    bad = []
    for path in sorted((ROOT / "book").rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        nb = json.loads(path.read_text(encoding="utf-8"))
        quiet_after = None
        for cell in nb["cells"]:
            src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            tags = cell.get("metadata", {}).get("tags", [])
            if cell["cell_type"] == "code" and "remove-cell" not in tags:
                lines = [ln.split("#")[0].rstrip() for ln in src.rstrip().splitlines()]
                lines = [ln for ln in lines if ln]
                quiet_after = cell.get("id") if lines and lines[-1].endswith(";") else None
            elif cell["cell_type"] == "markdown" and quiet_after and "{eval}" in src:
                bad.append(f"{path.relative_to(ROOT)}: {cell.get('id')} after {quiet_after}")
    assert not bad, "text with {eval} roles right after a cell ending in ';':\n" + "\n".join(bad)


def test_code_cells_write_no_book_macro():
    """The book's math macros (\\E, \\rhonl, ...) are defined in each notebook's macros
    cell, which covers its Markdown cells only: a table a code cell prints as Markdown
    showed \\rhonl as a raw warning label in JupyterLab. Code writes the expansion."""
    macros_cell = json.loads((ROOT / "book" / "hermite" / "basics.ipynb").read_text())["cells"][1]
    names = re.findall(r"^\s*'\\(\w+)':", "".join(macros_cell["source"]), re.M)
    assert {"E", "rhonl", "eICL"} <= set(names), names
    macro = re.compile(r"\\\\?(" + "|".join(names) + r")(?![A-Za-z])")
    found = []
    for path in _notebooks():
        for i, cell in enumerate(json.loads(Path(path).read_text())["cells"]):
            if cell["cell_type"] == "code":
                for line in "".join(cell["source"]).splitlines():
                    if "$" in line and macro.search(line):
                        found.append(f"{Path(path).relative_to(ROOT)} cell {i}: {line.strip()}")
    assert not found, "book macros in code cells (write the expansion):\n" + "\n".join(found)
