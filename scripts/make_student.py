"""Build the student edition of the book: every exercise, no solution content.

The instructor edition is the normal build (``make book``): solutions sit in dropdowns
under the exercises and the coding labs run their reference solutions. This script
makes the student edition from the same sources:

1. it copies the book's sources (``_config.yml``, ``_toc.yml``, ``references.bib`` and
   ``book/``) to ``<out>/src/``, with every notebook transformed:

   - everything from a ``{solution-start}`` directive to the end of the matching
     ``{solution-end}`` directive is removed: the markdown of the solution and every
     code cell in between;
   - in each code cell tagged ``lab-solution`` the lines from ``# --- solution ---``
     to ``# --- end solution ---`` (the markers included) are replaced by the comment
     :data:`SKELETON_COMMENT` and a line ``...``, so the lab's function is a skeleton
     that returns ``None`` (its signature and docstring stay) and shows no solution
     marker (:func:`solution_markers`); its tag becomes ``lab-skeleton``
     (:data:`SKELETON_TAG`), so that no student notebook names a solution in its cell
     metadata (the grader, ``scripts/grade_labs.py``, finds the labs by their
     ``labs.check`` calls, not by a tag);

   - the instructor-only passages of the markdown (pages and notebook cells) are
     removed: the lines from a ``% instructor-only`` line to the next
     ``% end instructor-only`` line, both MyST comments, so the instructor edition
     shows the passage and no marker (used where a page tells readers of the full book
     about launch buttons, ``make lab`` or a clone, which the student edition lacks);
   - the repository's paths and commands that a student, who holds the handed-out
     notebooks and package but not the repository, cannot use (``scripts/make_training.py``,
     ``bench/``, ``tests/...``, ``make data``) are said in words a student can read
     (:func:`student_paths`: "the book's script `make_training.py`"); so are the
     bibliography's notes and, this script being an extension of the student build, the
     API reference's docstrings; ``lib/data/...`` stays (the package holds it);
   - the setup cell (``scripts/sync_notebooks.py``), which in the instructor edition
     installs the package from the repository where ``lib`` is missing (Colab), installs
     nothing: where ``lib`` is missing it stops with the install command of the page
     "Working as a student" (``book/student.md``: the ``package/`` folder handed out,
     with ``constraints.txt``);
   - a hidden cell after the setup cell calls ``labs.set_student_mode()``, so the
     notebook carries its edition: in any Jupyter the lab checks print their verdict
     (``NOT ATTEMPTED``, ``FAIL`` with its wrong cases) and never stop Run All
     (see :mod:`lib.teaching.labs`); the notebook's metadata ``lib_labs`` records the edition,
     the source notebook and the names of its labs (read by ``scripts/grade_labs.py``);

   and ``_config.yml`` loses the Binder/Colab launch buttons and the repository
   buttons, which would open the instructor notebooks;

2. it writes the transformed notebooks to ``<out>/notebooks/`` (same layout as
   ``book/``, without outputs, ``{eval}`` roles kept: students run them; citations as
   plain author-year text, :func:`handout_notebook`, as jupyterlab-myst has no
   bibliography; and, from the instructor build's HTML (``--html``, default
   ``_build/html``), every reference to another chapter as the text the book shows
   ("Theorem 2.1 (section 2.2, *Learning curves*)", or a link to the student HTML
   given ``--student-base-url``) and every numbered statement, figure and equation
   with the book's number, :class:`BookReferences`, as jupyterlab-myst renders each
   notebook alone), for
   instructors to hand out, and the installable package to ``<out>/package/`` with a
   README of its own for students (:func:`package_readme`);

3. unless ``--no-build`` is given, it builds the HTML into ``<out>/html/`` with
   ``jupyter-book``, WITHOUT executing any notebook: the instructor build (``make
   book``) has executed every chapter once, and the staged copy of a chapter is its
   executed notebook (``_build/jupyter_execute/``), transformed as above, with

   - each ``{eval}`` role replaced by ``{eval-recorded}`N```, the text the instructor
     build showed for it (recorded by ``book/_ext/book_evals.py`` in
     ``_build/jupyter_execute/book_evals.json``; the same node, so the same HTML);
   - the outputs cleared of every cell whose source the student edition changes (the
     lab skeletons) or whose result depends on it (the cells that use a lab's
     functions, among them the lab checks): their instructor outputs would show the
     reference solution's results;

   and ``execute_notebooks: off``. A chapter changed since the instructor build (its
   cells differ from the executed copy) or a missing build stops the script with a
   message saying to run ``make book`` first. After the build, each chapter's download
   (``html/_sources/book/<chapter>.ipynb``, which the build copied from the staged
   copy) is replaced by the handed-out notebook, so the download button gives the
   student notebook (:func:`serve_handouts`); the script then fails if a page or a
   download shows a solution marker, or a download holds the build-internal
   ``{eval-recorded}`` role (:func:`html_problems`).

Usage (``make student`` runs the first form, after ``make book``)::

    python scripts/make_student.py [--out _build/student] [--root .]
        [--executed _build/jupyter_execute] [--html _build/html]
        [--student-base-url URL] [--no-build] [-- JBFLAGS...]

The transformation refuses sources it cannot handle safely (an unmatched solution
marker, a ``lab-solution`` cell without both marker lines, a ``{solution}`` directive
of the other style, a markdown page with solutions) with a message naming the file and
the cell.
"""

from __future__ import annotations

import argparse
import ast
import copy
import html
import json
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
import sync_notebooks  # noqa: E402

ROOT = _HERE.parent

#: Marker lines of a lab's reference solution (see the book's notebook conventions).
SOLUTION_BEGIN = "# --- solution ---"
SOLUTION_END = "# --- end solution ---"
LAB_TAG = "lab-solution"
#: The tag a lab cell carries in the student edition, in place of :data:`LAB_TAG`.
SKELETON_TAG = "lab-skeleton"
#: What a lab skeleton shows in place of the reference solution, above a line ``...``.
SKELETON_COMMENT = "# Your code here: write the body in place of the line below."
#: A comment line that marks solution code: ``# --- solution ---``, ``# --- end
#: solution ---``, ``# solution code`` (the bar of a collapsed solution cell,
#: scripts/sync_notebooks.py) and the like. No code cell of the student edition and no
#: page of its HTML may show one (:func:`solution_markers`).
SOLUTION_MARKER = re.compile(
    r"^[ \t]*#[ \t#*=-]*(?:(?:begin|start|end)[ \t]+(?:of[ \t]+)?)?(?:reference[ \t]+)?"
    r"solution(?:[ \t]+code)?[ \t#*=-]*$",
    re.IGNORECASE | re.MULTILINE,
)
#: The cell that puts a student notebook's lab checks in the student edition.
STUDENT_CELL_SOURCE = """\
# Student edition: the lab checks print their verdict and never stop the
# notebook (lib.teaching.labs.set_student_mode).
from lib.teaching import labs as _labs

_labs.set_student_mode(True)"""
STUDENT_ROLE = "student"  # its metadata.book_sync
#: The page of the book that tells students how to install the package.
STUDENT_PAGE = "Working as a student"


