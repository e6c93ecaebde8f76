"""The answer key: every exercise of the book with its solution, on one printable page.

Made from the instructor edition's HTML (``make book`` first), so the solutions read
exactly as in the book, with their computed numbers, equations and figures: for each
chapter, in order, every exercise block, its solution (opened, not a dropdown) and,
for a coding lab, its reference solution cell. The page uses the book's own
stylesheets and offline MathJax from ``<html>/_static`` (relative links, no network),
starts each chapter after the first on a new sheet when printed, and links every
cross-reference back into the book.

Usage (``make answer-key`` runs it)::

    python scripts/answer_key.py [--html _build/html] [--out _build/answer_key]

writes ``<out>/answer_key.html``; print it from a browser (or ``make pdf``'s chromium)
for a paper copy.
"""

from __future__ import annotations

import argparse
import copy
import os
import posixpath
import sys
from pathlib import Path

from bs4 import BeautifulSoup, Tag

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:  # the sibling module, also when loaded by file path
    sys.path.insert(0, str(_HERE))
import sync_notebooks  # noqa: E402  (after the sys.path line above; reads _toc.yml)

ROOT = _HERE.parent
#: What the key takes from a chapter page, in document order.
SELECT = "div.exercise, div.solution, div.cell.tag_lab-solution"
#: The key's own style. ``display: block`` undoes the theme's ``body { display: flex }``:
#: in a flex column the margins of the blocks do not collapse, and the last item of a
#: chapter, the chapter's margin and its heading's margin added up to a 100-px gap.
#: In print, code and output wrap instead of scrolling (a scroll box prints clipped at
#: its right edge), and a solution may break across sheets: keeping each one whole
#: pushed long solutions to the next sheet and left a third of the sheets half empty
#: (the theme keeps every admonition and code block whole: undone here but for the
#: exercises, which are short).
#: Headings stay with what follows them, and short code blocks stay whole.
PRINT_CSS = """
body { display: block; margin: 2em auto; max-width: 52em; padding: 0 1em; }
h1.key-title { margin-bottom: .2em; }
section.key-chapter { margin-top: 2.5em; }
section.key-chapter > h2 { border-bottom: 1px solid #999; }
div.solution { border-left: 4px solid #2a7ab0; }
@media print {
  section.key-chapter { break-before: page; }
  section.key-chapter:first-of-type { break-before: auto; }
  section.key-chapter > h2, .admonition-title { break-after: avoid-page; }
  div.exercise { break-after: avoid-page; }
  div.solution, div.cell, div.highlight, div[class*=highlight-] { break-inside: auto; }
  pre.key-short { break-inside: avoid-page; }
  pre, div.highlight, div.cell_input, div.cell_output, div.output {
    overflow: visible !important;
  }
  pre { white-space: pre-wrap !important; overflow-wrap: anywhere; word-break: break-word; }
  a { color: inherit; text-decoration: none; }
}
"""
#: Code or output blocks of at most this many lines are kept on one sheet in print;
#: longer ones may break across sheets (keeping them whole left pages a third empty).
SHORT_PRE_LINES = 12


#: Scripts of a chapter's head that the key keeps: MathJax and what its configuration
#: reads. The theme's scripts and the book's search expect the page around the article
#: (its header, sidebars and search box): on the key they only raised console errors.
KEEP_SCRIPTS = ("mathjax", "documentation_options")


def _page_scripts_only(head: Tag) -> None:
    """Drop from ``head`` the external scripts (and their preload links) of the book's
    page furniture; MathJax, its configuration and the stylesheets stay."""
    for script in head.find_all("script", src=True):
        if not any(k in script["src"].lower() for k in KEEP_SCRIPTS):
            script.decompose()
    for link in head.find_all("link", rel="preload"):
        if link.get("as") == "script":
            link.decompose()


def chapter_pages(root: Path = ROOT) -> list[str]:
    """The pages of ``_toc.yml`` in reading order (paths without suffix)."""
    return list(dict.fromkeys(str(Path(name).with_suffix("")) for name in sync_notebooks.toc_files(root)))


def _is_local(url: str) -> bool:
    return not (url.startswith(("#", "/", "data:", "mailto:")) or "://" in url or not url)


def _rebase(url: str, page_dir: str, key_dir_to_html: str) -> str:
    """A URL relative to a page in the book, made relative to the key's folder."""
    path = posixpath.normpath(posixpath.join(page_dir, url))
    return posixpath.join(key_dir_to_html, path)


