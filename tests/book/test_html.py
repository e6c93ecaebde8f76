"""Browser test of the built HTML book (issue 11): every page, in headless chromium.

Run after the book is built (``make book``; ``.ci/run`` does both)::

    .venv/bin/python -m pytest tests/book/test_html.py tests/book/test_html_figures.py -m html

The built book is taken from ``$BOOK_HTML`` (default ``_build/html``). The test serves
it on 127.0.0.1, opens every page at 1280 px and at phone width (390 px) in Debian's
chromium (selenium with ``/usr/bin/chromedriver``; nothing is downloaded; one browser
per width, the two side by side, each opening every page once: ``page_pass``), waits for
MathJax and for the book's script (``book/_static/book.js``), and checks: no raw TeX
left, no MathJax error, every image loaded, every figure a link to its image file, no
console error, no request that the server answers with an error (a missing favicon, say),
the theorem/exercise blocks of the source present, every figure with alt text (not a
file path), the phone's zoom badge outside the image (so over no tick label),
figures at >= 79 % of their natural size at 390 px, no line broken between an inline
formula and the punctuation glued to it (a line starting with its "," or ")."), inside
"x ± se" (in a table cell only before "±") or before the "%" after a number, and that
nothing is wider than the text column:

- at 1280 px nothing at all: no display equation, inline formula, table, code line or
  other element wider than the column, and no formula that ``book.js`` had to set
  smaller (such an equation is to be broken in the source);
- at 390 px nothing either (dropdowns are opened to measure what is inside them), with
  exactly one exception: a table, a figure or a display equation (still too wide at 70 %) may
  scroll sideways inside its own box if that box fits the column and shows the cue of
  ``book.js`` (class ``scroll-frame`` and its visible "scroll sideways" line). Code
  never scrolls (it wraps); formulas set smaller by ``book.js`` are fine.

Separate tests run the search page (opened from disk and served) and check that every
result has a snippet and no raw TeX; open every slide deck of ``make slides`` and check
that every slide fits its frame (1280 x 720 on a large screen, smaller ones on a phone
held upright, 390 px wide, or sideways) and draws no text under 12 px on any; check
the 1280 px header (one search button, no empty band); and click the header's sidebar
buttons ("site navigation", "on this page") on the first page: at 390 px each opens its drawer and it closes again, at
1280 px the primary sidebar hides and comes back (``book.js`` binds every copy of the
buttons; the themes bind only the first, hidden one). These tests share one browser
(the fixture ``shared``), reset between them (``_fresh``); every wait is for a condition.

It writes everything wider than the column, at both widths, to
``_build/screenshots/overflow.txt``; with ``BOOK_SCREENSHOTS=1`` (or a folder) it also
saves a full-page screenshot (JPEG) of every page there (the allowed scroll boxes marked ``allowed``). Without chromium
the test skips with the reason. ``BOOK_PAGES`` limits the run to some pages (comma
separated, beginnings of paths); ``BOOK_PHONE_STRICT=0`` turns the phone-width failures
into an expected failure (for a look at a book in progress).
"""

from __future__ import annotations

import base64
import concurrent.futures
import json
import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import browser  # noqa: E402  (scripts/browser.py)

pytestmark = pytest.mark.html

HTML = Path(os.environ.get("BOOK_HTML", ROOT / "_build" / "html"))
#: Where report.json and overflow.txt land, and the screenshots when asked for:
#: ``BOOK_SCREENSHOTS=1`` (into _build/screenshots/) or ``BOOK_SCREENSHOTS=DIR``. They
#: are for a reader of the report and checked by nothing, so a plain run (CI) takes none:
#: they took about 60 s of the page pass's 145 s on a 2-core machine.
_SHOTS_ENV = os.environ.get("BOOK_SCREENSHOTS", "")
SHOTS = Path(_SHOTS_ENV) if _SHOTS_ENV not in ("", "0", "1") else HTML.parent / "screenshots"
TAKE_SHOTS = _SHOTS_ENV not in ("", "0")
WIDE, PHONE = 1280, 390
#: Phone-width overflow fails the test unless BOOK_PHONE_STRICT=0 (then it xfails).
PHONE_STRICT = os.environ.get("BOOK_PHONE_STRICT", "1") != "0"
#: Comma-separated page paths (or their beginnings) to check only those, e.g.
#: BOOK_PAGES=book/hermite/,book/notation.html (the default is every page).
ONLY = [p for p in os.environ.get("BOOK_PAGES", "").split(",") if p]

