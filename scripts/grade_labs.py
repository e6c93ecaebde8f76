"""Grade students' submitted notebooks by their coding-lab verdicts.

Each submission is run from top to bottom in a fresh kernel (``nbclient``), in the
student edition (``LIB_LABS_STUDENT=1`` for the kernel, so no check stops the run), with
a time limit for the whole notebook. A cell that raises does not stop the run (the
later labs are still graded; the report counts the cells that raised); a notebook that
cannot be read, runs out of time or kills its kernel is reported as such, with the
verdicts printed before that point. Nothing in a submission can stop the grading of
the others.

The verdict of each lab is the record its check wrote (:func:`lib.teaching.labs.check` appends
one JSON line per check to the file named by ``LIB_LABS_RECORD``, which the grader sets
for the kernel to a file outside the submission's working folder). Printed text is not
read, so a cell that prints ``PASS: <lab>: ...`` earns nothing. Only a check's own record
counts: the grader notes which cell was running when each line was written, and keeps a
line only if that cell is a check cell of the line's lab (a cell that calls
``labs.check(..., name=<lab>)``) and, when the notebook's source in the book is at hand
(its ``lib_labs`` metadata names it), has the source of the book's check cell, ran to
its end without raising, and wrote no more records of the lab than it calls the check
for it. A line that a student's cell writes into the file, that a check the student
wrote or edited writes, or that the student's function writes while the check runs it
(and then stops the check: raises ``KeyboardInterrupt``, hangs, kills the kernel, or
lets the check write its own record too) is ignored and counted in the run status.

Code in the kernel could still replace the check itself before the check cell runs, and
the book's check cell would then write whatever record the replacement likes. So before
the run the grader reads every code cell (Python's ``ast``, IPython's magics turned into
calls; :func:`tampering`) for code that changes the grading library or reaches past it:
an assignment or deletion of an attribute or item of an imported name (``labs.check =
...``, through an alias ``L = labs`` too), ``setattr``/``delattr`` on one, a rebinding
of a name imported from ``lib`` (``check = ...`` after ``from lib.teaching.labs import
check``), ``sys.modules``, ``importlib.reload``, ``exec``, ``eval``, ``compile``,
``globals()``, ``builtins``, ``sys.settrace`` and frames, ``get_ipython()`` beyond
magics, ``%run`` and a few more.
Such a submission still runs (its executed copy shows what it did), but every lab's
verdict is ``NOT ACCEPTED`` with the cell and the line (``NOT ACCEPTED: cell 7
modifies the grading library (line 1: `labs.check = ...`): assigns an attribute or item
of labs``), for the instructor to read. A cell that only imports ``labs`` and calls
``labs.check`` is not reported (nor is any notebook of the book, in either edition).
The scan reads the code as written; what it cannot see remains possible: an attribute
reached through a string computed at run time (``getattr(obj, "__se" + "lf__")``, or
an object found through ``type(...).__mro__`` or ``inspect.stack()``), the names a
check cell uses besides the library (``np``, the test cases, the reference), which a
cell can rebind, code that a student's module or a package imports (an ``import`` runs
a file the grader does not read), and a rewrite of the record file between two reads,
or of the installed package on disk, by a thread or a shell command (``!...``). The
grader cannot see inside the kernel: grade untrusted notebooks in a container, and read
the executed copies.

The verdicts are ``PASS``, ``FAIL`` (with the number of failing cases), ``NOT
ATTEMPTED``, ``LAB ERROR``, ``NOT ACCEPTED`` when the student's function calls the
library function the lab asks them to write (the check's ``not accepted: your function
calls lib.<module>.<function>, ...`` verdict; the detail names the function) or when
the scan above found a cell that modifies the grading library (the detail names the
cell and the line), or ``NO VERDICT`` when the check never ran. When a lab was checked
more than once, the last check counts.

The run status names the cells that went wrong: for each cell that raised, its number
(counting every cell of the notebook from 1), its first source line and the error (type
and first line of the message), e.g. ``cell 9 (undefined_name + 1) raised NameError:
name 'undefined_name' is not defined``; for a notebook that ran out of time or killed
its kernel, the cell that was running; when that is a lab's check, the lab and the
student's cell that defines the function it checks (``timed out after 600 s in the check
of lab doubling (cell 5 (...)), which calls your function double from cell 4 (def
double(x):)``). Which labs a notebook has is
read from its ``lib_labs`` metadata (written by ``make student``) or, failing that,
from the ``labs.check`` calls in its code. A passed lab earns ``--points`` points
(default 1); every other verdict earns none.

Written to ``--out`` (default ``_build/grades``):

- ``grades.csv``: one row per student, notebook and lab (student, notebook, run,
  lab, verdict, failing_cases, points, max_points, detail);
- ``grades.md`` and ``grades.html``: a table per notebook, one row per student (run
  status, each lab's verdict, points), and each student's total; a ``FAIL`` shows its
  first failing case, with the cause (``FAIL (4 cases): case 1 of 4 (...): your function
  raised ValueError: ... (in my_effective_noise, line 18 ...)``);
- ``executed/<student>/<notebook>``: the executed copies, to see what a student saw.

The student is the name of the folder that holds the notebook
(``submissions/alice/finite_data.ipynb``), or the file name when all submissions sit
in one folder (``submissions/alice.ipynb``).

Usage (``make grade SUBMISSIONS="submissions/*/*.ipynb"`` runs it)::

    python scripts/grade_labs.py [--out DIR] [--timeout SECONDS] NOTEBOOK...

Submissions run with the grader's permissions: grade untrusted notebooks in a
container or a throwaway account.
"""