def student_setup_source(training: bool = False) -> str:
    """Source of the student edition's setup cell: it installs nothing.

    The instructor edition's setup cell (``scripts/sync_notebooks.py``) installs the
    package from the repository where ``lib`` is missing (Colab). A student installs
    the ``package/`` folder the instructor hands out, with its constraints, as the
    book's page "Working as a student" says; so here the cell only stops, with that
    command, where ``lib`` is missing (``training``: with the extra chapter 7 needs).
    """
    extras = "lab,training" if training else "lab"
    return "\n".join(
        [
            "# Setup: checks that the book's package `lib` is installed; installs nothing.",
            "import importlib.util",
            "",
            'if importlib.util.find_spec("lib") is None:',
            "    raise ModuleNotFoundError(",
            '        "The book\'s package `lib` is not installed in this kernel. Install the "',
            '        "package/ folder your instructor handed out, as the book\'s page "',
            f"        \"'{STUDENT_PAGE}' says: in that folder, run\\n\"",
            f'        "    pip install -c constraints.txt \\".[{extras}]\\"\\n"',
            '        "in the virtual environment whose kernel runs this notebook, "',
            '        "then restart the kernel."',
            "    )",
        ]
    )


#: Lines (MyST comments) around a passage of the markdown that only the instructor
#: edition shows.
INSTRUCTOR_BEGIN = "% instructor-only"
INSTRUCTOR_END = "% end instructor-only"
#: Key of the notebook metadata that marks a student notebook.
METADATA_KEY = "lib_labs"

# top-level sources copied to the staging directory; other top-level folders that a page
# may include (bench/, lib/data/...) are linked, so relative paths keep working
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


#: A link to a lecture's slides (book/syllabus.md): the slides are the instructor's and
#: are not part of the student HTML, so the student edition drops the links.
SLIDES_LINK = re.compile(r'(?:\s*<br>|;)?\s*<a class="slides-link"[^>]*>[^<]*</a>')


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


#: What a ``make`` target of the repository does, as the student edition says it: a
#: student holds the handed-out notebooks and package, not the repository and its
#: Makefile (:func:`student_paths`). A target not listed here is "the book's `make X`".
MAKE_PHRASES = {
    "bench": "a benchmark run",
    "data": "the data scripts",
    "book": "the book's build",
    "student": "the student-edition build",
    "slides": "the slides build",
    "portable": "the portable-notebook build",
}
#: A sentence of the repository's instructions that :data:`MAKE_PHRASES` cannot carry.
_MAKE_IN_SENTENCE = {
    "new `make bench` run": "new benchmark run",
    "One command regenerates them:": "A benchmark run (in the book's repository) regenerates them.",
}
# a role ({eval}`x`, kept as it is) or a code span (MyST `x`, reStructuredText ``x``), in
# the order they come, so that a role's closing backtick never opens a span
# (a span may go on over a line break, not over a blank line)
_SPAN = re.compile(r"(?P<role>\{[\w:.-]+\}`[^`]*`)|(?P<q>``?)(?!`)(?P<body>(?:[^`\n]|\n(?![ \t]*\n))+?)(?P=q)(?!`)")
# a repository path outside a code span (docstrings, references.bib): a script, a test, the
# benchmark folder or a script of it, the book's page script
# (a BibTeX note escapes the underscores: scripts/make\_source\_values.py)
_BARE = re.compile(
    r"(?<![\w/.`-])(?P<body>(?:scripts|tests|bench)/(?:(?:[\w.-]|\\_)+\.py)?|book/_static/[\w.-]+)(?![\w/])"
)
# a parenthesis that holds nothing but a make command: "(`make data`)"
_MAKE_PAREN = re.compile(r"[ \t]*\((?P<q>``?)make [\w-]+(?P=q)\)")
# a fenced block of make commands only (the performance appendix's "make bench")
_MAKE_FENCE = re.compile(r"^```[\w-]*\n(?:[ \t]*make [\w -]+\n)+```[ \t]*\n?", re.MULTILINE)


def _path_phrase(body: str, quote: str) -> str | None:
    """What the student edition says for a repository path or command (``body``, from a
    code span quoted with ``quote``, or bare with ``quote=""``), or None to keep it."""
    body = " ".join(body.split())
    command = re.sub(r"^python3? ", "", body)
    q = quote
    name = lambda n: f"{q}{n}{q}"  # noqa: E731
    m = re.fullmatch(r"scripts/((?:[\w.-]|\\_)+\.py)(?:\s.*)?", command)
    if m:
        return f"the book's script {name(m.group(1))}"
    m = re.fullmatch(r"bench/([\w.-]+\.py)(?:\s.*)?", command)
    if m:
        return name(m.group(1))
    if re.fullmatch(r"bench/?", command):
        return "the book's repository"
    m = re.fullmatch(r"tests/([\w.-]+\.py)(?:::\S+)?", command)
    if m:
        return f"the book's test {name(m.group(1))}"
    if re.fullmatch(r"book/_static/[\w.-]+\.js", command):
        return "the book's page script"
    m = re.fullmatch(r"make ([\w-]+)(?:\s.*)?", command) if quote else None
    if m:
        return MAKE_PHRASES.get(m.group(1), f"the book's {q}make {m.group(1)}{q}")
    return None


def student_paths(text: str) -> str:
    """The student edition's wording of a text that names repository paths or commands.

    A student holds the handed-out notebooks and the package (``lib``, with its data in
    ``lib/data/``), not the repository: a path such as ``scripts/make_training.py``,
    ``bench/`` or ``tests/test_theory.py`` and a command such as ``make data`` mean
    nothing there. In code spans (MyST `x`, reStructuredText ``x``) and, for paths,
    in plain text (docstrings, references.bib):

    - a script becomes "the book's script `make_training.py`" (its arguments dropped);
      a benchmark script its file name (the folder ``bench/``: "the book's repository");
      a test "the book's test `test_theory.py`"; ``book/_static/book.js`` "the book's
      page script";
    - a ``make`` target becomes what it does (:data:`MAKE_PHRASES`); a parenthesis
      holding only a ``make`` command, and a fenced block of ``make`` commands, are dropped;
    - ``lib/data/...`` is kept (the handed-out package holds it), and so is every other
      code span.

    Roles (``{eval}`x```, ``{doc}`x```) are left as they are.
    """
    for old, new in _MAKE_IN_SENTENCE.items():
        text = text.replace(old, new)
    text = _MAKE_FENCE.sub("", text)
    text = _MAKE_PAREN.sub("", text)

    def span(m: re.Match) -> str:
        if m.group("role"):
            return m.group(0)
        phrase = _path_phrase(m.group("body"), m.group("q"))
        if phrase is None:
            return m.group(0)
        before = m.string[: m.start()].rstrip()
        if not before or before[-1] in ".!?" or m.string[: m.start()].endswith("\n\n"):
            phrase = phrase[0].upper() + phrase[1:]  # it starts a sentence
        return phrase

    text = _SPAN.sub(span, text)

    def bare(m: re.Match) -> str:
        phrase = _path_phrase(m.group("body"), "")
        return m.group(0) if phrase is None else phrase

    # outside roles and code spans only (a span's text is rewritten or kept on purpose)
    out, at = [], 0
    for m in _SPAN.finditer(text):
        out += [_BARE.sub(bare, text[at : m.start()]), m.group(0)]
        at = m.end()
    return "".join([*out, _BARE.sub(bare, text[at:])])