# Waits for MathJax (if the page loads it), every image and book.js, opens the page's
# dropdowns (details, sphinx-togglebutton) to measure what is inside them (and closes
# them again), then returns a report.
PAGE_JS = r"""
const done = arguments[arguments.length - 1];
const PROOF_KINDS = ['proof', 'theorem', 'lemma', 'proposition', 'definition', 'corollary',
  'remark', 'example', 'conjecture', 'algorithm', 'axiom', 'criterion', 'observation',
  'property', 'assumption', 'notation'];
const sleep = ms => new Promise(r => setTimeout(r, ms));
async function run() {
  // chromium can hand the script to a document that is still being replaced (seen in CI
  // on random pages: document.body null); wait until the page has its body and is loaded
  for (let i = 0; i < 200 && !(document.body && document.readyState === 'complete'); i++) {
    await sleep(50);
  }
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  await Promise.all([...document.images].map(img => img.complete ? null :
    new Promise(r => { img.onload = img.onerror = r; })));
  // the fonts MathJax uses start loading when the typeset page is first laid out
  const frame = () => new Promise(r => requestAnimationFrame(() => r()));
  void document.body.offsetHeight;
  await frame(); await frame();
  if (document.fonts) await document.fonts.ready;
  await frame();
  for (let i = 0; i < 100 && !document.documentElement.dataset.bookFit; i++) await sleep(50);
  const bookJs = !!document.documentElement.dataset.bookFit;
  const closed = [...document.querySelectorAll('details:not([open])')];
  closed.forEach(d => { d.open = true; });
  const hidden = [...document.querySelectorAll('.toggle-hidden')];  // sphinx-togglebutton
  hidden.forEach(d => d.classList.remove('toggle-hidden'));
  if (window.bookFit) window.bookFit();
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
  // how far el sticks out of the column; with scroll, counting what it scrolls (a
  // formula is measured by its box alone: its hidden assistive MathML is wider)
  const over = (el, scroll = true) => {
    const r = el.getBoundingClientRect();
    const w = scroll ? Math.max(r.width, el.scrollWidth || 0) : r.width;
    return { over: Math.round(Math.max(r.left + w - right, left - r.left)), width: Math.round(w) };
  };
  const inColumn = el => { const r = el.getBoundingClientRect();
    return r.left >= left - 1 && r.right <= right + 1; };
  // The one allowed form of overflow: a box that scrolls sideways, fits the column and
  // shows the cue of book.js (its frame has class scroll-frame and a visible hint).
  const cued = el => {
    for (let s = el; s && s !== art; s = s.parentElement) {
      const ox = getComputedStyle(s).overflowX;
      if (ox === 'visible') continue;
      if (ox !== 'auto' && ox !== 'scroll') return false;   // clipped: hidden content
      const frame = s.closest('.scroll-frame');
      const hint = frame && frame.querySelector(':scope > .scroll-hint');
      return !!(hint && inColumn(s) && hint.offsetWidth > 0 && hint.offsetHeight > 0
                && getComputedStyle(hint).visibility === 'visible'
                && s.scrollWidth > s.clientWidth);
    }
    return false;
  };
  const found = [], seen = [];
  const add = (what, el, o, inner = el) => {
    seen.push(el);
    found.push({what, where: label(el), width: o.width, over: o.over, allowed: cued(inner)});
  };
  for (const el of art.querySelectorAll('mjx-container[display="true"]')) {
    const math = el.querySelector('mjx-math') || el;
    const o = over(math, false);
    if (o.over > 1) add('equation', el.closest('.math') || el, o, math);
  }
  for (const el of art.querySelectorAll('mjx-container:not([display="true"])')) {
    if (el.closest('table')) continue;   // measured with its table
    const o = over(el.querySelector('mjx-math') || el, false);
    if (o.over > 1) add('inline math', el, o, el.querySelector('mjx-math') || el);
  }
  for (const el of art.querySelectorAll('table')) {
    const o = over(el);
    if (o.over > 1) add('table', el, o);
  }
  for (const el of art.querySelectorAll('div.highlight pre')) {
    if (el.scrollWidth > el.clientWidth + 1)
      found.push({what: 'code', where: label(el), width: el.scrollWidth,
                  over: el.scrollWidth - el.clientWidth, allowed: false});
    seen.push(el);
  }
  // anything else that sticks out of the column (outermost element only)
  for (const el of art.querySelectorAll('*')) {
    if (el.closest('mjx-container, .scroll-frame') || seen.some(s => s.contains(el))) continue;
    const r = el.getBoundingClientRect();
    if (!r.width || !r.height || getComputedStyle(el).position === 'absolute') continue;
    if (r.right > right + 1 || r.left < left - 1) {
      add('other', el, {width: Math.round(r.width),
                        over: Math.round(Math.max(r.right - right, left - r.left))});
    }
  }
  // an inline formula on one line and the punctuation glued to it (no space between) on
  // the next: a line that starts with "," or ")." (or one that ends with the "(" before
  // a formula); book.js keeps them together (span.math-nowrap)
  const broken = [];
  const charBox = (node, i) => { const rg = document.createRange();
    rg.setStart(node, i); rg.setEnd(node, i + 1); return rg.getClientRects()[0]; };
  const textNear = (box, forward) => {
    const block = box.closest('p, li, dd, dt, td, th, caption, figcaption, div') || art;
    const walk = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
    walk.currentNode = box;
    for (let n = forward ? walk.nextNode() : walk.previousNode(); n;
         n = forward ? walk.nextNode() : walk.previousNode()) {
      if (box.contains(n) || n.parentElement.closest('mjx-container')) continue;
      if (n.data.length) return n;
    }
    return null;
  };
  for (const box of art.querySelectorAll('mjx-container:not([display="true"])')) {
    const r = box.getBoundingClientRect();
    if (!r.width || !r.height) continue;
    const next = textNear(box, true), prev = textNear(box, false);
    if (next && /^[,.;:!?)\]]/.test(next.data)) {
      const c = charBox(next, 0);
      if (c && c.width && c.left < r.right - 1 && c.top > r.top + 1)
        broken.push('line starts with "' + next.data.slice(0, 12) + '" after ' + label(box));
    }
    if (prev && /[(\[]$/.test(prev.data)) {
      const c = charBox(prev, prev.data.length - 1);
      if (c && c.width && c.right > r.left + 1 && c.bottom < r.bottom - 1)
        broken.push('line ends with "' + prev.data.slice(-12) + '" before ' + label(box));
    }
  }
  // "x ± se %" broken over two lines: nowhere in the prose, in a table cell only
  // before "±" (a table too wide for the column sets "± se" under "x")
  const pmWalk = document.createTreeWalker(art, NodeFilter.SHOW_TEXT);
  for (let n = pmWalk.nextNode(); n; n = pmWalk.nextNode()) {
    if (n.data.indexOf('\u00b1') < 0 || n.parentElement.closest('pre, code, script, mjx-container'))
      continue;
    const pm = /[-+\u2212]?\d[\d.,]*\s*(\u00b1\s*\d[\d.,]*(?:\s*%)?)/g;
    const cell = !!n.parentElement.closest('td, th');
    for (let m; (m = pm.exec(n.data)) !== null;) {
      const rg = document.createRange(), from = cell ? m[0].indexOf('\u00b1') : 0;
      rg.setStart(n, m.index + from); rg.setEnd(n, m.index + m[0].length);
      const tops = [...rg.getClientRects()].filter(q => q.width > 0).map(q => Math.round(q.top));
      if (tops.length && Math.max(...tops) - Math.min(...tops) > 2)
        broken.push('"' + m[0] + '" broken over two lines in ' + label(n.parentElement));
    }
  }
  // a line that starts with the "%" after a number ("±2.2" an {eval} value, " %" the
  // text after it, or both in one text)
  const pctWalk = document.createTreeWalker(art, NodeFilter.SHOW_TEXT);
  let before = null;
  for (let n = pctWalk.nextNode(); n; n = pctWalk.nextNode()) {
    if (!n.data || n.parentElement.closest('pre, code, script, mjx-container')) continue;
    const pairs = [];
    for (const m of n.data.matchAll(/\d(\s)%/g)) pairs.push([n, m.index, n, m.index + 2]);
    const lead = /^\s%/.exec(n.data);
    if (lead && before && /\d$/.test(before.data))
      pairs.push([before, before.data.length - 1, n, 1]);
    for (const [a, i, b, j] of pairs) {
      const p = charBox(a, i), q = charBox(b, j);
      if (p && q && p.width && q.width && q.top > p.bottom - 2)
        broken.push('line starts with "%" after a number in ' + label(b.parentElement));
    }
    before = n;
  }
  const page = document.documentElement.scrollWidth - window.innerWidth;
  if (page > 1) found.push({what: 'page', where: 'the whole page scrolls sideways',
                            width: document.documentElement.scrollWidth, over: page,
                            allowed: false});
  const scaled = [...art.querySelectorAll('mjx-container[data-fit-scale]')]
    .map(el => label(el.closest('.math') || el) + ' @' + el.dataset.fitScale);
  // text outside typeset math, code and scripts
  const clone = art.cloneNode(true);
  clone.querySelectorAll('mjx-container, mjx-assistive-mml, pre, code, script, style, .highlight, .sig, .onlyprint, .MathJax_Preview')
    .forEach(n => n.remove());
  const text = clone.textContent;
  const raw = [];
  // \( \) \[ \] $$, a TeX command, or a $...$ span with TeX inside ($v_{21}$ from a computed string)
  const re = /\\\(|\\\)|\\\[|\\\]|\$\$|\\[A-Za-z]{2,}|\$[^$\s][^$\n]{0,80}?[_^{\\][^$\n]{0,80}?\$/g;
  let m;
  while ((m = re.exec(text)) !== null && raw.length < 10)
    raw.push(text.slice(Math.max(0, m.index - 30), m.index + 40).replace(/\s+/g, ' '));
  const errors = [...document.querySelectorAll('mjx-merror, [data-mjx-error], .MathJax_Error')]
    .map(e => (e.getAttribute('data-mjx-error') || e.textContent).slice(0, 100));
  const images = [...document.images].filter(i => !(i.complete && i.naturalWidth > 0))
    .map(i => i.getAttribute('src'));
  const figImgs = [...art.querySelectorAll('img')]
    .filter(i => (i.getAttribute('src') || '').includes('_images/'));
  // [src, natural width, shown width, width of the box it is in (a figure in an
  // exercise or solution box has less than the column)]
  const room = el => { const c = getComputedStyle(el);
    return el.clientWidth - parseFloat(c.paddingLeft) - parseFloat(c.paddingRight); };
  const figs = figImgs.map(i => [i.getAttribute('src'), i.naturalWidth,
    Math.round(i.getBoundingClientRect().width),
    Math.round(room(i.closest('figure') || i.parentElement))]);
  const base = s => (s || '').split('#')[0].split('/').pop();
  const unlinked = figImgs.filter(i => { const a = i.closest('a[href]');
    return !a || base(a.getAttribute('href')) !== base(i.getAttribute('src')); })
    .map(i => i.getAttribute('src'));
  // alt text: not empty, not a file path (Sphinx's default is the hashed image path)
  const badAlt = figImgs.filter(i => { const a = (i.getAttribute('alt') || '').trim();
    return a.length < 8 || a.includes('_images/') || /\.(svg|png|jpe?g)$/i.test(a)
      || /[0-9a-f]{16,}/.test(a); }).map(i => i.getAttribute('src') + ' alt=' + i.alt);
  // the zoom badge (shown on a phone) must not cover any part of its figure, so no
  // tick label: its box and the image's box do not intersect
  const badges = [...art.querySelectorAll('a.figure-zoom')].map(a => {
    const img = a.querySelector('img'), b = a.querySelector('.figure-zoom-badge');
    if (!img) return null;
    if (!b) return {src: img.getAttribute('src'), badge: false, shown: false, overlap: false};
    const r = img.getBoundingClientRect(), q = b.getBoundingClientRect();
    const shown = q.width > 0 && q.height > 0 && getComputedStyle(b).display !== 'none';
    const overlap = shown && q.left < r.right - 0.5 && q.right > r.left + 0.5
      && q.top < r.bottom - 0.5 && q.bottom > r.top + 0.5;
    return {src: img.getAttribute('src'), badge: true, shown, overlap};
  }).filter(Boolean);
  const hasMath = art.querySelector('.math, span.math, div.math') !== null;
  const result = {
    mathjax: !!(window.MathJax && MathJax.version), mathjaxVersion: window.MathJax && MathJax.version,
    hasMath, typeset: art.querySelectorAll('mjx-container').length, bookJs,
    raw, errors, images, found, scaled, figs, unlinked, badAlt, badges, broken,
    proofs: art.querySelectorAll(PROOF_KINDS.map(k => 'div.' + k).join(', ')).length,
    exercises: art.querySelectorAll('div.exercise').length,
    widgetViews: document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"], .jupyter-widgets').length,
    explorerNotes: art.querySelectorAll('.live-explorer-note').length,
    solutions: art.querySelectorAll('div.solution').length,
    column: Math.round(right - left),
    scripts: [...document.scripts].map(s => s.src).filter(s => s && !s.startsWith(location.origin)),
    links: [...document.querySelectorAll('link[href]')].map(l => l.href)
      .filter(h => !h.startsWith(location.origin)),
  };
  closed.forEach(d => { d.open = false; });
  hidden.forEach(d => d.classList.add('toggle-hidden'));
  if (window.bookFit) window.bookFit();
  done(result);
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
    """Full-page JPEG: the viewport is made as tall as the page, then captured (a look
    for a reader of the report, checked by nothing: JPEG takes a third less time than PNG)."""
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": int(min(height, 16000)), "deviceScaleFactor": 1, "mobile": False},
    )
    try:
        shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "jpeg", "quality": 85})
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(base64.b64decode(shot["data"]))


def _console_errors(driver) -> list[str]:
    errors = []
    for entry in driver.get_log("browser"):
        if entry.get("level") == "SEVERE":
            errors.append(entry["message"][:300])
    return errors


#: Every request the local server answered with an error status, as "status path": the
#: server of browser.serve (scripts/browser.py) reports each answer to its handler's
#: log_request, which records it here for every test of the session. A page of the book
#: or a slide deck asking for a file that is not there (the favicon the book had none
#: of) is a failure (test_no_request_fails, test_slides).
FAILED_REQUESTS: list[str] = []


def _record_request(handler, code="-", size="-") -> None:
    try:
        status = int(code)
    except (TypeError, ValueError):
        return
    if status >= 400:
        FAILED_REQUESTS.append(f"{status} {handler.path}")


browser._QuietHandler.log_request = _record_request


def _skip_without_browser_or_book() -> None:
    """Skip (not fail) where chromium or the built book is missing."""
    reason = browser.missing()
    if reason:
        pytest.skip(f"browser test skipped: {reason}")
    if not (HTML / "index.html").is_file():
        pytest.skip(f"browser test skipped: no built book at {HTML} (run make book first)")


# Opens every figure of the page (at most 3) with a real click on its image and measures
# the zoom view (book.js); returns one record per figure (tests/book/test_html_figures.py
# checks them). Run by the page pass after PAGE_JS, on the pages with a figure.
ZOOM_JS = r"""
const done = arguments[arguments.length - 1];
const sleep = ms => new Promise(r => setTimeout(r, ms));
(async () => {
  for (let i = 0; i < 100 && !document.documentElement.dataset.bookFit; i++) await sleep(50);
  const imgs = [...document.querySelectorAll('article a.figure-zoom > img')].slice(0, 3);
  await Promise.all(imgs.map(i => i.complete ? null :
    new Promise(r => { i.onload = i.onerror = r; })));
  const href = location.href, out = [];
  for (const img of imgs) {
    img.scrollIntoView({block: 'center'});
    img.click();
    const view = document.querySelector('dialog.figure-zoom-view');
    const big = view && view.querySelector('img');
    for (let i = 0; i < 60 && !(big && big.complete && big.naturalWidth &&
      big.getBoundingClientRect().width > 0); i++) await sleep(50);
    const pane = view && view.querySelector('.figure-zoom-pane');
    out.push({
      src: img.getAttribute('src'), open: !!(view && view.open), stayed: location.href === href,
      natural: big ? big.naturalWidth : 0,
      shown: big ? Math.round(big.getBoundingClientRect().width) : 0,
      paneWidth: pane ? pane.clientWidth : 0, paneScroll: pane ? pane.scrollWidth : 0,
    });
    if (view && view.open) view.close();
  }
  done(out);
})().catch(e => done([{fatal: String(e)}]));
"""


def _pages() -> list[str]:
    """The pages to check: every page of the build, or those BOOK_PAGES names."""
    pages = browser.all_pages(HTML)
    if ONLY:  # a quick look at a few pages
        pages = [p for p in pages if any(p.startswith(o) for o in ONLY)]
    return pages


def figure_pages() -> list[str]:
    """The pages (of ``_pages()``) with a figure that book.js makes zoomable."""
    return [p for p in _pages() if "figure-zoom" in (HTML / p).read_text(encoding="utf-8")]


def _visit_every_page(base: str, width: int) -> dict:
    """One browser at ``width`` x 900 px opens every page once: PAGE_JS's report, the
    console errors of the load, a full-page screenshot, and on the pages with a figure
    ZOOM_JS's records (``zoom``), the console errors of the clicks (``zoomConsole``),
    the page's address (``url``) and the address after the clicks (``zoomUrl``)."""
    from selenium.common.exceptions import WebDriverException

    zoomed = set(figure_pages())
    results = {}
    with browser.chromium(width) as driver:
        driver.set_script_timeout(60)
        for page in _pages():
            driver.get(base + page)
            result = driver.execute_async_script(PAGE_JS)
            result["console"] = _console_errors(driver)
            name = page[: -len(".html")].replace("/", "__")
            if TAKE_SHOTS:
                _screenshot(driver, SHOTS / f"{name}{'' if width == WIDE else '-phone'}.jpg", width)
            if page in zoomed:
                try:
                    result["zoom"] = driver.execute_async_script(ZOOM_JS)
                except WebDriverException as e:  # e.g. a click that left the page
                    result["zoom"] = [{"fatal": str(e)[:300]}]
                result["url"], result["zoomUrl"] = base + page, driver.current_url
                result["zoomConsole"] = _console_errors(driver)
            results[page, width] = result
    return results


