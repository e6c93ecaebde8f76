"""Keep the first two cells of every chapter notebook in sync with _config.yml.

Every notebook listed in ``_toc.yml`` starts with two cells that this script writes:

1. **setup** (code, tags ``remove-input`` + ``remove-output``, so the HTML shows
   nothing of it; it still runs in the inline book build, where it is a no-op). Where
   the book's package ``lib`` is importable (the book's ``.venv``, ``make lab``,
   Binder) it does nothing and prints nothing. Where it is missing (Colab, a bare
   Jupyter) it pip-installs the package from the repository named by
   ``repository.url`` / ``repository.branch`` in ``_config.yml``.
2. **macros** (markdown, tag ``remove-cell``, so the book build skips it: the HTML
   gets the same macros from ``mathjax3_config``). It defines the book's math macros
   twice from the one source ``sphinx.config.mathjax3_config.tex.macros``: as MyST
   front matter ``math:`` (read by jupyterlab-myst, whose KaTeX ignores ``\\def`` across
   cells; front matter must be in the first markdown cell), and as ``\\def`` commands in
   an inline math span (read by MathJax: JupyterLab without jupyterlab-myst, Notebook,
   Colab). The front matter's YAML lines sit inside an HTML comment, so a plain
   Markdown renderer shows only one sentence between two rules.

Both cells carry ``metadata.book_sync`` (``"setup"`` / ``"macros"``), so running the
script again replaces them in place (idempotent). It also refuses notebooks that import
a module that neither the standard library nor the package's dependencies provide
(the setup cell would have to install it: add it to ``EXTRA_PACKAGES``).

It also keeps the **solutions collapsed in JupyterLab**, derived from the markers of
every ``{solution-start}`` ... ``{solution-end}`` span (sphinx-exercise's gated syntax).
jupyterlab-myst renders each markdown cell on its own: the cell holding
``{solution-start}`` becomes a collapsed "Start of Solution" dropdown holding the rest of
that cell, but the cells after it up to ``{solution-end}`` would sit in plain view. So:

- every cell inside a span gets the standard metadata ``jupyter.source_hidden`` (code
  cells also ``jupyter.outputs_hidden``): JupyterLab shows it as a collapsed bar, a
  click expands it. "Inside" means: a code cell after the start marker and before the
  end marker; a markdown cell that opens inside a span and holds solution text before
  its end marker (or has no end marker). The cells holding the start marker, and those
  whose only solution content is the end marker itself, stay visible. No cell outside
  a span carries these keys (the script removes them), but the hidden code (below).
- JupyterLab labels a collapsed cell's bar with the first line of its source, which
  would otherwise give the solution away. So a collapsed markdown cell starts with an
  empty line, and a collapsed code cell with the comment ``# solution code`` (ruff
  format would remove an empty first line; a cell starting with a ``%%`` magic is
  left alone); the comment is removed again from a code cell outside every span.
  (JupyterLab 4 un-collapses a markdown cell when it runs it, and shows a code cell's
  outputs when it runs it: after Run All the solution prose and outputs are visible;
  the stored notebooks have no outputs.)
- a markdown cell holding solution text, then ``{solution-end}``, then more text (the
  next exercise) is split after the end marker, so that collapsing it hides only the
  solution. The new cell gets the id ``<id>-2`` (or the next free one).

It also **collapses the hidden code in JupyterLab**: the setup cell and every code cell
tagged ``remove-input`` (the hidden check cells next to the prose) get
``jupyter.source_hidden`` (their outputs stay in view, so a failing check shows its
error), so that JupyterLab shows a thin bar between the paragraphs instead of the code,
as the HTML shows nothing. A click on the bar opens the code.

It gives **figures a caption and a number in JupyterLab**: a figure of the book is the
output of a code cell whose ``mystnb.figure`` metadata holds its ``name`` and
``caption``, which jupyterlab-myst does not read, so every ``{numref}`` of a figure
showed as an orange "unresolved" label (jupyterlab-myst 2.7 resolves references to
targets in markdown cells only). After each such cell the script writes a markdown
cell (``metadata.book_sync`` ``"figure-caption"``, tag ``remove-cell``) holding a
``{figure}`` directive without an image, labelled with the figure's name, its body
the caption: jupyterlab-myst shows it under the figure as "Figure n: caption" and
resolves every ``{numref}`` of that name to "Figure n" (numbered within the
notebook). myst-nb skips ``remove-cell`` cells entirely, so the book build sees
neither the cell nor a second label; the HTML is unchanged.

And it writes the **notebook metadata JupyterLab would write** on opening a notebook
(``kernelspec`` of the book's kernel, and ``language_info`` as its kernel reports it),
so that opening a chapter does not mark it modified at once (see :data:`KERNELSPEC`).
JupyterLab compares ``language_info`` as a whole, so it must also hold the kernel's
Python version ("3.11.7"), which differs between machines: the stored notebooks have
none, and ``--lab DIR`` writes the running Python's version into the notebooks of a
JupyterLab copy (``make lab-student`` runs it with the kernel's Python; measured with
JupyterLab 4.6.6: a notebook with the version opened clean, one without it, or with
the stored kernelspec "Python 3", opened modified).

The book build ignores ``jupyter.*`` metadata (myst-nb reads tags and ``mystnb``), and
the split is at a block boundary, so the HTML is unchanged.

``--lab DIR`` also writes every citation role of the copy's markdown cells
(``{cite:t}`key``` and ``{cite}`key```) as plain author-year text from references.bib:
jupyterlab-myst has no bibliography and showed each role as an orange warning label.
Only the JupyterLab copies get this text; the chapters keep their roles.

Usage::

    python scripts/sync_notebooks.py            # rewrite the notebooks that differ
    python scripts/sync_notebooks.py --check    # exit 1 if any notebook is out of sync
    python scripts/sync_notebooks.py --root DIR # a copy of the book (default: repo)
    python scripts/sync_notebooks.py --lab DIR  # JupyterLab's metadata in every
                                                # notebook under DIR (a lab copy)
"""

