"""Lecture slides for each session of the two-week module, generated from the built book.

Usage (after ``make book``; ``make slides`` runs it)::

    python scripts/make_slides.py --html _build/html

For every session of the syllabus (``book/syllabus.md``; the sessions are listed in
``SESSIONS`` below) this writes a reveal.js deck ``_build/html/slides/<session>.html``
from the chapters' built pages, so that the slides show the same executed figures,
computed numbers and numbered statements as the book:

- a lecture deck: for each chapter of the session a title slide with its sections,
  then every definition, theorem, proposition and conjecture of the chapter (one slide
  each, with its number and title) and every figure (one slide each, drawn large, with
  its number and the first sentence of its caption), in the order of the chapter;
- a lab deck: one slide per coding lab of the session, with the lab's statement.

Every slide fits reveal's 1280 x 720 frame (on a phone, a smaller one, so that its text is
drawn at 13-16 px, not 7: ``SMALL_SCALE``): figures share the slide with their whole
caption, and ``slides/book-slides.js`` (copied next to the decks) splits a statement or
lab too tall for one slide over continuation slides in the browser, where MathJax has set
the real heights (see that file; ``tests/book/test_html.py::test_slides`` checks every
slide of every deck).

Nothing is executed (the figures are the book's own image files) and nothing is loaded
from outside: reveal.js 5.1.0 is vendored in ``slides/vendor`` (npm package
``reveal.js@5.1.0``, see ``slides/vendor/README.md``) and copied next to the decks,
and MathJax is the book's own copy in ``_static/mathjax``.
"""

from __future__ import annotations

import argparse
import html
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from bs4 import BeautifulSoup, NavigableString, Tag

ROOT = Path(__file__).resolve().parent.parent
REVEAL = ROOT / "slides" / "vendor" / "reveal.js-5.1.0"
STYLE = ROOT / "slides" / "book-slides.css"
#: Fits every slide into the frame in the browser (splits long statements; see the file).
FIT_SCRIPT = ROOT / "slides" / "book-slides.js"
STATEMENTS = ("definition", "theorem", "proposition", "conjecture", "lemma", "corollary")


@dataclass(frozen=True)
class Session:
    """One session of the module: its file name, title and what it covers."""

    name: str
    title: str
    pages: tuple[str, ...] = ()  # chapters (lectures)
    labs: tuple[str, ...] = ()  # lab labels (labs)


SESSIONS = (
    Session(
        "lecture-1", "Lecture 1: Hermite expansions and the model", pages=("book/hermite/basics", "book/linear/model")
    ),
    Session("lecture-2", "Lecture 2: learning curves", pages=("book/linear/learning_curves",)),
    Session(
        "lab-1", "Lab 1", labs=("lab-hermite-coefficients", "lab-effective-noise", "lab-ridge-gamma", "lab-m-kappa")
    ),
    Session(
        "lecture-3",
        "Lecture 3: the nonlinearity–noise equivalence",
        pages=("book/equivalence/theorem", "book/equivalence/verification"),
    ),
    Session("lecture-4", "Lecture 4: finite pretraining data", pages=("book/regimes/finite_data",)),
    Session("lecture-5", "Lecture 5: task diversity", pages=("book/regimes/task_diversity",)),
    Session("lab-2", "Lab 2", labs=("lab-mp-integral", "lab-gap-slope", "lab-fd-closed", "lab-td-dmmse")),
    Session("lecture-6", "Lecture 6: a learner under the effective-noise floor", pages=("book/beyond/spectral",)),
    Session("reading-7", "Reading after lecture 6: trained networks", pages=("book/trained/networks",)),
)

LAB_PAGES = (
    "book/hermite/basics",
    "book/linear/model",
    "book/linear/learning_curves",
    "book/equivalence/theorem",
    "book/equivalence/verification",
    "book/regimes/finite_data",
    "book/regimes/task_diversity",
    "book/beyond/spectral",
)


