"""Write the chapters as notebooks for plain Jupyter front ends (Colab, VS Code, GitHub).

Those front ends render CommonMark and math, but not MyST: an ``{eval}`` role shows as
its raw text, a ``{prf:theorem}`` block as a code listing. From the instructor build
(``make book``: its executed notebooks in ``_build/jupyter_execute``, the ``{eval}``
texts ``book/_ext/book_evals.py`` recorded there, and the HTML in ``_build/html``) this
script writes, for every chapter of the table of contents,

- ``<out>/instructor/<chapter>.ipynb``: the executed notebook, outputs kept;
- ``<out>/student/<chapter>.ipynb``: its student edition (``scripts/make_student.py``:
  no solutions, lab skeletons, the outputs of the labs and their checks cleared);

with the Markdown made portable: every ``{eval}`` role replaced by the text the book
shows; the MyST directives (theorems, definitions, exercises, admonitions, figures,
math, code) turned into plain Markdown (a bold title and the body as a quotation, a
figure as an image with its caption); ``{ref}``, ``{numref}``, ``{prf:ref}``,
``{eq}`` and ``{doc}`` turned into links to the page of the HTML book, with the number
or title the book shows (a section's title, its math as ``$...$``, from the headings of the
HTML and sphinx's inventory ``objects.inv``: never the label); the equation labels that
the labs' docstrings name, ``(fd-closed)``, into the book's numbers; ``{cite:t}``/``{cite:p}``
into author-year text (LaTeX accents decoded), each reference
linked to its entry of the bibliography page (found there by its title: the page's
anchors are numbers, not keys); ``{term}``, ``{index}`` into their text. Code cells are unchanged.

The HTML book's address comes from ``repository.url`` in ``_config.yml`` (the single
source of addresses): ``https://github.com/OWNER/REPO`` is published at
``https://OWNER.github.io/REPO/`` (``--base-url`` overrides it).

The instructor HTML book shows each exercise's solution just below it, so the student
notebooks never link to an exercise or a solution of that book: a reference to an
exercise is its number as text ("Exercise 7.1"), and the other links go to the
instructor book as in the instructor notebooks. Where the student HTML edition (``make
student``) is published, ``--student-base-url`` sends every link of the student
notebooks there instead, exercises included (that edition has no solutions; a
reference to a solution is still text).

Usage (``make portable``, after ``make book``)::

    python scripts/make_portable.py [--root .] [--out _build/portable] [--base-url URL]
        [--student-base-url URL]
"""

from __future__ import annotations

import argparse
import html
import io
import re
import shutil
import sys
import tokenize
import unicodedata
from pathlib import Path

import nbformat
import yaml

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))
import make_student  # noqa: E402
import sync_notebooks  # noqa: E402
from make_student import target_id  # noqa: E402

ROOT = _HERE.parent

#: directive name -> the title shown for it (prf:* and the admonitions)
TITLES = {
    "prf:theorem": "Theorem",
    "prf:lemma": "Lemma",
    "prf:proposition": "Proposition",
    "prf:corollary": "Corollary",
    "prf:definition": "Definition",
    "prf:conjecture": "Conjecture",
    "prf:remark": "Remark",
    "prf:assumption": "Assumption",
    "prf:example": "Example",
    "prf:property": "Property",
    "prf:observation": "Observation",
    "prf:criterion": "Criterion",
    "prf:axiom": "Axiom",
    "prf:algorithm": "Algorithm",
    "prf:proof": "Proof",
    "exercise": "Exercise",
    "solution": "Solution",
    "note": "Note",
    "tip": "Tip",
    "hint": "Hint",
    "important": "Important",
    "warning": "Warning",
    "caution": "Caution",
    "attention": "Attention",
    "danger": "Danger",
    "error": "Error",
    "seealso": "See also",
    "admonition": "",
    "dropdown": "",
}
_OPEN = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|:{3,})\{(?P<name>[\w:.-]+)\}\s*(?P<arg>.*)$")
_OPTION = re.compile(r"^\s*:([\w-]+):\s*(.*)$")
_ROLE = re.compile(r"\{(?P<name>[\w:.-]+)\}`(?P<text>[^`]*)`")
_LABEL_LINE = re.compile(r"^\s*\([\w:.-]+\)=\s*$")
#: The closing line of a labelled display equation, "$$ (eq-label)" (``head``: before the $$).
_EQ_CLOSE = re.compile(r"^(?P<head>.*?)\$\$\s*\((?P<label>[\w:.-]+)\)\s*$")
#: A label of a notebook: a directive's ``:label:`` / ``:name:`` option, a ``(label)=`` line
#: or a labelled display equation's closing ``$$ (label)``.
_NOTEBOOK_LABEL = re.compile(
    r"^\s*(?::(?:label|name):\s*(?P<option>[\w:.-]+)|\((?P<line>[\w:.-]+)\)=|\$\$\s*\((?P<eq>[\w:.-]+)\))\s*$", re.M
)
#: The HTML book's bibliography page.
BIBLIOGRAPHY = "book/bibliography.html"
_EXPLICIT = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)


