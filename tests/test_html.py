"""Browser test of the built HTML book (issue 11): every page, in headless chromium.

Run after the book is built (``make book``; ``.ci/run`` does both)::

    .venv/bin/python -m pytest tests/test_html.py -m html

The built book is taken from ``$BOOK_HTML`` (default ``_build/html``). The test serves
it on 127.0.0.1, opens every page at 1280 px and at phone width (390 px) in Debian's
chromium (selenium with ``/usr/bin/chromedriver``; nothing is downloaded), waits for
MathJax and checks: no raw TeX left, no MathJax error, every image loaded, no display
equation or table wider than the article at 1280 px, no console error, and the
theorem/exercise blocks of the source present. It saves a full-page screenshot of every
page in ``_build/screenshots/`` (or ``$BOOK_SCREENSHOTS``) and writes what is wider
than the column, at both widths, to ``overflow.txt`` there. Without chromium the test
skips with the reason.
"""

from __future__ import annotations

import base64
import json
import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import browser  # noqa: E402  (scripts/browser.py)

pytestmark = pytest.mark.html

HTML = Path(os.environ.get("BOOK_HTML", ROOT / "_build" / "html"))
SHOTS = Path(os.environ.get("BOOK_SCREENSHOTS", HTML.parent / "screenshots"))
WIDE, PHONE = 1280, 390
#: Genuinely wide data tables, allowed to scroll inside their own box (page: CSS scope).
WIDE_DATA_TABLES: dict[str, str] = {}
#: Set to 1 to fail (not only report) on what is wider than the column at phone width.
PHONE_STRICT = os.environ.get("BOOK_PHONE_STRICT") == "1"

# Waits for MathJax (if the page loads it) and for every image, then returns a report.
PAGE_JS = r"""
const done = arguments[arguments.length - 1];
const wideScope = arguments[0];
const PROOF_KINDS = ['proof', 'theorem', 'lemma', 'proposition', 'definition', 'corollary',
  'remark', 'example', 'conjecture', 'algorithm', 'axiom', 'criterion', 'observation',
  'property', 'assumption', 'notation'];
async function run() {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  await Promise.all([...document.images].map(img => img.complete ? null :
    new Promise(r => { img.onload = img.onerror = r; })));
  const art = document.querySelector('article.bd-article') || document.querySelector('main')
    || document.body;
  const cs = getComputedStyle(art);
  const box = art.getBoundingClientRect();
  const left = box.left + parseFloat(cs.paddingLeft);
  const right = box.right - parseFloat(cs.paddingRight);
  const label = el => {
    const sec = el.closest('section[id]');
    const id = el.closest('[id]');
    const text = (el.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 70);
    return (id ? '#' + id.id : (sec ? '#' + sec.id : '')) + ' ' + text;
  };
  const over = (el) => {
    const r = el.getBoundingClientRect();
    const w = Math.max(r.width, el.scrollWidth || 0);
    return { over: Math.round(Math.max(r.left + w - right, left - r.left)), width: Math.round(w) };
  };
  const eqs = [];
  for (const el of art.querySelectorAll('mjx-container[display="true"]')) {
    const math = el.querySelector('mjx-math') || el;
    const o = over(math);
    if (o.over > 1) eqs.push({what: 'equation', where: label(el.closest('.math') || el),
                              width: o.width, over: o.over});
  }
  for (const el of art.querySelectorAll('mjx-container:not([display="true"])')) {
    const r = el.getBoundingClientRect();
    if (r.right > right + 1 && !el.closest('.pst-scrollable-table-container, table'))
      eqs.push({what: 'inline math', where: label(el), width: Math.round(r.width),
                over: Math.round(r.right - right)});
  }
  const tables = [];
  for (const el of art.querySelectorAll('table')) {
    if (wideScope && el.closest(wideScope)) continue;
    const o = over(el);
    if (o.over > 1) tables.push({what: 'table', where: label(el), width: o.width, over: o.over});
  }
  const code = [];
  for (const el of art.querySelectorAll('div.highlight pre')) {
    if (el.scrollWidth > el.clientWidth + 1)
      code.push({what: 'code', where: label(el), width: el.scrollWidth, over: el.scrollWidth - el.clientWidth});
  }
  // text outside typeset math, code and scripts
  const clone = art.cloneNode(true);
  clone.querySelectorAll('mjx-container, mjx-assistive-mml, pre, code, script, style, .highlight, .sig, .onlyprint, .MathJax_Preview')
    .forEach(n => n.remove());
  const text = clone.textContent;
  const raw = [];
  const re = /\\\(|\\\)|\\\[|\\\]|\$\$|\\[A-Za-z]{2,}/g;
  let m;
  while ((m = re.exec(text)) !== null && raw.length < 10)
    raw.push(text.slice(Math.max(0, m.index - 30), m.index + 40).replace(/\s+/g, ' '));
  const errors = [...document.querySelectorAll('mjx-merror, [data-mjx-error], .MathJax_Error')]
    .map(e => (e.getAttribute('data-mjx-error') || e.textContent).slice(0, 100));
  const images = [...document.images].filter(i => !(i.complete && i.naturalWidth > 0))
    .map(i => i.getAttribute('src'));
  const figs = [...art.querySelectorAll('img')].map(i => [i.getAttribute('src'), i.naturalWidth,
    Math.round(i.getBoundingClientRect().width)]);
  const hasMath = art.querySelector('.math, span.math, div.math') !== null;
  done({
    mathjax: !!(window.MathJax && MathJax.version), mathjaxVersion: window.MathJax && MathJax.version,
    hasMath, typeset: art.querySelectorAll('mjx-container').length,
    raw, errors, images, eqs, tables, code, figs,
    proofs: art.querySelectorAll(PROOF_KINDS.map(k => 'div.' + k).join(', ')).length,
    exercises: art.querySelectorAll('div.exercise').length,
    widgetViews: document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"], .jupyter-widgets').length,
    explorerNotes: art.querySelectorAll('.live-explorer-note').length,
    solutions: art.querySelectorAll('div.solution').length,
    column: Math.round(right - left),
    scripts: [...document.scripts].map(s => s.src).filter(s => s && !s.startsWith(location.origin)),
    links: [...document.querySelectorAll('link[href]')].map(l => l.href)
      .filter(h => !h.startsWith(location.origin)),
  });
}
run().catch(e => done({fatal: String(e)}));
"""