def _student_docstring(app, what, name, obj, options, lines: list[str]) -> None:
    """``autodoc-process-docstring``: the API reference's docstrings in the student
    edition's words (:func:`student_paths`)."""
    lines[:] = student_paths("\n".join(lines)).split("\n")


def setup(app):
    """This script as a Sphinx extension of the student build (:func:`student_config`):
    the docstrings of the API reference get :func:`student_paths`."""
    app.connect("autodoc-process-docstring", _student_docstring)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


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
        The source with the lines from each ``# --- solution ---`` to the next
        ``# --- end solution ---``, both markers included, replaced by two lines
        indented like the opening marker: :data:`SKELETON_COMMENT`, which shows where
        the code goes, and ``...``. No solution marker is left for students to see.
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
            out += [f"{indent}{SKELETON_COMMENT}", f"{indent}..."]
        elif stripped == SOLUTION_END:
            if not opened:
                raise StudentEditionError(f"{where}: '{SOLUTION_END}' without a start")
            opened = False
            count += 1
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


def student_notebook(nb: nbformat.NotebookNode, name: str, *, keep_outputs: bool = False) -> nbformat.NotebookNode:
    """Return the student edition of a notebook (a new object; ``nb`` is unchanged).

    Parameters
    ----------
    nb : nbformat.NotebookNode
        The instructor notebook (for ``keep_outputs``, as the instructor build
        executed it).
    name : str
        Its path, for the error messages.
    keep_outputs : bool, optional
        Keep the outputs of the code cells the student edition leaves as they are
        (the HTML build of executed notebooks). The outputs of the lab skeletons and of
        every later cell that names a function or value a lab cell defines (the lab
        checks among them) are cleared all the same: they show the reference solution's
        results. Default: every output is cleared (the notebooks handed out).

    Returns
    -------
    nbformat.NotebookNode
        The notebook without solution spans, with lab skeletons, and without outputs
        or execution counts (but those kept by ``keep_outputs``).
    """
    out = copy.deepcopy(nb)
    cells = []
    in_solution = False
    lab_defined: set[str] = set()
    for i, cell in enumerate(out.cells):
        where = f"{name}, cell {i}"
        if cell.cell_type == "markdown":
            source = student_paths(strip_instructor_only(cell.source, where))
            text, in_solution_after = strip_solution_markdown(source, in_solution, where)
            in_solution = in_solution_after
            if text.strip():
                cell.source = text.strip("\n")
                cells.append(cell)
            continue
        if in_solution:
            continue
        if cell.cell_type == "code":
            is_lab = LAB_TAG in cell.metadata.get("tags", [])
            if is_lab:
                lab_defined |= defined_names(cell.source)
                cell.source = skeleton(cell.source, where)
                cell.metadata["tags"] = [SKELETON_TAG if t == LAB_TAG else t for t in cell.metadata["tags"]]
            if not keep_outputs or is_lab or uses_names(cell.source, lab_defined):
                cell.outputs = []
                cell.execution_count = None
        cells.append(cell)
    if in_solution:
        raise StudentEditionError(f"{name}: a solution-start is never closed")
    training = sync_notebooks.needs_training(out)
    for cell in cells:
        if cell.cell_type == "code" and cell.metadata.get("book_sync") == "setup":
            cell.source = student_setup_source(training)
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


def defined_names(source: str) -> set[str]:
    """The names a code cell binds at its top level (functions, classes, variables)."""
    names: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def uses_names(source: str, names: set[str]) -> bool:
    """Whether a cell's source mentions any of ``names`` as a word (or calls a check)."""
    if re.search(r"\bcheck\(", source):
        return True
    return any(re.search(rf"\b{re.escape(n)}\b", source) for n in names)


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


def student_config(text: str, record: str | None = None) -> str:
    """``_config.yml`` for the student edition: no launch or repository buttons.

    The Binder and Colab buttons, the repository, issues and edit buttons all open
    the repository's instructor notebooks; the student edition has none of them.
    With ``record`` (the path of the instructor build's ``{eval}`` record, relative to
    the staged sources) the notebooks are not executed: they come executed from the
    instructor build, and their ``{eval-recorded}`` roles read the record.
    """
    config = yaml.safe_load(text)
    if record is not None:
        config.setdefault("execute", {})["execute_notebooks"] = "off"
        sphinx = config.setdefault("sphinx", {})
        sphinx.setdefault("config", {})["book_evals_record"] = record
    config["launch_buttons"] = {
        **(config.get("launch_buttons") or {}),
        "binderhub_url": "",
        "colab_url": "",
        "jupyterhub_url": "",
        "thebe": False,
    }
    html_config = config.setdefault("html", {})
    for key in ("use_repository_button", "use_issues_button", "use_edit_page_button"):
        html_config[key] = False
    # this script is also an extension of the student build: the API reference's
    # docstrings get the student edition's words for repository paths (student_paths)
    sphinx = config.setdefault("sphinx", {})
    sphinx["local_extensions"] = {**(sphinx.get("local_extensions") or {}), "make_student": str(_HERE)}
    head = "# The student edition's _config.yml, written by scripts/make_student.py\n"
    return head + yaml.safe_dump(config, sort_keys=False, allow_unicode=True)


def solution_markers(text: str) -> list[str]:
    """The solution-marker comment lines in ``text`` (:data:`SOLUTION_MARKER`), stripped.

    ``text`` is a cell's source, or the text of a page (tags removed, entities
    unescaped: :func:`html_solution_markers`).
    """
    return [m.group(0).strip() for m in SOLUTION_MARKER.finditer(text)]


def has_solution_content(nb: nbformat.NotebookNode) -> list[str]:
    """List what in a notebook still looks like solution content (empty when clean).

    A solution directive in a markdown cell, a solution-marker comment in a code cell
    (:func:`solution_markers`), a cell still tagged ``lab-solution`` (:data:`LAB_TAG`), a
    lab skeleton (tagged :data:`SKELETON_TAG`) with code in place of its ``...``. Used by
    the tests and as a final check on every generated notebook.
    """
    problems = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and re.search(r"\{solution", cell.source):
            problems.append(f"cell {i}: a solution directive")
        if cell.cell_type != "code":
            continue
        for marker in solution_markers(cell.source):
            problems.append(f"cell {i}: the solution marker {marker!r}")
        tags = cell.metadata.get("tags", [])
        if LAB_TAG in tags:
            problems.append(f"cell {i}: the tag '{LAB_TAG}'")
        if LAB_TAG in tags or SKELETON_TAG in tags:
            lines = [ln.strip() for ln in cell.source.splitlines()]
            for j, line in enumerate(lines):
                if line == SKELETON_COMMENT and lines[j + 1 : j + 2] != ["..."]:
                    problems.append(f"cell {i}: code where the skeleton has '...'")
    return problems


#: The HTML tags of a page, removed before its text is searched for markers.
_TAG = re.compile(r"<[^>]*>")