def book_url(config: dict) -> str:
    """The HTML book's address, derived from ``repository.url``."""
    url = config["repository"]["url"].rstrip("/")
    m = re.fullmatch(r"https://github\.com/([^/]+)/([^/]+)", url)
    if not m:
        raise ValueError(f"repository.url {url!r}: not https://github.com/OWNER/REPO; give --base-url")
    return f"https://{m.group(1).lower()}.github.io/{m.group(2)}/"


def anchors(html_dir: Path) -> dict[str, tuple[str, str]]:
    """Every ``id`` of the built HTML -> (page, the number or title the book shows)."""
    found: dict[str, tuple[str, str]] = {}
    for page in sorted(html_dir.rglob("*.html")):
        rel = page.relative_to(html_dir).as_posix()
        if rel.startswith(("_", "genindex", "search", "slides/")):
            continue
        text = page.read_text(encoding="utf-8", errors="replace")
        ids = list(re.finditer(r'\bid="([^"]+)"', text))
        # an element's number is read up to the next element with an id (index
        # targets, <span id="index-N">, sit inside the element: not a boundary)
        bounds = [m.start() for m in ids if not m.group(1).startswith("index-")] + [len(text)]
        for m in ids:
            end = next(b for b in bounds if b > m.start())
            seg = text[m.end() : min(end, m.end() + 800)]
            shown = re.search(r'caption-number">([^<]*)<|class="eqno">(\([^)<]*\))', seg)
            label = ""
            if shown:
                label = (shown.group(1) or shown.group(2) or "").strip()
            elif _HEADING_NEXT.match(seg):
                # a section: its own id, or a label's <span id> just before the heading
                h = re.search(r"<h\d[^>]*>(.*?)</h\d>", seg, re.S)
                number = re.search(r'<span class="section-number">([^<]*)</span>', h.group(1)) if h else None
                if number:
                    found.setdefault(f"{SECTION_NUMBER}{m.group(1)}", (rel, number.group(1).strip().rstrip(".")))
                label = heading_text(h.group(1)) if h else ""
            found.setdefault(m.group(1), (rel, html.unescape(label)))
    return found


#: The key prefix under which :func:`anchors` stores a section's number ("3.1.5.1").
SECTION_NUMBER = "secnum:"
#: What follows an id that names a section: the heading (the section's own id), or the
#: end of a label's empty ``<span id="label"></span>`` and then the heading.
_HEADING_NEXT = re.compile(r"[>\s]*(?:</span>\s*)?<h\d")


