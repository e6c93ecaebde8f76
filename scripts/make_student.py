"""Build the student edition of the book: every exercise, no solution content.

The instructor edition is the normal build (``make book``): solutions sit in dropdowns
under the exercises and the coding labs run their reference solutions. This script
makes the student edition from the same sources:

1. it copies the book's sources (``_config.yml``, ``_toc.yml``, ``references.bib`` and
   ``book/``) to ``<out>/src/``, with every notebook transformed:

   - everything from a ``{solution-start}`` directive to the end of the matching
     ``{solution-end}`` directive is removed: the markdown of the solution and every
     code cell in between;
   - in each code cell tagged ``lab-solution`` the lines between ``# --- solution ---``
     and ``# --- end solution ---`` are replaced by ``...``, so the lab's function is a
     skeleton that returns ``None`` (its signature and docstring stay);

   - the instructor-only passages of the markdown (pages and notebook cells) are
     removed: the lines from a ``% instructor-only`` line to the next
     ``% end instructor-only`` line, both MyST comments, so the instructor edition
     shows the passage and no marker (used where a page tells readers of the full book
     about launch buttons, ``make lab`` or a clone, which the student edition lacks);
   - a hidden cell after the setup cell calls ``labs.set_student_mode()``, so the
     notebook carries its edition: in any Jupyter the lab checks print their verdict
     (``NOT ATTEMPTED``, one ``FAIL`` line per wrong case) and never stop Run All
     (see :mod:`lib.labs`); the notebook's metadata ``lib_labs`` records the edition,
     the source notebook and the names of its labs (read by ``scripts/grade_labs.py``);

   and ``_config.yml`` loses the Binder/Colab launch buttons and the repository
   buttons, which would open the instructor notebooks (the download button gives the
   student notebook);

2. it writes the transformed notebooks to ``<out>/notebooks/`` (same layout as
   ``book/``, without outputs), for instructors to hand out;

3. unless ``--no-build`` is given, it builds the HTML into ``<out>/html/`` with
   ``jupyter-book`` (with ``LIB_LABS_STUDENT`` removed from the environment: the
   notebooks' own hidden cell must make the checks lenient).

Usage (``make student`` runs the first form)::

    python scripts/make_student.py [--out _build/student] [--no-build] [-- JBFLAGS...]

The transformation refuses sources it cannot handle safely (an unmatched solution
marker, a ``lab-solution`` cell without both marker lines, a ``{solution}`` directive
of the other style, a markdown page with solutions) with a message naming the file and
the cell.
"""

from __future__ import annotations

import argparse
import ast
import copy
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import yaml

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:  # the sibling module, also when loaded by file path
    sys.path.insert(0, str(_HERE))
import solution_spans  # noqa: E402  (after the sys.path line above)

ROOT = _HERE.parent

#: Marker lines of a lab's reference solution (see the book's notebook conventions).
SOLUTION_BEGIN = "# --- solution ---"
SOLUTION_END = "# --- end solution ---"
LAB_TAG = "lab-solution"
#: The cell that puts a student notebook's lab checks in the student edition.
STUDENT_CELL_SOURCE = """\
# Student edition: the lab checks print their verdict and never stop the
# notebook (lib.labs.set_student_mode).
from lib import labs as _labs

_labs.set_student_mode(True)"""
STUDENT_ROLE = "student"  # its metadata.book_sync
#: Lines (MyST comments) around a passage of the markdown that only the instructor
#: edition shows.
INSTRUCTOR_BEGIN = "% instructor-only"
INSTRUCTOR_END = "% end instructor-only"
#: Key of the notebook metadata that marks a student notebook.
METADATA_KEY = "lib_labs"

# top-level sources copied to the staging directory; other top-level folders that a page
# may include (bench/results/...) are linked, so relative paths keep working
_COPIED = ["_config.yml", "_toc.yml", "references.bib"]
_LINKED = ["bench", "lib", "data"]


class StudentEditionError(ValueError):
    """A source file cannot be turned into its student edition safely."""


def strip_solution_markdown(text: str, in_solution: bool, where: str) -> tuple[str, bool]:
    """Remove the solution spans from the text of one markdown cell.

    Parameters
    ----------
    text : str
        The cell's source.
    in_solution : bool
        Whether the cell starts inside a solution span (opened in an earlier cell).
    where : str
        File and cell, for the error messages.

    Returns
    -------
    kept : str
        The text outside solution spans.
    in_solution : bool
        Whether a span is still open at the end of the cell.
    """
    try:
        return solution_spans.outside_text(text, in_solution, where)
    except solution_spans.SolutionMarkerError as err:
        raise StudentEditionError(str(err)) from None