_PASS: dict = {}


def page_pass() -> dict:
    """Every page at 1280 px and at 390 px: {(page, width): report}; computed once per
    test session (the fixture ``report`` and the zoom test of test_html_figures.py; an
    error is raised again, not computed again).

    Each width has its own browser, which opens every page once; the two run side by
    side (two threads) when the machine has two cores. Writes ``report.json`` and
    ``overflow.txt`` next to the screenshots.
    """
    if "error" in _PASS:
        raise _PASS["error"]
    if "results" not in _PASS:
        try:
            _PASS["results"] = _run_page_pass()
        except Exception as e:
            _PASS["error"] = e
            raise
    return _PASS["results"]


def _run_page_pass() -> dict:
    with browser.serve(HTML) as base:
        workers = 2 if (os.cpu_count() or 1) > 1 else 1
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            runs = [pool.submit(_visit_every_page, base, width) for width in (WIDE, PHONE)]
            wide, phone = (run.result() for run in runs)
    results = {(page, width): r[page, width] for page in _pages() for width, r in ((WIDE, wide), (PHONE, phone))}
    lines = []
    for (page, width), result in results.items():
        for item in result.get("found", []):
            what = item["what"] + (" (allowed: scrolls, with cue)" if item["allowed"] else "")
            lines.append(f"{width}px\t{page}\t{what}\t{item['width']}px wide, {item['over']}px over\t{item['where']}")
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / "report.json").write_text(
        json.dumps({f"{page} @{width}": r for (page, width), r in results.items()}, indent=1)
    )
    (SHOTS / "overflow.txt").write_text(
        "# width\tpage\twhat\tsize\twhere (id, start of text)\n" + "\n".join(lines) + "\n"
    )
    return results