from __future__ import annotations

import argparse
import ast
import csv
import html
import json
import math
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbclient
import nbformat
from nbclient.exceptions import CellTimeoutError, DeadKernelError

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:  # the sibling module, also when loaded by file path
    sys.path.insert(0, str(_HERE))
import make_student  # noqa: E402  (after the sys.path line above)

sys.path.insert(0, str(_HERE.parent / "book" / "_ext"))
import kernel_polling  # noqa: E402  (a missed kernel wake-up costs 1 s, not the time limit)

kernel_polling.install()

ROOT = _HERE.parent
STATUSES = ("PASS", "FAIL", "NOT ATTEMPTED", "LAB ERROR")
NO_VERDICT = "NO VERDICT"
#: The verdict of a lab whose function calls the reference (lib.teaching.labs.delegated_call).
NOT_ACCEPTED = "NOT ACCEPTED"
_NOT_ACCEPTED_DETAIL = "not accepted: "
_CALLS = re.compile(r"your function calls (\S+?),")
_CSS = (
    "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;"
    "margin-bottom:2em}th,td{border:1px solid #999;padding:.3em .6em;"
    "text-align:left}th{background:#f0f0f0}"
)
#: The environment variable through which lib.teaching.labs.check writes its verdicts.
RECORD_ENV = "LIB_LABS_RECORD"


@dataclass
class LabResult:
    """The verdict of one lab in one submission."""

    lab: str
    verdict: str = NO_VERDICT
    failing_cases: int = 0
    detail: str = ""


@dataclass
class Submission:
    """One graded notebook."""

    student: str
    path: Path
    run: str = "ok"  # ok, "cell k (...) raised ...", timed out in cell k, kernel died, unreadable, ...
    labs: list[LabResult] = field(default_factory=list)
    seconds: float = 0.0

    def points(self, per_lab: float) -> float:
        """Points earned: ``per_lab`` for every passed lab."""
        return per_lab * sum(r.verdict == "PASS" for r in self.labs)


def students(paths: list[Path]) -> list[str]:
    """The student of each submission: its folder's name, or its file name.

    The file name (without ``.ipynb``) is used when all submissions are in one folder.
    """
    parents = {p.resolve().parent for p in paths}
    if len(parents) <= 1:
        return [p.stem for p in paths]
    return [p.resolve().parent.name for p in paths]


def expected_labs(nb: nbformat.NotebookNode) -> list[str]:
    """The labs of a notebook: its ``lib_labs`` metadata, else its check calls."""
    meta = nb.metadata.get(make_student.METADATA_KEY) or {}
    names = meta.get("labs") if isinstance(meta, dict) else None
    if isinstance(names, list) and all(isinstance(n, str) for n in names):
        return list(dict.fromkeys(names))
    return list(dict.fromkeys(make_student.lab_names(nb)))


def read_records(path: Path) -> list[dict]:
    """The verdict records that the checks of one run appended to ``path``, in order.

    A line that is not a JSON object with a string ``lab``, a known ``status`` and a
    list of string ``lines`` is skipped (a check writes only such lines).
    """
    if not path.exists():
        return []
    return _parse_records(path.read_bytes())


def records_by_cell(chunks: list[tuple[int | None, bytes]]) -> list[dict]:
    """The records of :func:`run_notebook`'s ``chunks``, each with the key ``"cell"``: the
    index of the cell that was running when it was written (None: no cell was)."""
    records = []
    for index, data in chunks:
        for rec in _parse_records(data):
            records.append({**rec, "cell": index})
    return records


