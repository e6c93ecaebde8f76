"""Sentence-length statistics of the book's main text (its "core path").

For every chapter page of the table of contents (notebook or Markdown), this script
measures the mean sentence length in words and the share of sentences longer than 40
words, on the page's *core path*: its Markdown outside the sections whose heading
contains the word "audit" (case-insensitive). A section runs from its heading to the
next heading of the same or a higher level.

The measure is the outside referee's, applied to QuantEcon's lectures for comparison
(19-25 words, 5-14 % over 40): the Markdown with code and display math stripped, cut into
sentences ONLY at ``[.!?]`` followed by whitespace and a capital letter. Nothing else
ends a sentence: not a paragraph, a list item, a heading or a cell boundary, so a list
whose items do not end with a full stop counts as one sentence, and a sentence that
starts with math joins the one before it.

What is stripped before counting: code cells, fenced code blocks, cells the build does
not show (tag ``remove-cell``), YAML front matter, display math (``$$...$$``,
``\\begin...\\end``), the dollar signs of inline math (whose tokens count as words, as a
reader speaks them; so math never starts a sentence), headings, MyST directive fences,
option lines and targets, MyST comments (``%`` lines), tables, list markers, HTML tags and comments, URLs. A role keeps its text and loses its target:
``{term}`a <b>``` counts as "a", a role that only names a target (``{doc}``,
``{prf:ref}``, ``{eq}``, ``{cite}``, ...) and ``{eval}`` count as one word, inline code as
one word. "e.g.", "i.e.", "cf.", "vs." and a few more abbreviations end no sentence.

Usage::

    python scripts/prose_stats.py                    # table of every toc page
    python scripts/prose_stats.py --check book/equivalence/index.md ...
    python scripts/prose_stats.py --long book/x.ipynb  # print the page's sentences over 40 words

``--check`` exits with status 1 when a listed page has a mean above 24 words or more
than 12 % of its sentences over 40 words.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_MEAN, MAX_LONG_SHARE, LONG = 24.0, 0.12, 40

_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_AUDIT = re.compile(r"\baudit", re.IGNORECASE)
_FENCE = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})(.*)$")
_OPTION = re.compile(r"^\s*:[\w-]+:(\s.*)?$")
_DISPLAY_MATH = re.compile(r"\$\$.*?\$\$(\s*\([\w:-]+\))?", re.DOTALL)
_ENV_MATH = re.compile(r"\\begin\{(\w+\*?)\}.*?\\end\{\1\}", re.DOTALL)
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)(?:[^$\\]|\\.)+?\$")
_ROLE = re.compile(r"\{([\w:-]+)\}`([^`]*)`")
_TARGET_ONLY = {
    "doc",
    "ref",
    "prf:ref",
    "eq",
    "numref",
    "cite",
    "cite:t",
    "cite:p",
    "cite:ps",
    "cite:ts",
    "download",
    "eval",
}
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_WORD = re.compile(r"\w")
_ABBREV = re.compile(r"(?:\b(?:e\.g|i\.e|cf|vs|resp|et al|Fig|Eq|Sec|Ch|No)\.)$")
_TARGET = re.compile(r"^\s*\([\w:.-]+\)=\s*$")  # a MyST target line, (label)=


@dataclass
class Stats:
    """Sentence statistics of one text."""

    sentences: int
    words: int
    mean: float
    long_share: float

    def passes(self) -> bool:
        """True when the mean and the share of long sentences are within the targets."""
        return self.mean <= MAX_MEAN and self.long_share <= MAX_LONG_SHARE


def page_markdown(path: Path) -> list[str]:
    """The Markdown blocks of a page, in order (one per notebook cell; code cells and
    cells tagged ``remove-cell`` left out, as an empty block that ends any sentence)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        blocks = []
        for cell in json.loads(text)["cells"]:
            tags = cell.get("metadata", {}).get("tags", [])
            if cell["cell_type"] != "markdown" or "remove-cell" in tags:
                blocks.append("")
                continue
            blocks.append("".join(cell["source"]))
        return blocks
    if text.startswith("---\n"):  # YAML front matter
        end = text.find("\n---", 4)
        text = text[end + 4 :] if end > 0 else text
    return [text]


def core_lines(blocks: list[str]) -> list[str]:
    """The lines outside the audit sections; a block boundary is an empty line."""
    out: list[str] = []
    audit_level = None  # level of the audit heading whose section we are in
    fence = None  # the opening fence of a code block being skipped, if any
    for block in blocks:
        for line in block.splitlines() + [""]:
            m = _HEADING.match(line) if fence is None else None
            if m:
                level = len(m.group(1))
                if audit_level is not None and level <= audit_level:
                    audit_level = None
                if audit_level is None and _AUDIT.search(m.group(2)):
                    audit_level = level
            if audit_level is not None:
                continue
            out.append(line)
    return out