@pytest.fixture(scope="module")
def report():
    _skip_without_browser_or_book()
    return page_pass()


def browser_session():
    """(base URL, driver): one served book and one browser for the tests of a module
    that open a page or two (search, sidebars, header, slides, answer key, print);
    ``_fresh`` sets its window and empties its console log before each use."""
    _skip_without_browser_or_book()
    with browser.serve(HTML) as base, browser.chromium(WIDE) as driver:
        yield base, driver


@pytest.fixture(scope="module", name="shared")
def _shared():
    yield from browser_session()


def _fresh(driver, width: int = WIDE, height: int = 900, script_timeout: float = 60):
    """The shared browser as a new one would be: on a blank page, ``width`` x ``height``,
    no console messages left from an earlier test."""
    driver.get("about:blank")
    driver.set_window_size(width, height)
    driver.set_script_timeout(script_timeout)
    driver.get_log("browser")
    return driver


def _failures(report, check, widths=(WIDE,)):
    bad = {
        f"{page} @{width}px": found for (page, width), r in report.items() if width in widths and (found := check(r))
    }
    return "\n".join(f"{k}: {v}" for k, v in bad.items())


def _check(report, what, check, widths=(WIDE,)):
    found = _failures(report, check, widths)
    if found:
        pytest.fail(f"{what}:\n{found}", pytrace=False)


def test_pages_found(report):
    pages = {page for page, _ in report}
    if not ONLY:
        assert "book/intro.html" in pages and len(pages) >= 5, sorted(pages)
    _check(report, "page script failed", lambda r: r.get("fatal"), (WIDE, PHONE))


def test_math_typeset_by_local_mathjax(report):
    # pages with math load MathJax 3 (from _static) and typeset it
    assert not _failures(
        report,
        lambda r: (
            r.get("hasMath")
            and not (r.get("mathjax") and str(r.get("mathjaxVersion")).startswith("3") and r.get("typeset"))
        ),
    )


def test_no_raw_tex(report):
    _check(report, "raw TeX left in the text", lambda r: r.get("raw"))


def test_no_mathjax_errors(report):
    _check(report, "MathJax errors", lambda r: r.get("errors"), (WIDE, PHONE))


def test_images_load(report):
    _check(report, "images that did not load", lambda r: r.get("images"))


def test_nothing_loaded_from_outside(report):
    _check(report, "scripts or style sheets from outside the book", lambda r: r.get("scripts") or r.get("links"))


def test_explorers_show_a_note_not_dead_widgets(report):
    _check(report, "widget views left in the page (the HTML has no widget manager)", lambda r: r.get("widgetViews"))
    for page in ("book/hermite/basics.html",):
        if (page, WIDE) in report:
            assert report[page, WIDE]["explorerNotes"] >= 1, page


def test_no_console_errors(report):
    _check(report, "browser console errors", lambda r: r.get("console"))


def test_no_request_fails(report):
    # every page at both widths asked the server only for files the build has (the book
    # had no favicon: every page's /favicon.ico was a 404, logged as a console error)
    assert not FAILED_REQUESTS, f"requests answered with an error: {sorted(set(FAILED_REQUESTS))}"


def _wider(r, allow_cued=False):
    """What is wider than the column (as "kind: where"), the allowed scroll boxes left out
    when allow_cued."""
    return [
        f"{i['what']} ({i['over']} px over): {i['where']}"
        for i in r.get("found", [])
        if not (allow_cued and i["allowed"])
    ]