from __future__ import annotations

import argparse
import ast
import json
import platform
import re
import sys
from pathlib import Path

import yaml

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:  # the sibling module, also when loaded by file path
    sys.path.insert(0, str(_HERE))
import solution_spans  # noqa: E402  (after the sys.path line above)

ROOT = _HERE.parent
PACKAGE = "icl-nonlinear-book"  # [project] name in pyproject.toml
# What the setup cell installs besides the package (its dependencies come with it).
EXTRA_PACKAGES: list[str] = []
# Top-level modules a notebook may import: the package, its dependencies
# (pyproject), and what every Jupyter kernel has.
ALLOWED_IMPORTS = {"lib", "numpy", "scipy", "matplotlib", "ipywidgets", "IPython"}
SETUP_TAGS = ["remove-input", "remove-output"]
MACROS_TAGS = ["remove-cell"]
# The metadata that collapses a cell in JupyterLab (nbformat's standard "jupyter" keys).
COLLAPSED = {
    "code": {"source_hidden": True, "outputs_hidden": True},
    "markdown": {"source_hidden": True},
    "raw": {"source_hidden": True},
}
_COLLAPSE_KEYS = ("source_hidden", "outputs_hidden")
#: What collapses a hidden code cell (tag ``remove-input``): its source only.
HIDDEN_INPUT = {"source_hidden": True}
HIDDEN_INPUT_TAG = "remove-input"
#: The kernel JupyterLab runs the chapters in (ipykernel's ``python3``, in the book's
#: ``.venv`` and on Binder): JupyterLab replaces a notebook's ``kernelspec`` with this
#: when it starts the kernel, and a stored "Python 3" marked every chapter modified.
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
#: ``language_info`` as ipykernel reports it (JupyterLab copies it into the notebook
#: when the kernel starts), without ``version``, the kernel's Python version, which
#: differs between machines (see :func:`notebook_metadata`).
LANGUAGE_INFO = {
    "codemirror_mode": {"name": "ipython", "version": 3},
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "name": "python",
    "nbconvert_exporter": "python",
    "pygments_lexer": "ipython3",
}
#: First line of a collapsed solution code cell: what JupyterLab's bar shows of it.
CODE_BAR = "# solution code"