FENCE = r"^[ \t]*(?:`{3,}|:{3,})[ \t]*\{%s\}"


def _source_counts(page: str) -> dict[str, int]:
    """Numbers of prf/exercise/solution directives in the page's source file."""
    stem = ROOT / page[: -len(".html")]
    for suffix in (".ipynb", ".md"):
        path = stem.with_suffix(suffix)
        if path.is_file():
            break
    else:
        return {}
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    else:
        text = path.read_text(encoding="utf-8")
    count = lambda name: len(re.findall(FENCE % name, text, flags=re.M))  # noqa: E731
    return {
        "proofs": count(r"prf:(?!proof\})[a-z]+"),
        "exercises": count("exercise") + count("exercise-start"),
        "solutions": count("solution") + count("solution-start"),
    }


def _screenshot(driver, path: Path, width: int) -> None:
    """Full-page PNG: the viewport is made as tall as the page, then captured."""
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": int(min(height, 16000)), "deviceScaleFactor": 1,
        "mobile": False})
    try:
        shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(base64.b64decode(shot["data"]))


def _console_errors(driver) -> list[str]:
    errors = []
    for entry in driver.get_log("browser"):
        if entry.get("level") == "SEVERE" and "favicon.ico" not in entry.get("message", ""):
            errors.append(entry["message"][:300])
    return errors