def _soup(html_dir: Path, page: str) -> BeautifulSoup:
    path = html_dir / f"{page}.html"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: build the book first (make book)")
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _main(soup: BeautifulSoup) -> Tag:
    main = soup.select_one("article.bd-article") or soup.select_one('[role="main"]')
    if main is None:
        raise ValueError("no main column in the page: not a page of the built book")
    return main


#: Punctuation that must not start a line after an inline formula, nor end one before it.
_AFTER_MATH = re.compile(r"^[,.;:!?)\]]+")
_BEFORE_MATH = re.compile(r"[(\[]+$")


def _bind_punctuation(node: BeautifulSoup) -> None:
    """Keep an inline formula and the punctuation that touches it on one line.

    The browser may break a line between a typeset formula (an inline box) and the
    comma after it, so that a line starts with ", with". Each inline formula that
    punctuation touches is wrapped, with that punctuation, in ``<span class="nowrap">``
    (``white-space: nowrap`` in ``slides/book-slides.css``).
    """
    for math in node.select("span.math"):
        before, after = math.previous_sibling, math.next_sibling
        head = _AFTER_MATH.match(after) if isinstance(after, NavigableString) else None
        tail = _BEFORE_MATH.search(before) if isinstance(before, NavigableString) else None
        if not (head or tail):
            continue
        wrap = node.new_tag("span", attrs={"class": "nowrap"})
        math.wrap(wrap)
        if tail:
            before.replace_with(before[: tail.start()])
            wrap.insert(0, tail.group(0))
        if head:
            after.replace_with(after[head.end() :])
            wrap.append(head.group(0))


def _clean(node: Tag, page: str) -> str:
    """HTML of one block for a slide: links and images re-pointed from slides/ to the
    book, header links and dropdown buttons removed, and the block's own ``<section>``
    elements (a statement's or exercise's content) made ``<div>``, since reveal.js takes
    every ``section`` for a slide. The content (``*-content``) is marked ``data-split``:
    the blocks ``slides/book-slides.js`` may move to a continuation slide. Inline
    formulas keep the punctuation that touches them (:func:`_bind_punctuation`)."""
    node = BeautifulSoup(str(node), "html.parser")
    for junk in node.select(".headerlink, .figure-zoom-badge, button, script"):
        junk.decompose()
    _bind_punctuation(node)
    for sec in node.find_all("section"):
        sec.name = "div"
        if sec.get("id") in ("proof-content", "exercise-content") or any(
            c.endswith("-content") for c in sec.get("class", [])
        ):
            sec["data-split"] = ""
            sec.attrs.pop("id", None)  # the same id on every statement of the page
    for tag, attr in (("a", "href"), ("img", "src")):
        for el in node.find_all(tag):
            url = el.get(attr, "")
            if not url or re.match(r"^[a-z]+:|^#", url):
                if tag == "a" and url.startswith("#"):
                    el[attr] = f"../{page}.html{url}"
                continue
            # a URL relative to the page -> relative to slides/
            parts = Path(page).parent.joinpath(url).as_posix().split("/")
            stack: list[str] = []
            for part in parts:
                if part == "..":
                    if stack:
                        stack.pop()
                elif part not in ("", "."):
                    stack.append(part)
            el[attr] = "../" + "/".join(stack)
            if tag == "a":
                el["target"] = "_blank"
    return str(node)


def _figure_slide(fig: Tag, page: str) -> str:
    """A figure and its whole caption (the book's, with its math and links; the alt text
    is cut at 200 characters), the image taking the height the caption leaves."""
    img = fig.find("img")
    img_html = _clean(img, page) if img else ""
    caption = fig.find("figcaption")
    if caption is not None:
        cap = BeautifulSoup(_clean(caption, page), "html.parser")
        number = cap.select_one(".caption-number")
        if number is not None:
            number.name = "strong"
        inner = "".join(str(c) for c in (cap.find("figcaption") or cap).children)
        # the caption's paragraph(s), without their <p> (one caption paragraph on the slide)
        inner = re.sub(r"</?p>", " ", inner).strip()
    else:
        inner = html.escape(img.get("alt", "") if img else "")
    return (
        f'<section class="figure-slide"><div class="figure-box">{img_html}'
        f'<p class="figure-caption">{inner}</p></div></section>'
    )