def load_config(root: Path) -> dict:
    """The parsed ``_config.yml`` of the book at ``root``."""
    with open(root / "_config.yml", encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def toc_files(root: Path) -> list[str]:
    """The ``root`` and ``file`` entries of ``_toc.yml``, in reading order, as written there."""
    with open(root / "_toc.yml", encoding="utf-8") as fh:
        toc = yaml.safe_load(fh)
    files: list[str] = []

    def walk(node):
        if isinstance(node, dict):
            for key in ("root", "file"):
                if isinstance(node.get(key), str):
                    files.append(node[key])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc)
    return files


def toc_notebooks(root: Path) -> list[Path]:
    """Every ``.ipynb`` listed in ``_toc.yml`` (in order), as absolute paths."""
    out = []
    for name in toc_files(root):
        path = root / name
        path = path if path.suffix else path.with_suffix(".ipynb")
        if path.suffix == ".ipynb" and path.exists() and path not in out:
            out.append(path)
    return out


def macros(config: dict) -> dict[str, str]:
    """The book's math macros, name (without backslash) -> TeX body.

    MathJax's ``[body, nargs]`` form is accepted; the body then uses ``#1``...
    """
    raw = config["sphinx"]["config"]["mathjax3_config"]["tex"]["macros"]
    out = {}
    for name, body in raw.items():
        if isinstance(body, list):
            body = body[0]
        out[str(name)] = str(body)
    return out


def _nargs(body: str) -> int:
    return max((k for k in range(1, 10) if f"#{k}" in body), default=0)


def install_spec(config: dict) -> str:
    """The pip requirement the setup cell installs: the package at the repository."""
    repo = config["repository"]
    url = repo["url"].rstrip("/")
    branch = repo.get("branch") or "main"
    return f"{PACKAGE} @ git+{url}@{branch}"


#: Modules of ``lib`` that need the ``training`` extra (JAX and optax).
TRAINING_MODULES = frozenset({"training", "transformers", "training_widgets"})


def needs_training(nb: dict) -> bool:
    """True when a code cell imports a module of :data:`TRAINING_MODULES` from ``lib``."""
    for cell in nb["cells"]:
        if cell["cell_type"] != "code" or cell["metadata"].get("book_sync"):
            continue
        src = "\n".join("" if ln.lstrip().startswith(("%", "!")) else ln for ln in "".join(cell["source"]).splitlines())
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "lib":
                parts = set(node.module.split(".")[1:]) | {a.name for a in node.names}
            elif isinstance(node, ast.Import):
                parts = {part for a in node.names if a.name.split(".")[0] == "lib" for part in a.name.split(".")[1:]}
            else:
                continue
            if parts & TRAINING_MODULES:
                return True
    return False


def setup_source(config: dict, training: bool = False) -> str:
    """Source of the setup cell (a no-op where ``lib`` is importable); with ``training``,
    the package's ``training`` extra (JAX, optax) is installed too."""
    repo = config["repository"]
    url = repo["url"].rstrip("/")
    branch = repo.get("branch") or "main"
    extra = "".join(f", {p!r}" for p in EXTRA_PACKAGES)
    package = f"{PACKAGE}[training]" if training else PACKAGE
    return "\n".join(
        [
            "# Setup: a no-op where the book's package `lib` is installed. Elsewhere",
            "# (e.g. Colab) it installs it from the book's repository, with its",
            "# dependencies.",
            "import importlib.util",
            "",
            'if importlib.util.find_spec("lib") is None:',
            "    import importlib",
            "    import subprocess",
            "    import sys",
            "",
            f'    url = "{url}"',
            f'    reqs = [f"{package} @ git+{{url}}@{branch}"{extra}]',
            '    cmd = [sys.executable, "-m", "pip", "install", "--quiet", *reqs]',
            "    subprocess.run(cmd, check=True)",
            "    importlib.invalidate_caches()",
        ]
    )