def strip_instructor_only(text: str, where: str) -> str:
    """Remove the instructor-only passages of a markdown text (page or cell).

    Parameters
    ----------
    text : str
        Markdown (MyST).
    where : str
        File and cell, for the error messages.

    Returns
    -------
    str
        The text without the lines from each ``% instructor-only`` line to the next
        ``% end instructor-only`` line (both included). A passage must close in the
        same text; nesting, an unclosed passage or a stray end marker is refused.
    """
    out: list[str] = []
    opened = None
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        stripped = line.strip()
        if stripped == INSTRUCTOR_BEGIN:
            if opened is not None:
                raise StudentEditionError(f"{where}, line {number}: nested '{INSTRUCTOR_BEGIN}'")
            opened = number
        elif stripped == INSTRUCTOR_END:
            if opened is None:
                raise StudentEditionError(f"{where}, line {number}: '{INSTRUCTOR_END}' without a start")
            opened = None
        elif opened is None:
            out.append(line)
    if opened is not None:
        raise StudentEditionError(f"{where}, line {opened}: '{INSTRUCTOR_BEGIN}' is never closed")
    return "".join(out)


def skeleton(source: str, where: str) -> str:
    """Replace every reference solution in a lab cell by ``...``.

    Parameters
    ----------
    source : str
        The source of a code cell tagged ``lab-solution``.
    where : str
        File and cell, for the error messages.

    Returns
    -------
    str
        The source with the lines strictly between each ``# --- solution ---`` and
        ``# --- end solution ---`` marker replaced by one ``...`` line, indented like
        the opening marker. The marker lines stay, to show where the code goes.
    """
    out: list[str] = []
    opened = False
    count = 0
    for line in source.splitlines():
        stripped = line.strip()
        if stripped == SOLUTION_BEGIN:
            if opened:
                raise StudentEditionError(f"{where}: nested '{SOLUTION_BEGIN}'")
            opened = True
            indent = line[: len(line) - len(line.lstrip())]
            out += [line, f"{indent}..."]
        elif stripped == SOLUTION_END:
            if not opened:
                raise StudentEditionError(f"{where}: '{SOLUTION_END}' without a start")
            opened = False
            count += 1
            out.append(line)
        elif not opened:
            out.append(line)
    if opened:
        raise StudentEditionError(f"{where}: '{SOLUTION_BEGIN}' is never closed")
    if count == 0:
        raise StudentEditionError(
            f"{where}: a '{LAB_TAG}' cell needs the marker lines '{SOLUTION_BEGIN}' "
            f"and '{SOLUTION_END}' around its solution"
        )
    return "\n".join(out) + ("\n" if source.endswith("\n") else "")


def student_notebook(nb: nbformat.NotebookNode, name: str) -> nbformat.NotebookNode:
    """Return the student edition of a notebook (a new object; ``nb`` is unchanged).

    Parameters
    ----------
    nb : nbformat.NotebookNode
        The instructor notebook.
    name : str
        Its path, for the error messages.

    Returns
    -------
    nbformat.NotebookNode
        The notebook without solution spans, with lab skeletons, and without outputs
        or execution counts.
    """
    out = copy.deepcopy(nb)
    cells = []
    in_solution = False
    for i, cell in enumerate(out.cells):
        where = f"{name}, cell {i}"
        if cell.cell_type == "markdown":
            source = strip_instructor_only(cell.source, where)
            text, in_solution_after = strip_solution_markdown(source, in_solution, where)
            in_solution = in_solution_after
            if text.strip():
                cell.source = text.strip("\n")
                cells.append(cell)
            continue
        if in_solution:
            continue
        if cell.cell_type == "code":
            if LAB_TAG in cell.metadata.get("tags", []):
                cell.source = skeleton(cell.source, where)
            cell.outputs = []
            cell.execution_count = None
        cells.append(cell)
    if in_solution:
        raise StudentEditionError(f"{name}: a solution-start is never closed")
    roles = [c.metadata.get("book_sync") for c in cells]
    at = roles.index("setup") + 1 if "setup" in roles else 0
    student_cell = nbformat.v4.new_code_cell(
        STUDENT_CELL_SOURCE,
        metadata={
            "book_sync": STUDENT_ROLE,
            "tags": ["remove-cell"],
            "jupyter": {"source_hidden": True},
        },
    )
    if "id" in (cells[0] if cells else {}):
        student_cell["id"] = "book-student"
    else:
        student_cell.pop("id", None)
    out.cells = [*cells[:at], student_cell, *cells[at:]]
    out.metadata[METADATA_KEY] = {
        "edition": "student",
        "source": name,
        "labs": lab_names(out),
    }
    return out