def _parse_records(data: bytes) -> list[dict]:
    records = []
    for line in data.decode("utf-8", errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if (
            isinstance(rec, dict)
            and isinstance(rec.get("lab"), str)
            and rec.get("status") in STATUSES
            and isinstance(rec.get("lines"), list)
            and all(isinstance(x, str) for x in rec["lines"])
            and rec["lines"]
        ):
            records.append(rec)
    return records


def book_check_sources(nb: nbformat.NotebookNode) -> dict[str, set[str]] | None:
    """The source of each lab's check cell in the book, if the notebook's source is at hand.

    The ``lib_labs`` metadata names the notebook (``book/regimes/finite_data.ipynb``);
    None when it does not, or the file is not in this repository.
    """
    meta = nb.metadata.get(make_student.METADATA_KEY) or {}
    name = meta.get("source") if isinstance(meta, dict) else None
    if not isinstance(name, str) or not (ROOT / name).is_file():
        return None
    try:
        book = make_student.student_notebook(nbformat.read(ROOT / name, as_version=4), name)
    except Exception:  # noqa: BLE001 - an unreadable book notebook: compare nothing
        return None
    sources: dict[str, set[str]] = {}
    for cell in book.cells:
        for lab in check_cell_labs(cell):
            sources.setdefault(lab, set()).add(cell.source.strip())
    return sources


def check_cell_labs(cell: nbformat.NotebookNode) -> list[str]:
    """The labs a code cell checks (its ``labs.check(..., name=...)`` calls)."""
    if cell.get("cell_type") != "code":
        return []
    return make_student.lab_names(nbformat.v4.new_notebook(cells=[cell]))


def own_records(records: list[dict], nb: nbformat.NotebookNode) -> tuple[list[dict], int]:
    """The records a lab's own check cell wrote (:func:`records_by_cell`), and the
    number of the others.

    Ignored are the records written by another cell, by a check cell of another lab, by
    a check cell whose source differs from the book's, while no cell ran (or by a cell
    that did not finish: the run timed out or the kernel died in it, see
    :func:`run_notebook`), by a check cell that raised (a check does not raise in the
    student edition, so the student's function stopped it after it had written a record
    of its own), and every record of a lab from a check cell that wrote more of them
    than it calls ``labs.check`` for that lab (a check writes one record per call, so the
    others were written by the student's code during the check).
    """
    book = book_check_sources(nb)
    kept, ignored = [], 0
    for rec in records:
        index = rec.get("cell")
        cell = nb.cells[index] if isinstance(index, int) and 0 <= index < len(nb.cells) else None
        ok = cell is not None and rec["lab"] in check_cell_labs(cell) and not _raised(cell)
        if ok and book is not None and rec["lab"] in book:
            ok = cell.source.strip() in book[rec["lab"]]
        if ok:
            kept.append(rec)
        else:
            ignored += 1
    written: dict[tuple[int, str], int] = {}
    for rec in kept:
        written[rec["cell"], rec["lab"]] = written.get((rec["cell"], rec["lab"]), 0) + 1
    extra = {key for key, n in written.items() if n > check_cell_labs(nb.cells[key[0]]).count(key[1])}
    ignored += sum(written[key] for key in extra)
    return [rec for rec in kept if (rec["cell"], rec["lab"]) not in extra], ignored


def _raised(cell: nbformat.NotebookNode) -> bool:
    """Whether an executed code cell has an error output."""
    return any(o.get("output_type") == "error" for o in cell.get("outputs", []))


def verdicts(records: list[dict], labs: list[str]) -> list[LabResult]:
    """Each lab's verdict from the checks' records (:func:`read_records`).

    When a lab was checked more than once, the last check counts. Records naming no lab
    of ``labs`` are ignored.
    """
    results = {name: LabResult(name) for name in labs}
    for rec in records:
        name, status, details = rec["lab"], rec["status"], rec["lines"]
        if name not in results:
            continue
        if status == "FAIL" and details[0].startswith(_NOT_ACCEPTED_DETAIL):
            results[name] = LabResult(name, NOT_ACCEPTED, detail=details[0])
            continue
        results[name] = LabResult(
            name,
            status,
            failing_cases=len(details) if status == "FAIL" else 0,
            detail=details[0],
        )
    return [results[name] for name in labs]


def _first_line(text: str, limit: int = 120) -> str:
    """The first non-blank line of ``text``, shortened to ``limit`` characters."""
    line = next((x.strip() for x in str(text).splitlines() if x.strip()), "")
    return line if len(line) <= limit else line[: limit - 3] + "..."


def describe_cell(nb: nbformat.NotebookNode, index: int) -> str:
    """``cell <k> (<first source line>)``, with ``k = index + 1`` counting every cell."""
    return f"cell {index + 1} ({_first_line(nb.cells[index].source) or 'empty'})"


def raised_cells(nb: nbformat.NotebookNode) -> list[str]:
    """For each code cell with an error output: the cell and the error's type and first line."""
    out = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for o in cell.get("outputs", []):
            if o.get("output_type") == "error":
                message = _first_line(o.get("evalue", ""), 200)
                out.append(
                    f"{describe_cell(nb, i)} raised {o.get('ename', 'an error')}" + (f": {message}" if message else "")
                )
                break
    return out


def _checked_function(source: str) -> str | None:
    """The name of the function a cell's ``check(f, ..., name=...)`` call checks, if any."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Name):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if called == "check":
                return node.args[0].id
    return None


def running_where(nb: nbformat.NotebookNode, index: int) -> str:
    """Where a run stopped: ``in cell <k> (<first line>)``; for a lab's check cell, the
    lab and the cell that defines the student's function it calls (the check runs it):
    ``in the check of lab <lab> (cell <k> (...)), which calls your function <f> from cell
    <j> (def <f>(...):)``. The kernel does not say which line of that function was running.
    """
    cell = nb.cells[index]
    where = f"in {describe_cell(nb, index)}"
    labs_checked = make_student.lab_names(nbformat.v4.new_notebook(cells=[cell])) if cell.cell_type == "code" else []
    function = _checked_function(cell.source) if labs_checked else None
    if not labs_checked:
        return where
    where = f"in the check of lab {labs_checked[0]} ({describe_cell(nb, index)})"
    for j in range(index - 1, -1, -1):
        before = nb.cells[j]
        if before.cell_type != "code" or function is None:
            continue
        try:
            defined = make_student.defined_names(before.source)
        except SyntaxError:
            continue
        if function in defined:
            return f"{where}, which calls your function {function} from {describe_cell(nb, j)}"
    return where


# ------------------------------------------------------- cells that change the grading library
#: The magics whose argument (line magic) or body (cell magic) is Python code run in the kernel.
_CODE_MAGICS = {"time", "timeit", "capture", "prun", "debug"}
#: The magics that run or reload code the grader cannot read in the cell.
_RUN_MAGICS = {"run", "load", "loadpy", "autoreload", "aimport", "pycat"}
#: Names whose any use lets a cell run code the grader cannot read, or reach a namespace.
_BANNED_NAMES = {
    "exec": "calls exec",
    "eval": "calls eval",
    "compile": "calls compile",
    "__import__": "uses __import__",
    "globals": "uses globals()",
    "vars": "uses vars()",
    "__builtins__": "uses __builtins__",
}
#: Attributes through which a cell can reach or change a function's or module's insides,
#: or the frames of a running check (a trace function can change its variables).
_BANNED_ATTRIBUTES = {
    "__dict__",
    "__globals__",
    "__code__",
    "__closure__",
    "__defaults__",
    "__kwdefaults__",
    "__builtins__",
    "__subclasses__",
    "__self__",
    "__setattr__",
    "__delattr__",
    "__import__",
    "settrace",
    "setprofile",
    "_getframe",
    "currentframe",
    "f_back",
    "f_globals",
    "f_locals",
    "f_builtins",
    "f_trace",
    "tb_frame",
}


@dataclass
class Tampering:
    """Where a submission's code changes the grading library: a cell, a line, what it does."""

    cell: int  # index in the notebook (its number is cell + 1)
    line: int  # in the cell, from 1
    text: str  # that line of the cell
    what: str  # e.g. "assigns an attribute of labs"

    def describe(self, nb: nbformat.NotebookNode) -> str:
        """``cell <k> modifies the grading library (line <l>: `<text>`): <what>``."""
        return f"cell {self.cell + 1} modifies the grading library (line {self.line}: `{self.text}`): {self.what}"


def _root(node: ast.AST) -> str | None:
    """The name an ``a.b[c].d`` chain starts from (None: it starts from a call, ...)."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _python_of(source: str) -> str | None:
    """A cell's source as Python: IPython's own transformation turns ``%magic``, ``!cmd``
    and ``%%magic`` into calls on the same lines (None: not Python even then)."""
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        return TransformerManager().transform_cell(source)
    except Exception:  # noqa: BLE001 - a cell IPython cannot read does not run either
        return None


def _imported(tree: ast.AST) -> dict[str, set[str]]:
    """The names the imports of ``tree`` bind, with what they bind (``{"labs":
    {"lib.teaching.labs"}}``; ``from lib.teaching.labs import *`` binds ``check`` and
    ``_record``)."""
    bound: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.asname or alias.name.split(".")[0]
                bound.setdefault(name, set()).add(alias.name if alias.asname else name)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name == "*":
                    if node.module == "lib.teaching.labs":
                        for name in ("check", "_record"):
                            bound.setdefault(name, set()).add(f"{node.module}.{name}")
                    continue
                name = alias.asname or alias.name
                bound.setdefault(name, set()).add(f"{node.module}.{alias.name}")
    return bound


def _is_lib(qualname: str) -> bool:
    return qualname == "lib" or qualname.startswith("lib.")


class _Scan(ast.NodeVisitor):
    """Finds, in one cell's tree, the first thing :func:`tampering` looks for."""

    def __init__(
        self,
        modules: set[str],
        lib_names: set[str],
        found: list[tuple[int, str]],
        plotting: frozenset[str] = frozenset(),
    ):
        self.modules = modules  # names bound by an import (modules, or things in them)
        self.lib_names = lib_names  # of those, the names bound to lib or something in it
        self.plotting = plotting  # of those, the names bound to matplotlib or its pyplot
        self.found = found  # (line, what), appended to
        self.scopes: list[set[str] | None] = [None]  # None: module level; else the globals declared

    def flag(self, node: ast.AST, what: str) -> None:
        self.found.append((getattr(node, "lineno", 1), what))

    def _module_level(self, name: str) -> bool:
        scope = self.scopes[-1]
        return scope is None or name in scope

    def _target(self, target: ast.AST, verb: str) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._target(elt, verb)
        elif isinstance(target, ast.Starred):
            self._target(target.value, verb)
        elif isinstance(target, (ast.Attribute, ast.Subscript)):
            root = _root(target)
            value = target.value
            if (  # a figure setting: plt.rcParams["font.size"] = 9
                isinstance(target, ast.Subscript)
                and isinstance(value, ast.Attribute)
                and value.attr == "rcParams"
                and isinstance(value.value, ast.Name)
                and value.value.id in self.plotting
            ):
                return
            if root in self.modules:
                self.flag(target, f"{verb} an attribute or item of {root}")
        elif isinstance(target, ast.Name) and target.id in self.lib_names and self._module_level(target.id):
            self.flag(target, f"rebinds {target.id}, imported from lib")

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._target(target, "assigns")
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._target(node.target, "assigns")
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._target(node.target, "assigns")
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._target(target, "deletes")
        self.generic_visit(node)

    def visit_For(self, node: ast.For) -> None:
        self._target(node.target, "assigns")
        self.generic_visit(node)

    visit_AsyncFor = visit_For

    def visit_withitem(self, node: ast.withitem) -> None:
        if node.optional_vars is not None:
            self._target(node.optional_vars, "assigns")
        self.generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self._target(node.target, "assigns")
        self.generic_visit(node)

    def _binds(self, node: ast.AST, name: str) -> None:
        if name in self.lib_names and self._module_level(name):
            self.flag(node, f"rebinds {name}, imported from lib")

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._binds(node, node.name)
        for deco in node.decorator_list:
            self.visit(deco)
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:
                self.visit(default)
        declared = {n for s in ast.walk(node) if isinstance(s, ast.Global) for n in s.names}
        self.scopes.append(declared)
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._binds(node, node.name)
        for expr in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
            self.visit(expr)
        self.scopes.append(set())
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.scopes.append(set())
        self.generic_visit(node)
        self.scopes.pop()

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.split(".")[0] in {"builtins", "gc", "ctypes"}:
                self.flag(node, f"imports {alias.name}")
            name = alias.asname or alias.name.split(".")[0]
            what = alias.name if alias.asname else name
            if name in self.lib_names and not _is_lib(what):
                self._binds(node, name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if module.split(".")[0] in {"builtins", "gc", "ctypes"}:
            self.flag(node, f"imports from {module}")
        for alias in node.names:
            if (module, alias.name) in {("sys", "modules"), ("importlib", "reload"), ("importlib", "import_module")}:
                self.flag(node, f"imports {module}.{alias.name}")
            name = alias.asname or alias.name
            if name in self.lib_names and not _is_lib(module) and alias.name != "*":
                self._binds(node, name)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        root = _root(node)
        if node.attr in _BANNED_ATTRIBUTES:
            self.flag(node, f"uses the attribute {node.attr}")
        if node.attr == "get_ipython":
            self.flag(node, "uses get_ipython")
        if root in self.modules and node.attr == "modules":
            self.flag(node, f"uses {root}.modules")
        if root in self.modules and node.attr in {"reload", "import_module"}:
            self.flag(node, f"uses {root}.{node.attr}")
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in _BANNED_NAMES:
            self.flag(node, _BANNED_NAMES[node.id])
        elif node.id == "get_ipython":
            self.flag(node, "uses get_ipython() for more than a magic")

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in {"setattr", "delattr"} and node.args:
            root = _root(node.args[0])
            if root in self.modules:
                self.flag(node, f"calls {func.id} on {root}")
        if isinstance(func, ast.Name) and func.id in {"getattr", "setattr", "delattr"} and len(node.args) > 1:
            name = node.args[1]
            if isinstance(name, ast.Constant) and name.value in _BANNED_ATTRIBUTES:
                self.flag(node, f"uses the attribute {name.value}")
        magic = self._magic(node)
        if magic is not None:
            kind, name, code = magic
            if name in _RUN_MAGICS:
                self.flag(node, f"runs the magic %{name}, whose code the grader cannot read")
            elif name in _CODE_MAGICS and code:
                self._nested(code, offset=node.lineno if kind == "cell" else node.lineno - 1)
        if magic is not None or self._shell(node):
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                if not isinstance(arg, ast.Constant):
                    self.visit(arg)
            return
        self.generic_visit(node)

    @staticmethod
    def _shell(node: ast.Call) -> bool:
        """Whether the call is ``get_ipython().system(...)``/``.getoutput(...)`` (``!cmd``)."""
        func = node.func
        return (
            isinstance(func, ast.Attribute)
            and func.attr in {"system", "getoutput"}
            and isinstance(func.value, ast.Call)
            and getattr(func.value.func, "id", None) == "get_ipython"
        )

    @staticmethod
    def _magic(node: ast.Call) -> tuple[str, str, str] | None:
        """``("line" | "cell", name, code)`` of a ``get_ipython().run_*_magic`` call."""
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr in {"run_line_magic", "run_cell_magic"}):
            return None
        if not (isinstance(func.value, ast.Call) and getattr(func.value.func, "id", None) == "get_ipython"):
            return None
        args = [a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None for a in node.args]
        if not args or args[0] is None:
            return None
        if func.attr == "run_line_magic":
            return "line", args[0], args[1] if len(args) > 1 and args[1] else ""
        return "cell", args[0], args[2] if len(args) > 2 and args[2] else ""

    def _nested(self, code: str, offset: int) -> None:
        """Scan the Python code of a ``%time``-like magic, lines counted in the cell."""
        python = _python_of(code)
        try:
            tree = ast.parse(python) if python is not None else None
        except SyntaxError:
            tree = None
        if tree is None:
            return
        inner: list[tuple[int, str]] = []
        _Scan(self.modules, self.lib_names, inner, self.plotting).visit(tree)
        self.found += [(offset + line, what) for line, what in inner]


def tampering(nb: nbformat.NotebookNode) -> Tampering | None:
    """The first place where a notebook's code changes the grading library, if any.

    A static scan of the code cells (their Python, with IPython's magics turned into
    calls; a cell that is not Python even then cannot run, and is skipped). It finds:

    - an assignment, augmented assignment or deletion of an attribute or item of a
      name bound by an import (``labs.check = ...``, ``lib.teaching.labs._record =
      ...``, ``np.allclose = ...``), also through a simple alias (``L = labs``), and a
      ``setattr``/``delattr`` call on such a name (but a figure setting,
      ``plt.rcParams[...] = ...``);
    - a rebinding, at the top level of a cell (or ``global`` in a function), of a name
      imported from ``lib`` (``labs = ...``, ``check = ...`` after ``from
      lib.teaching.labs import check``, ``def check(...)``, an import of something
      else under that name);
    - any use of ``sys.modules``, ``importlib.reload``/``import_module``,
      ``__import__``, ``exec``, ``eval``, ``compile``, ``globals()``, ``vars()``,
      ``__builtins__``, of the modules ``builtins``, ``gc``, ``ctypes``, of the
      attributes ``__dict__``, ``__globals__``, ``__code__``, ``__setattr__``, ...
      (:data:`_BANNED_ATTRIBUTES`), of the frames and trace functions (``settrace``,
      ``_getframe``, ``f_locals``, ...), of ``get_ipython()``
      but for magics, and the magics that run code from elsewhere (``%run``,
      ``%load``, ``%autoreload``, ...); the code of ``%time``, ``%%capture``, ... is
      scanned too.

    Every name is looked up in the whole notebook at once (order and scope aside), so
    a name imported in one cell is known in every cell.
    """
    trees: list[tuple[int, ast.AST]] = []
    for index, cell in enumerate(nb.cells):
        if cell.get("cell_type") != "code" or not cell.source.strip():
            continue
        python = _python_of(cell.source)
        try:
            trees.append((index, ast.parse(python)))
        except (SyntaxError, ValueError, TypeError):
            continue
    modules: set[str] = set()
    lib_names: set[str] = set()
    plotting: set[str] = set()
    for _, tree in trees:
        bound = _imported(tree)
        modules |= set(bound)
        lib_names |= {name for name, what in bound.items() if any(map(_is_lib, what))}
        plotting |= {name for name, what in bound.items() if what <= {"matplotlib", "matplotlib.pyplot"}}
    changed = True
    while changed:  # simple aliases: L = labs, c = labs.check, m = lib.teaching
        changed = False
        for _, tree in trees:
            for node in ast.walk(tree):
                if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Name, ast.Attribute)):
                    if _root(node.value) in modules:
                        for target in node.targets:
                            if isinstance(target, ast.Name) and target.id not in modules:
                                modules.add(target.id)
                                changed = True
    for index, tree in trees:
        found: list[tuple[int, str]] = []
        _Scan(modules, lib_names, found, frozenset(plotting)).visit(tree)
        if found:
            line, what = min(found)
            lines = nb.cells[index].source.splitlines()
            text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
            return Tampering(index, line, _first_line(text, 100), what)
    return None


