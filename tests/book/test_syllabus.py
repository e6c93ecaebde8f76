"""The syllabus (book/syllabus.md) and the slide decks of scripts/make_slides.py agree,
and the schedule keeps the promises the page makes (four sessions a week, chapter 6 a
lecture of its own after the random-matrix appendix, the performance appendix optional)."""

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SYLLABUS = (ROOT / "book" / "syllabus.md").read_text(encoding="utf-8")

pytest.importorskip("bs4")
_spec = importlib.util.spec_from_file_location("make_slides", ROOT / "scripts" / "make_slides.py")
make_slides = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("make_slides", make_slides)  # its dataclasses look their module up
_spec.loader.exec_module(make_slides)


def _weeks() -> dict[str, list[str]]:
    """The session rows of each week's table, by week heading."""
    weeks = {}
    for block in re.split(r"^### ", SYLLABUS, flags=re.M)[1:]:
        heading, _, body = block.partition("\n")
        rows = [line for line in body.splitlines() if line.startswith("| ") and not line.startswith("| session")]
        weeks[heading] = rows
    return weeks


def test_every_deck_is_linked_and_every_link_has_a_deck():
    linked = set(re.findall(r'href="\.\./slides/([\w-]+)\.html"', SYLLABUS))
    assert linked == {s.name for s in make_slides.SESSIONS}


def test_weeks_are_balanced():
    weeks = _weeks()
    assert len(weeks) == 2
    sizes = [len(rows) for rows in weeks.values()]
    assert sizes == [4, 4], sizes
    for rows in weeks.values():
        assert sum(r.startswith("| Lab") for r in rows) == 1


def test_chapter_6_has_its_own_lecture_after_the_appendix():
    (row,) = [r for rows in _weeks().values() for r in rows if "beyond/spectral" in r.split("|")[2]]
    assert "appendix/random_matrices" in row.split("|")[2]
    assert row.split("|")[2].index("appendix/random_matrices") < row.split("|")[2].index("beyond/spectral")
    (deck,) = [s for s in make_slides.SESSIONS if "book/beyond/spectral" in s.pages]
    assert deck.pages == ("book/beyond/spectral",)


def test_performance_appendix_is_optional_and_the_student_page_linked():
    sentence = next(s for s in re.split(r"(?<=\.)\s", SYLLABUS) if "appendix/performance" in s)
    assert "optional" in sentence
    assert "{doc}`student`" in SYLLABUS


def test_slides_keep_punctuation_with_its_formula():
    """No slide line may start with the comma after a formula: the formula and the
    punctuation touching it go into one ``nowrap`` span (the browser test checks the
    lines themselves)."""
    from bs4 import BeautifulSoup

    math = '<span class="math notranslate nohighlight">\\({}\\)</span>'
    src = f"<p>at {math.format('a')}, with ({math.format('b')}). Then {math.format('c')} alone</p>"
    out = BeautifulSoup(make_slides._clean(BeautifulSoup(src, "html.parser").p, "book/x"), "html.parser")
    wraps = [w.get_text() for w in out.select("span.nowrap")]
    assert wraps == ["\\(a\\),", "(\\(b\\))."]
    assert out.get_text() == BeautifulSoup(src, "html.parser").get_text()  # no text lost or moved
    assert out.select("span.math")[2].parent.name == "p"  # nothing touches c: not wrapped
