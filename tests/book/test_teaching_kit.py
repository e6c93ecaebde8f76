"""The teaching kit's pages: the glossary defines the book's terms, the API reference
covers every public module of lib, and the pages are in the table of contents."""

import pkgutil
import re
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
