"""Figures and titles of the built book on a phone, in print and in search.

- a figure's zoom (book/_static/book.js) opens it over the page at least at its natural
  size, in a view that pans when the figure is wider than the window, without leaving
  the page; Escape closes it (html: after ``make book``, headless chromium);
- a legend that matplotlib places itself stays in the part of a figure a phone shows
  before scrolling (``lib.teaching.plotting.PHONE_VISIBLE``), unless it would cover data there
  that the usual place leaves free (no browser needed);
- the print-only title of every page has no TeX ("\\Gam" in 2.1; html);
- search hits on the API reference's objects have a snippet, and no snippet is the
  source of a code cell (html); snippets start and end at word boundaries (html);
- a printed page (DevTools' printToPDF) shows its hidden code cells and closed
  solutions, not their titles alone (html);
- a printed chapter leaves no large blank gaps: its A4 sheets (as ``make pdf``) are at
  most 10 % blank beyond the page's height in print media (html).

The browser tests reuse the helpers of tests/book/test_html.py (the built book at
``BOOK_HTML``, default ``_build/html``; ``BOOK_PAGES`` to check only some pages): the
zoom views are opened and measured during its pass over every page (``page_pass``, which
the two modules share), and the other tests share one browser (the fixture ``shared``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_html import (  # noqa: E402  (the sibling module, after the path line)
    _TEX,
    HTML,
    PHONE,
    SEARCH_JS,
    WIDE,
    _console_errors,
    _fresh,
    _skip_without_browser_or_book,
    browser,
    browser_session,
    figure_pages,
    page_pass,
)

from lib.teaching import plotting  # noqa: E402


@pytest.fixture(scope="module", name="shared")
def _shared():
    # one browser for the tests of this module that open a page (test_html.py's)
    yield from browser_session()


def _zoom_problems(report: dict, pages: list[str]) -> list[str]:
    """What is wrong with the zoom views of ``pages`` in the page pass's ``report``
    (ZOOM_JS's records, at both widths), one line each."""
    bad = []
    for page in pages:
        for width in (PHONE, WIDE):
            r = report[page, width]
            records = r["zoom"]
            if not records or r["zoomUrl"] != r["url"]:
                # a click that follows the link leaves the page (the bare SVG)
                bad.append(f"{page} @{width}px: no zoom view measured, at {r['zoomUrl']}")
            for f in records:
                where = f"{page} @{width}px {f.get('src')}"
                if f.get("fatal") or not (f["open"] and f["stayed"]):
                    bad.append(f"{where}: the view did not open over the page: {f}")
                elif f["shown"] < f["natural"] - 1:
                    bad.append(f"{where}: shown {f['shown']} px < natural {f['natural']} px")
                elif f["natural"] > f["paneWidth"] and f["paneScroll"] <= f["paneWidth"]:
                    bad.append(f"{where}: wider than the window but does not pan: {f}")
            # the console of the page's load and of the clicks
            errors = r["console"] + r["zoomConsole"]
            if errors:
                bad.append(f"{page} @{width}px: console errors {errors}")
    return bad


def test_zoom_check_catches_faults():
    # the check itself, on made-up records (no browser)
    fig = {"src": "a.svg", "open": True, "stayed": True, "natural": 600, "shown": 600}
    fig |= {"paneWidth": 390, "paneScroll": 600}
    ok = {"zoom": [fig], "url": "u/p.html", "zoomUrl": "u/p.html", "console": [], "zoomConsole": []}

    def problems(**change):
        return _zoom_problems({("p.html", PHONE): ok | change, ("p.html", WIDE): ok}, ["p.html"])

    assert problems() == []
    assert "no zoom view" in problems(zoom=[])[0]
    assert "no zoom view" in problems(zoomUrl="u/_images/a.svg")[0]
    assert "did not open" in problems(zoom=[fig | {"open": False}])[0]
    assert "did not open" in problems(zoom=[fig | {"stayed": False}])[0]
    assert "did not open" in problems(zoom=[{"fatal": "document unloaded"}])[0]
    assert "< natural" in problems(zoom=[fig | {"shown": 390}])[0]
    assert "does not pan" in problems(zoom=[fig | {"paneScroll": 390}])[0]
    assert "console" in problems(console=["x"])[0]
    assert "console" in problems(zoomConsole=["x"])[0]


@pytest.mark.html
def test_zoom_opens_figures_at_natural_size_and_pans():
    # the zoom views are opened and measured by the page pass of test_html.py (ZOOM_JS,
    # on each page with a figure at both widths, after the page's own checks)
    _skip_without_browser_or_book()
    pages = figure_pages()
    assert pages, "no page with a figure"
    bad = _zoom_problems(page_pass(), pages)
    assert not bad, "\n".join(bad)


@pytest.mark.html
def test_zoom_view_closes_with_escape(shared):
    pages = figure_pages()
    if not pages:
        pytest.skip("no page with a figure")
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    base, driver = shared
    _fresh(driver, PHONE)
    driver.get(base + pages[0])
    img = driver.find_element(By.CSS_SELECTOR, "article a.figure-zoom > img")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", img)
    img.click()
    is_open = "const v = document.querySelector('dialog.figure-zoom-view'); return !!(v && v.open)"
    assert driver.execute_script(is_open)
    ActionChains(driver).send_keys(Keys.ESCAPE).perform()
    assert not driver.execute_script(is_open)


@pytest.mark.html
def test_print_titles_have_no_tex():
    # sphinx-book-theme prints the page title as text (#jb-print-docs-body): the title of
    # 2.1 printed "\Gam" (book/_ext/book_search.py writes it with formulas as text)
    _skip_without_browser_or_book()
    bad = {}
    head = re.compile(r'<div id="jb-print-docs-body"[^>]*>\s*<h1>(.*?)</h1>', re.DOTALL)
    for page in browser.all_pages(HTML):
        m = head.search((HTML / page).read_text(encoding="utf-8"))
        if m and _TEX.search(m.group(1)):
            bad[page] = m.group(1).strip()
    assert not bad, f"print titles with TeX: {bad}"


# What a print must show of a page's closed dropdowns: the first line of every hidden
# code cell (<details>) and the longest text run outside formulas of every closed
# solution (sphinx-togglebutton), as the page has them before printing.
CLOSED_JS = r"""
const done = arguments[arguments.length - 1];
const sleep = ms => new Promise(r => setTimeout(r, ms));
const look = () => {
  const art = document.querySelector('article.bd-article');
  const code = [...art.querySelectorAll('details:not([open]) pre')]
    .map(p => p.textContent.split('\n')[0].trim()).filter(t => t.length >= 8);
  const solutions = [...art.querySelectorAll('.toggle-hidden')].map(sol => {
    const walk = document.createTreeWalker(sol, NodeFilter.SHOW_TEXT);
    let best = '';
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      if (n.parentElement.closest('mjx-container, .admonition-title, button')) continue;
      const t = n.data.replace(/\s+/g, ' ').trim();
      if (t.length > best.length) best = t;
    }
    return best;
  }).filter(t => t.length >= 12);
  return {code, solutions};
};
(async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  // book.js and sphinx-togglebutton have run, and two looks 100 ms apart agree
  for (let i = 0; i < 100 && !document.documentElement.dataset.bookFit; i++) await sleep(50);
  let last = null, now = JSON.stringify(look());
  for (let i = 0; i < 50 && now !== last; i++) {
    await sleep(100);
    [last, now] = [now, JSON.stringify(look())];
  }
  done(JSON.parse(now));
})();
"""


@pytest.mark.html
def test_print_opens_closed_dropdowns(shared):
    # Ctrl+P printed a hidden code cell as its "Show code cell source" title: the page's
    # <details> open for the print (book.js), and their content is not left at the
    # opacity 0 of myst-nb's fade-in (book.css); sphinx-togglebutton opens the solutions.
    # DevTools' Page.printToPDF prints as chromium --print-to-pdf and Ctrl+P do.
    import base64
    import io
    import unicodedata

    import pypdf

    page = "book/appendix/random_matrices.html"
    if not (HTML / page).is_file():
        pytest.skip(f"no {page} in the built book")
    # PDF text has its own spacing and ligatures ("ﬁ")
    squash = lambda text: re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))  # noqa: E731
    base, driver = shared
    _fresh(driver)
    driver.get(base + page)
    closed = driver.execute_async_script(CLOSED_JS)
    assert closed["code"] and closed["solutions"], closed
    pdf = driver.execute_cdp_cmd("Page.printToPDF", {"printBackground": True})
    reader = pypdf.PdfReader(io.BytesIO(base64.b64decode(pdf["data"])))
    text = squash(" ".join(p.extract_text() for p in reader.pages))
    missing = [t for t in closed["code"] + closed["solutions"] if squash(t) not in text]
    assert not missing, f"closed dropdowns not in the print of {page}: {missing}"
    # and the page is as it was after printing
    assert driver.execute_async_script(CLOSED_JS) == closed