def run_notebook(
    nb: nbformat.NotebookNode,
    workdir: Path,
    timeout: float,
    kernel: str = "python3",
    record: Path | None = None,
    chunks: list[tuple[int | None, bytes]] | None = None,
) -> str:
    """Execute ``nb`` in place in a fresh kernel; return the run status.

    Every cell runs even if an earlier one raised. The whole notebook gets ``timeout``
    seconds (each cell the time that is left). The kernel runs in ``workdir`` with
    ``LIB_LABS_STUDENT=1`` and, if ``record`` is given, ``LIB_LABS_RECORD=<record>``
    (where the checks write their verdicts). Returns ``"ok"``, the cells that raised
    (``"cell 9 (undefined_name + 1) raised NameError: name 'undefined_name' is not
    defined"``, several joined by ``"; "``), ``"timed out after <t> s in cell <k>
    (<first line>)"`` or ``"kernel died in cell <k> (<first line>)"`` (followed by the
    cells that raised before), or ``"could not run: <error>"``. If ``chunks`` is a list,
    ``(cell_index, data)`` is appended to it after each cell: the bytes the cell appended
    to ``record``, read at once (a later cell that rewrites the file changes nothing);
    bytes that appeared between cells, or that the cell running when the run stopped
    (timed out, kernel died) wrote, come with the index None.
    """
    deadline = time.monotonic() + timeout
    running: dict[str, int] = {}

    def remaining(cell: nbformat.NotebookNode) -> int:
        return max(1, int(deadline - time.monotonic() + 0.999))

    seen = {"offset": 0}

    def collect(index: int | None) -> None:  # what the file gained since the last look
        if chunks is None or record is None or not record.exists():
            return
        with open(record, "rb") as fh:
            if fh.seek(0, os.SEEK_END) < seen["offset"]:  # rewritten shorter: read it all again
                seen["offset"] = 0
            fh.seek(seen["offset"])
            data = fh.read()
        seen["offset"] += len(data)
        if data:
            chunks.append((index, data))

    def started(cell: nbformat.NotebookNode, cell_index: int, **_: object) -> None:
        collect(None)  # written while no cell ran (a thread of an earlier cell)
        running["index"] = cell_index

    def executed(cell: nbformat.NotebookNode, cell_index: int, **_: object) -> None:
        collect(cell_index)

    client = nbclient.NotebookClient(
        nb,
        timeout_func=remaining,
        kernel_name=kernel,
        allow_errors=True,
        interrupt_on_timeout=False,
        shutdown_kernel="immediate",
        resources={"metadata": {"path": str(workdir)}},
        on_cell_start=started,
        on_cell_executed=executed,
    )
    env = dict(os.environ, LIB_LABS_STUDENT="1")
    env.pop(RECORD_ENV, None)
    if record is not None:
        env[RECORD_ENV] = str(record)

    def stopped(what: str) -> str:  # the cell that was running, and the cells that raised before it
        # what the stopped cell wrote before it stopped: not a finished check's record (the
        # student's function, which the check calls, may have written it and then hung or
        # killed the kernel), so it comes with the index None, which own_records ignores
        collect(None)
        where = f" {running_where(nb, running['index'])}" if "index" in running else ""
        return "; ".join([what + where] + raised_cells(nb))

    try:
        client.execute(env=env)
    except CellTimeoutError:
        return stopped(f"timed out after {timeout:g} s")
    except DeadKernelError:
        return stopped("kernel died")
    except Exception as err:  # noqa: BLE001 - a broken submission is a result, not a crash
        first = (str(err).strip().splitlines() or [""])[0][:200]
        return f"could not run: {type(err).__name__}: {first}"
    raised = raised_cells(nb)
    return "ok" if not raised else "; ".join(raised)