def _rebase_all(tag: Tag, page: str, to_html: str) -> None:
    """Make every link and source in ``tag`` work from the key's folder."""
    page_dir = posixpath.dirname(page)
    for node in [tag, *tag.find_all(True)]:
        for attr in ("href", "src"):
            url = node.get(attr)
            if not isinstance(url, str):
                continue
            if url.startswith("#"):  # an anchor on the chapter page: open the book
                node[attr] = posixpath.join(to_html, page + ".html") + url
            elif _is_local(url):
                node[attr] = _rebase(url, page_dir, to_html)


def _top_level(found: list[Tag]) -> list[Tag]:
    """The matches that are not inside another match (a lab cell in a solution)."""
    ids = {id(t) for t in found}
    return [t for t in found if not any(id(p) in ids for p in t.parents)]


def chapter_items(soup: BeautifulSoup) -> list[Tag]:
    """The exercises, solutions and lab solution cells of one page, opened."""
    article = soup.select_one("main article") or soup
    items = _top_level(article.select(SELECT))
    out = []
    for item in items:
        item = copy.copy(item)
        for node in [item, *item.select(".dropdown, .toggle-hidden")]:
            classes = [c for c in node.get("class", []) if c not in ("dropdown", "toggle-hidden")]
            node["class"] = classes
        for button in item.select("button.toggle-button"):
            button.decompose()
        out.append(item)
    return out


def _mark_short_code(item: Tag) -> None:
    """Give the class ``key-short`` to the code and output blocks of ``item`` short
    enough to print whole (CSS cannot count a block's lines)."""
    for pre in item.find_all("pre"):
        if pre.get_text().rstrip("\n").count("\n") < SHORT_PRE_LINES:
            pre["class"] = [*pre.get("class", []), "key-short"]


def build(html: Path, out: Path, root: Path = ROOT) -> tuple[Path, int, int]:
    """Write ``out/answer_key.html`` from the built book in ``html``.

    Returns
    -------
    path : pathlib.Path
        The page written.
    exercises, solutions : int
        How many exercise blocks and solutions (including lab solutions) it holds.
    """
    pages = [p for p in chapter_pages(root) if (html / f"{p}.html").exists()]
    if not pages:
        raise FileNotFoundError(f"no built chapter pages under {html}: run `make book` first")
    out.mkdir(parents=True, exist_ok=True)
    to_html = Path(os.path.relpath(html, out)).as_posix()
    first = BeautifulSoup((html / f"{pages[0]}.html").read_text("utf-8"), "html.parser")
    key = BeautifulSoup("<!DOCTYPE html><html lang='en'></html>", "html.parser")
    head = copy.copy(first.head)
    _page_scripts_only(head)
    _rebase_all(head, pages[0], to_html)
    for title in head.find_all("title"):
        title.string = "Answer key"
    style = key.new_tag("style")
    style.string = PRINT_CSS
    head.append(style)
    body = key.new_tag("body")
    key.html.append(head)
    key.html.append(body)
    book_title = (first.title.string or "").split(" — ")[-1].strip()
    h1 = key.new_tag("h1", attrs={"class": "key-title"})
    h1.string = f"Answer key: {book_title}" if book_title else "Answer key"
    body.append(h1)
    note = key.new_tag("p")
    note.string = (
        "Every exercise of the book with its solution, and every coding lab with its "
        "reference solution, chapter by chapter (the instructor edition)."
    )
    body.append(note)
    n_ex = n_sol = 0
    for page in pages:
        soup = BeautifulSoup((html / f"{page}.html").read_text("utf-8"), "html.parser")
        items = chapter_items(soup)
        if not any("exercise" in i.get("class", []) for i in items):
            continue
        section = key.new_tag("section", attrs={"class": "key-chapter"})
        h2 = key.new_tag("h2")
        link = key.new_tag("a", href=posixpath.join(to_html, page + ".html"))
        heading = soup.select_one("main article h1") or soup.find("h1")
        link.string = heading.get_text(" ", strip=True).rstrip("#").strip()
        h2.append(link)
        section.append(h2)
        for item in items:
            classes = item.get("class", [])
            n_ex += "exercise" in classes
            n_sol += "solution" in classes or "tag_lab-solution" in classes
            _rebase_all(item, page, to_html)
            _mark_short_code(item)
            section.append(item)
        body.append(section)
    path = out / "answer_key.html"
    path.write_text(str(key), encoding="utf-8")
    return path, n_ex, n_sol


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--html", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "answer_key")
    args = parser.parse_args(argv)
    path, n_ex, n_sol = build(args.html.resolve(), args.out.resolve())
    print(f"{n_ex} exercises, {n_sol} solutions: file://{path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