#: The sheet of ``make pdf`` (scripts/book_pdf.py): A4, 0.6 in margins, in CSS px (96/in).
A4 = {"paperWidth": 8.27, "paperHeight": 11.69, "marginTop": 0.6, "marginBottom": 0.6}
A4 |= {"marginLeft": 0.6, "marginRight": 0.6, "preferCSSPageSize": False, "printBackground": True}
SHEET_W, SHEET_H = round((8.27 - 1.2) * 96), round((11.69 - 1.2) * 96)
#: At most this share of the printed sheets' height may be blank beyond what the text needs.
PRINT_WASTE = 0.10
#: Chapters with many theorems, solutions, code cells and tables (the blocks the themes
#: kept whole in print).
PRINT_PAGES = ("book/linear/learning_curves.html", "book/regimes/finite_data.html")

# Waits for MathJax, the fonts and book.js.
READY_JS = r"""
const done = arguments[arguments.length - 1];
(async () => {
  for (let i = 0; i < 200 && !document.documentElement.dataset.bookFit; i++)
    await new Promise(r => setTimeout(r, 50));
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  if (document.fonts) await document.fonts.ready;
  done(true);
})().catch(e => done(String(e)));
"""


def _print_waste(sheets: int, height: float) -> float:
    """The share of ``sheets`` printed sheets left blank, for content ``height`` px tall
    when laid out at the sheet's width in print media (SHEET_H px of it per sheet)."""
    return 1 - height / (sheets * SHEET_H)