def test_book_script_ran(report):
    _check(report, "book.js did not run (no data-book-fit)", lambda r: not r.get("bookJs"), (WIDE, PHONE))


def test_nothing_wider_than_the_column_at_1280px(report):
    # equations, inline math, tables, code (inputs and outputs) and everything else
    _check(report, "wider than the column at 1280 px", _wider)


def test_no_formula_needs_scaling_at_1280px(report):
    # book.js shrinks a formula only when it is wider than the column: at 1280 px that
    # means the formula is to be broken in the source
    _check(report, "formulas that book.js set smaller at 1280 px", lambda r: r.get("scaled"))


def test_phone_width(report):
    # at 390 px only a table or display equation scrolling in its own box with the cue
    found = _failures(report, lambda r: _wider(r, allow_cued=True), (PHONE,))
    if found and PHONE_STRICT:
        pytest.fail(f"wider than the column at {PHONE}px (see overflow.txt):\n" + found, pytrace=False)
    if found:
        pytest.xfail(f"wider than the column at {PHONE}px (see overflow.txt):\n" + found)


def test_no_line_starts_with_the_punctuation_after_a_formula(report):
    # MathJax's inline formulas are inline blocks, which a line may break around: a
    # line began with the "," or ")." after a formula (book.js glues them together);
    # and "x ± se" table cells wrapped at 1280 px (book.js joins them with no-break
    # spaces)
    _check(
        report,
        "punctuation separated from its formula, or x ± se, by a line break",
        lambda r: r.get("broken"),
        (WIDE, PHONE),
    )


def test_figures_open_at_full_size(report):
    # every figure is a link to its own image file (tap on a phone: full size, zoom)
    _check(report, "figures that are not a link to their image file", lambda r: r.get("unlinked"))


def test_figures_have_alt_text(report):
    # screen readers read the alt text: the caption's first sentence, not a file path
    _check(report, "figures without meaningful alt text", lambda r: r.get("badAlt"))


def test_zoom_badge_covers_no_part_of_the_figure(report):
    # on a phone every figure shows the badge, outside the image (so it covers no tick
    # label, the bottom-right one included); at 1280 px there is no badge
    _check(
        report,
        "zoom badge missing, hidden or over the image at 390 px",
        lambda r: [b for b in r.get("badges", []) if not b["shown"] or b["overlap"]],
        (PHONE,),
    )
    _check(report, "zoom badge shown at 1280 px", lambda r: [b for b in r.get("badges", []) if b["shown"]])


def test_figures_legible_on_a_phone(report):
    # at 390 px a figure is shown at >= 79 % of its natural size (book.js: 80 %, in a box
    # that scrolls with the cue), not shrunk to the column (~52 %, 6 px tick labels);
    # a figure that fits the column at that size is shown whole
    def small(r):
        return [
            f for f in r.get("figs", []) if f[1] and "_images/" in (f[0] or "") and f[2] < min(0.79 * f[1], 0.95 * f[3])
        ]

    _check(report, "figures shown below 79 % of their natural size at 390 px", small, (PHONE,))


def test_theorem_and_exercise_blocks_rendered(report):
    def missing(r, page):
        want = _source_counts(page)
        return {k: (r.get(k, 0), n) for k, n in want.items() if r.get(k, 0) < n}

    bad = {page: m for (page, width), r in report.items() if width == WIDE and (m := missing(r, page))}
    assert not bad, f"blocks in the source but not in the page (found, expected): {bad}"


def test_figures_at_natural_size(report):
    # figures are drawn at the column width and shown at >= 95% of their size at 1280 px
    # (or of the width of the box they are in, e.g. a solution, if that is narrower)
    def shrunk(r):
        return [f for f in r.get("figs", []) if f[1] and f[2] < 0.95 * min(f[1], f[3]) and "_images/" in (f[0] or "")]

    _check(report, "figures shrunk below 95% of their size", shrunk)


def test_no_build_machine_paths():
    # The book must not show where it was built (an autodoc value, a traceback, a
    # saved path): such text differs between machines, and on CI a longer checkout path
    # once pushed an API signature past the phone column. Reads the files; no browser.
    if not (HTML / "index.html").is_file():
        pytest.skip(f"no built book at {HTML} (run make book first)")
    roots = {str(ROOT), str(ROOT.resolve())}
    found = [
        f"{page.relative_to(HTML)}: {root}"
        for page in sorted(HTML.rglob("*.html"))
        for root in roots
        if root in page.read_text(encoding="utf-8", errors="replace")
    ]
    assert not found, "build-machine paths in the HTML:\n" + "\n".join(found[:20])


def test_search_index_has_accented_names_whole():
    # A name typed with its accent ("Raventós") or without ("Raventos") must find the
    # pages that cite it: the front-end passes found it did not, as references.bib wrote the accent in LaTeX
    # ({\'o}), the bibliography's text came in three pieces and the index held
    # "ravent", "ó" and "s". The names of the bibliography's accented authors, as the
    # search page stems a query, are terms of the index; no accent is a term of its own.
    # Reads the files; no browser.
    index = HTML / "searchindex.js"
    if not index.is_file():
        pytest.skip(f"no built book at {HTML} (run make book first)")
    from sphinx.search.en import SearchEnglish  # noqa: PLC0415

    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    import book_search  # noqa: PLC0415

    text = index.read_text(encoding="utf-8")
    terms = json.loads(text[text.index("(") + 1 : text.rindex(")")])["terms"]
    english = SearchEnglish({})
    names = ("Raventós", "Akyürek", "Zdeborová", "Péché")
    names += tuple(book_search.fold_accents(name) for name in names)  # typed without accents
    missing = [name for name in names if english.stem(name.lower()) not in terms]
    assert not missing, f"accented names the search does not find: {missing}"
    lone = sorted(t for t in terms if len(t) == 1 and not t.isascii() and t.isalpha() and t.lower() in "áãéóüőíñç")
    assert not lone, f"accented letters indexed as words of their own: {lone}"


# The state of the two sidebars: is each <dialog> open, where is the sidebar's content
# (its nav links inside the dialog or in the page), is it visible, and is the primary
# sidebar hidden in place (sphinx-book-theme's pst-sidebar-hidden, wide screens).
SIDEBAR_JS = r"""
const state = {};
for (const side of ['primary', 'secondary']) {
  const sidebar = document.getElementById(`pst-${side}-sidebar`);
  const dialog = document.getElementById(`pst-${side}-sidebar-modal`);
  if (!sidebar || !dialog) { state[side] = null; continue; }
  const shown = el => {
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && box.right > 0 && box.left < innerWidth &&
      getComputedStyle(el).visibility !== 'hidden';
  };
  state[side] = {
    open: dialog.open,
    inDialog: dialog.querySelectorAll('a[href]').length,
    inPage: sidebar.querySelectorAll('a[href]').length,
    dialogShown: dialog.open && shown(dialog),
    pageShown: shown(sidebar),
    hidden: sidebar.classList.contains('pst-sidebar-hidden'),
  };
}
state.buttons = [...document.querySelectorAll('.primary-toggle, .secondary-toggle')]
  .filter(b => b.offsetParent).map(b => b.classList.contains('primary-toggle') ?
    'primary' : 'secondary');
return state;
"""