def _strip_lines(lines: list[str]) -> str:
    """Drop code blocks, directive fences and options, tables, headings, targets and list
    markers. Nothing dropped ends a sentence: only punctuation does (see ``sentences``)."""
    kept: list[str] = []
    code_fence = None
    for line in lines:
        if code_fence is not None:
            if line.strip().startswith(code_fence):
                code_fence = None
            continue
        m = _FENCE.match(line)
        if m:
            marker, rest = m.group(1), m.group(2).strip()
            is_directive = rest.startswith("{")
            name = rest[1:].split("}")[0] if is_directive else ""
            code_like = name in {"code-cell", "code-block", "code", "math", "index", "raw"}
            if rest and (not is_directive or code_like):
                code_fence = marker  # a code block (or math/index directive): skip it
            continue
        if line.lstrip().startswith("%"):  # a MyST comment, e.g. % instructor-only
            continue
        structural = _OPTION.match(line) or _HEADING.match(line) or _TARGET.match(line)
        if structural or line.lstrip().startswith("|"):
            continue
        kept.append(re.sub(r"^\s*([-*+]|\d+[.)])\s+", "", line))
    return "\n".join(kept)


def _role(m: re.Match) -> str:
    name, body = m.group(1), m.group(2)
    title = re.match(r"^(.*?)\s*<[^>]*>$", body, re.DOTALL)
    if title and title.group(1).strip():
        return f" {title.group(1).strip()} "
    if name == "eval":
        return " N "
    return " Ref " if name in _TARGET_ONLY else f" {body} "


def clean(text: str) -> str:
    """Strip math, roles' targets, links, URLs, HTML and inline code from Markdown."""
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.DOTALL)
    text = _DISPLAY_MATH.sub(" ", text)
    text = _ENV_MATH.sub(" ", text)
    # inline math is read as words: its whitespace-separated tokens with a letter or digit
    text = _INLINE_MATH.sub(lambda m: " " + m.group(0).strip("$") + " ", text)
    text = _ROLE.sub(_role, text)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links keep their text
    text = re.sub(r"https?://\S+", " ", text)
    text = re.sub(r"</?[A-Za-z][^>]*>", " ", text)
    text = re.sub(r"`[^`\n]+`", " code ", text)
    return text


def sentences(text: str) -> list[str]:
    """Sentences of cleaned text: cut only at [.!?] + whitespace + capital letter."""
    pieces: list[str] = []
    for piece in _SENTENCE_END.split(" ".join(text.split())):
        if pieces and _ABBREV.search(pieces[-1]):  # "e.g. Adam" ends no sentence
            pieces[-1] += " " + piece
        else:
            pieces.append(piece)
    return [s for s in pieces if _WORD.search(s)]


def n_words(sentence: str) -> int:
    """Words of a sentence: whitespace-separated tokens with a letter or digit."""
    return sum(1 for tok in sentence.split() if _WORD.search(tok))


def page_sentences(path: Path) -> list[str]:
    """The sentences of a page's core path."""
    return sentences(clean(_strip_lines(core_lines(page_markdown(path)))))


def text_stats(blocks: list[str]) -> Stats:
    """Statistics of the core path of a page given as Markdown blocks."""
    sents = sentences(clean(_strip_lines(core_lines(blocks))))
    lengths = [n_words(s) for s in sents]
    if not lengths:
        return Stats(0, 0, 0.0, 0.0)
    n = len(lengths)
    return Stats(n, sum(lengths), sum(lengths) / n, sum(x > LONG for x in lengths) / n)


def page_stats(path: Path) -> Stats:
    """Statistics of the core path of one page."""
    return text_stats(page_markdown(path))


def toc_pages(root: Path = ROOT) -> list[Path]:
    """The chapter pages of _toc.yml (notebooks and Markdown), in order; the API pages are
    left out (they are generated reference, not prose)."""
    pages = []
    for line in (root / "_toc.yml").read_text(encoding="utf-8").splitlines():
        m = re.match(r"^\s*-?\s*(?:file|root):\s*(\S+)", line)
        if not m or m.group(1).startswith("book/api"):
            continue
        for suffix in (".ipynb", ".md"):
            p = root / (m.group(1) + suffix)
            if p.exists():
                pages.append(p)
                break
    return pages


def _resolve(name: str) -> Path:
    p = Path(name)
    p = p if p.is_absolute() else ROOT / p
    if p.exists():
        return p
    for suffix in (".ipynb", ".md"):
        if p.with_suffix(suffix).exists():
            return p.with_suffix(suffix)
    raise SystemExit(f"prose_stats: no page {name!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", nargs="+", metavar="PAGE", help="pages that must pass")
    parser.add_argument("--long", metavar="PAGE", help="print the page's sentences over 40 words")
    args = parser.parse_args(argv)
    if args.long:
        for sent in page_sentences(_resolve(args.long)):
            if n_words(sent) > LONG:
                print(f"[{n_words(sent)}] {sent}\n")
        return 0
    pages = toc_pages()
    checked = [_resolve(p) for p in args.check] if args.check else []
    pages += [p for p in checked if p not in pages]
    print(f"{'page':<42} {'sentences':>9} {'mean':>6} {'>40':>6}")
    failed = []
    for p in pages:
        s = page_stats(p)
        mark = ""
        if p in checked:
            mark = "  ok" if s.passes() else "  FAIL"
            if not s.passes():
                failed.append(p)
        rel = p.relative_to(ROOT) if p.is_relative_to(ROOT) else p
        print(f"{str(rel):<42} {s.sentences:>9} {s.mean:>6.1f} {s.long_share:>6.1%}{mark}")
    if failed:
        print(
            f"over the targets (mean <= {MAX_MEAN:g}, share > {LONG} words <= "
            f"{MAX_LONG_SHARE:.0%}): " + ", ".join(str(p) for p in failed)
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