@pytest.fixture(scope="module")
def report():
    reason = browser.missing()
    if reason:
        pytest.skip(f"browser test skipped: {reason}")
    if not (HTML / "index.html").is_file():
        pytest.skip(f"browser test skipped: no built book at {HTML} (run make book first)")
    pages = browser.all_pages(HTML)
    results = {}
    with browser.serve(HTML) as base, browser.chromium(WIDE) as driver:
        driver.set_script_timeout(60)
        for page in pages:
            for width in (WIDE, PHONE):
                driver.set_window_size(width, 900)
                driver.get(base + page)
                scope = WIDE_DATA_TABLES.get(page, "")
                result = driver.execute_async_script(PAGE_JS, scope)
                result["console"] = _console_errors(driver)
                name = page[: -len(".html")].replace("/", "__")
                _screenshot(driver, SHOTS / f"{name}{'' if width == WIDE else '-phone'}.png",
                            width)
                results[page, width] = result
    lines = []
    for (page, width), result in results.items():
        for item in result.get("eqs", []) + result.get("tables", []) + result.get("code", []):
            lines.append(f"{width}px\t{page}\t{item['what']}\t{item['width']}px wide, "
                         f"{item['over']}px over\t{item['where']}")
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / "report.json").write_text(json.dumps(
        {f"{page} @{width}": r for (page, width), r in results.items()}, indent=1))
    (SHOTS / "overflow.txt").write_text(
        "# width\tpage\twhat\tsize\twhere (id, start of text)\n" + "\n".join(lines) + "\n")
    return results


def _failures(report, check, widths=(WIDE,)):
    bad = {f"{page} @{width}px": found for (page, width), r in report.items()
           if width in widths and (found := check(r))}
    return "\n".join(f"{k}: {v}" for k, v in bad.items())


def _check(report, what, check, widths=(WIDE,)):
    found = _failures(report, check, widths)
    if found:
        pytest.fail(f"{what}:\n{found}", pytrace=False)


def test_pages_found(report):
    pages = {page for page, _ in report}
    assert "book/intro.html" in pages and len(pages) >= 5, sorted(pages)
    _check(report, "page script failed", lambda r: r.get("fatal"), (WIDE, PHONE))


def test_math_typeset_by_local_mathjax(report):
    # pages with math load MathJax 3 (from _static) and typeset it
    assert not _failures(report, lambda r: r.get("hasMath") and not (
        r.get("mathjax") and str(r.get("mathjaxVersion")).startswith("3") and r.get("typeset")))


def test_no_raw_tex(report):
    _check(report, "raw TeX left in the text", lambda r: r.get("raw"))


def test_no_mathjax_errors(report):
    _check(report, "MathJax errors", lambda r: r.get("errors"), (WIDE, PHONE))


def test_images_load(report):
    _check(report, "images that did not load", lambda r: r.get("images"))


def test_nothing_loaded_from_outside(report):
    _check(report, "scripts or style sheets from outside the book",
           lambda r: r.get("scripts") or r.get("links"))


def test_explorers_show_a_note_not_dead_widgets(report):
    _check(report, "widget views left in the page (the HTML has no widget manager)",
           lambda r: r.get("widgetViews"))
    for page in ("book/hermite/basics.html",):
        if (page, WIDE) in report:
            assert report[page, WIDE]["explorerNotes"] >= 1, page


def test_no_console_errors(report):
    _check(report, "browser console errors", lambda r: r.get("console"))


def test_equations_fit_the_column(report):
    _check(report, "display equations wider than the column at 1280 px",
           lambda r: r.get("eqs"))


def test_tables_fit_the_column(report):
    _check(report, "tables wider than the column at 1280 px", lambda r: r.get("tables"))


def test_phone_width(report):
    found = _failures(report, lambda r: r.get("eqs", []) + r.get("tables", []), (PHONE,))
    if found and PHONE_STRICT:
        pytest.fail("wider than the column at phone width:\n" + found)
    if found:
        pytest.xfail(f"wider than the column at {PHONE}px (see overflow.txt):\n" + found)


def test_theorem_and_exercise_blocks_rendered(report):
    def missing(r, page):
        want = _source_counts(page)
        return {k: (r.get(k, 0), n) for k, n in want.items() if r.get(k, 0) < n}

    bad = {page: m for (page, width), r in report.items()
           if width == WIDE and (m := missing(r, page))}
    assert not bad, f"blocks in the source but not in the page (found, expected): {bad}"


def test_figures_at_natural_size(report):
    # figures are drawn at the column width and shown at >= 95% of their size at 1280 px
    def shrunk(r):
        return [f for f in r.get("figs", []) if f[1] and f[2] < 0.95 * min(f[1], r["column"])
                and "_images/" in (f[0] or "")]
    _check(report, "figures shrunk below 95% of their size", shrunk)