def html_solution_markers(html_dir: Path) -> list[str]:
    """The solution-marker comment lines shown by the pages of a built HTML book.

    Every ``.html`` page under ``html_dir`` is searched, as text (tags removed, entities
    unescaped), and so is every notebook or source its download button gives
    (``_sources``). Returns ``"<page>: <marker>"`` for each one found (empty: clean).
    """
    found = []
    for path in sorted(html_dir.rglob("*")):
        if path.suffix == ".html":
            text = html.unescape(_TAG.sub("", path.read_text(encoding="utf-8")))
        elif path.suffix == ".ipynb":
            cells = nbformat.read(path, as_version=4).cells
            text = "\n".join(c.source for c in cells if c.cell_type == "code")
        else:
            continue
        found += [f"{path.relative_to(html_dir)}: {m}" for m in solution_markers(text)]
    return found


def serve_handouts(html_dir: Path, notebooks: Path) -> list[Path]:
    """Make each chapter's download the handed-out notebook.

    The download button of a chapter's page gives ``html_dir/_sources/book/<rel>.ipynb``,
    which the build copied from the staged copy: the instructor build's outputs, and
    :data:`RECORDED_ROLE` roles (build-internal counters) in place of the ``{eval}``
    roles. Each such file is overwritten by the handed-out notebook
    ``notebooks/<rel>.ipynb`` (same relative path), which students run. Returns the
    files replaced. A chapter the build skipped has no download and is left out.
    """
    served = html_dir / "_sources" / "book"
    replaced = []
    for handout in sorted(notebooks.rglob("*.ipynb")):
        target = served / handout.relative_to(notebooks)
        if target.is_file():
            shutil.copyfile(handout, target)
            replaced.append(target)
    return replaced


def html_problems(html_dir: Path) -> list[str]:
    """What the built student HTML must not serve (empty: clean).

    The solution markers of its pages and downloads (:func:`html_solution_markers`), and
    every downloadable notebook (``.ipynb``) with a :data:`RECORDED_ROLE` role in a cell,
    which only the student build reads: a student's Jupyter would show its counter as
    if it were a result. Each entry names the file.
    """
    found = [f"{m} (a solution marker)" for m in html_solution_markers(html_dir)]
    role = "{" + RECORDED_ROLE + "}"
    for path in sorted(html_dir.rglob("*.ipynb")):
        cells = nbformat.read(path, as_version=4).cells
        where = [str(i) for i, cell in enumerate(cells) if role in cell.source]
        if where:
            found.append(f"{path.relative_to(html_dir)}: the build-internal role {role} in cell(s) {', '.join(where)}")
    return found


#: An ``{eval}`` role in a markdown cell (as tests/book/test_notebooks.py reads them).
EVAL_ROLE = re.compile(r"\{eval\}`([^`]*)`")
#: The role the student build shows a recorded value with (book/_ext/book_evals.py).
RECORDED_ROLE = "eval-recorded"
#: The record of the instructor build's {eval} texts, in its jupyter_execute folder.
RECORD_NAME = "book_evals.json"
_RUN_BOOK = "run `make book` first: the student edition reuses its execution"


def load_record(executed: Path) -> dict[str, list[dict[str, str]]]:
    """The ``{eval}`` texts the instructor build recorded, per document."""
    path = executed / RECORD_NAME
    if not path.is_file():
        raise StudentEditionError(f"no instructor build in {executed} (no {RECORD_NAME}): {_RUN_BOOK}")
    return json.loads(path.read_text(encoding="utf-8"))["docs"]


def replay_evals(nb: nbformat.NotebookNode, entries: list[dict[str, str]], name: str) -> nbformat.NotebookNode:
    """Replace the k-th ``{eval}`expr``` of the notebook by ``{eval-recorded}`j```.

    ``entries`` are the document's recorded roles, in the order the instructor build
    read them; ``j`` is the entry of the k-th role with the same expression (footnotes
    are read last, so the order is matched per expression). The cells myst-nb skips
    (empty, tagged ``remove-cell``) are skipped. Every role must have its entry and
    every entry its role, else the build is stale.
    """
    positions: dict[str, list[int]] = {}
    for j, entry in enumerate(entries):
        positions.setdefault(entry["expr"], []).append(j)
    used: dict[str, int] = {}
    out = copy.deepcopy(nb)
    for i, cell in enumerate(out.cells):
        if cell.cell_type != "markdown" or not cell.source.strip():
            continue
        if "remove-cell" in cell.metadata.get("tags", []):
            continue

        def recorded(match: re.Match, i: int = i) -> str:
            expr = match.group(1)
            k = used.get(expr, 0)
            if k >= len(positions.get(expr, [])):
                raise StudentEditionError(
                    f"{name}, cell {i}: {{eval}}`{expr}` has no value recorded by the instructor build; {_RUN_BOOK}"
                )
            used[expr] = k + 1
            return f"{{{RECORDED_ROLE}}}`{positions[expr][k]}`"

        cell.source = EVAL_ROLE.sub(recorded, cell.source)
    unused = {e: len(js) - used.get(e, 0) for e, js in positions.items() if used.get(e, 0) != len(js)}
    if unused:
        raise StudentEditionError(f"{name}: recorded {{eval}} roles not in the notebook {unused}; {_RUN_BOOK}")
    return out


def drop_merged_streams(outputs: list) -> list:
    """The outputs of one cell without the stream chunks already merged into the first.

    With ``nb_merge_streams`` (``_config.yml``), MyST-NB's ``coalesce_streams`` appends
    every later chunk of a stream (``stdout``, ``stderr``) to that stream's first output,
    in place, and the build then stores the executed notebook with the enlarged first
    output *and* the later chunks. A second rendering of that copy (the student edition,
    the portable notebooks) would print the later chunks twice. A later chunk is dropped
    only when the first output of its stream ends with exactly what the merge appended
    (each non-empty chunk stripped on the right, plus a newline), so an unmerged copy is
    left as it is.
    """
    chunks: dict[str, list] = {}
    for out in outputs:
        if out.get("output_type") == "stream":
            chunks.setdefault(out["name"], []).append(out)
    merged = set()
    for parts in chunks.values():
        later = parts[1:]
        tail = "".join(t.rstrip() + "\n" for t in (p["text"] for p in later) if t.rstrip())
        if later and tail and parts[0]["text"].endswith(tail) and len(parts[0]["text"]) > len(tail):
            merged.update(id(p) for p in later)
    return [out for out in outputs if id(out) not in merged]


def executed_copy(source: nbformat.NotebookNode, path: Path, name: str) -> nbformat.NotebookNode:
    """The instructor build's executed copy of a notebook, checked to be up to date.

    Stream chunks that the build already merged into their stream's first output are
    dropped (:func:`drop_merged_streams`), so that no line is shown twice.
    """
    if not path.is_file():
        raise StudentEditionError(f"{name}: no executed copy {path}; {_RUN_BOOK}")
    executed = nbformat.read(path, as_version=4)
    if [(c.cell_type, c.source) for c in executed.cells] != [(c.cell_type, c.source) for c in source.cells]:
        raise StudentEditionError(f"{name} changed since the instructor build executed it ({path}); {_RUN_BOOK}")
    for cell in executed.cells:
        if cell.cell_type == "code":
            cell.outputs = drop_merged_streams(cell.outputs)
    return executed