def _chapter_slides(html_dir: Path, page: str) -> list[str]:
    soup = _soup(html_dir, page)
    main = _main(soup)
    h1 = main.find("h1")
    title = _clean(h1, page) if h1 else html.escape(page)
    sections = [h.get_text(" ", strip=True).rstrip("#").strip() for h in main.find_all("h2")]
    items = "".join(f"<li>{html.escape(s)}</li>" for s in sections[:10])
    slides = [
        (
            f'<section class="chapter-title">{title}<ul class="sections">{items}</ul>'
            f'<p class="source">Read: <a href="../{page}.html" target="_blank">'
            f"the chapter in the book</a></p></section>"
        )
    ]
    selector = ", ".join(f"div.{k}" for k in STATEMENTS) + ", figure"
    for block in main.select(selector):
        if block.find_parent(class_=["solution", "exercise", "toggle-details", "dropdown"]):
            continue
        if block.name == "figure":
            if block.find("img") is not None:
                slides.append(_figure_slide(block, page))
        elif block.find_parent(class_=list(STATEMENTS)) is None:
            slides.append(f'<section class="statement">{_clean(block, page)}</section>')
    return slides


def _lab_slides(html_dir: Path, labels: tuple[str, ...]) -> list[str]:
    found: dict[str, str] = {}
    for page in LAB_PAGES:
        path = html_dir / f"{page}.html"
        if not path.is_file():
            continue
        main = _main(_soup(html_dir, page))
        for label in labels:
            block = main.find(id=label)
            if block is not None and label not in found:
                found[label] = (
                    f'<section class="lab">{_clean(block, page)}'
                    f'<p class="source"><a href="../{page}.html#{label}" '
                    f'target="_blank">the lab in the book</a></p></section>'
                )
    missing = [lab for lab in labels if lab not in found]
    if missing:
        raise ValueError(f"labs not found in the built book: {missing}")
    return [found[lab] for lab in labels]


def _mathjax_config(html_dir: Path) -> str:
    text = (html_dir / "book" / "intro.html").read_text(encoding="utf-8")
    match = re.search(r"<script>\s*(window\.MathJax\s*=.*?)</script>", text, re.DOTALL)
    return match.group(1) if match else ""


#: The slide frame of a small screen. A 1280 x 720 slide is drawn to fit the screen; below
#: SMALL_SCALE of its size its captions (16.5 px) are under 12 px, and on a phone it is
#: drawn at ~0.3 held upright (390 px wide: text ~7 px) and ~0.45 held sideways (~340 px
#: high). There the frame is smaller: held upright (taller than wide), UPRIGHT_WIDTH slide
#: px wide and as tall as the screen's shape (720 to 1400 px), drawn at ~0.62 on a 390-px
#: phone; held sideways, SIDEWAYS (16:9), drawn at ~0.6. The text wraps to the smaller
#: frame, at 13-16 px on the screen, and book-slides.js splits what does not fit, as on
#: a large screen.
SMALL_SCALE, UPRIGHT_WIDTH, SIDEWAYS = 0.75, 600, (960, 540)

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="icon" href="../_static/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="reveal/reveal.css">
<link rel="stylesheet" href="book-slides.css">
<script>{mathjax}</script>
<script defer src="../_static/mathjax/tex-chtml.js"></script>
</head>
<body>
<div class="reveal"><div class="slides">
<section class="deck-title"><h1>{title}</h1><p>{book}</p>
<p class="source"><a href="../book/syllabus.html" target="_blank">Syllabus</a></p></section>
{slides}
</div></div>
<script src="reveal/reveal.js"></script>
<script>
// The frame (see SMALL_SCALE in scripts/make_slides.py): 1280 x 720 slides on a large
// screen (a projector, a laptop); on a screen where they would be drawn at less than
// {small_scale} of their size (a phone), smaller slides: held upright, {upright_width} px wide and as
// tall as the screen's shape; held sideways, {sideways_w} x {sideways_h}. Both are drawn about twice
// as large as a 1280 x 720 slide would be there (class "phone" on <html>: book-slides.css
// sets captions and code a little larger). Turning the phone reloads the deck in the
// other frame.
// scrollActivationWidth: null keeps the slide view at every width. reveal.js 5.1 would
// switch to its scroll view below 435 px (a phone), re-wrapping every slide in a
// .scroll-page; book-slides.js would then split nothing and a long statement would be
// shrunk into one screen.
const held = () => Math.min(innerWidth / 1280, innerHeight / 720) >= {small_scale} ? ""
  : innerHeight > innerWidth ? "upright" : "sideways";