def grade(paths: list[Path], out: Path, timeout: float = 600.0, kernel: str = "python3") -> list[Submission]:
    """Run and grade every submission; write the executed copies under ``out``.

    Parameters
    ----------
    paths : list of pathlib.Path
        The submitted notebooks.
    out : pathlib.Path
        The output folder (``executed/`` is written there).
    timeout : float, optional
        Seconds allowed for each whole notebook (> 0).
    kernel : str, optional
        The Jupyter kernel to run them in.

    Returns
    -------
    list of Submission
        One per path, in order.
    """
    ok = isinstance(timeout, (int, float)) and not isinstance(timeout, bool)
    if not (ok and math.isfinite(timeout) and timeout > 0):
        raise ValueError(f"timeout must be a finite number of seconds > 0; got {timeout!r}")
    results = []
    for path, student in zip(paths, students(paths)):
        sub = Submission(student, path)
        start = time.monotonic()
        try:
            nb = nbformat.read(path, as_version=4)
        except Exception as err:  # noqa: BLE001 - not JSON, not a notebook, missing
            what = "" if isinstance(err, (OSError, ValueError)) else "not a Jupyter notebook (a JSON object); "
            sub.run = f"unreadable: {what}{type(err).__name__}: {str(err)[:200]}"
            results.append(sub)
            print(f"{student}: {path}: {sub.run}", flush=True)
            continue
        labs = expected_labs(nb)
        tampered = tampering(nb)  # before the run, which adds outputs to nb
        with (
            tempfile.TemporaryDirectory(prefix="grade-") as tmp,
            tempfile.TemporaryDirectory(prefix="grade-record-") as rec_dir,
        ):
            record = Path(rec_dir) / "verdicts.jsonl"
            chunks: list[tuple[int | None, bytes]] = []
            sub.run = run_notebook(nb, Path(tmp), timeout, kernel, record, chunks)
            records, ignored = own_records(records_by_cell(chunks), nb)
        sub.seconds = time.monotonic() - start
        sub.labs = verdicts(records, labs)
        if ignored:
            note = f"{ignored} verdict record(s) ignored (not the record of a lab's own check cell run to its end)"
            sub.run = note if sub.run == "ok" else f"{sub.run}; {note}"
        if tampered is not None:  # no verdict of this run can be trusted
            where = tampered.describe(nb)
            sub.labs = [LabResult(lab, NOT_ACCEPTED, detail=_NOT_ACCEPTED_DETAIL + where) for lab in labs]
            note = f"{where}: every lab {NOT_ACCEPTED}"
            sub.run = note if sub.run == "ok" else f"{sub.run}; {note}"
        target = out / "executed" / student / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
        summary = ", ".join(f"{r.lab}: {r.verdict}" for r in sub.labs) or "no labs"
        print(
            f"{student}: {path.name}: {sub.run} ({sub.seconds:.0f} s); {summary}",
            flush=True,
        )
        results.append(sub)
    return results