def citation_texts(bib: Path) -> dict[str, tuple[str, str]]:
    """bibtex key -> (authors as cited, year), from ``bib`` (``make_portable.cite_texts``)."""
    import make_portable  # noqa: PLC0415  (it imports this module)

    return make_portable.cite_texts(bib)


def handout_notebook(
    nb: nbformat.NotebookNode,
    cites: dict[str, tuple[str, str]],
    refs: BookReferences | None = None,
    docname: str = "",
) -> nbformat.NotebookNode:
    """The notebook as handed out: a copy of ``nb`` with every citation role of its
    markdown cells as plain author-year text (``sync_notebooks.plain_citations``) and,
    given the HTML book's targets (``refs``, for the notebook ``docname``), its
    references as the book numbers them (:meth:`BookReferences.markdown`) and the
    equation labels of its lab docstrings as the book's equation numbers.

    jupyterlab-myst, where students read the notebooks, has no bibliography and shows
    a ``{cite:t}`` role as a warning label; the JupyterLab copies of ``make lab`` get the
    same text (``sync_notebooks.py --lab``). The HTML build's copy keeps the roles,
    which the book resolves into links to its bibliography.
    """
    out = copy.deepcopy(nb)
    labels = local_labels(out)
    for cell in out.cells:
        if cell.cell_type == "markdown":
            cell.source = sync_notebooks.plain_citations(cell.source, cites)
            if refs is not None:
                cell.source = refs.markdown(cell.source, docname, labels)
    if refs is not None:
        refs.lab_equations(out)
        unnumbered_equations(out)
    return out


#: The notebook front matter (first markdown cell) that numbers no display equation but
#: those with an explicit number (``:enumerated: true``), as the book numbers only the
#: labelled ones; jupyterlab-myst would number every ``$$`` block (1), (2), ...
NO_EQUATION_NUMBERS = "numbering:\n  equation: false"


def unnumbered_equations(nb: nbformat.NotebookNode) -> bool:
    """Put :data:`NO_EQUATION_NUMBERS` in the front matter of the notebook's first
    markdown cell (jupyterlab-myst reads the notebook's front matter there), before the
    line ``# -->`` that closes the book's macros cell's hidden block, if any. A notebook
    whose first markdown cell has no front matter is left as it is (returns False)."""
    first = next((c for c in nb.cells if c.cell_type == "markdown"), None)
    if first is None or not first.source.startswith("---\n") or "\nnumbering:" in first.source:
        return False
    lines = first.source.split("\n")
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        return False
    at = next((i for i in range(1, end) if lines[i].strip() == "# -->"), end)
    first.source = "\n".join([*lines[:at], NO_EQUATION_NUMBERS, *lines[at:]])
    return True


#: The roles jupyterlab-myst resolves within the one notebook it renders: a target
#: elsewhere in the book shows as "Cross Reference Not Found" with its raw label.
XREF_ROLE = re.compile(r"\{(?P<name>prf:ref|numref|ref|eq|doc|term)\}`(?P<text>[^`]*)`")
_EXPLICIT_TEXT = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)
#: Where a notebook's markdown defines a target that jupyterlab-myst can refer to:
#: ``(label)=`` before a heading, a directive or a display equation (before a paragraph
#: it targets nothing there), a directive's ``:label:`` or ``:name:``, a labelled display
#: equation ``$$ ... $$ (label)``.
_TARGET_DEF = re.compile(
    r"^[ \t]*\((?P<a>[\w:.-]+)\)=[ \t]*\n(?=(?:[ \t]*\n)*[ \t]*(?:#|`{3,}|:{3,}|\$\$))|^[ \t]*:(?:label|name):[ \t]*(?P<b>\S+)|\$\$[ \t]*\((?P<c>[\w:.-]+)\)[ \t]*$",
    re.MULTILINE,
)
#: What the book shows for a numbered target, and its number: "Theorem 2.1", "Fig. 4.7",
#: "(4.4)", "Proposition A.1".
_NUMBER = re.compile(r"^(?:[A-Z][\w.]*\.? |\()(?P<n>(?:\d+|[A-Z])(?:\.\d+)*)\)?$")
#: A page title with its number, as the book's ``<title>`` shows it: "4. Finite ...".
_NUMBERED_TITLE = re.compile(r"^(?P<n>(?:\d+|[A-Z])(?:\.\d+)*)\.\s+(?P<title>.+)$", re.S)
#: The directives the book numbers (their caption shows the number) and jupyterlab-myst
#: numbers per notebook unless given an ``:enumerator:``; jupyterlab-myst also numbers
#: proofs, which the book does not (they get ``:nonumber:``).
NUMBERED_DIRECTIVES = re.compile(r"^(?:prf:(?!proof$)[\w-]+|exercise|figure|math|table)$")


def local_labels(nb: nbformat.NotebookNode) -> set[str]:
    """The targets a notebook's markdown cells define (:data:`_TARGET_DEF`)."""
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    return {next(g for g in m.groups() if g) for m in _TARGET_DEF.finditer(text)}


def target_id(ids: dict, anchor: str) -> str:
    """The HTML id of a target: ``anchor`` itself, or its lower-case form (sphinx
    writes an equation's id in lower case: ``{eq}`eq-M-kappa``` is ``equation-eq-m-kappa``)."""
    return anchor if anchor in ids or anchor.lower() not in ids else anchor.lower()