def _visible_button(driver, side):
    from selenium.webdriver.common.by import By

    buttons = [b for b in driver.find_elements(By.CSS_SELECTOR, f".{side}-toggle") if b.is_displayed()]
    assert buttons, f"no visible .{side}-toggle button"
    return buttons[0]


def _wait(driver, check, what, timeout=5.0):
    import time

    end = time.monotonic() + timeout
    while True:
        state = driver.execute_script(SIDEBAR_JS)
        if check(state):
            return state
        if time.monotonic() > end:
            pytest.fail(f"{what}: {state}", pytrace=False)
        time.sleep(0.1)


def test_sidebar_buttons_open_and_close(shared):
    # The header's buttons "site navigation" and "on this page" (pydata-sphinx-theme
    # 0.17 + sphinx-book-theme 1.3 bind only the first, hidden, copy of each: book.js
    # serves every copy). At 390 px each opens its drawer (a modal <dialog> holding the
    # sidebar's links), which closes again (Escape; the backdrop) and gives the links
    # back to the page; at 1280 px the primary button hides the sidebar in place and
    # shows it again, no drawer, and "on this page" is in the page (no button).
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    # the first page (it has both sidebars), whatever BOOK_PAGES says
    pages = browser.all_pages(HTML)
    page = "book/intro.html" if "book/intro.html" in pages else pages[0]
    base, driver = shared
    # phone: both drawers
    _fresh(driver, PHONE)
    driver.get(base + page)
    state = _wait(driver, lambda s: s["primary"] and s["secondary"], "page without both sidebars")
    assert sorted(set(state["buttons"])) == ["primary", "secondary"], state
    for side, close in (("primary", "escape"), ("secondary", "backdrop")):
        _visible_button(driver, side).click()
        _wait(
            driver,
            lambda s: s[side]["open"] and s[side]["dialogShown"] and s[side]["inDialog"] and not s[side]["inPage"],
            f"{PHONE} px: the {side} drawer did not open with its links",
        )
        if close == "escape":
            driver.switch_to.active_element.send_keys(Keys.ESCAPE)
        else:  # a click on the backdrop at (20, 450), left of the drawer
            actions = ActionChains(driver)
            actions.w3c_actions.pointer_action.move_to_location(20, 450).click()
            actions.perform()
        _wait(
            driver,
            lambda s: not s[side]["open"] and not s[side]["inDialog"] and s[side]["inPage"],
            f"{PHONE} px: the {side} drawer did not close ({close})",
        )
    # wide: the primary sidebar hides and shows in place
    driver.set_window_size(WIDE, 900)
    driver.get(base + page)
    state = _wait(
        driver, lambda s: s["primary"] and s["primary"]["pageShown"], f"{WIDE} px: the primary sidebar is not shown"
    )
    assert state["buttons"] == ["primary"], state
    assert state["secondary"]["pageShown"], state
    button = _visible_button(driver, "primary")
    button.click()
    _wait(
        driver,
        lambda s: s["primary"]["hidden"] and not s["primary"]["pageShown"] and not s["primary"]["open"],
        f"{WIDE} px: the primary sidebar did not hide",
    )
    button.click()
    _wait(
        driver,
        lambda s: (
            not s["primary"]["hidden"]
            and s["primary"]["pageShown"]
            and not s["primary"]["open"]
            and not s["secondary"]["open"]
        ),
        f"{WIDE} px: the primary sidebar did not come back",
    )
    assert not _console_errors(driver)


# The search page after a query: its status, and for every result its title and snippet.
SEARCH_JS = r"""
const done = arguments[arguments.length - 1];
const sleep = ms => new Promise(r => setTimeout(r, ms));
(async () => {
  // until the search has finished, every result has its snippet (or an object's
  // description), and the results are the same at two looks 100 ms apart
  let last = null;
  for (let i = 0; i < 300; i++) {
    const items = document.querySelectorAll('#search-results ul.search li');
    const finished = /finished|did not match/i.test(document.body.innerText || '');
    const now = finished && [...items].every(li => li.querySelector('p.context, :scope > span')) ?
      [...items].map(li => li.textContent).join('\n') : null;
    if (now !== null && now === last) break;
    last = now;
    await sleep(100);
  }
  const items = [...document.querySelectorAll('#search-results ul.search li')];
  done({
    title: document.title,
    results: items.map(li => ({
      title: (li.querySelector('a') || {}).textContent || '',
      snippet: (li.querySelector('p.context') || {}).textContent || '',
      // an object of the API reference has its description instead of a snippet
      object: !!li.querySelector(':scope > span'),
    })),
  });
})().catch(e => done({fatal: String(e)}));
"""
_TEX = re.compile(r"\\\(|\\\)|\\\[|\\[A-Za-z]{2,}")


@pytest.mark.parametrize("how", ["file", "http"])
def test_search_shows_snippets_without_tex(how, shared):
    # Sphinx's search page fetches each result's page for its snippet: from disk that
    # failed (titles only, one "Failed to fetch" per result) and over HTTP the snippet
    # was raw TeX; titles showed "\(\Gam\)" (book/_ext/book_search.py fixes all three)
    served, driver = shared
    base = HTML.resolve().as_uri() + "/" if how == "file" else served
    _fresh(driver)
    queries = [("attention", "The model: from linear attention to Γ"), ("Hermite", None)]
    queries += [("Raventós", None), ("Raventos", None)]  # an author, with and without the accent
    for query, expect in queries:
        driver.get(f"{base}search.html?q={query}")
        found = driver.execute_async_script(SEARCH_JS)
        assert not found.get("fatal"), found
        results = found["results"]
        assert sum(not r["object"] for r in results) >= 3, (how, query, found)
        no_snippet = [r["title"] for r in results if not r["object"] and len(r["snippet"].strip()) < 40]
        assert not no_snippet, f"{how}: results without a snippet: {no_snippet}"
        tex = [r for r in results if _TEX.search(r["title"] + r["snippet"])]
        assert not tex, f"{how}: raw TeX in search results: {tex[:3]}"
        if expect:
            assert any(expect in r["title"] for r in results), (expect, results[:5])
        assert not _console_errors(driver), (how, query)
    # the browser tab's title has its formula as text
    driver.get(base + "book/linear/model.html")
    title = driver.title
    assert "Γ" in title and not _TEX.search(title), title


