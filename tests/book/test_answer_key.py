"""Tests for scripts/answer_key.py: the printable answer key from the built book."""

import importlib.util
import os
from pathlib import Path

import nbformat
import pytest

# book tooling, not lib: absent from the floors venv of `make test-min`
BeautifulSoup = pytest.importorskip("bs4").BeautifulSoup

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("answer_key", ROOT / "scripts/answer_key.py")
answer_key = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(answer_key)

PAGE = """<!DOCTYPE html><html><head><title>{title} — The Book</title>
<link rel="stylesheet" href="{up}_static/book.css"><script src="{up}_static/mj.js"></script>
</head><body><main><article><h1>{title}<a class="headerlink" href="#t">#</a></h1>
{body}</article></main></body></html>"""
CHAPTER = """
<p>Text.</p>
<div class="exercise admonition" id="ex-a"><p>Exercise 1</p></div>
<div class="solution dropdown admonition" id="s-1"><p>Solution to
<a href="#ex-a">Exercise 1</a></p><p>See <a href="#eq-1">(1)</a> and
<a href="other.html#x">there</a>.</p><img src="../_images/f.png">
<div class="cell docutils container"><pre>print(1)</pre></div></div>
<div class="exercise admonition" id="lab-b"><p>Lab</p></div>
<div class="cell tag_lab-solution docutils container"><pre>def f(): return 1</pre></div>
<div class="cell docutils container"><pre>labs.check(...)</pre></div>
"""


def _book(tmp_path):
    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: intro\nparts:\n- chapters:\n  - file: book/chapter\n  - file: book/empty.ipynb\n"
    )
    html = tmp_path / "_build" / "html"
    (html / "book").mkdir(parents=True)
    (html / "intro.html").write_text(PAGE.format(title="Intro", body="<p>Hi</p>", up=""))
    (html / "book" / "chapter.html").write_text(PAGE.format(title="The chapter", body=CHAPTER, up="../"))
    (html / "book" / "empty.html").write_text(PAGE.format(title="No exercises", body="", up="../"))
    return html


def test_key_gathers_exercises_and_opened_solutions_in_order(tmp_path):
    html = _book(tmp_path)
    out = tmp_path / "_build" / "answer_key"
    path, n_ex, n_sol = answer_key.build(html, out, root=tmp_path)
    assert (n_ex, n_sol) == (2, 2)
    soup = BeautifulSoup(path.read_text(), "html.parser")
    chapters = soup.select("section.key-chapter")
    assert [c.h2.get_text(strip=True) for c in chapters] == ["The chapter"]
    items = chapters[0].select(answer_key.SELECT)
    assert [i.get("id") or "lab-code" for i in items] == [
        "ex-a",
        "s-1",
        "lab-b",
        "lab-code",
    ]
    assert "labs.check" not in path.read_text()  # only the lab's solution cell
    assert not soup.select(".dropdown")  # printed open
    links = {a.get_text(strip=True): a["href"] for a in soup.select("a")}
    assert links["(1)"] == "../html/book/chapter.html#eq-1"
    assert links["there"] == "../html/book/other.html#x"
    assert soup.select_one("img")["src"] == "../html/_images/f.png"
    assert soup.select_one("link[rel=stylesheet]")["href"] == "../html/_static/book.css"
    assert soup.title.string == "Answer key"


def test_key_needs_the_built_book(tmp_path):
    html = _book(tmp_path)
    for page in html.rglob("*.html"):
        page.unlink()
    with pytest.raises(FileNotFoundError, match="make book"):
        answer_key.build(html, tmp_path / "key", root=tmp_path)


@pytest.fixture(scope="module")
def key_of_the_built_book(tmp_path_factory):
    """``answer_key.build``'s (path, exercises, solutions) for the built book (``BOOK_HTML``
    or _build/html), built once for the html tests of this file; skips if it is not built."""
    html = Path(os.environ.get("BOOK_HTML", ROOT / "_build" / "html"))
    if not (html / "book" / "hermite" / "basics.html").exists():
        pytest.skip("the book is not built (make book)")
    return answer_key.build(html, tmp_path_factory.mktemp("key"))


@pytest.mark.html  # needs the built book: run by make test-html, after make book
def test_key_of_the_built_book(key_of_the_built_book):
    _, n_ex, n_sol = key_of_the_built_book
    exercises = labs = starts = 0
    for nb_path in (ROOT / "book").rglob("*.ipynb"):
        for cell in nbformat.read(nb_path, as_version=4).cells:
            exercises += cell.source.count("{exercise}")
            starts += cell.source.count("{solution-start}")
            labs += "lab-solution" in cell.metadata.get("tags", [])
    assert n_ex == exercises
    assert n_sol == starts + labs


