"""Sphinx extension: search that works offline and shows formulas as text.

Sphinx's search page (``searchtools.js``) lists the pages that match and then fetches
each page to cut a snippet from its text. Opened from disk (``file://``) every fetch
fails ("Failed to fetch" in the console, titles only); served over HTTP the snippet is
the page's text before MathJax, so formulas show as raw TeX. Titles are plain text in
the search index and in the browser tab, so ``\\(\\Gam\\)`` shows there too.

This extension, after the HTML is written,

- writes ``_static/book-search-text.js``: for every page, the text of its main column
  with every formula turned into readable Unicode (``tex_text.tex_to_text``), without
  the source of its code cells, where each of its sections starts and ends in that
  text, and where its parts that are not prose (headings, code outputs, literal blocks,
  API signatures) are;
- rewrites the titles in ``searchindex.js`` the same way, and adds to its terms each
  accented term without its accents (a query typed without them finds the page);

and on every page sets the ``<title>`` (the tab's title) with formulas as text. The
script ``book/_static/book-search.js`` (added to every page, active on the search page
only) loads that text and answers the search page's requests for page text from it,
without fetching anything, so snippets show offline and over HTTP alike; it cuts each
snippet as a short excerpt of prose around the first match of the query's words
(``bookSnippet`` in that script).
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import tex_text
from bs4 import BeautifulSoup, NavigableString, Tag
from sphinx.search.en import SearchEnglish

TEXT_FILE = "book-search-text.js"
_TEX_COMMAND = re.compile(r"\\[A-Za-z]{2,}")
_MATH_SPAN = re.compile(r'<span class="math[^"]*">(.*?)</span>', re.DOTALL)


def _config_macros(app) -> None:
    config = app.config.mathjax3_config or {}
    tex_text.set_macros(((config.get("tex") or {}).get("macros")) or {})


def page_title(app, pagename, templatename, context, doctree):
    """The tab's title with its formulas as text (the heading keeps its math)."""
    title = context.get("title")
    if title and ("\\(" in title or "math" in title):
        plain = _MATH_SPAN.sub(lambda m: m.group(1), title)
        context["title"] = tex_text.plain(plain)
    # the print-only header of sphinx-book-theme (#jb-print-docs-body) shows
    # ``pagetitle``, which the theme sets to the title's text: TeX without its
    # delimiters ("\\Gam"); this handler runs after the theme's (priority 600)
    pagetitle = context.get("pagetitle")
    if pagetitle and "\\" in pagetitle:
        context["pagetitle"] = tex_text.plain_title(pagetitle)


#: Parts of a page that are not prose: headings, literal blocks (printed outputs among
#: them; a figure's caption is prose), an API object's signature. A snippet is cut
#: around a match outside them where there is one.
_NOT_PROSE = ("h1", "h2", "h3", "h4", "h5", "h6", "pre")
_NOT_PROSE_CLASSES = ("sig",)