# Every slide of a deck, once slides/book-slides.js has fitted them: reveal.js's frame
# (config width x height) against the slide's content, measured in the slide's own
# (unscaled) pixels with the slide shown.
SLIDE_FIT_JS = r"""
const done = arguments[arguments.length - 1];
(async () => {
  for (let i = 0; i < 400 && window.bookSlidesFit !== true; i++)
    await new Promise(r => setTimeout(r, 50));
  const {width, height} = Reveal.getConfig();
  const slides = [...document.querySelectorAll('.reveal .slides > section')];
  const out = [];
  for (let i = 0; i < slides.length; i++) {
    Reveal.slide(i);
    await new Promise(r => requestAnimationFrame(() => r()));
    const s = Reveal.getCurrentSlide();
    const title = s.querySelector('.admonition-title, h1, .figure-caption');
    // the smallest text as drawn on the screen, in CSS px: its font size times the scale
    // reveal.js draws the slide at (formulas are left out: their glyphs follow the text)
    const scale = s.getBoundingClientRect().width / s.offsetWidth;
    let px = Infinity, small = '';
    const walk = document.createTreeWalker(s, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const el = n.parentElement;
      if (!n.data.trim() || el.closest('mjx-container') || !el.getClientRects().length) continue;
      const size = parseFloat(getComputedStyle(el).fontSize) * scale;
      if (size < px) [px, small] = [size, n.data.trim().slice(0, 40)];
    }
    out.push({index: i + 1, fit: window.bookSlidesFit === true, frame: [width, height],
              textPx: Math.round(px * 10) / 10, smallText: small,
              box: [s.clientWidth, s.clientHeight], content: [s.scrollWidth, s.scrollHeight],
              scrolls: s.classList.contains('scrolls'), font: s.style.fontSize,
              nested: s.querySelectorAll('section').length,
              text: (title || s).textContent.trim().slice(0, 70)});
  }
  done(out);
})().catch(e => done([{fatal: String(e)}]));
"""


# What the eye sees on each slide: a display equation's number beside it (not on a line
# of its own), an inline formula and the punctuation touching it on one line (no line
# starts with ", with"), and a lab's statement set at least 24 px (not shrunk).
SLIDE_LOOK_JS = r"""
const out = {eqno: [], broken: [], small: []};
for (const s of document.querySelectorAll('.reveal .slides > section')) {
  const old = s.style.display;
  s.style.display = 'block';
  for (const no of s.querySelectorAll('div.math > span.eqno')) {
    const eq = no.parentElement.querySelector(':scope > mjx-container');
    if (!eq) continue;
    const a = no.getBoundingClientRect(), b = eq.getBoundingClientRect();
    const mid = (a.top + a.bottom) / 2;
    if (!(mid > b.top && mid < b.bottom)) out.eqno.push(no.textContent.trim());
  }
  for (const m of s.querySelectorAll('span.math > mjx-container:not([display="true"])')) {
    const t = m.parentElement.nextSibling;  // the text right after the formula
    if (!t || t.nodeType !== Node.TEXT_NODE || !/^[,.;:)]/.test(t.data)) continue;
    const r = document.createRange();
    r.setStart(t, 0);
    r.setEnd(t, 1);
    if (r.getBoundingClientRect().left < m.getBoundingClientRect().right - 2)
      out.broken.push(m.textContent.slice(0, 30) + t.data.slice(0, 10));
  }
  if (s.classList.contains('lab') && !s.style.fontSize)
    for (const p of s.querySelectorAll('[data-split] > p')) {
      const px = parseFloat(getComputedStyle(p).fontSize);
      if (px < 24) out.small.push(`${px}px: ${p.textContent.trim().slice(0, 40)}`);
    }
  s.style.display = old;
}
return out;
"""


#: No text on a slide is drawn smaller than this (CSS px), on a 1280 x 720 screen and on a
#: phone held either way (a 1280 x 720 slide scaled to a 390-px phone drew it at ~7 px).
MIN_SLIDE_TEXT_PX = 12


def _slide_misfits(slides: list[dict]) -> list[str]:
    """The slides of one deck (SLIDE_FIT_JS) whose content does not fit reveal's frame,
    or whose smallest text is drawn under MIN_SLIDE_TEXT_PX."""
    bad = []
    for s in slides:
        if "fatal" in s:
            return [s["fatal"]]
        width, height = s["frame"]
        problems = []
        if not s["fit"]:
            problems.append("book-slides.js did not finish")
        if s["box"] != [width, height]:
            problems.append(f"slide box {s['box']} is not the frame {width}x{height}")
        if s["content"][0] > width + 1 or s["content"][1] > height + 1:
            problems.append(f"content {s['content'][0]}x{s['content'][1]} px")
        if s["scrolls"]:
            problems.append("scrolls")
        if s["nested"]:
            problems.append(f"{s['nested']} nested <section> (reveal.js takes them for slides)")
        if s["textPx"] < MIN_SLIDE_TEXT_PX:
            problems.append(f"text drawn at {s['textPx']} px ({s['smallText']!r})")
        if problems:
            bad.append(f"#{s['index']} {s['text']!r}: {', '.join(problems)}")
    return bad


def test_slide_fit_check_catches_overflow():
    # the check itself, on made-up measurements (no browser)
    ok = {"index": 1, "fit": True, "frame": [1280, 720], "box": [1280, 720], "content": [1280, 720]}
    ok |= {"scrolls": False, "nested": 0, "text": "x", "font": "", "textPx": 14.6, "smallText": "y"}
    assert _slide_misfits([ok]) == []
    assert _slide_misfits([ok | {"content": [1280, 1575]}]) == ["#1 'x': content 1280x1575 px"]
    assert "scrolls" in _slide_misfits([ok | {"scrolls": True}])[0]
    assert "did not finish" in _slide_misfits([ok | {"fit": False}])[0]
    assert "nested" in _slide_misfits([ok | {"nested": 2}])[0]
    assert _slide_misfits([ok | {"textPx": 6.8}]) == ["#1 'x': text drawn at 6.8 px ('y')"]


#: The screens the decks are checked on: (name, window size, test of the frame the deck
#: chose there). The phone held sideways is emulated at its viewport (VIEWPORTS): headless
#: chromium's window keeps ~140 px of its height for itself.
SLIDE_SCREENS = (
    ("1280 x 720", (1280, 720), lambda f: f == [1280, 720]),
    ("phone upright", (PHONE, 844), lambda f: f[0] == 600 and f[1] > 720),
    ("phone sideways", (1280, 720), lambda f: f == [960, 540]),
)
VIEWPORTS = {"phone sideways": {"width": 844, "height": 390, "deviceScaleFactor": 1, "mobile": False}}
SLIDE_SHOT = {"1280 x 720": "", "phone upright": "-phone", "phone sideways": "-phone-sideways"}