def write_csv(subs: list[Submission], path: Path, per_lab: float) -> None:
    """One row per student, notebook and lab (a row with an empty lab if none)."""
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(
            [
                "student",
                "notebook",
                "run",
                "lab",
                "verdict",
                "failing_cases",
                "points",
                "max_points",
                "detail",
            ]
        )
        for sub in subs:
            for r in sub.labs or [LabResult("", "")]:
                points = per_lab if r.verdict == "PASS" else 0
                writer.writerow(
                    [
                        sub.student,
                        sub.path.name,
                        sub.run,
                        r.lab,
                        r.verdict,
                        r.failing_cases,
                        f"{points:g}",
                        f"{per_lab if r.lab else 0:g}",
                        r.detail,
                    ]
                )


def _cell(r: LabResult) -> str:
    """A lab's verdict as the reports show it: a failure with its first failing case
    (e.g. ``FAIL (4 cases): case 1 of 4 (...): your function raised ValueError: ...``)."""
    if r.verdict == "FAIL":
        cause = _first_line(r.detail, 240)
        head = f"FAIL ({r.failing_cases} case{'s' if r.failing_cases != 1 else ''})"
        return f"{head}: {cause}" if cause else head
    if r.verdict == "LAB ERROR" and _first_line(r.detail):
        return f"LAB ERROR: {_first_line(r.detail, 240)}"
    if r.verdict == NOT_ACCEPTED:
        if r.detail.startswith(_NOT_ACCEPTED_DETAIL + "cell "):  # the notebook changes the library
            return f"{NOT_ACCEPTED}: {_first_line(r.detail[len(_NOT_ACCEPTED_DETAIL) :], 240)}"
        match = _CALLS.search(r.detail)
        return f"{NOT_ACCEPTED} (calls {match.group(1)})" if match else NOT_ACCEPTED
    return r.verdict