def _main_text(html: str) -> tuple[str, list[list], list[list]]:
    """Text of the page's main column, ``[id, start, end]`` of its sections and
    ``[start, end]`` of its parts that are not prose (:data:`_NOT_PROSE`)."""
    soup = BeautifulSoup(html, "html.parser")
    main = soup.select_one('[role="main"]')
    if main is None:
        return "", [], []
    # the page's own text: not its header (buttons, the print title with bare TeX), the
    # "Contents" box, the previous/next links or the footer; nor the source of code
    # cells (a snippet cut from it was code with raw TeX in its strings): their
    # outputs stay
    for junk in main.select(
        ".headerlink, script, style, .bd-header-article, #jb-print-docs-body, "
        "div.cell_input, "
        ".onlyprint, .bd-sidebar-secondary, .prev-next-area, .bd-footer-article, "
        ".toggle-details__summary svg"
    ):
        junk.decompose()
    pieces: list[str] = []
    sections: list[list] = []
    skip: list[list] = []
    length = 0

    def add(text: str) -> None:
        nonlocal length
        text = re.sub(r"\s+", " ", text)
        if not text.strip():
            if pieces and not pieces[-1].endswith(" "):
                pieces.append(" ")
                length += 1
            return
        if pieces and pieces[-1].endswith(" ") and text.startswith(" "):
            text = text[1:]
        # astral characters (the double-struck E of an expectation) as plain letters:
        # the search page cuts snippets by UTF-16 units and would split their pairs
        text = re.sub(
            r"[\U00010000-\U0010FFFF]",
            lambda m: unicodedata.normalize("NFKC", m.group()),
            text,
        )
        pieces.append(text)
        # offsets in UTF-16 code units, as JavaScript slices strings: an astral
        # character (the double-struck E of an expectation) counts two
        length += len(text.encode("utf-16-le")) // 2

    def walk(node: Tag) -> None:
        for child in node.children:
            if isinstance(child, NavigableString):
                if child.__class__.__name__ in ("Comment", "Doctype"):
                    continue
                add(str(child))
            elif isinstance(child, Tag):
                classes = child.get("class") or []
                if "math" in classes:
                    add(" " + tex_text.plain(child.get_text()) + " ")
                    continue
                if child.name == "code" and _TEX_COMMAND.search(child.get_text()):
                    # an inline literal holding TeX (a docstring's r"$\\mathrm{ReLU}$"
                    # label) as text: a snippet shows no raw TeX
                    code = child.get_text()
                    add(
                        tex_text.plain(code)
                        if "$" in code
                        else tex_text.tex_to_text(code)
                    )
                    continue
                start = length
                if child.name in (
                    "p",
                    "div",
                    "li",
                    "dt",
                    "dd",
                    "h1",
                    "h2",
                    "h3",
                    "h4",
                    "figcaption",
                    "tr",
                    "section",
                    "pre",
                ):
                    add(" ")
                walk(child)
                if child.name in _NOT_PROSE or any(
                    c in classes for c in _NOT_PROSE_CLASSES
                ):
                    if (
                        skip and skip[-1][1] >= start
                    ):  # nested in or next to the last one
                        skip[-1] = [min(skip[-1][0], start), max(skip[-1][1], length)]
                    else:
                        skip.append([start, length])
                if child.name == "section" and child.get("id"):
                    sections.append([child["id"], start, length])
                elif child.name == "dl":
                    # an object of the API reference (its anchor is its <dt>'s id):
                    # its signature and description, the snippet of its search hit
                    for dt in child.find_all("dt", recursive=False):
                        if dt.get("id"):
                            sections.append([dt["id"], start, length])

    walk(main)
    skip.sort()
    merged: list[list] = []
    for a, b in skip:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return "".join(pieces), sections, merged


def write_search_text(app, exception):
    """Write the page texts for the search page and fix the index's titles."""
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    index_file = out / "searchindex.js"
    if not index_file.is_file():
        return
    raw = index_file.read_text(encoding="utf-8")
    prefix, suffix = "Search.setIndex(", ")"
    if not (raw.startswith(prefix) and raw.rstrip().endswith(suffix)):
        return
    index = json.loads(raw[len(prefix) : raw.rstrip().rfind(suffix)])
    index["titles"] = [tex_text.plain_title(t) for t in index["titles"]]
    stem = SearchEnglish({}).stem  # the book's language (the query's stemmer in JS)
    for key in ("terms", "titleterms"):
        index[key] = with_folded_terms(index.get(key) or {}, stem)
    if "alltitles" in index:
        index["alltitles"] = {
            tex_text.plain_title(title): where
            for title, where in index["alltitles"].items()
        }
    index_file.write_text(
        prefix + json.dumps(index, separators=(",", ":"), ensure_ascii=False) + suffix,
        encoding="utf-8",
    )
    texts = {}
    suffix_html = app.builder.out_suffix
    for docname in index["docnames"]:
        page = out / (docname + suffix_html)
        if page.is_file():
            text, sections, skip = _main_text(page.read_text(encoding="utf-8"))
            texts[docname] = {"text": text, "sections": sections, "skip": skip}
    data = json.dumps(texts, separators=(",", ":"), ensure_ascii=False)
    (out / "_static" / TEXT_FILE).write_text(
        "window.BOOK_SEARCH_TEXT = " + data + ";\n", encoding="utf-8"
    )


def fold_accents(word: str) -> str:
    """``word`` without its accents, "raventó" -> "ravento" (NFD, no combining mark)."""
    return "".join(
        c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c)
    )


def _pages(where) -> set[int]:
    return {where} if isinstance(where, int) else set(where)


def with_folded_terms(terms: dict, stem=lambda word: word) -> dict:
    """The index's terms, and each accented term also without its accents (as it is and
    as ``stem`` stems it: "péché" -> "peche", "pech"), on the same pages: a reader who
    types "Akyurek" or "Peche" finds the pages that cite Akyürek or Péché (Sphinx's
    search stems the query and matches the stem exactly)."""
    out = dict(terms)
    for term, where in terms.items():
        folded = fold_accents(term)
        if folded == term or not folded:
            continue
        for alias in {folded, stem(folded)}:
            pages = _pages(where) | _pages(out.get(alias, []))
            out[alias] = sorted(pages) if len(pages) > 1 else next(iter(pages))
    return out


def setup(app):
    app.connect("builder-inited", _config_macros)
    app.connect("html-page-context", page_title, priority=600)
    app.connect("build-finished", write_search_text)
    app.add_js_file("book-search.js", defer="defer")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