def test_slides(shared):
    # make slides: every deck opens from the served book, reveal.js and MathJax run (both
    # from the build), every image loads, nothing comes from outside, no request fails,
    # no console error, and every slide of every deck fits its frame (long statements are
    # split over continuation slides by slides/book-slides.js; none may need to scroll):
    # on a 1280 x 720 screen the 1280 x 720 frame; on a phone a smaller one
    # (scripts/make_slides.py): held upright (390 x 844) a portrait frame 600 px wide, held
    # sideways (844 x 390) 960 x 540; so that no text is drawn under MIN_SLIDE_TEXT_PX on
    # any (the 1280 x 720 frame drew it at ~7 px on the upright phone).
    # reveal.js stays in its slide view (not its scroll view, where book-slides.js finds
    # no slide to split).
    decks = sorted((HTML / "slides").glob("*.html"))
    decks = [d for d in decks if d.name != "index.html"]
    if not decks:
        pytest.skip("no slides in the build (run make slides)")
    js = r"""
    const done = arguments[arguments.length - 1];
    (async () => {
      for (let i = 0; i < 200 && !(window.Reveal && Reveal.isReady()); i++)
        await new Promise(r => setTimeout(r, 50));
      if (window.MathJax && MathJax.startup) await MathJax.startup.promise;
      await Promise.all([...document.images].map(i => i.complete ? null :
        new Promise(r => { i.onload = i.onerror = r; })));
      done({ready: !!(window.Reveal && Reveal.isReady()),
            slides: window.Reveal ? Reveal.getTotalSlides() : 0,
            scroll: !!(window.Reveal && Reveal.isScrollView()),
            typeset: document.querySelectorAll('mjx-container').length,
            errors: document.querySelectorAll('mjx-merror').length,
            broken: [...document.images].filter(i => !i.naturalWidth).map(i => i.src),
            outside: [...document.querySelectorAll('script[src], link[href]')]
              .map(e => e.src || e.href).filter(u => !u.startsWith(location.origin))});
    })().catch(e => done({fatal: String(e)}));
    """
    misfits = {}
    base, driver = shared
    failed = len(FAILED_REQUESTS)
    for screen, window, frame_ok in SLIDE_SCREENS:
        _fresh(driver, *window, script_timeout=120)
        if screen in VIEWPORTS:  # a phone's viewport, exactly
            driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", VIEWPORTS[screen])
        try:
            for deck in decks:
                driver.get(f"{base}slides/{deck.name}")
                r = driver.execute_async_script(js)
                assert r.get("ready") and r["slides"] >= 3, (deck.name, screen, r)
                assert not r["scroll"], f"{deck.name} ({screen}): reveal.js is in its scroll view"
                assert not r["errors"] and not r["broken"] and not r["outside"], (deck.name, r)
                if deck.name.startswith("lecture"):
                    assert r["typeset"], (deck.name, r)
                slides = driver.execute_async_script(SLIDE_FIT_JS)
                assert len(slides) >= 3, (deck.name, screen, slides)
                assert frame_ok(slides[0]["frame"]), (deck.name, screen, slides[0]["frame"])
                if bad := _slide_misfits(slides):
                    misfits[f"{deck.name} ({screen})"] = bad
                look = driver.execute_script(SLIDE_LOOK_JS)
                assert look == {"eqno": [], "broken": [], "small": []}, (deck.name, screen, look)
                assert not _console_errors(driver), (deck.name, screen)
                # a look at the deck: its third slide (the first statement or figure)
                driver.execute_script("Reveal.slide(2)")
                SHOTS.mkdir(parents=True, exist_ok=True)
                # (DevTools' capture: selenium's is cut and shrunk under an emulated viewport)
                shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
                (SHOTS / f"slides-{deck.stem}{SLIDE_SHOT[screen]}.png").write_bytes(base64.b64decode(shot["data"]))
        finally:
            driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert FAILED_REQUESTS[failed:] == [], "slide decks asked for files that are not there"
    if misfits:
        pytest.fail(
            "slides that do not fit the frame or have small text:\n"
            + "\n".join(f"{deck} {line}" for deck, lines in misfits.items() for line in lines),
            pytrace=False,
        )


def test_slides_follow_the_phone_turning(shared):
    # a deck opened on a phone held upright takes the portrait frame; turned sideways it
    # reloads in the 960 x 540 one, at the same slide (scripts/make_slides.py)
    import time

    deck = HTML / "slides" / "lecture-1.html"
    if not deck.is_file():
        pytest.skip("no slides in the build (run make slides)")
    base, driver = shared
    _fresh(driver, PHONE, 844)
    driver.get(f"{base}slides/{deck.name}#/3")
    frame = "return window.Reveal && Reveal.isReady() ? [Reveal.getConfig().width, Reveal.getIndices().h] : null"
    seen = []
    try:
        for viewport in (None, VIEWPORTS["phone sideways"]):
            if viewport:
                driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", viewport)
            want = 600 if viewport is None else 960
            for _ in range(200):
                got = driver.execute_script(frame)
                if got and got[0] == want:
                    break
                time.sleep(0.05)
            seen.append(got)
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert seen == [[600, 3], [960, 3]], seen
    assert not _console_errors(driver)


def test_answer_key_opens_without_console_errors(shared):
    # make answer-key: the key, opened from disk as an instructor prints it, typesets its
    # math with the book's MathJax and logs no console error
    import importlib.util

    spec = importlib.util.spec_from_file_location("answer_key", ROOT / "scripts" / "answer_key.py")
    answer_key = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(answer_key)
    out = HTML.parent / "answer_key_test"
    path, n_ex, _ = answer_key.build(HTML, out)
    assert n_ex
    driver = _fresh(shared[1], 1280, 900)
    driver.get(path.resolve().as_uri())
    typeset = driver.execute_async_script(
        "const done = arguments[0]; (async () => { for (let i = 0; i < 200 &&"
        " !(window.MathJax && MathJax.startup && MathJax.startup.promise); i++)"
        " await new Promise(r => setTimeout(r, 50)); await MathJax.startup.promise; done(1);"
        " })().catch(e => done(String(e)));"
    )
    assert typeset == 1, f"MathJax did not run in the answer key: {typeset}"
    assert driver.execute_script("return document.querySelectorAll('mjx-container').length")
    assert not driver.execute_script("return document.querySelectorAll('mjx-merror').length")
    assert _console_errors(driver) == []


def test_header_at_1280px_has_one_search_button_that_opens_search(shared):
    # the theme's top navbar at 1280 px was an empty 64 px band holding a second copy of
    # the sidebar's search field (book.css drops it and shows the article header's
    # search button): no band, one search button in view, and it opens the search box
    from selenium.webdriver.common.by import By

    base, driver = shared
    _fresh(driver)
    driver.get(base + "book/intro.html")
    band = driver.execute_script(
        "const h = document.querySelector('header.bd-header');return h ? h.getBoundingClientRect().height : 0;"
    )
    assert band == 0, f"header band {band} px high at {WIDE} px"
    in_view = driver.execute_script(
        "return [...document.querySelectorAll('.search-button__button')].filter(b => {"
        " const r = b.getBoundingClientRect(); return r.width > 0 && r.height > 0 &&"
        " r.top >= 0 && r.bottom <= innerHeight; }).length;"
    )
    assert in_view == 1, f"{in_view} search buttons in view at {WIDE} px"
    button = driver.find_element(By.CSS_SELECTOR, ".article-header-buttons .search-button__button")
    button.click()
    focused = driver.execute_script(
        "const a = document.activeElement; return a && a.name === 'q' && a.offsetParent !== null;"
    )
    assert focused, "the search button did not open the search box"
    assert not _console_errors(driver)