def _tables(subs: list[Submission], per_lab: float) -> list[tuple[str, list[str], list[list[str]]]]:
    """(notebook, header, rows) for each notebook name, then the totals table."""
    tables = []
    for name in dict.fromkeys(s.path.name for s in subs):
        group = [s for s in subs if s.path.name == name]
        labs = list(dict.fromkeys(r.lab for s in group for r in s.labs))
        header = ["student", "run", *labs, "points"]
        rows = []
        for s in group:
            by_lab = {r.lab: r for r in s.labs}
            cells = [_cell(by_lab[lab]) if lab in by_lab else "" for lab in labs]
            rows.append(
                [
                    s.student,
                    s.run,
                    *cells,
                    f"{s.points(per_lab):g} / {per_lab * len(s.labs):g}",
                ]
            )
        tables.append((name, header, rows))
    totals = []
    for student in dict.fromkeys(s.student for s in subs):
        mine = [s for s in subs if s.student == student]
        got = sum(s.points(per_lab) for s in mine)
        top = sum(per_lab * len(s.labs) for s in mine)
        totals.append([student, str(len(mine)), f"{got:g} / {top:g}"])
    tables.append(("Totals", ["student", "notebooks", "points"], totals))
    return tables


def write_markdown(subs: list[Submission], path: Path, per_lab: float) -> None:
    """The summary as Markdown tables."""
    lines = [
        "# Lab grades",
        "",
        f"{len(subs)} submission(s); {per_lab:g} point(s) per passed lab.",
        "",
    ]
    for title, header, rows in _tables(subs, per_lab):
        lines += [
            f"## {title}",
            "",
            "| " + " | ".join(header) + " |",
            "|" + "---|" * len(header),
        ]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
        lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")