def test_key_keeps_mathjax_and_drops_the_page_furniture_scripts(tmp_path):
    # the theme's and the search's scripts expect the book's page around the article:
    # on the key they raised console errors (an IntersectionObserver on a missing header,
    # a search file looked up next to the key)
    html = _book(tmp_path)
    chapter = html / "book" / "chapter.html"
    head = (
        '<script src="../_static/documentation_options.js"></script>'
        '<link rel="preload" as="script" href="../_static/scripts/bootstrap.js">'
        '<script src="../_static/scripts/sphinx-book-theme.js"></script>'
        '<script src="../_static/book-search.js"></script>'
        "<script>window.MathJax = {};</script>"
        '<script defer src="../_static/mathjax/tex-chtml.js"></script></head>'
    )
    chapter.write_text(chapter.read_text().replace("</head>", head))
    (html / "intro.html").unlink()  # the chapter's head is the key's
    path, *_ = answer_key.build(html, tmp_path / "key", root=tmp_path)
    scripts = [s.get("src") for s in BeautifulSoup(path.read_text(), "html.parser").head.find_all("script")]
    assert scripts == [
        "../_build/html/_static/documentation_options.js",
        None,
        "../_build/html/_static/mathjax/tex-chtml.js",
    ]
    assert 'rel="preload"' not in path.read_text()


#: The theme's rules that made the gap: the body a flex column (whose items' margins do
#: not collapse) and large heading and paragraph margins (pydata-sphinx-theme's values).
THEME_CSS = """
body { display: flex; flex-direction: column; min-height: 100vh; }
h2 { margin-top: 2.75rem; margin-bottom: 1.05rem; }
p, div.cell { margin-bottom: 1.15rem; }
"""
#: The largest space allowed between two blocks of the key: about one heading's margin.
MAX_GAP_PX = 60


def _gaps_before_chapters(path):
    """Pixels between each chapter heading and the block above it, in chromium."""
    spec = importlib.util.spec_from_file_location("browser", ROOT / "scripts" / "browser.py")
    browser = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(browser)
    if browser.missing():
        pytest.skip(browser.missing())
    with browser.chromium(1280, 900) as driver:
        driver.get(path.resolve().as_uri())
        return driver.execute_script(
            """
            const blocks = [...document.body.children]
              .flatMap(e => e.matches('section.key-chapter') ? [...e.children] : [e])
              .filter(e => e.getBoundingClientRect().height > 0);
            const gaps = [];
            for (let i = 1; i < blocks.length; i++) {
              if (blocks[i].tagName !== 'H2') continue;
              gaps.push(blocks[i].getBoundingClientRect().top - blocks[i - 1].getBoundingClientRect().bottom);
            }
            return gaps;
            """
        )


def test_no_empty_gap_before_a_chapter(tmp_path):
    """With the theme's flex body the margins above a chapter heading added up to
    ~100 px of blank page; the key's own style lets them collapse."""
    html = _book(tmp_path)
    (html / "_static").mkdir()
    (html / "_static" / "book.css").write_text(THEME_CSS)
    path, *_ = answer_key.build(html, tmp_path / "key", root=tmp_path)
    gaps = _gaps_before_chapters(path)
    assert gaps and max(gaps) <= MAX_GAP_PX, gaps


@pytest.mark.html  # needs the built book: run by make test-html, after make book
def test_no_empty_gap_in_the_key_of_the_built_book(key_of_the_built_book):
    path, *_ = key_of_the_built_book
    gaps = _gaps_before_chapters(path)
    assert len(gaps) >= 7 and max(gaps) <= MAX_GAP_PX, gaps


#: The theme's code boxes (pydata-sphinx-theme): a long line scrolls inside its box.
#: Printed, a scroll box shows only what fits, so the end of every long line was lost.
#: And it keeps every admonition and code block whole on a sheet.
THEME_CODE_CSS = """
pre { overflow-x: auto; white-space: pre; }
div.highlight, div.cell_output { overflow-x: auto; }
div.admonition, div.highlight, div[class*=highlight-] { break-inside: avoid; }
"""
LONG_LINE = 'print(f"{t:>7s}: all d {f_all.e_inf:.4f} ± {f_all.e_se:.4f}' + ", x" * 60 + ")"
#: Printable width of a Letter sheet with chromium's default margins, in CSS pixels.
LETTER_PX = 740