class BookReferences:
    """The references of a handed-out notebook, as the HTML book numbers them.

    jupyterlab-myst renders each notebook alone: a ``{prf:ref}``, ``{numref}``,
    ``{ref}``, ``{eq}``, ``{doc}`` or ``{term}`` whose target is in another notebook
    shows as "Cross Reference Not Found", and it numbers the statements, figures and
    equations of a notebook from 1 ("Proposition 1" where the book says A.1). From the
    instructor build's HTML (``make_portable.book_targets``: the same numbers as the
    student edition, which only removes solutions):

    - a reference to a target outside the notebook becomes the text the book shows,
      with where it is: "Theorem 2.1 (section 2.2, *Learning curves*)", "(4.4) of
      chapter 4, *...*", a section's title with its number; or, given ``base`` (the
      student HTML edition's address), a link there with the book's text (never to a
      solution, which that edition lacks: those stay text). A ``{term}`` becomes its
      text (a link to the glossary, given ``base``);
    - a reference to a target in the notebook stays a role, and each numbered
      directive of the notebook (:data:`NUMBERED_DIRECTIVES`) gets the book's number
      as its ``:enumerator:`` option (a labelled ``$$ ... $$ (label)`` becomes a
      ``{math}`` directive with one), which jupyterlab-myst (myst-parser's common
      directive options) shows in the caption and in the references; a proof gets
      ``:nonumber:``, and the display equations without a label get no number
      (:func:`unnumbered_equations`), as in the book. A notebook-wide ``numbering``
      template ("3.%s") would not do: the book's counters run on across the pages of a
      chapter (section 3.2 starts at Fig. 3.5).

    A target the HTML book does not have is reported in :attr:`unresolved` and shown as
    its explicit text or its label.
    """

    def __init__(self, ids: dict, base: str | None = None, hidden: set[str] | frozenset[str] = frozenset()):
        self.ids, self.base, self.hidden = ids, base, hidden
        self.unresolved: list[str] = []
        self.placed: set[tuple[str, str]] = set()  # (notebook, page) whose title was given
        self.page = ""

    @classmethod
    def from_html(cls, html_dir: Path, base: str | None = None) -> BookReferences:
        import make_portable  # noqa: PLC0415  (it imports this module)

        if base is not None and not base.endswith("/"):
            base += "/"
        hidden = make_portable.exercise_ids(html_dir)["solution"]
        return cls(make_portable.book_targets(html_dir), base, hidden)

    def target_id(self, anchor: str) -> str:
        """The HTML id of a target (:func:`target_id`: an equation's is lower case)."""
        return target_id(self.ids, anchor)

    def number(self, anchor: str) -> str:
        """The number the book gives a target ("2.1", "A.1", "4.4"), or ""."""
        shown = self.ids.get(self.target_id(anchor), ("", ""))[1]
        m = _NUMBER.match(shown)
        return m.group("n") if m else ""

    def place(self, page: str) -> str:
        """Where a page is in the book: "section 2.2, *Learning curves*", "chapter 4, *...*"."""
        title = self.ids.get(f"doc:{page.removesuffix('.html')}", ("", ""))[1]
        m = _NUMBERED_TITLE.match(title)
        if not m:
            return f"*{title}*" if title else page
        return f"{self.section(m.group('n'))}, *{m.group('title').strip()}*"

    def place_in(self, docname: str, page: str) -> str:
        """:meth:`place` the first time the notebook ``docname`` refers to ``page``; after
        that only its number ("section 3.1"), so that a notebook citing one section
        twenty times gives its title once."""
        place = self.place(page)
        if (docname, page) in self.placed and not place.startswith("*"):
            return place.partition(", ")[0]
        return place

    @staticmethod
    def names(text: str, place: str) -> bool:
        """Whether ``text`` names the chapter or section that ``place`` starts with
        ("section 2.1, *...*" is named by "chapter 2.1", "section 2.1" or "ch. 2.1")."""
        number = place.partition(", ")[0].split(" ")[-1]
        return bool(number) and bool(
            re.search(rf"\b(?:chapter|section|appendix|ch\.)\s+{re.escape(number)}(?![\w.]*\d)", text, re.I)
        )

    def after(self, shown: str, where: str, before: str = "", named: bool = False, follows: str = "") -> str:
        """``shown`` followed by ``(where)``, without repeating a place already named.

        "section 3.2" with "section 3.2, *Testing ...*" gives "section 3.2 (*Testing ...*)",
        not "section 3.2 (section 3.2, *Testing ...*)"; if the text just ``before`` the
        reference names the place ("in chapter 5 (Proposition 5.3)"), or the words after it
        do (``named``: "Proposition 5.3 of section 3.1"), nothing is added."""
        if not where:
            return shown
        first, _, rest = where.partition(", ")
        if named or self.names(before, where):
            return shown
        if self.names(shown, where):
            if not rest:
                return shown
            where = rest
        prose = re.sub(r"\$[^$]*\$", "", before)  # a formula's brackets are not the sentence's
        if prose.count("(") > prose.count(")") or re.match(r"\s*\(", follows):
            return f"{shown}, {where}"  # no brackets within brackets, nor two side by side
        return f"{shown} ({where})"

    @staticmethod
    def section(number: str) -> str:
        """ "section 3.1", "chapter 4" or "appendix A" for a section number."""
        if "." in number:
            return f"section {number}"
        return f"appendix {number}" if number.isalpha() else f"chapter {number}"

    def role(self, m: re.Match, docname: str, labels: set[str], before: str | None = None) -> str:
        """The text that replaces the reference ``m`` in the notebook ``docname``;
        ``before``: the paragraph's text before it, as handed out (default: the 40
        characters of the source before it)."""
        self.page = ""  # the page _role refers to, if any
        if before is None:
            before = m.string[max(0, m.start() - 40) : m.start()]
        out = self._role(m, docname, labels, before)
        place = self.place(self.page) if self.page else ""
        if ", *" in place and place.partition(", ")[2] in out:
            self.placed.add((docname, self.page))  # its title is given now
        return out

    def named_after(self, follows: str, docname: str, page: str) -> bool:
        """Whether the words after a reference, up to the end of its clause, name its
        page's place ("..., chapter 5; not needed now") or hold a {doc} reference to its
        page, which gives the place ("... ({doc}`../hermite/basics`)", "... and
        {prf:ref}`thm-ridge-idg` in {doc}`../linear/learning_curves`")."""
        clause = re.split(r"[.;:!?](?:\s|$)|\)", follows, maxsplit=1)[0]
        if page and self.names(clause, self.place(page)):
            return True
        for role in re.finditer(r"\{doc\}`(?P<text>[^`]*)`", clause):  # it will give the place
            explicit = _EXPLICIT_TEXT.match(role.group("text"))
            target = explicit.group("target").strip() if explicit else role.group("text").strip()
            doc = re.sub(r"[^/]+/\.\./", "", (Path(docname).parent / target).as_posix())
            if page and self.ids.get(f"doc:{doc}", ("", ""))[0] == page:
                return True
        return False

    def _role(self, m: re.Match, docname: str, labels: set[str], before: str) -> str:
        name, text = m.group("name"), m.group("text")
        follows = m.string[m.end() : m.end() + 160]  # "... of section 3.1", "... in {doc}`...`"
        named = bool(re.match(r"\s+(?:of|in)\s+(?:\{doc\}|(?:chapter|section|appendix)\s)", follows, re.I))
        explicit = _EXPLICIT_TEXT.match(text)
        shown, target = (
            (explicit.group("text").strip(), explicit.group("target").strip()) if explicit else (None, text.strip())
        )
        if name == "term":
            page, term = self.ids.get(f"term:{target}", ("", ""))
            return f"[{shown or target}]({self.base}{page})" if self.base and page else shown or target
        if name == "doc":
            doc = re.sub(r"[^/]+/\.\./", "", (Path(docname).parent / target).as_posix())
            page, title = self.ids.get(f"doc:{doc}", ("", ""))
            self.page = page
            if not page:
                self.unresolved.append(f"{docname}: {m.group(0)}")
                return shown or target
            if self.base:
                untitled = _NUMBERED_TITLE.match(title)
                return f"[{shown or (untitled.group('title') if untitled else title)}]({self.base}{page})"
            if shown:
                return self.after(shown, self.place_in(docname, page), before, named, follows)
            place = self.place_in(docname, page)
            return place.partition(", ")[0] if self.names(before, place) else place
        if target in labels:
            return m.group(0)  # jupyterlab-myst resolves it in the notebook
        anchor = self.target_id(f"equation-{target}" if name == "eq" else target)
        page, book_text = self.ids.get(anchor, ("", ""))
        self.page = page
        named = named or self.named_after(follows, docname, page)
        if not page:
            self.unresolved.append(f"{docname}: {m.group(0)}")
            return shown or target
        if name == "eq":
            book_text = book_text or f"({target})"
        number = self.number(anchor)
        heading = not number or f"{SECTION_KEY}{anchor}" in self.ids
        text = shown or book_text or target
        if self.base and anchor not in self.hidden:
            return f"[{text}]({self.base}{page}#{anchor})"
        here = page == f"{docname}.html"
        if heading:  # the section's title (italic), as the book's link shows it, and its number
            secnum = self.ids.get(f"{SECTION_KEY}{anchor}", ("", ""))[1]
            where = self.section(secnum) if secnum else ("" if here else self.place_in(docname, page))
            where = f"on the page {where}" if where.startswith("*") else where
            text = shown or f"*{text}*"
            return self.after(text, where, before, named, follows)
        where = "" if here else self.place_in(docname, page)
        if shown:
            said = "" if book_text.lower() in shown.lower() else book_text  # no "Prop. 3.2 (Prop. 3.2"
            return self.after(shown, ", ".join(x for x in (said, where) if x), before, named, follows)
        if name == "eq":  # "(2.14) of section 2.2": an equation is read in a sentence
            where = where.split(",")[0]
            if named or m.string.startswith(" of ", m.end()) or self.names(before, where):  # named already
                return text
            return f"{text} of {where}" if where else text
        return self.after(text, where, before, named, follows)

    def markdown(self, source: str, docname: str, labels: set[str]) -> str:
        """One markdown cell: references resolved, numbered directives given the book's numbers."""
        out, at = [], 0
        for m in XREF_ROLE.finditer(source):  # each reference sees its paragraph so far
            out.append(source[at : m.start()])
            paragraph = "".join(out).rsplit("\n\n", 1)[-1]
            out.append(self.role(m, docname, labels, paragraph))
            at = m.end()
        out.append(source[at:])
        return self.enumerators("".join(out))

    def enumerators(self, source: str) -> str:
        """The cell with each numbered directive's ``:enumerator:`` (the book's number),
        each labelled ``$$`` equation as a ``{math}`` directive with one, proofs unnumbered."""
        lines = source.split("\n")
        out: list[str] = []
        fences: list[str] = []  # the fences of the directives open at this line
        i = 0
        while i < len(lines):
            line = lines[i]
            opened = _DIRECTIVE_OPEN.match(line)
            stripped = line.strip()
            if opened:
                fences.append(opened.group("fence"))
                out.append(line)
                j, options = i + 1, []
                while j < len(lines) and re.match(r"^\s*:[\w-]+:", lines[j]):
                    options.append(lines[j])
                    j += 1
                out += options
                keys = {re.match(r"^\s*:([\w-]+):", o).group(1): o for o in options}
                indent = re.match(r"^\s*", options[0] if options else line).group(0)
                name = opened.group("name")
                label = re.sub(r"^\s*:(?:label|name):\s*", "", keys.get("label") or keys.get("name") or "").strip()
                if name == "prf:proof" and not {"nonumber", "enumerated"} & set(keys):
                    out.append(f"{indent}:nonumber:")
                elif NUMBERED_DIRECTIVES.match(name) and label and "enumerator" not in keys:
                    number = self.number(f"equation-{label}" if name == "math" else label)
                    if number:
                        out.append(f"{indent}:enumerator: {number}")
                        if name == "math":  # numbered although equations are not (unnumbered_equations)
                            out.append(f"{indent}:enumerated: true")
                i = j
                continue
            if fences and stripped and set(stripped) == {fences[-1][0]} and len(stripped) >= len(fences[-1]):
                fences.pop()
                out.append(line)
                i += 1
                continue
            if stripped.startswith("$$"):
                if stripped.count("$$") >= 2:
                    end = i
                else:
                    end = next((k for k in range(i + 1, len(lines)) if "$$" in lines[k]), None)
                closing = _EQ_CLOSE.search(lines[end]) if end is not None else None
                kinds = {f[0] for f in fences}
                number = self.number(f"equation-{closing.group('label')}") if closing else ""
                if closing and number and len(kinds) < 2:
                    fence = ":::" if "`" in kinds else "```"
                    body = _EQ_CLOSE.sub("", "\n".join(lines[i : end + 1]).strip()[2:])
                    indent = re.match(r"^\s*", line).group(0)
                    out += [
                        f"{indent}{fence}{{math}}",
                        f"{indent}:label: {closing.group('label')}",
                        f"{indent}:enumerator: {number}",
                        f"{indent}:enumerated: true",
                    ]
                    out += [f"{indent}{ln.strip()}" if ln.strip() else "" for ln in body.strip().split("\n")]
                    out.append(f"{indent}{fence}")
                    i = end + 1
                    continue
            out.append(line)
            i += 1
        return "\n".join(out)

    def lab_equations(self, nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
        """The labs' docstrings with the book's equation numbers in place of labels."""
        import make_portable  # noqa: PLC0415

        return make_portable.lab_equation_numbers(nb, self.ids)


#: A directive's opening line (as ``make_portable`` reads them).
_DIRECTIVE_OPEN = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|:{3,})\{(?P<name>[\w:.-]+)\}\s*(?P<arg>.*)$")
#: The end of a labelled display equation: ``$$ (label)``.
_EQ_CLOSE = re.compile(r"\$\$[ \t]*\((?P<label>[\w:.-]+)\)[ \t]*$")
#: make_portable.SECTION_NUMBER: the key of a section's number in the book's targets.
SECTION_KEY = "secnum:"


