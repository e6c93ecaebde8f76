"""book.css without book.js: an inline formula and the punctuation after it stay together.

book.js glues each inline formula to the "," or ")." after it (span.math-nowrap); a
page without it (the answer key, which drops the theme's scripts; JavaScript off) has
book.css's fallback instead: ``html:not(.book-js)`` sets the formula's outer boxes
inline, so that no line starts with the punctuation after a formula. Checked in
headless chromium on a toy page with the theme's and MathJax's rules for those boxes,
and on the built book with book.js blocked.
"""

import importlib.util
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("browser", ROOT / "scripts" / "browser.py")
browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser)

#: The rules that make an inline formula a box a line may break after: the theme's
#: (pydata-sphinx-theme: span.math an inline flex box) and MathJax's (mjx-math an
#: inline block).
BOXES_CSS = """
span.math { align-items: baseline; display: inline-flex; max-width: 100%; overflow: hidden; }
mjx-math { display: inline-block; white-space: nowrap; }
body { font: 16px/1.6 sans-serif; margin: 0; }
p { width: var(--w); margin: 0 0 1em; }
"""
#: A typeset formula as MathJax leaves it in the span Sphinx writes around it.
FORMULA = (
    '<span class="math notranslate nohighlight"><mjx-container class="MathJax" jax="CHTML">'
    "<mjx-math><mjx-mi>x</mjx-mi><mjx-msub><mjx-mi>a</mjx-mi><mjx-mn>{i}</mjx-mn></mjx-msub>"
    "</mjx-math></mjx-container></span>"
)

#: Lines that start with the punctuation right after an inline formula, and inline
#: formulas split over two lines.
BROKEN_JS = r"""
const out = [];
for (const box of document.querySelectorAll('mjx-container:not([display="true"])')) {
  const r = box.getBoundingClientRect();
  if (!r.width) continue;
  const tops = new Set([...box.getClientRects()].filter(q => q.width).map(q => Math.round(q.top)));
  if (tops.size > 1) out.push('split: ' + box.textContent.slice(0, 20));
  const span = box.parentElement.classList.contains('math') ? box.parentElement : box;
  const next = span.nextSibling;
  if (!next || next.nodeType !== Node.TEXT_NODE || !/^[,.;:)]/.test(next.data)) continue;
  const rg = document.createRange();
  rg.setStart(next, 0);
  rg.setEnd(next, 1);
  const c = rg.getClientRects()[0];
  if (c && c.width && c.left < r.right - 1 && c.top > r.top + 1)
    out.push('line starts with "' + next.data.slice(0, 8) + '"');
}
return out;
"""


def _skip_without_browser():
    if browser.missing():
        pytest.skip(browser.missing())


def _book_css():
    return (ROOT / "book" / "_static" / "book.css").read_text(encoding="utf-8")


def _toy_page(path, book_css):
    words = " ".join(f"word {FORMULA.format(i=i)}{p} and more" for i, p in zip(range(60), [",", ").", ";", ":"] * 15))
    path.write_text(
        f"<!DOCTYPE html><html><head><style>{BOXES_CSS}</style><style>{book_css}</style>"
        f"</head><body><p>({words}</p></body></html>",
        encoding="utf-8",
    )
    return path


def _broken_at_widths(driver, url, widths):
    found = []
    for width in widths:
        driver.get(url)
        driver.execute_script("document.documentElement.style.setProperty('--w', arguments[0] + 'px')", width)
        found += [f"{width}px: {b}" for b in driver.execute_script(BROKEN_JS)]
    return found


def test_fallback_rule_is_off_where_book_js_runs():
    """The rule is scoped to pages without book.js, which marks the page it runs on."""
    css, js = _book_css(), (ROOT / "book" / "_static" / "book.js").read_text(encoding="utf-8")
    assert re.search(r"html:not\(\.book-js\) span\.math\s*\{", css)
    assert 'document.documentElement.classList.add("book-js")' in js


def test_no_line_starts_with_the_punctuation_after_a_formula_without_book_js(tmp_path):
    _skip_without_browser()
    widths = range(150, 420, 7)
    with browser.chromium(800, 600) as driver:
        fixed = _broken_at_widths(driver, _toy_page(tmp_path / "a.html", _book_css()).as_uri(), widths)
        # the control: the same page without the fallback breaks before the punctuation
        css = re.sub(r"html:not\(\.book-js\)[^{]*\{[^}]*\}", "", _book_css())
        control = _broken_at_widths(driver, _toy_page(tmp_path / "b.html", css).as_uri(), widths)
    assert fixed == []
    assert any("line starts with" in b for b in control), "the toy page never breaks: the test cannot fail"


@pytest.mark.html  # needs the built book: run by make test-html, after make book
def test_built_pages_without_book_js(tmp_path):
    """The built chapters with book.js blocked: no line starts with the "," after a formula."""
    _skip_without_browser()
    html = Path(os.environ.get("BOOK_HTML", ROOT / "_build" / "html"))
    pages = ["book/hermite/basics.html", "book/equivalence/theorem.html"]
    if not all((html / p).is_file() for p in pages):
        pytest.skip("the book is not built (make book)")
    found = []
    with browser.serve(html) as base, browser.chromium(390, 900) as driver:
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*_static/book.js*"]})
        driver.set_script_timeout(60)
        for width in (390, 1000):
            driver.set_window_size(width, 900)
            for page in pages:
                driver.get(f"{base}/{page}")
                driver.execute_async_script(
                    "const done = arguments[0]; const wait = () => (window.MathJax && MathJax.startup"
                    " && MathJax.startup.promise) ? MathJax.startup.promise.then(() => done(1))"
                    " : setTimeout(wait, 50); wait();"
                )
                assert not driver.execute_script("return document.documentElement.classList.contains('book-js')")
                assert driver.execute_script("return document.querySelectorAll('mjx-container').length")
                found += [f"{page} at {width}px: {b}" for b in driver.execute_script(BROKEN_JS)]
    assert found == []