def write_html(subs: list[Submission], path: Path, per_lab: float) -> None:
    """The summary as one self-contained HTML page (printable, no scripts)."""
    colour = {
        "PASS": "#d9f2d9",
        "FAIL": "#f8d7d7",
        NOT_ACCEPTED: "#f8d7d7",
        "NOT ATTEMPTED": "#eeeeee",
        "LAB ERROR": "#fde9c9",
        NO_VERDICT: "#fde9c9",
    }
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>Lab grades</title><style>",
        _CSS,
        "</style></head><body>",
        "<h1>Lab grades</h1>",
        f"<p>{len(subs)} submission(s); {per_lab:g} point(s) per passed lab.</p>",
    ]
    for title, header, rows in _tables(subs, per_lab):
        parts.append(f"<h2>{html.escape(title)}</h2><table><tr>")
        parts += [f"<th>{html.escape(h)}</th>" for h in header]
        parts.append("</tr>")
        for row in rows:
            parts.append("<tr>")
            for c in row:
                bg = colour.get(c.split(" (")[0].split(":")[0])
                style = f' style="background:{bg}"' if bg else ""
                parts.append(f"<td{style}>{html.escape(c)}</td>")
            parts.append("</tr>")
        parts.append("</table>")
    parts.append("</body></html>")
    path.write_text("\n".join(parts) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path, help="submitted notebooks")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "grades")
    parser.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        help="seconds allowed for each whole notebook (default 600)",
    )
    parser.add_argument("--points", type=float, default=1.0, help="points per passed lab (default 1)")
    parser.add_argument("--kernel", default="python3", help="Jupyter kernel name")
    args = parser.parse_args(argv)
    for name, value in (("--timeout", args.timeout), ("--points", args.points)):
        if not (math.isfinite(value) and value > 0):  # inf seconds broke every run; nan points were written
            parser.error(f"{name} must be a finite number > 0; got {value!r}")
    seen: dict[Path, Path] = {}
    for path in args.notebooks:
        if path.resolve() in seen:  # it would be graded, and counted in the totals, twice
            parser.error(f"{path} is given twice (as {seen[path.resolve()]} before)")
        seen[path.resolve()] = path
    out = args.out.resolve()
    if out.exists() and not out.is_dir():
        parser.error(f"--out {args.out} is a file; it must be a folder (made if missing)")
    if (out / "executed").exists():
        shutil.rmtree(out / "executed")
    out.mkdir(parents=True, exist_ok=True)
    subs = grade(args.notebooks, out, args.timeout, args.kernel)
    write_csv(subs, out / "grades.csv", args.points)
    write_markdown(subs, out / "grades.md", args.points)
    write_html(subs, out / "grades.html", args.points)
    print(f"grades in {out / 'grades.csv'}, {out / 'grades.md'}, {out / 'grades.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
