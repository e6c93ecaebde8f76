"""The appendix's numbered items carry its letter (book/_ext/book_indices.py, issue 31).

Sphinx numbers only the pages of a numbered toctree; the book's "Appendix" part is not
one, so its statements were "Proposition 4" in the index of statements, as if in
chapter 4. A small Sphinx project with the book's extension, a numbered chapter and a
two-page appendix checks what the pages, references and index show.
"""

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CONF = f"""
import sys
sys.path.insert(0, {str(ROOT / "book" / "_ext")!r})
extensions = ["book_indices"]
numfig = True
math_numfig = True
math_eqref_format = "({{number}})"
html_theme = "basic"
"""
INDEX = """Book
====

.. toctree::
   :caption: Foundations
   :numbered:

   chapter

.. toctree::
   :caption: Appendix

   tools
   speed
"""
CHAPTER = """Hermite
=======

.. prf:proposition:: First
   :label: prop-ch

   Text.

See :prf:ref:`prop-tools-2`, :numref:`ex-tools` and :eq:`eq-tools`.
"""
TOOLS = """Random-matrix tools
===================

Spectra
-------

.. prf:proposition:: Traces
   :label: prop-tools-1

   Text.

.. prf:proposition:: Spread
   :label: prop-tools-2

   Text.

.. math::
   :label: eq-tools

   a = b

.. exercise:: Try it
   :label: ex-tools

   Do it.
"""
SPEED = """Performance
===========

.. prf:proposition:: Fast
   :label: prop-speed

   Text.
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    pytest.importorskip("sphinx_proof", reason="the book's Sphinx extensions are not installed")
    pytest.importorskip("sphinx_exercise", reason="the book's Sphinx extensions are not installed")
    from sphinx.application import Sphinx

    src = tmp_path_factory.mktemp("appendix-src")
    for name, text in {
        "conf.py": CONF,
        "index.rst": INDEX,
        "chapter.rst": CHAPTER,
        "tools.rst": TOOLS,
        "speed.rst": SPEED,
    }.items():
        (src / name).write_text(text)
    out = src / "_build"
    app = Sphinx(str(src), str(src), str(out), str(out / ".doctrees"), "html", status=None, warning=sys.stderr)
    app.build()
    assert app.statuscode == 0
    sys.modules.pop("book_indices", None)
    return out


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_appendix_items_carry_the_pages_letter(built):
    tools = _text((built / "tools.html").read_text())
    assert "Proposition A.1 (Traces)" in tools and "Proposition A.2 (Spread)" in tools
    assert "Exercise A.1" in tools and "(A.1)" in tools
    # the second appendix page counts its own: B.1, not 3
    assert "Proposition B.1 (Fast)" in _text((built / "speed.html").read_text())
    # the chapter keeps its numbers, and its references show the letters
    chapter = _text((built / "chapter.html").read_text())
    assert "Proposition 1.1 (First)" in chapter
    assert "See Proposition A.2 , Exercise A.1 and (A.1)" in chapter


def test_appendix_titles_show_their_letter_and_their_sections_none(built):
    html = (built / "tools.html").read_text()
    assert re.search(r'<h1><span class="section-number">A\. </span>Random-matrix tools', html)
    assert re.search(r"<h2>Spectra", html)  # no "A." inherited by the page's sections
    # the table of contents: "A." as "1.", and the page's sections without a number
    toc = _text((built / "index.html").read_text())
    assert "1. Hermite Appendix A. Random-matrix tools Spectra B. Performance" in toc


def test_the_index_of_statements_lists_the_letters(built):
    index = _text((built / "prf-prf.html").read_text())
    assert "Proposition 1.1" in index and "Proposition A.2" in index and "Proposition B.1" in index
    assert index.index("Proposition 1.1") < index.index("Proposition A.1") < index.index("Proposition B.1")
    assert not re.search(r"Proposition [2-9]\b", index)


def test_sort_key_puts_the_appendix_after_the_chapters():
    pytest.importorskip("sphinx")
    import importlib.util

    spec = importlib.util.spec_from_file_location("book_indices", ROOT / "book" / "_ext" / "book_indices.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    numbers = ["A.2", "", "10.1", "B.1", "2.3", "A.10"]
    assert sorted(numbers, key=module._sort_key) == ["2.3", "10.1", "A.2", "A.10", "B.1", ""]