def lab_names(nb: nbformat.NotebookNode) -> list[str]:
    """The ``name=`` of every ``labs.check`` call in the notebook, in order.

    Only literal strings are found (every lab in the book names itself so).
    """
    names = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else func
            if getattr(called, "id", called) != "check":
                continue
            for kw in node.keywords:
                if kw.arg == "name" and isinstance(kw.value, ast.Constant):
                    names.append(str(kw.value.value))
    return names


def student_config(text: str) -> str:
    """``_config.yml`` for the student edition: no launch or repository buttons.

    The Binder and Colab buttons, the repository, issues and edit buttons all open
    the repository's instructor notebooks; the student edition has none of them.
    """
    config = yaml.safe_load(text)
    config["launch_buttons"] = {
        **(config.get("launch_buttons") or {}),
        "binderhub_url": "",
        "colab_url": "",
        "jupyterhub_url": "",
        "thebe": False,
    }
    html = config.setdefault("html", {})
    for key in ("use_repository_button", "use_issues_button", "use_edit_page_button"):
        html[key] = False
    head = "# The student edition's _config.yml, written by scripts/make_student.py\n"
    return head + yaml.safe_dump(config, sort_keys=False, allow_unicode=True)


def has_solution_content(nb: nbformat.NotebookNode) -> list[str]:
    """List what in a notebook still looks like solution content (empty when clean).

    Used by the tests and as a final check on every generated notebook.
    """
    problems = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and re.search(r"\{solution", cell.source):
            problems.append(f"cell {i}: a solution directive")
        if cell.cell_type == "code" and LAB_TAG in cell.metadata.get("tags", []):
            lines = [ln.strip() for ln in cell.source.splitlines()]
            for j, line in enumerate(lines):
                if line == SOLUTION_BEGIN and lines[j + 1 : j + 3] != [
                    "...",
                    SOLUTION_END,
                ]:
                    problems.append(f"cell {i}: code between the solution markers")
    return problems


def stage(out: Path, root: Path = ROOT) -> list[Path]:
    """Write the student sources to ``out/src`` and the notebooks to ``out/notebooks``.

    Parameters
    ----------
    out : pathlib.Path
        The output folder (``_build/student`` for ``make student``).
    root : pathlib.Path, optional
        The repository root.

    Returns
    -------
    list of pathlib.Path
        The student notebooks written under ``out/notebooks``.
    """
    src, notebooks = out / "src", out / "notebooks"
    for folder in (src, notebooks):
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
    for name in _COPIED:
        shutil.copy2(root / name, src / name)
    config = src / "_config.yml"
    config.write_text(student_config(config.read_text(encoding="utf-8")), "utf-8")
    for name in _LINKED:
        if (root / name).exists():
            os.symlink(root / name, src / name)
    written = []
    for path in sorted((root / "book").rglob("*")):
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            continue
        rel = path.relative_to(root / "book")
        target = src / "book" / rel
        if path.is_dir():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".ipynb":
            nb = nbformat.read(path, as_version=4)
            student = student_notebook(nb, str(path.relative_to(root)))
            problems = has_solution_content(student)
            if problems:
                raise StudentEditionError(f"{path}: {'; '.join(problems)}")
            nbformat.write(student, target)
            handout = notebooks / rel
            handout.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(student, handout)
            written.append(handout)
        else:
            if path.suffix == ".md" and re.search(r"\{solution", path.read_text()):
                raise StudentEditionError(
                    f"{path}: solutions in a markdown page are not supported; put the exercises in a notebook"
                )
            if path.suffix == ".md":
                text = path.read_text(encoding="utf-8")
                target.write_text(strip_instructor_only(text, str(path.relative_to(root))), encoding="utf-8")
            else:
                shutil.copy2(path, target)
    return written


def build(out: Path, jb_flags: list[str]) -> None:
    """Build the staged sources into ``out/html``.

    ``LIB_LABS_STUDENT`` is removed from the environment: the student notebooks'
    own hidden cell must keep their unfinished labs from failing the build.
    """
    env = {k: v for k, v in os.environ.items() if k != "LIB_LABS_STUDENT"}
    work = out / "work"
    jb = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jb), "build", str(out / "src"), "--path-output", str(work), *jb_flags]
    print("running:", " ".join(cmd), flush=True)
    subprocess.run(cmd, env=env, check=True)
    html = out / "html"
    if html.exists():
        shutil.rmtree(html)
    shutil.move(str(work / "_build" / "html"), str(html))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "student")
    parser.add_argument("--no-build", action="store_true", help="only write the sources")
    parser.add_argument("jb_flags", nargs="*", help="flags for jupyter-book build")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    written = stage(out)
    print(f"{len(written)} student notebooks in {out / 'notebooks'}")
    if not args.no_build:
        build(out, args.jb_flags or ["-W", "-n", "--keep-going"])
        print(f"The student edition is at: file://{out / 'html' / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