def macros_source(config: dict) -> str:
    """Source of the macros cell: MyST front matter plus MathJax ``\\def``s."""
    mac = macros(config)
    lines = [
        "---",
        "description: This cell defines the book's math macros, for MyST and MathJax.",
        "",
        "  <!--",
        "math:",
    ]
    for name, body in mac.items():
        key = "\\" + name
        lines.append(f"  {_yaml_quote(key)}: {_yaml_quote(body)}")
    lines += ["# -->", "---"]
    defs = []
    for name, body in mac.items():
        params = "".join(f"#{k}" for k in range(1, _nargs(body) + 1))
        defs.append(f"\\def\\{name}{params}{{{body}}}")
    lines.append("$" + "".join(defs) + "$")
    return "\n".join(lines)


def _yaml_quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def parse_frontmatter_macros(source: str) -> dict[str, str]:
    """The ``math:`` macros of a macros cell's front matter (name without backslash)."""
    if not source.startswith("---\n"):
        return {}
    end = source.find("\n---", 4)
    data = yaml.safe_load(source[4:end]) or {}
    return {str(k).lstrip("\\"): str(v) for k, v in (data.get("math") or {}).items()}


def _to_lines(text: str) -> list[str]:
    """Notebook-style source: a list of lines, each but the last ending in newline."""
    lines = text.splitlines(keepends=True)
    return lines


def _cell(kind: str, source: str, role: str, tags: list[str], with_id: bool) -> dict:
    cell: dict = {"cell_type": kind}
    if with_id:
        cell["id"] = f"book-{role}"
    cell["metadata"] = {"book_sync": role, "tags": list(tags)}
    if kind == "code" and HIDDEN_INPUT_TAG in tags:
        cell["metadata"]["jupyter"] = dict(HIDDEN_INPUT)
    if kind == "code":
        cell["execution_count"] = None
        cell["outputs"] = []
    cell["source"] = _to_lines(source)
    return cell


def notebook_imports(nb: dict) -> set[str]:
    """Top-level module names imported by the notebook's code cells."""
    mods: set[str] = set()
    for cell in nb["cells"]:
        if cell["cell_type"] != "code" or cell["metadata"].get("book_sync"):
            continue
        src = "".join(cell["source"])
        # drop IPython magics and shell lines, which are not Python
        src = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in src.splitlines())
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                mods.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                mods.add(node.module.split(".")[0])
    return mods


def foreign_imports(nb: dict) -> set[str]:
    """Imported modules that neither the stdlib nor the package's dependencies give."""
    stdlib = set(sys.stdlib_module_names)
    extra = {p.split("[")[0].split("=")[0].split("<")[0].split(">")[0].strip() for p in EXTRA_PACKAGES}
    return {m for m in notebook_imports(nb) if m not in stdlib and m not in ALLOWED_IMPORTS and m not in extra}


SolutionMarkerError = solution_spans.SolutionMarkerError
_line_roles = solution_spans.line_roles


def _solution_before_end(lines: list[str], roles: list[str]) -> bool:
    """Whether solution text comes before the cell's first end marker (or no marker)."""
    for line, role in zip(lines, roles):
        if role in ("start", "end"):
            return False
        if role == "sol" and line.strip():
            return True
    return False


def _split_after_end(lines: list[str], roles: list[str]) -> int | None:
    """Where to split a cell that opens inside a span: after the end marker's last line.

    Only when solution text precedes the end marker and non-blank text follows it;
    otherwise None.
    """
    if not _solution_before_end(lines, roles) or "end" not in roles:
        return None
    first = roles.index("end")
    last = first
    while last + 1 < len(roles) and roles[last + 1] == "end":
        last += 1
    if any(line.strip() for line in lines[last + 1 :]):
        return last + 1
    return None