const how = held();
const frame = how === "upright"
  ? {{ width: {upright_width}, height: Math.min(1400, Math.max(720,
      Math.round({upright_width} * innerHeight / innerWidth))) }}
  : how === "sideways" ? {{ width: {sideways_w}, height: {sideways_h} }} : {{ width: 1280, height: 720 }};
document.documentElement.classList.toggle("phone", how !== "");
addEventListener("resize", () => {{ if (held() !== how) location.reload(); }});
Reveal.initialize({{ hash: true, width: frame.width, height: frame.height, margin: 0.04,
  center: false, transition: "none", controls: true, progress: true,
  scrollActivationWidth: null }});
</script>
<script src="book-slides.js"></script>
</body>
</html>
"""


def build(html_dir: Path, out: Path | None = None) -> list[Path]:
    """Write one deck per session into ``out`` (default ``html_dir/slides``)."""
    html_dir = Path(html_dir)
    if not (html_dir / "book" / "intro.html").is_file():
        raise FileNotFoundError(f"no built book at {html_dir}: run make book first")
    out = Path(out) if out else html_dir / "slides"
    out.mkdir(parents=True, exist_ok=True)
    shutil.copytree(REVEAL, out / "reveal", dirs_exist_ok=True)
    shutil.copy(STYLE, out / "book-slides.css")
    shutil.copy(FIT_SCRIPT, out / "book-slides.js")
    mathjax = _mathjax_config(html_dir)
    book = html.escape(_soup(html_dir, "book/intro").title.get_text().split("—")[-1].strip())
    written = []
    for session in SESSIONS:
        slides: list[str] = []
        for page in session.pages:
            slides += _chapter_slides(html_dir, page)
        if session.labs:
            slides += _lab_slides(html_dir, session.labs)
        path = out / f"{session.name}.html"
        path.write_text(
            PAGE.format(
                title=html.escape(session.title),
                mathjax=mathjax,
                book=book,
                slides="\n".join(slides),
                small_scale=SMALL_SCALE,
                upright_width=UPRIGHT_WIDTH,
                sideways_w=SIDEWAYS[0],
                sideways_h=SIDEWAYS[1],
            ),
            encoding="utf-8",
        )
        written.append(path)
    index = "".join(f'<li><a href="{p.name}">{html.escape(s.title)}</a></li>' for p, s in zip(written, SESSIONS))
    (out / "index.html").write_text(
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Slides'
        '</title><link rel="icon" href="../_static/favicon.svg" type="image/svg+xml">'
        f"</head><body><h1>Slides</h1><ul>{index}</ul></body></html>",
        encoding="utf-8",
    )
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--html", default=str(ROOT / "_build" / "html"), help="the built book (default _build/html)")
    parser.add_argument("--out", default=None, help="where to write (default HTML/slides)")
    args = parser.parse_args(argv)
    for path in build(Path(args.html), Path(args.out) if args.out else None):
        print(path)


if __name__ == "__main__":
    main()