def stage(
    out: Path,
    root: Path = ROOT,
    executed: Path | None = None,
    html: Path | None = None,
    base_url: str | None = None,
) -> list[Path]:
    """Write the student sources to ``out/src`` and the notebooks to ``out/notebooks``.

    Parameters
    ----------
    out : pathlib.Path
        The output folder (``_build/student`` for ``make student``).
    root : pathlib.Path, optional
        The book's root (the folder of ``_config.yml``, ``_toc.yml`` and ``book/``).
    executed : pathlib.Path, optional
        The instructor build's executed notebooks and ``{eval}`` record
        (``<root>/_build/jupyter_execute``). Given, the staged chapters are their
        executed copies (outputs kept where the student edition does not change them,
        ``{eval}`` roles replaced by the recorded text) for a build that executes
        nothing; else they are the handed-out notebooks (no outputs).
    html : pathlib.Path, optional
        The instructor build's HTML (``<root>/_build/html``). Given (with its
        ``objects.inv``), the handed-out notebooks refer to the rest of the book as it
        numbers it, and number their statements as it does (:class:`BookReferences`);
        so do the labs' docstrings of the staged chapters. Else the references stay
        roles, which jupyterlab-myst resolves only within a notebook.
    base_url : str, optional
        The student HTML edition's address: the handed-out notebooks' references to the
        rest of the book are links there (default: text).

    Returns
    -------
    list of pathlib.Path
        The student notebooks written under ``out/notebooks``.
    """
    src, notebooks = out / "src", out / "notebooks"
    record = load_record(executed) if executed is not None else None
    for folder in (src, notebooks):
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
    for name in _COPIED:
        shutil.copy2(root / name, src / name)
    # the bibliography's notes name the scripts that stored a source's values
    bib = src / "references.bib"
    bib.write_text(student_paths(bib.read_text(encoding="utf-8")), encoding="utf-8")
    config = src / "_config.yml"
    if record is not None:
        shutil.copy2(executed / RECORD_NAME, src / RECORD_NAME)
    config.write_text(
        student_config(config.read_text(encoding="utf-8"), RECORD_NAME if record is not None else None),
        "utf-8",
    )
    for name in _LINKED:
        if (root / name).exists():
            os.symlink((root / name).resolve(), src / name)
    # the chapters the book builds (only_build_toc_files): the others, never executed
    # by the instructor build, are staged as handed out (the student build skips them)
    built = set(sync_notebooks.toc_notebooks(root)) if record is not None else set()
    cites = citation_texts(root / "references.bib")
    refs = None
    if html is not None and (html / "objects.inv").is_file():
        refs = BookReferences.from_html(html, base_url)
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
            name = str(path.relative_to(root))
            student = student_notebook(nb, name)
            problems = has_solution_content(student)
            if problems:
                raise StudentEditionError(f"{path}: {'; '.join(problems)}")
            handout = notebooks / rel
            handout.parent.mkdir(parents=True, exist_ok=True)
            docname = path.relative_to(root).with_suffix("").as_posix()
            nbformat.write(handout_notebook(student, cites, refs, docname), handout)
            written.append(handout)
            if path in built:
                done = executed_copy(nb, executed / path.relative_to(root), name)
                done = replay_evals(done, record.get(docname, []), name)
                student = student_notebook(done, name, keep_outputs=True)
            if refs is not None:
                refs.lab_equations(student)
            nbformat.write(student, target)
        else:
            if path.suffix == ".md" and re.search(r"\{solution", path.read_text()):
                raise StudentEditionError(
                    f"{path}: solutions in a markdown page are not supported; put the exercises in a notebook"
                )
            if path.suffix == ".md":
                text = strip_instructor_only(path.read_text(encoding="utf-8"), str(path.relative_to(root)))
                target.write_text(SLIDES_LINK.sub("", student_paths(text)), encoding="utf-8")
            else:
                shutil.copy2(path, target)
    if refs is not None and refs.unresolved:
        print("make_student: references the HTML book does not have (left as text):", file=sys.stderr)
        print("\n".join(f"  {r}" for r in sorted(set(refs.unresolved))), file=sys.stderr)
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
    html_dir = out / "html"
    if html_dir.exists():
        shutil.rmtree(html_dir)
    shutil.move(str(work / "_build" / "html"), str(html_dir))
    serve_handouts(html_dir, out / "notebooks")
    problems = html_problems(html_dir)
    if problems:
        raise StudentEditionError("the student HTML serves what it must not: " + "; ".join(problems))