def _free_id(base: str, taken: set[str]) -> str:
    k = 2
    while True:
        suffix = f"-{k}"
        new = base[: 64 - len(suffix)] + suffix
        if new not in taken:
            return new
        k += 1


def _source_text(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def solution_cells(cells: list[dict], where: str = "notebook") -> list[dict]:
    """Copies of ``cells`` with the mixed markdown cells split after ``{solution-end}``.

    A markdown cell that opens inside a solution span and holds solution text, then
    the end marker, then more text, becomes two cells: the solution part (ending with
    the marker) and the rest (with the original's metadata and the id ``<id>-2``).
    Raises :class:`SolutionMarkerError` if the markers do not pair up.
    """
    taken = {c["id"] for c in cells if "id" in c}
    out: list[dict] = []
    inside = False
    queue = [json.loads(json.dumps(c)) for c in cells]
    number = 0
    while queue:
        cell = queue.pop(0)
        here = f"{where}, cell {number}"
        if cell["cell_type"] != "markdown":
            out.append(cell)
            number += 1
            continue
        text = _source_text(cell)
        lines = text.split("\n")
        roles, after = _line_roles(text, inside, here)
        cut = _split_after_end(lines, roles) if inside else None
        if cut is None:
            out.append(cell)
            inside = after
            number += 1
            continue
        rest = lines[cut:]
        while rest and not rest[0].strip():
            rest.pop(0)
        first, second = json.loads(json.dumps(cell)), json.loads(json.dumps(cell))
        first["source"] = _to_lines("\n".join(lines[:cut]))
        second["source"] = _to_lines("\n".join(rest))
        if "id" in cell:
            second["id"] = _free_id(cell["id"], taken)
            taken.add(second["id"])
        out.append(first)
        inside = False
        number += 1
        queue.insert(0, second)
    if inside:
        raise SolutionMarkerError(f"{where}: a solution-start has no solution-end")
    return out


def collapse_flags(cells: list[dict], where: str = "notebook") -> list[bool]:
    """For each cell (already split by :func:`solution_cells`): collapse it?

    True for a code or raw cell after a ``{solution-start}`` and before its
    ``{solution-end}``, and for a markdown cell that opens inside a span and holds
    solution text before its end marker (if any). False elsewhere, including the cell
    with the start marker (jupyterlab-myst already folds the rest of that cell into
    its dropdown) and a cell whose only solution content is the end marker.
    """
    flags: list[bool] = []
    inside = False
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "markdown":
            flags.append(inside)
            continue
        text = _source_text(cell)
        roles, after = _line_roles(text, inside, f"{where}, cell {i}")
        flags.append(inside and _solution_before_end(text.split("\n"), roles))
        inside = after
    return flags


def expected_collapse(cell: dict, in_solution: bool) -> dict:
    """The collapse keys ``cell`` should carry: a solution's (``COLLAPSED``), else a
    hidden code cell's (:data:`HIDDEN_INPUT`, tag ``remove-input``), else none."""
    if in_solution:
        return dict(COLLAPSED.get(cell["cell_type"], {"source_hidden": True}))
    tags = cell.get("metadata", {}).get("tags") or []
    if cell["cell_type"] == "code" and HIDDEN_INPUT_TAG in tags:
        return dict(HIDDEN_INPUT)
    return {}


def collapse_state(cell: dict) -> dict:
    """The cell's collapse keys of ``metadata.jupyter`` (empty when not collapsed)."""
    jup = cell.get("metadata", {}).get("jupyter") or {}
    return {k: jup[k] for k in _COLLAPSE_KEYS if k in jup}


def _set_collapsed(cell: dict, hidden: bool) -> None:
    """Set the collapse keys of ``cell`` (``hidden``: inside a solution span)."""
    meta = cell.setdefault("metadata", {})
    jup = {k: v for k, v in (meta.get("jupyter") or {}).items() if k not in _COLLAPSE_KEYS}
    jup.update(expected_collapse(cell, hidden))
    if jup:
        meta["jupyter"] = jup
    else:
        meta.pop("jupyter", None)
    # JupyterLab labels a collapsed cell's bar with the first line of its source.
    text = _source_text(cell)
    if hidden and cell["cell_type"] == "markdown" and not text.startswith("\n"):
        # an empty first line, invisible in every Markdown renderer
        cell["source"] = _to_lines("\n" + text)
    elif cell["cell_type"] == "code" and not text.startswith("%%"):  # a cell magic
        first, _, rest = text.partition("\n")
        if hidden and first != CODE_BAR:
            # ruff format removes an empty first line: a neutral comment instead
            cell["source"] = _to_lines(CODE_BAR + "\n" + text)
        elif not hidden and first == CODE_BAR:
            cell["source"] = _to_lines(rest)


def with_collapsed_solutions(cells: list[dict], where: str = "notebook") -> list[dict]:
    """``cells`` split (:func:`solution_cells`) and their collapse metadata set."""
    cells = solution_cells(cells, where)
    for cell, hidden in zip(cells, collapse_flags(cells, where)):
        _set_collapsed(cell, hidden)
    return cells


def notebook_metadata(meta: dict) -> dict:
    """``meta`` (a notebook's metadata) with the ``kernelspec`` and ``language_info``
    JupyterLab writes when it starts the book's kernel (:data:`KERNELSPEC`,
    :data:`LANGUAGE_INFO`); a stored ``language_info.version`` is kept (it is the
    Python of whoever saved the notebook last; JupyterLab rewrites it with its own)."""
    out = dict(meta)
    out["kernelspec"] = dict(KERNELSPEC)
    info = dict(LANGUAGE_INFO)
    version = (meta.get("language_info") or {}).get("version")
    if version:
        info["version"] = version
    out["language_info"] = info
    return out


CAPTION_ROLE = "figure-caption"


def _caption_id(name: str, taken: set[str]) -> str:
    base = "book-caption-" + "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in name)
    base = base[:64]
    return base if base not in taken else _free_id(base, taken)


def caption_cell(code: dict, taken: set[str] | None = None) -> dict | None:
    """The markdown cell that shows a figure cell's caption and label in JupyterLab
    (see the module docstring), or None for a cell that is not a named figure."""
    fig = ((code.get("metadata") or {}).get("mystnb") or {}).get("figure") or {}
    name, caption = fig.get("name"), fig.get("caption")
    if code.get("cell_type") != "code" or not name:
        return None
    fence = ":::"
    while fence in str(caption or ""):
        fence += ":"
    text = "\n".join([f"{fence}{{figure}}", f":label: {name}", str(caption or "").strip(), fence])
    cell: dict = {"cell_type": "markdown"}
    if "id" in code:
        cell["id"] = _caption_id(str(name), taken if taken is not None else set())
    cell["metadata"] = {"book_sync": CAPTION_ROLE, "tags": ["remove-cell"]}
    cell["source"] = _to_lines(text)
    return cell


def with_figure_captions(cells: list[dict]) -> list[dict]:
    """``cells`` (without caption cells) with a caption cell after each named figure.

    A caption cell inside a solution span is collapsed like the solution's other
    markdown cells.
    """
    taken = {c["id"] for c in cells if "id" in c}
    out: list[dict] = []
    for cell in cells:
        out.append(cell)
        cap = caption_cell(cell, taken)
        if cap is None:
            continue
        if "id" in cap:
            taken.add(cap["id"])
        if collapse_state(cell).get("outputs_hidden"):  # a figure of a solution
            _set_collapsed(cap, True)
        out.append(cap)
    return out


def synced(nb: dict, config: dict, where: str = "notebook") -> dict:
    """A copy of ``nb`` with the current setup and macros cells first, its solutions
    and hidden code collapsed, and JupyterLab's notebook metadata (see the module
    docstring)."""
    nb = json.loads(json.dumps(nb))
    nb["metadata"] = notebook_metadata(nb.get("metadata") or {})
    with_id = (nb.get("nbformat", 4), nb.get("nbformat_minor", 0)) >= (4, 5)
    rest = [c for c in nb["cells"] if c.get("metadata", {}).get("book_sync") is None]
    head = [
        _cell("code", setup_source(config, needs_training(nb)), "setup", SETUP_TAGS, with_id),
        _cell("markdown", macros_source(config), "macros", MACROS_TAGS, with_id),
    ]
    nb["cells"] = head + with_figure_captions(with_collapsed_solutions(rest, where))
    return nb


def differences(old: dict, new: dict) -> list[str]:
    """What :func:`synced` changed in a notebook, in words (for ``--check``)."""
    out = []
    if old.get("metadata") != new.get("metadata"):
        out.append("notebook metadata (kernelspec, language_info)")
    if old["cells"][:2] != new["cells"][:2]:
        out.append("setup/macros cells")

    def captions(nb):
        return [c for c in nb["cells"] if c.get("metadata", {}).get("book_sync") == CAPTION_ROLE]

    if captions(old) != captions(new):
        out.append("figure caption cells")
    rest_old = [c for c in old["cells"] if c.get("metadata", {}).get("book_sync") is None]
    rest_new = [c for c in new["cells"][2:] if c.get("metadata", {}).get("book_sync") is None]
    if len(rest_old) != len(rest_new):
        out.append(f"{len(rest_new) - len(rest_old)} markdown cell(s) to split after a solution-end")
    else:
        where_old = [i for i, c in enumerate(old["cells"]) if c.get("metadata", {}).get("book_sync") is None]
        cells = [
            where_old[i] for i, (a, b) in enumerate(zip(rest_old, rest_new)) if collapse_state(a) != collapse_state(b)
        ]
        if cells:
            out.append(f"collapse metadata of cells {cells} (0-based)")
        elif rest_old != rest_new:
            out.append("cell layout")
    return out or ["JSON layout"]


def dumps(nb: dict) -> str:
    """The JSON text the notebooks are stored in (nbformat's layout, key order kept)."""
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


#: A citation role of the chapters: ``{cite:t}`key```, ``{cite:p}`k1,k2```, ``{cite}`key```.
CITE_ROLE = re.compile(r"\{(?P<name>cite(?::\w+)?)\}`(?P<keys>[^`]*)`")


def cite_text(name: str, keys: str, cites: dict[str, tuple[str, str]]) -> str:
    """The plain text of one citation role: ``{cite:t}`` gives "Author (Year)", every
    other (``{cite}``, ``{cite:p}``) "(Author, Year; Author, Year)". ``cites`` maps a
    bibtex key to (authors as cited, year), as ``make_portable.cite_texts`` reads them
    from references.bib; an unknown key is refused (ValueError naming it)."""
    parts = []
    for key in (k.strip() for k in keys.split(",") if k.strip()):
        if key not in cites:
            raise ValueError(f"citation key {key!r} is not in references.bib")
        who, year = cites[key]
        parts.append(f"{who} ({year})" if name == "cite:t" else f"{who}, {year}")
    return "; ".join(parts) if name == "cite:t" else "(" + "; ".join(parts) + ")"


def plain_citations(source: str, cites: dict[str, tuple[str, str]]) -> str:
    """A markdown cell's source with every citation role as plain author-year text.

    jupyterlab-myst knows no bibliography: it shows ``{cite:t}`key``` as an orange
    warning label. The book build resolves the roles (sphinxcontrib-bibtex), so only
    the JupyterLab copies get this text (:func:`stamp_lab_copy`)."""
    return CITE_ROLE.sub(lambda m: cite_text(m.group("name"), m.group("keys"), cites), source)


def stamp_lab_copy(
    folder: Path, version: str | None = None, bib: Path | None = None, html: Path | None = None
) -> list[Path]:
    """Prepare the notebooks of a JupyterLab copy; return the notebooks changed.

    Every notebook under ``folder`` gets JupyterLab's notebook metadata, with the
    kernel's Python ``version`` (default: this interpreter's), and its markdown cells'
    citation roles become plain author-year text from ``bib`` (default: the book's
    references.bib; :func:`plain_citations`). Given a built book (``html``, default
    ``_build/html`` if it is there), the code comments name the book's targets by their
    numbers (``make_portable.comment_labels``: a collapsed hidden cell shows its first
    line). Only for a JupyterLab copy (``_build/lab``, ``_build/lab-student``): the
    version is the machine's, and the book build needs the roles."""
    import make_portable  # noqa: PLC0415  (it imports this module)

    version = version or platform.python_version()
    cites = make_portable.cite_texts(bib or ROOT / "references.bib")
    html = ROOT / "_build" / "html" if html is None else html
    ids = make_portable.book_targets(html) if (html / "objects.inv").is_file() else {}
    changed = []
    for path in sorted(Path(folder).rglob("*.ipynb")):
        if any(part.startswith(".") for part in path.relative_to(folder).parts):
            continue  # .ipynb_checkpoints
        text = path.read_text(encoding="utf-8")
        nb = json.loads(text)
        meta = notebook_metadata(nb.get("metadata") or {})
        meta["language_info"]["version"] = version
        cells_changed = False
        for cell in nb.get("cells", []):
            if cell.get("cell_type") == "code" and ids:
                source = _source_text(cell)
                hidden = "remove-input" in (cell.get("metadata") or {}).get("tags", [])
                numbered = make_portable.comment_labels(source, ids, strings=hidden)
                if numbered != source:
                    cell["source"] = _to_lines(numbered)
                    cells_changed = True
            if cell.get("cell_type") != "markdown":
                continue
            source = _source_text(cell)
            plain = plain_citations(source, cites)
            if plain != source:
                cell["source"] = _to_lines(plain)
                cells_changed = True
        if meta != nb.get("metadata") or cells_changed:
            nb["metadata"] = meta
            path.write_text(dumps(nb), encoding="utf-8")
            changed.append(path)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="only report; exit 1 if any notebook is out of sync",
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=ROOT,
        help="the book's root folder (with _config.yml and _toc.yml)",
    )
    parser.add_argument(
        "--lab",
        type=Path,
        metavar="DIR",
        help="only prepare the notebooks under DIR for JupyterLab: its notebook metadata "
        "(this Python's version), and citations as author-year text",
    )
    args = parser.parse_args(argv)
    if args.lab is not None:
        changed = stamp_lab_copy(args.lab)
        print(
            f"{len(changed)} notebooks under {args.lab} given the kernel's metadata "
            f"(Python {platform.python_version()}) and citations as text"
        )
        return 0
    root = args.root.resolve()
    config = load_config(root)
    notebooks = toc_notebooks(root)
    if not notebooks:
        print(f"no notebooks listed in {root / '_toc.yml'}", file=sys.stderr)
        return 1
    stale, bad = [], []
    for path in notebooks:
        text = path.read_text(encoding="utf-8")
        nb = json.loads(text)
        foreign = foreign_imports(nb)
        if foreign:
            bad.append(
                f"{path.relative_to(root)} imports {sorted(foreign)}, which the "
                "setup cell does not install (add them to EXTRA_PACKAGES)"
            )
        where = str(path.relative_to(root))
        try:
            new_nb = synced(nb, config, where)
        except SolutionMarkerError as err:
            bad.append(str(err))
            continue
        new = dumps(new_nb)
        if new != text:
            stale.append((path, differences(nb, new_nb)))
            if not args.check:
                path.write_text(new, encoding="utf-8")
    for msg in bad:
        print("error:", msg, file=sys.stderr)
    verb = "out of sync" if args.check else "updated"
    for path, what in stale:
        print(f"{verb}: {path.relative_to(root)} ({'; '.join(what)})")
    if not stale:
        print(f"all {len(notebooks)} notebooks in sync")
    return 1 if bad or (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
