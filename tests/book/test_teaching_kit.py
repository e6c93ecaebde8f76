"""The teaching kit's pages: the glossary defines the book's terms, the API reference
covers every public module of lib, and the pages are in the table of contents."""

import ast
import builtins
import json
import pkgutil
import re
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

import lib

ROOT = Path(__file__).resolve().parents[2]

# the terms that the chapters link with {term} (notebook conventions, point 9)
TERMS = [
    "Hermite coefficient",
    "linear Hermite component",
    "effective noise",
    "nonlinearity-noise equivalence",
    "Gaussian-equivalent teacher",
    "in-context learning",
    "ICL error",
    "IDG error",
    "task diversity",
    "pretraining",
    "ridgeless limit",
    "double descent",
    "interpolation threshold",
    "Marchenko-Pastur law",
    "finite-size scaling",
    "sufficient statistic",
    "dMMSE estimator",
    "Bayes-optimal estimator",
    "memorization",
    "linear attention",
    "context length",
    "spectral estimator",
]


def _toc_files():
    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                yield entry["file"]
            yield from walk(entry.get("sections"))
            yield from walk(entry.get("chapters"))

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [toc["root"], *walk(toc["parts"])]


def test_glossary_defines_every_term_once():
    text = (ROOT / "book" / "glossary.md").read_text()
    body = re.search(r"```\{glossary\}\n(.*?)\n```", text, re.DOTALL).group(1)
    defined = [line for line in body.splitlines() if line and not line.startswith(" ")]
    assert sorted(defined, key=str.lower) == defined, "keep the glossary sorted"
    assert len(set(defined)) == len(defined)
    for term in TERMS:
        assert term in defined, term


def test_every_term_used_in_the_chapters_is_defined():
    defined = {t.lower() for t in TERMS}
    text = (ROOT / "book" / "glossary.md").read_text()
    defined |= {line.lower() for line in text.splitlines() if line and line[0].isalpha()}
    for path in (ROOT / "book").rglob("*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        for role in re.findall(r"\{term\}`([^`]+)`", text):
            target = role.rsplit("<", 1)[1].rstrip(">") if role.endswith(">") else role
            target = " ".join(target.split())
            assert target.lower() in defined, f"{path.name}: {{term}} {target!r}"


def test_api_reference_covers_every_public_module():
    toc = _toc_files()
    for pages in ("book/teaching", "book/glossary", "book/api/index"):
        assert pages in toc
    modules = [m.name for m in pkgutil.iter_modules(lib.__path__) if not m.name.startswith("_")]
    for name in modules:
        page = ROOT / "book" / "api" / f"{name}.md"
        assert page.exists(), f"no API page for lib.{name}"
        assert f".. automodule:: lib.{name}" in page.read_text()
        assert f"book/api/{name}" in toc


def test_index_titles_render_math_as_text():
    import importlib.util

    # the extension needs Sphinx (the book's toolchain), which the floors environment of
    # `make test-min` (requirements-min.txt: the package and test tools only) lacks
    pytest.importorskip("sphinx")

    spec = importlib.util.spec_from_file_location("book_indices", ROOT / "book" / "_ext" / "book_indices.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module._plain(r"Exact error of a given $\Gam$") == "Exact error of a given Γ"
    assert module._plain(r"The $\tau \to \infty$ floor at finite $\kappa$") == ("The τ → ∞ floor at finite κ")
    assert module._plain(r"Predict the effect of $a_1$") == "Predict the effect of a_1"


# --------------------------------------------------------------------------------------
# the notebooks as JupyterLab shows and runs them
# --------------------------------------------------------------------------------------
NOTEBOOKS = sorted(ROOT / f"{name}.ipynb" for name in _toc_files() if (ROOT / f"{name}.ipynb").exists())
_EVAL = re.compile(r"\{eval\}`([^`]+)`")


def _defined_names(source: str) -> set[str]:
    """Names a code cell binds at the top level of the kernel (loosely: any binding).

    A name made by ``globals().update({f"{key}_{name}_txt": ...})`` is returned as a
    pattern (``re:^.+_.+_txt$``, from the f-strings of a cell that calls globals()).
    """
    tree = ast.parse(source)
    names = set()
    if "globals()" in source:
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr):
                parts = [re.escape(v.value) if isinstance(v, ast.Constant) else ".+" for v in node.values]
                names.add("re:^" + "".join(parts) + "$")
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_eval_names_are_defined_before_their_markdown_cell(path):
    """Every name an {eval} reads is bound by a code cell above its markdown cell.

    In notebook order, as Run All runs it (jupyterlab-myst evaluates a markdown
    cell's {eval}s in the kernel when the cell is run).
    """
    nb = nbformat.read(path, as_version=4)
    defined = set(dir(builtins))
    late = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            defined |= _defined_names(cell.source)
            continue
        if cell.cell_type != "markdown":
            continue
        for expr in _EVAL.findall(cell.source):
            used = {
                n.id
                for n in ast.walk(ast.parse(expr, mode="eval"))
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
            }
            patterns = [re.compile(n[3:]) for n in defined if n.startswith("re:")]
            missing = {name for name in used - defined if not any(p.match(name) for p in patterns)}
            late += [f"cell {i}: {expr} ({name})" for name in sorted(missing)]
    assert not late, f"{path.name}: {{eval}} before its names are defined: {late}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_collapsed_cells_show_a_neutral_bar(path):
    """JupyterLab labels a collapsed cell with its first line: it must say nothing.

    (JupyterLab 4.6: ``Cell.inputHidden`` sets the placeholder's text to
    ``source.split("\\n")[0]``; scripts/sync_notebooks.py writes the first lines.)
    """
    nb = nbformat.read(path, as_version=4)
    neutral = {"", "# solution code"}
    for i, cell in enumerate(nb.cells):
        if not cell.metadata.get("jupyter", {}).get("source_hidden"):
            continue
        if cell.metadata.get("book_sync"):  # the setup/macros cells
            continue
        if cell.cell_type == "code" and "remove-input" in cell.metadata.get("tags", []):
            if not cell.metadata["jupyter"].get("outputs_hidden"):  # a hidden check, no answer
                continue
        first = cell.source.split("\n")[0]
        assert first in neutral, f"{path.name}, cell {i}: the bar reads {first!r}"


def test_jupyterlab_renders_every_cell_where_the_book_installs_it():
    """`make lab` and Binder install binder/overrides.json: windowingMode "none".

    With JupyterLab 4.6's default ("contentVisibility") a markdown cell that was not
    yet rendered (off screen, or collapsed) gets no {eval} numbers from jupyterlab-myst
    when Run All reaches it: 20 of 59 in chapter 4 in a headless run, 59 of 59 with
    "none".
    """
    overrides = json.loads((ROOT / "binder" / "overrides.json").read_text())
    assert overrides["@jupyterlab/notebook-extension:tracker"]["windowingMode"] == "none"
    target = "share/jupyter/lab/settings/overrides.json"
    assert f"cp binder/overrides.json $(VENV)/{target}" in (ROOT / "Makefile").read_text()
    post = (ROOT / "binder" / "postBuild").read_text()
    assert f'cp binder/overrides.json "${{NB_PYTHON_PREFIX}}/{target}"' in post
    schema = Path(sys.prefix) / "share/jupyter/lab/schemas/@jupyterlab"
    schema = schema / "notebook-extension" / "tracker.json"
    if schema.exists():  # JupyterLab installed (make lab): the setting still exists
        prop = json.loads(schema.read_text())["properties"]["windowingMode"]
        assert "none" in [choice["const"] for choice in prop["oneOf"]]