#: What a student needs to ``pip install`` the package, and nothing of ``book/`` (whose
#: notebooks carry the solutions).
PACKAGE_FILES = ("pyproject.toml", "README.md", "LICENSE", "constraints.txt", "lib")


#: Commands and tools of the instructor's repository that a student does not have: the
#: student package's README names none of them (tests/book/test_make_student.py).
INSTRUCTOR_ONLY_WORDS = ("make ", "Binder", "Colab", "answer key", "answer-key", "solution", "git clone")


def package_readme(root: Path = ROOT) -> str:
    """The README of the package handed out to students (its own, not the repository's).

    It says what the package is, the one install command of the book's page "Working as
    a student" (``book/student.md``), and where the notebooks are; it names no command
    of the instructor's repository (:data:`INSTRUCTOR_ONLY_WORDS`).
    """
    project = {}
    if (root / "pyproject.toml").is_file():
        import tomllib

        project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8")).get("project", {})
    name = project.get("name", sync_notebooks.PACKAGE)
    version = project.get("version", "")
    return "\n".join(
        [
            f"# {name} {version}: the package `lib` for the student notebooks".replace("  ", " "),
            "",
            "This folder is the book's Python package `lib`. The notebooks your instructor",
            "handed out with it import `lib` to compute every number, figure and lab check.",
            "It holds no notebook.",
            "",
            "## Install",
            "",
            "In a terminal, in this folder (the one with `pyproject.toml`), with Python 3.11",
            "or newer:",
            "",
            "```bash",
            "python3 -m venv ~/icl-venv",
            "source ~/icl-venv/bin/activate      # on Windows: ~\\icl-venv\\Scripts\\activate",
            'pip install -c constraints.txt ".[lab]"',
            'python -c "import lib; print(lib.__version__)"',
            "```",
            "",
            "`constraints.txt` pins the versions the book is tested with. Chapter 7 trains",
            'networks with JAX: for it, install `".[lab,training]"` instead of `".[lab]"`.',
            "",
            "## The notebooks",
            "",
            "The notebooks are the folder your instructor handed out next to this one",
            "(`notebooks/`). Open them with `jupyter lab` in the same environment and run each",
            "from the top. The page *Working as a student* of the book's student edition",
            "describes these steps, the coding labs and how to hand in.",
            "",
        ]
    )


def write_package(dest: Path, root: Path = ROOT) -> Path:
    """Copy the installable package (:data:`PACKAGE_FILES`) to ``dest``, without caches.

    Its ``README.md`` is :func:`package_readme`, written for students, not the
    repository's README (which describes the instructor's commands).
    """
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for name in PACKAGE_FILES:
        if name == "README.md":
            (dest / name).write_text(package_readme(root), encoding="utf-8")
        elif (root / name).is_dir():
            shutil.copytree(root / name, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(root / name, dest / name)
    return dest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "student")
    parser.add_argument("--root", type=Path, default=ROOT, help="the book's root (default: the repository)")
    parser.add_argument(
        "--executed",
        type=Path,
        default=None,
        help="the instructor build's executed notebooks (default: <root>/_build/jupyter_execute)",
    )
    parser.add_argument(
        "--html",
        type=Path,
        default=None,
        help="the instructor build's HTML, whose numbers and titles the handed-out notebooks' "
        "references show (default: <root>/_build/html, if built)",
    )
    parser.add_argument(
        "--student-base-url",
        default=None,
        help="the student HTML edition's address, where published: the handed-out notebooks' "
        "references to other chapters link there (default: text)",
    )
    parser.add_argument("--no-build", action="store_true", help="only write the sources")
    parser.add_argument("jb_flags", nargs="*", help="flags for jupyter-book build")
    args = parser.parse_args(argv)
    out, root = args.out.resolve(), args.root.resolve()
    executed = None
    if not args.no_build:
        executed = (args.executed or root / "_build" / "jupyter_execute").resolve()
    try:
        html = (args.html or root / "_build" / "html").resolve()
        if not (html / "objects.inv").is_file():
            print(f"make_student: no HTML book in {html}: the handed-out notebooks keep their references as roles")
        written = stage(out, root, executed, html, args.student_base_url)
    except StudentEditionError as err:
        print(f"make_student: {err}", file=sys.stderr)
        return 2
    print(f"{len(written)} student notebooks in {out / 'notebooks'}")
    if (root / "pyproject.toml").is_file():  # a book copy without the package has none to hand out
        print(f"the package to hand out with them in {write_package(out / 'package', root)}")
    if not args.no_build:
        try:
            build(out, args.jb_flags or ["-W", "-n", "--keep-going"])
        except StudentEditionError as err:
            print(f"make_student: {err}", file=sys.stderr)
            return 2
        print(f"The student edition is at: file://{out / 'html' / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