def heading_text(inner: str) -> str:
    """A heading's text as the HTML book's links show it: without its section number,
    its math as ``$...$`` (Markdown math, never raw TeX), tags dropped."""
    inner = re.sub(r'<span class="section-number">[^<]*</span>', "", inner)
    inner = re.sub(r'<span class="math[^"]*">\\\((.*?)\\\)</span>', lambda m: f"${m.group(1)}$", inner, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>|¶|#", "", inner)).strip()


def page_titles(html_dir: Path) -> dict[str, tuple[str, str]]:
    """``doc:<docname>`` -> (page, its title as the book's ``<title>`` shows it, with its
    number: "4. Finite pretraining data ...")."""
    found = {}
    for page_path in html_dir.rglob("*.html"):
        page = page_path.relative_to(html_dir).as_posix()
        text = page_path.read_text(encoding="utf-8", errors="replace")
        title = re.search(r"<title>(.*?)(?:&#8212;|—|</title>)", text, re.S)
        doc = page[: -len(".html")]
        found[f"doc:{doc}"] = (page, html.unescape(title.group(1)).strip() if title else doc)
    return found


def inventory_labels(html_dir: Path) -> dict[str, tuple[str, str]]:
    """Sphinx's inventory of the HTML book (``objects.inv``): every ``std:label`` ->
    (page, the title sphinx gives it) and every glossary term ``term:<term>`` ->
    (page#anchor, term). Its titles lose the ``$`` of their math; :func:`anchors` reads
    the headings with their math, so these only fill what it did not find."""
    import posixpath

    from sphinx.util.inventory import InventoryFile

    path = html_dir / "objects.inv"
    if not path.is_file() or path.stat().st_size == 0:
        return {}
    with path.open("rb") as f:
        inventory = InventoryFile.load(f, "", posixpath.join)
    found = {}
    for label, (_project, _version, location, title) in inventory.get("std:label", {}).items():
        page, _, anchor = location.partition("#")
        if anchor == label and title and title != "-":
            found[label] = (page, title)
    for term, (_project, _version, location, _title) in inventory.get("std:term", {}).items():
        found[f"term:{term}"] = (location, term)
    return found


def book_targets(html_dir: Path) -> dict[str, tuple[str, str]]:
    """Everything a reference of the book can point to, from its built HTML: the ids of
    :func:`anchors` (with their numbers, titles and section numbers), the pages
    (:func:`page_titles`) and the titles and terms of sphinx's inventory
    (:func:`inventory_labels`) where the pages gave none."""
    ids = anchors(html_dir)
    ids.update(page_titles(html_dir))
    for key, (page, title) in inventory_labels(html_dir).items():
        if not ids.get(key, ("", ""))[1]:
            ids[key] = (page, title)
    return ids


#: An exercise or a solution of the HTML book (sphinx-exercise's admonitions) and its id.
_EXERCISE_DIV = re.compile(r'<div class="(?P<kind>exercise|solution)\b[^"]*" id="(?P<id>[^"]+)"')


def exercise_ids(html_dir: Path) -> dict[str, set[str]]:
    """The ids of the HTML book's exercises and of its solutions:
    ``{"exercise": {...}, "solution": {...}}``."""
    found: dict[str, set[str]] = {"exercise": set(), "solution": set()}
    for page in sorted(html_dir.rglob("*.html")):
        text = page.read_text(encoding="utf-8", errors="replace")
        for m in _EXERCISE_DIV.finditer(text):
            found[m.group("kind")].add(m.group("id"))
    return found


def latex_text(text: str) -> str:
    """A BibTeX field as plain Unicode: LaTeX accents decoded (``latexcodec``, a
    dependency of pybtex: ``Aky\\"urek`` -> ``Akyürek``), braces dropped."""
    import codecs

    import latexcodec  # noqa: F401, PLC0415  (registers the "ulatex" codec)

    return codecs.decode(text, "ulatex").replace("{", "").replace("}", "")


def cite_texts(bib: Path) -> dict[str, tuple[str, str]]:
    """bibtex key -> (authors as cited, year), from the book's references.bib."""
    from pybtex.database import parse_file

    out = {}
    for key, entry in parse_file(str(bib)).entries.items():
        people = entry.persons.get("author", []) or entry.persons.get("editor", [])
        # LaTeX accents as the letters they make (Ravent\'os -> Raventós), braces dropped
        last = [latex_text(" ".join(p.prelast_names + p.last_names)) for p in people]
        if len(last) > 2:
            who = f"{last[0]} et al."
        elif len(last) == 2:
            who = f"{last[0]} and {last[1]}"
        else:
            who = last[0] if last else key
        out[key] = (who, entry.fields.get("year", "n.d."))
    return out


def _plain(text: str) -> str:
    """Lower-case letters and digits only (accents, LaTeX commands and braces dropped)."""
    text = re.sub(r"\\[a-zA-Z]+", "", text)
    text = unicodedata.normalize("NFKD", html.unescape(text))
    return "".join(c for c in text.lower() if c.isalnum() and c.isascii())


def bib_anchors(bibliography: Path, bib: Path) -> dict[str, str]:
    """bibtex key -> the ``id`` of its entry on the HTML book's bibliography page.

    sphinxcontrib-bibtex numbers the entries (``id="id11"``), not by key, and the numbers
    change with the citations; so each entry of ``references.bib`` is found on the built
    page (``bibliography``) by its title. A key whose title is not there is left out
    (its citations link to the page).
    """
    from pybtex.database import parse_file

    if not bibliography.is_file():
        return {}
    page = bibliography.read_text(encoding="utf-8", errors="replace")
    entries = [
        (m.group(1), _plain(re.sub(r"<[^>]+>", " ", m.group(2))))
        for m in re.finditer(r'<div class="citation" id="([^"]+)"[^>]*>(.*?)</div>', page, re.S)
    ]
    out = {}
    for key, entry in parse_file(str(bib)).entries.items():
        title = _plain(entry.fields.get("title", ""))
        found = [(anchor, text) for anchor, text in entries if title and title in text]
        # a title may recur (a journal article and its conference version; an entry
        # whose note names another's title): the year and the venue decide, then the
        # entry that starts with the title (after the authors) rather than quoting it
        for field in ("year", "journal", "booktitle", "eprint"):
            value = _plain(entry.fields.get(field, ""))
            narrowed = [(a, t) for a, t in found if value and value in t]
            if narrowed:
                found = narrowed
        if found:
            out[key] = min(found, key=lambda at: at[1].index(title))[0]
    return out


#: An equation's label in parentheses in a lab's code (its docstring): "(fd-closed)".
_CODE_EQ_LABEL = re.compile(r"\((?P<label>[A-Za-z][\w.:-]*-[\w.:-]+)\)")
#: The tags of the lab cells, whose docstrings name equations (scripts/make_student.py).
LAB_TAGS = ("lab-solution", "lab-skeleton")


def equation_numbers(source: str, ids: dict) -> str:
    """A lab cell's code with each equation label in parentheses, ``(fd-closed)``, as
    the number the HTML book gives that equation, ``(4.4)`` (``ids``: :func:`book_targets`).
    A label the book does not number is left as it is."""

    def number(m: re.Match) -> str:
        return ids.get(target_id(ids, f"equation-{m.group('label')}"), ("", ""))[1] or m.group(0)

    return _CODE_EQ_LABEL.sub(number, source)


#: A book label in a code comment, bare or in parentheses: "prop-corner", "(td-ge-limit)".
_COMMENT_LABEL = re.compile(r"(?<![\w.:/-])(?P<open>\()?(?P<label>[a-z]\w*(?:-\w+)+)(?(open)\))")


#: The prefixes of the book's labels other than equations' (whose ids are "equation-...").
_LABEL_PREFIX = re.compile(r"^(?:alg|app|conj|cor|def|ex|fig|lab|lem|prop|rem|sec|sol|tab|thm)-")


def comment_labels(source: str, ids: dict, strings: bool = False) -> str:
    """A code cell's source with each book label in its comments written as the HTML
    book shows the target: "Proposition 3.3", "Fig. 3.4", "(4.4)" (an equation in
    parentheses), "equation (4.4)" (a bare equation label), a section's number or title.

    What a hidden check cell's first line says when JupyterLab shows the cell collapsed
    ("# prop-corner: minimizer ..."), read by the number the reader knows. Only comments
    change (Python's tokenizer finds them), and with ``strings`` the string literals too
    (a hidden check cell's claims, whose messages a failing check shows); only words
    that are labels of the book's targets change (``ids``: :func:`book_targets`; a
    heading's slug does not); a cell the tokenizer cannot read is left as it is."""

    def shown(m: re.Match) -> str:
        label, paren = m.group("label"), bool(m.group("open"))
        equation = ids.get(target_id(ids, f"equation-{label}"), ("", ""))[1]
        if equation:
            return equation if paren else f"equation {equation}"
        if not _LABEL_PREFIX.match(label):  # a heading's slug ("finite-size") is no label
            return m.group(0)
        anchor = target_id(ids, label)
        text = ids.get(anchor, ("", ""))[1]
        secnum = ids.get(f"{make_student.SECTION_KEY}{anchor}", ("", ""))[1]
        if secnum:
            text = make_student.BookReferences.section(secnum)
        elif text and not make_student._NUMBER.match(text):
            text = f'"{text}"'
        if not text:
            return m.group(0)
        return f"({text})" if paren else text

    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return source
    lines = source.splitlines(keepends=True)
    for tok in reversed(tokens):  # from the end, so earlier positions stay valid
        if tok.type != tokenize.COMMENT and not (strings and tok.type == tokenize.STRING):
            continue
        (row, col), (end_row, end) = tok.start, tok.end
        if end_row != row:  # a string over several lines: the labels of its first line
            end = len(lines[row - 1])
        line = lines[row - 1]
        lines[row - 1] = line[:col] + _COMMENT_LABEL.sub(shown, line[col:end]) + line[end:]
    return "".join(lines)


def lab_equation_numbers(nb: nbformat.NotebookNode, ids: dict) -> nbformat.NotebookNode:
    """The notebook (changed in place) with :func:`equation_numbers` in its lab cells
    and :func:`comment_labels` in every code cell (also in the strings of hidden ones)."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tags = set(cell.metadata.get("tags", []))
        if tags & set(LAB_TAGS):
            cell.source = equation_numbers(cell.source, ids)
        cell.source = comment_labels(cell.source, ids, strings="remove-input" in tags)
    return nb


class Portable:
    """Turns one chapter's Markdown into portable Markdown."""

    def __init__(
        self,
        base: str,
        ids: dict,
        cites: dict,
        docname: str,
        bib_ids: dict | None = None,
        unlinked: set[str] | frozenset[str] = frozenset(),
    ):
        self.base, self.ids, self.cites, self.docname = base, ids, cites, docname
        self.bib_ids = bib_ids or {}  # bibtex key -> its anchor on the bibliography page
        # anchors a reference shows as text, not as a link (the student notebooks: the
        # instructor book's exercises, with their solutions just below, and solutions)
        self.unlinked = unlinked
        # anchors this notebook itself defines (portable_notebook fills it): a reference
        # to one links within the notebook, not to the web book
        self.local: set[str] = set()

    def page_url(self, doc: str) -> str:
        return self.base + doc + ".html"

    def link(self, target: str, text: str | None, kind: str) -> str:
        anchor = target_id(self.ids, f"equation-{target}" if kind == "eq" else target)
        page, shown = self.ids.get(anchor, ("", ""))
        if kind == "eq":
            shown = shown or f"({target})"
        text = text or shown or target
        if not page or anchor in self.unlinked:
            return text
        if target in self.local:
            return f"[{text}](#{target})"
        return f"[{text}]({self.base}{page}#{anchor})"

    def tag(self, label: str) -> str:
        """``\\tag{2.13}`` for a labelled equation the book numbers, else ""."""
        shown = self.ids.get(target_id(self.ids, f"equation-{label}"), ("", ""))[1]
        number = shown.strip().removeprefix("(").removesuffix(")")
        return f"\\tag{{{number}}}" if number else ""

    def role(self, m: re.Match) -> str:
        name, text = m.group("name"), m.group("text")
        explicit = _EXPLICIT.match(text)
        shown, target = (explicit.group("text"), explicit.group("target")) if explicit else (None, text)
        if name in ("ref", "numref", "prf:ref", "eq", "numref"):
            return self.link(target.strip(), shown, "eq" if name == "eq" else name)
        if name == "doc":
            doc = (Path(self.docname).parent / target).as_posix()
            doc = re.sub(r"[^/]+/\.\./", "", doc)
            page, title = self.ids.get(f"doc:{doc}", ("", ""))
            return f"[{shown or title or target}]({self.page_url(doc)})"
        if name.startswith("cite"):
            keys = [k.strip() for k in target.split(",")]
            parts = []
            for key in keys:  # each reference links to its entry in the bibliography
                who, year = self.cites.get(key, (key, ""))
                shown = f"{who} ({year})" if name == "cite:t" else f"{who}, {year}"
                anchor = self.bib_ids.get(key)
                parts.append(f"[{shown}]({self.base}{BIBLIOGRAPHY}" + (f"#{anchor})" if anchor else ")"))
            body = "; ".join(parts)
            return body if name == "cite:t" else f"({body})"
        if name == "math":
            return f"${text}$"
        if name in ("term", "index", "abbr", "sub", "sup", "kbd", "guilabel", "eval-recorded"):
            return shown or text
        return shown or text

    def roles(self, text: str) -> str:
        return _ROLE.sub(self.role, text)

    def markdown(self, source: str) -> str:
        """The portable form of one markdown cell's source."""
        lines = source.split("\n")
        # a labelled display equation of this notebook gets an anchor before its opening $$
        for j, line in enumerate(list(lines)):
            closing = _EQ_CLOSE.match(line)
            anchor = f'<a id="{closing.group("label")}"></a>' if closing else ""
            if (
                closing
                and closing.group("label") in self.local
                and not closing.group("head").strip()
                and anchor not in source  # a directive's body is converted again
            ):
                k = max((n for n in range(j) if lines[n].strip() == "$$"), default=None)
                if k is not None:
                    lines[k] = f"{anchor}\n\n{lines[k]}"
        out, i, plain = [], 0, []

        def flush() -> None:  # roles over a run of plain lines: a role may span a line break
            if plain:
                out.extend(self.roles("\n".join(plain)).split("\n"))
                plain.clear()

        while i < len(lines):
            line = lines[i]
            m = _OPEN.match(line)
            if _LABEL_LINE.match(line):  # a section's or paragraph's target: an HTML anchor
                label = line.strip()[1:-2]
                plain.append(f'<a id="{label}"></a>\n' if label in self.local else "")
                i += 1
                continue
            if not m:
                closing = _EQ_CLOSE.match(line)
                if closing:  # "$$ (label)": the book's number as a tag, then the closing $$
                    tag = self.tag(closing.group("label"))
                    line = f"{closing.group('head')}{tag}\n$$" if tag else f"{closing.group('head')}$$"
                plain.append(line)
                i += 1
                continue
            flush()
            fence, name, arg = m.group("fence"), m.group("name"), m.group("arg").strip()
            j, options = i + 1, {}
            while j < len(lines) and _OPTION.match(lines[j]):
                key, value = _OPTION.match(lines[j]).groups()
                options[key] = value
                j += 1
            body, depth = [], 1
            while j < len(lines):
                inner = _OPEN.match(lines[j])
                stripped = lines[j].strip()
                if inner and inner.group("fence")[0] == fence[0] and len(inner.group("fence")) == len(fence):
                    depth += 1
                elif stripped and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
                    depth -= 1
                    if depth == 0:
                        break
                body.append(lines[j])
                j += 1
            out.extend(self.directive(name, arg, options, "\n".join(body)).split("\n"))
            i = j + 1
        flush()
        return "\n".join(out)

    def directive(self, name: str, arg: str, options: dict, body: str) -> str:
        label = options.get("label") or options.get("name")
        anchor = f'<a id="{label}"></a>' if label else ""
        if name in ("math",):
            tag = self.tag(label) if label else ""
            return f"$$\n{body.strip()}{chr(10) + tag if tag else ''}\n$$"
        if name in ("code", "code-block", "code-cell", "sourcecode"):
            return f"```{arg}\n{body}\n```"
        if name in ("index", "glossary-index", "tableofcontents", "solution-end", "bibliography"):
            return ""
        if name == "solution-start":
            return "**Solution.**"
        if name == "figure":
            caption = self.roles(self.markdown(body)).strip()
            shown = self.ids.get(label, ("", ""))[1] if label else ""
            image = f"![{html.escape(caption)}]({arg})\n\n" if arg else ""  # none: the figure is a cell output
            return f"{anchor}\n\n{image}*{shown + ' ' if shown else ''}{caption}*"
        if name == "glossary":
            return self.markdown(body)
        title = TITLES.get(name, name.split(":")[-1].capitalize())
        shown = self.ids.get(label, ("", ""))[1] if label else ""
        head = " ".join(x for x in (shown or title, f"({self.roles(arg)})" if arg and title else self.roles(arg)) if x)
        inner = self.markdown(body).strip()
        quoted = "\n".join(f"> {ln}" if ln else ">" for ln in inner.split("\n"))
        return f"{anchor}\n\n> **{head}.**\n>\n{quoted}\n" if inner else f"{anchor}\n\n> **{head}.**\n"


def portable_notebook(nb: nbformat.NotebookNode, converter: Portable) -> nbformat.NotebookNode:
    """The notebook with every markdown cell made portable (code cells unchanged)."""
    out = nbformat.from_dict(nb)
    out = nbformat.v4.upgrade(out) if out.nbformat < 4 else out
    converter.local = {  # the anchors the portable notebook will have
        m.group("option") or m.group("line") or m.group("eq")
        for cell in out.cells
        if cell.cell_type == "markdown"
        for m in _NOTEBOOK_LABEL.finditer(cell.source)
    }
    for cell in out.cells:
        if cell.cell_type == "markdown" and cell.metadata.get("book_sync") == "macros":
            # plain Markdown shows MyST's front matter as text: keep only the MathJax \def line
            cell.source = cell.source.strip().splitlines()[-1]
        elif cell.cell_type == "markdown":
            cell.source = converter.markdown(cell.source).strip("\n")
    return lab_equation_numbers(out, converter.ids)


def with_values(nb: nbformat.NotebookNode, entries: list[dict], name: str) -> nbformat.NotebookNode:
    """The notebook with each ``{eval}`` role replaced by its recorded text."""
    recorded = make_student.replay_evals(nb, entries, name)
    for cell in recorded.cells:
        if cell.cell_type == "markdown":
            cell.source = re.sub(
                r"\{eval-recorded\}`(\d+)`",
                lambda m: entries[int(m.group(1))]["text"],
                cell.source,
            )
    return recorded


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--build", type=Path, default=None, help="the instructor build (default <root>/_build)")
    parser.add_argument("--out", type=Path, default=None, help="default <build>/portable")
    parser.add_argument("--base-url", default=None, help="the HTML book's address (default: from repository.url)")
    parser.add_argument(
        "--student-base-url",
        default=None,
        help="the student HTML edition's address, where published: the student notebooks link there "
        "(default: to the HTML book, but never to an exercise or a solution)",
    )
    args = parser.parse_args(argv)
    root = args.root.resolve()
    build = (args.build or root / "_build").resolve()
    out = (args.out or build / "portable").resolve()
    executed, html_dir = build / "jupyter_execute", build / "html"
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    base = args.base_url or book_url(config)
    base = base if base.endswith("/") else base + "/"
    student_base = args.student_base_url
    if student_base is not None and not student_base.endswith("/"):
        student_base += "/"
    try:
        record = make_student.load_record(executed)
        if not (html_dir / "objects.inv").is_file():
            raise make_student.StudentEditionError(f"no HTML book in {html_dir}: run `make book` first")
    except make_student.StudentEditionError as err:
        print(f"make_portable: {err}", file=sys.stderr)
        return 2
    ids = book_targets(html_dir)
    cites = cite_texts(root / "references.bib")
    bib_ids = bib_anchors(html_dir / BIBLIOGRAPHY, root / "references.bib")
    exercises = exercise_ids(html_dir)
    # the student notebooks link to no solution, and to no exercise of the instructor book
    hidden = exercises["solution"] | (set() if student_base else exercises["exercise"])
    if out.exists():
        shutil.rmtree(out)
    count = 0
    for path in sync_notebooks.toc_notebooks(root):
        rel = path.relative_to(root)
        docname = rel.with_suffix("").as_posix()
        name = rel.as_posix()
        source = nbformat.read(path, as_version=4)
        try:
            done = make_student.executed_copy(source, executed / rel, name)
            done = with_values(done, record.get(docname, []), name)
            student = make_student.student_notebook(done, name, keep_outputs=True)
        except make_student.StudentEditionError as err:
            print(f"make_portable: {err}", file=sys.stderr)
            return 2
        converters = {
            "instructor": Portable(base, ids, cites, docname, bib_ids),
            "student": Portable(student_base or base, ids, cites, docname, bib_ids, hidden),
        }
        for edition, nb in (("instructor", done), ("student", student)):
            target = out / edition / rel.relative_to("book")
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(portable_notebook(nb, converters[edition]), target)
        count += 1
    print(f"{count} chapters, instructor and student notebooks for plain Jupyter, in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