def _browser():
    spec = importlib.util.spec_from_file_location("browser", ROOT / "scripts" / "browser.py")
    browser = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(browser)
    if browser.missing():
        pytest.skip(browser.missing())
    return browser


def _printed(path):
    """Chromium's print layout of ``path`` at a Letter sheet's width: the code blocks
    whose text runs past their box (clipped on paper), and each solution's
    ``break-inside``."""
    with _browser().chromium(LETTER_PX, 900) as driver:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
        driver.get(path.resolve().as_uri())
        return driver.execute_script(
            """
            const clipped = [...document.querySelectorAll('pre')]
              .filter(e => e.scrollWidth > e.clientWidth + 1
                           || e.getBoundingClientRect().right > window.innerWidth + 1)
              .map(e => e.textContent.slice(0, 60));
            const breaks = [...document.querySelectorAll('div.solution')]
              .map(e => getComputedStyle(e).breakInside);
            return [clipped, breaks];
            """
        )


def _toy_key_with_long_code(tmp_path):
    html = _book(tmp_path)
    (html / "_static").mkdir()
    (html / "_static" / "book.css").write_text(THEME_CSS + THEME_CODE_CSS)
    chapter = html / "book" / "chapter.html"
    long_code = (
        '<div class="cell_output docutils container"><div class="output stream '
        f'highlight-myst-ansi notranslate"><div class="highlight"><pre>{LONG_LINE}</pre>'
        "</div></div></div>"
    )
    chapter.write_text(chapter.read_text().replace("<pre>print(1)</pre>", f"<pre>{LONG_LINE}</pre>{long_code}"))
    path, *_ = answer_key.build(html, tmp_path / "key", root=tmp_path)
    return path


def test_printed_key_wraps_long_code_lines(tmp_path):
    """Printed, a long code or output line wraps inside the page instead of being cut
    at the edge of a scroll box (the key's blocks lie outside the book's article, whose
    own rule wraps them on a chapter page)."""
    clipped, _ = _printed(_toy_key_with_long_code(tmp_path))
    assert clipped == [], clipped


def test_printed_key_lets_a_solution_break_across_sheets(tmp_path):
    """No solution is kept whole on one sheet: a long one then moved to the next sheet
    and left the sheet before it mostly blank."""
    _, breaks = _printed(_toy_key_with_long_code(tmp_path))
    assert breaks and set(breaks) == {"auto"}, breaks


def test_key_keeps_only_short_code_blocks_whole():
    soup = BeautifulSoup("<div><pre>" + "x\n" * 3 + "</pre><pre>" + "x\n" * 40 + "</pre></div>", "html.parser")
    answer_key._mark_short_code(soup.div)
    assert [p.get("class") for p in soup.find_all("pre")] == [["key-short"], None]
    assert "pre.key-short { break-inside: avoid-page; }" in answer_key.PRINT_CSS


def test_printed_chapter_page_wraps_code(tmp_path):
    """On a chapter page the book's style wraps code and outputs (on screen and on
    paper), so a printed chapter loses no line end either."""
    page = tmp_path / "page.html"
    (tmp_path / "theme.css").write_text(THEME_CODE_CSS)
    page.write_text(
        '<!DOCTYPE html><html><head><link rel="stylesheet" href="theme.css">'
        f'<link rel="stylesheet" href="{(ROOT / "book" / "_static" / "book.css").as_uri()}">'
        '</head><body><main><article class="bd-article"><div class="cell docutils container">'
        f'<div class="cell_input docutils container"><div class="highlight"><pre>{LONG_LINE}'
        '</pre></div></div><div class="cell_output docutils container"><div class="output '
        f'text_plain highlight-myst-ansi"><div class="highlight"><pre>{LONG_LINE}</pre>'
        "</div></div></div></div></article></main></body></html>"
    )
    clipped, _ = _printed(page)
    assert clipped == [], clipped


@pytest.mark.html  # needs the built book: run by make test-html, after make book
def test_printed_key_of_the_built_book_wraps_code_and_lets_solutions_break(key_of_the_built_book):
    path, *_ = key_of_the_built_book
    clipped, breaks = _printed(path)
    assert clipped == [], clipped
    assert len(breaks) >= 30 and set(breaks) == {"auto"}, breaks