def test_print_waste_measure():
    # the measure itself (no browser): 44 sheets for 39 sheets of text waste 11 %
    assert _print_waste(39, 39 * SHEET_H) == 0
    assert round(_print_waste(44, 39 * SHEET_H), 3) == 0.114 > PRINT_WASTE
    assert _print_waste(41, 39 * SHEET_H) < PRINT_WASTE


@pytest.mark.html
@pytest.mark.parametrize("page", PRINT_PAGES)
def test_print_leaves_no_large_gaps(page, shared):
    # The themes keep every admonition, code block and table whole in print, so one too
    # tall for what is left of a sheet moved whole to the next and left the rest blank:
    # learning_curves printed 44 A4 sheets for 39.1 sheets of content (11 % blank),
    # finite_data 38 for 32.8 (14 %). book.css lets blocks break (figures stay whole
    # with their captions): the sheets printed (DevTools' printToPDF, as make pdf) hold
    # the page's height in print media at the sheet's width with at most PRINT_WASTE blank.
    import base64
    import io

    import pypdf

    if not (HTML / page).is_file():
        pytest.skip(f"no {page} in the built book")
    base, driver = shared
    _fresh(driver, script_timeout=120)
    driver.get(base + page)
    assert driver.execute_async_script(READY_JS) is True
    pdf = driver.execute_cdp_cmd("Page.printToPDF", A4)
    sheets = len(pypdf.PdfReader(io.BytesIO(base64.b64decode(pdf["data"]))).pages)
    # the same page laid out for print, at the sheet's width, as one long sheet (book.js
    # opens the dropdowns before printing, as for the PDF)
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    metrics = {"width": SHEET_W, "height": SHEET_H, "deviceScaleFactor": 1, "mobile": False}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    try:
        height = driver.execute_script(
            "window.dispatchEvent(new Event('beforeprint'));"
            "const h = document.documentElement.scrollHeight;"
            "window.dispatchEvent(new Event('afterprint')); return h;"
        )
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
    waste = _print_waste(sheets, height)
    assert height > 5 * SHEET_H, (page, height)
    assert waste <= PRINT_WASTE, (
        f"{page}: {sheets} sheets for {height / SHEET_H:.2f} sheets of content ({waste:.0%} blank)"
    )


# a line of Python source (an attribute call on a name, a keyword argument with a
# string) or a TeX command: what a snippet cut from a code cell looked like
_CODE = re.compile(r"\b[a-z_]\w*\.\w+\(|\w+=r?[\"']|\\[A-Za-z]{2,}")


def _searched(shared, query: str):
    """The built book's search page for ``query`` at 1280 px: (driver, SEARCH_JS's result)."""
    base, driver = shared
    _fresh(driver)
    driver.get(f"{base}search.html?q={query}")
    found = driver.execute_async_script(SEARCH_JS)
    assert not found.get("fatal"), found
    return driver, found


