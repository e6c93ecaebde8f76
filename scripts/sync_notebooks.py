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

Usage::

    python scripts/sync_notebooks.py            # rewrite the notebooks that differ
    python scripts/sync_notebooks.py --check    # exit 1 if any notebook is out of sync
    python scripts/sync_notebooks.py --root DIR # a copy of the book (default: repo)
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "icl-nonlinear-book"  # [project] name in pyproject.toml
# What the setup cell installs besides the package (its dependencies come with it).
EXTRA_PACKAGES: list[str] = []
# Top-level modules a notebook may import: the package, its dependencies
# (pyproject), and what every Jupyter kernel has.
ALLOWED_IMPORTS = {"lib", "numpy", "scipy", "matplotlib", "ipywidgets", "IPython"}
SETUP_TAGS = ["remove-input", "remove-output"]
MACROS_TAGS = ["remove-cell"]


def load_config(root: Path) -> dict:
    """The parsed ``_config.yml`` of the book at ``root``."""
    with open(root / "_config.yml", encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def toc_notebooks(root: Path) -> list[Path]:
    """Every ``.ipynb`` listed in ``_toc.yml`` (in order), as absolute paths."""
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
    out = []
    for name in files:
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


def setup_source(config: dict) -> str:
    """Source of the setup cell (a no-op where ``lib`` is importable)."""
    repo = config["repository"]
    url = repo["url"].rstrip("/")
    branch = repo.get("branch") or "main"
    extra = "".join(f", {p!r}" for p in EXTRA_PACKAGES)
    return "\n".join(
        [
            "# Setup: a no-op where the book's package `lib` is installed (the book's",
            "# environment, `make lab`, Binder). Elsewhere (e.g. Colab) it installs it",
            "# from the book's repository, with its dependencies.",
            "import importlib.util",
            "",
            'if importlib.util.find_spec("lib") is None:',
            "    import importlib",
            "    import subprocess",
            "    import sys",
            "",
            f'    url = "{url}"',
            f'    reqs = [f"{PACKAGE} @ git+{{url}}@{branch}"{extra}]',
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
        src = "\n".join(
            "" if line.lstrip().startswith(("%", "!")) else line
            for line in src.splitlines()
        )
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
    extra = {
        p.split("[")[0].split("=")[0].split("<")[0].split(">")[0].strip()
        for p in EXTRA_PACKAGES
    }
    return {
        m
        for m in notebook_imports(nb)
        if m not in stdlib and m not in ALLOWED_IMPORTS and m not in extra
    }


def synced(nb: dict, config: dict) -> dict:
    """A copy of ``nb`` whose first two cells are the current setup and macros cells."""
    nb = json.loads(json.dumps(nb))
    with_id = (nb.get("nbformat", 4), nb.get("nbformat_minor", 0)) >= (4, 5)
    rest = [c for c in nb["cells"] if c.get("metadata", {}).get("book_sync") is None]
    head = [
        _cell("code", setup_source(config), "setup", SETUP_TAGS, with_id),
        _cell("markdown", macros_source(config), "macros", MACROS_TAGS, with_id),
    ]
    nb["cells"] = head + rest
    return nb


def dumps(nb: dict) -> str:
    """The JSON text the notebooks are stored in (nbformat's layout, key order kept)."""
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


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
    args = parser.parse_args(argv)
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
        new = dumps(synced(nb, config))
        if new != text:
            stale.append(path)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    for msg in bad:
        print("error:", msg, file=sys.stderr)
    verb = "out of sync" if args.check else "updated"
    for path in stale:
        print(f"{verb}: {path.relative_to(root)}")
    if not stale:
        print(f"all {len(notebooks)} notebooks in sync")
    return 1 if bad or (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