@pytest.mark.html
@pytest.mark.parametrize("query", ["new_figure", "legend"])
def test_search_snippets_for_api_objects_and_not_code(query, shared):
    driver, found = _searched(shared, query)
    results = found["results"]
    assert results, (query, found)
    no_snippet = [r["title"] for r in results if len(r["snippet"].strip()) < 40]
    assert not no_snippet, f"{query}: hits without a snippet: {no_snippet}"
    code = [r for r in results if _CODE.search(r["snippet"])]
    assert not code, f"{query}: snippets that look like code or TeX: {code[:3]}"
    if query == "new_figure":
        assert any(r["object"] for r in results), results
    assert not _console_errors(driver)


def _cut_mid_word(snippet: str, texts: list[str]) -> bool:
    """Whether a snippet ("...text...") starts or ends inside a word of the page text
    it was cut from (it is looked up in every page's text: True if no occurrence starts
    and ends at word boundaries)."""
    body = snippet.strip()
    body = body[3:] if body.startswith("...") else body
    body = body[:-3] if body.endswith("...") else body
    body = body.strip()
    if not body:
        return False
    for text in texts:
        at = text.find(body)
        while at >= 0:
            end = at + len(body)
            if (at == 0 or text[at - 1].isspace()) and (end == len(text) or text[end].isspace()):
                return False
            at = text.find(body, at + 1)
    return True


@pytest.mark.html
@pytest.mark.parametrize("query", ["glossary", "ridge", "teacher"])
def test_search_snippets_cut_at_word_boundaries(query, shared):
    # Sphinx cuts a snippet 120 characters before the keyword, wherever that falls: the
    # glossary's began mid-word ("...rm of the"); book-search.js moves the cut to spaces
    driver, found = _searched(shared, query)
    texts = [page["text"] for page in driver.execute_script("return Object.values(window.BOOK_SEARCH_TEXT || {})")]
    assert texts, "the page texts of book-search-text.js did not load"
    snippets = [r["snippet"] for r in found["results"] if not r["object"] and r["snippet"].strip()]
    assert snippets, (query, found)
    cut = [s[:60] + " ... " + s[-40:] for s in snippets if _cut_mid_word(s, texts)]
    assert not cut, f"{query}: snippets cut inside a word:\n" + "\n".join(cut)


# ---- legends (matplotlib; no browser) --------------------------------------------------
def _legend_box(fig, ax):
    fig.canvas.draw()
    return ax.get_legend().get_window_extent(fig.canvas.get_renderer())


def test_automatic_legend_stays_in_a_phones_view():
    # a falling curve leaves the upper right free, where "best" put the legend (out of
    # a phone's view, Fig. 7.3); the book's axes put it in the left PHONE_VISIBLE
    fig, ax = plotting.new_figure(height=2.8)
    x = np.logspace(-1, 1, 30)
    ax.plot(x, 0.2 + 1 / (1 + x), label="theory")
    ax.plot(x, 0.25 + 1 / (1 + x), "o", label="simulation")
    ax.axhline(0.2, ls=":", label="floor")
    ax.set_xscale("log")
    ax.legend(fontsize=8)
    box = _legend_box(fig, ax)
    assert box.x1 <= plotting.PHONE_VISIBLE * fig.bbox.width + 1
    # nothing of the data under it
    assert plotting._data_hits(ax, box) == 0
    # the same figure with plain matplotlib axes: "best" is at the upper right
    fig2, ax2 = plotting.new_figure(height=2.8, subplot_kw={"axes_class": matplotlib.axes.Axes})
    for line in ax.get_lines():
        ax2.plot(*line.get_data(), ls=line.get_linestyle(), marker=line.get_marker(), label=line.get_label())
    ax2.set_xscale("log")
    ax2.legend(fontsize=8)
    assert _legend_box(fig2, ax2).x1 > plotting.PHONE_VISIBLE * fig2.bbox.width


def test_legend_keeps_an_explicit_place_and_avoids_data():
    # data all over the left part: the legend goes where "best" finds room
    fig, ax = plotting.new_figure(height=2.8)
    xx = np.linspace(0.0, 1.0, 400)
    for k in range(6):
        ax.plot(xx[:260], np.full(260, k / 5), label=f"c{k}")
    ax.set_xlim(0.0, 1.0)
    ax.legend()
    box = _legend_box(fig, ax)
    assert plotting._data_hits(ax, box) == 0
    assert box.x1 > plotting.PHONE_VISIBLE * fig.bbox.width
    # an explicit loc is kept
    fig, ax = plotting.new_figure(height=2.8)
    ax.plot([0, 1], [1, 0], label="a")
    ax.legend(loc="upper right")
    box = _legend_box(fig, ax)
    assert box.x1 > 0.9 * ax.bbox.x1
