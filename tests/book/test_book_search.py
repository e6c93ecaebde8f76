"""The book's offline search: what the snippet of a hit shows.

``book/_ext/book_search.py`` stores each page's text (formulas as Unicode, no code-cell
source) with where its sections and its parts that are not prose (headings, literal
blocks, API signatures) are; ``book/_static/book-search.js`` cuts each hit's snippet
from it (``bookSnippet``): a short excerpt of prose around the FIRST match of the
query's words. Sphinx's own cut began at the page's start (its stemmed keywords come as
a Set, which the earlier array loop skipped) and missed the query's words.

Checked here: the stored text and ranges of a made-up page (Python); the snippet's
choice on made-up texts (the script's pure part, run with node where it is installed);
and, on the built book (``html``), that the snippet of every hit whose page text holds a
query word shows that word.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
pytest.importorskip("bs4")  # the build's index reads the HTML (not in the floors run)
import book_search  # noqa: E402

SCRIPT = ROOT / "book" / "_static" / "book-search.js"

PAGE = """<html><body><main role="main"><div class="bd-header-article">Buttons</div>
<section id="the-model"><h1>The model of a teacher</h1>
<p>Intro text. A teacher labels tokens with <span class="math notranslate">\\(y = f(z)\\)</span>.</p>
<div class="cell docutils container"><div class="cell_input"><pre>teacher = make_teacher("h2")</pre></div>
<div class="cell_output"><pre>teacher h2 printed</pre>
<figure><figcaption>Fig. 1 The error of each teacher.</figcaption></figure></div></div>
<dl class="py function"><dt class="sig sig-object py" id="lib.teachers.teacher_moments">teacher_moments(teacher)</dt>
<dd><p>Moments of a teacher.</p></dd></dl>
</section></main></body></html>"""


def test_stored_text_marks_what_is_not_prose():
    text, sections, skip = book_search._main_text(PAGE)
    # no header, no code-cell source, formulas as text
    assert "Buttons" not in text and "make_teacher" not in text and "y = f(z)" in text
    parts = [text[a:b].strip() for a, b in skip]
    assert "The model of a teacher" in parts  # the heading
    assert "teacher h2 printed" in parts  # a printed output
    assert "teacher_moments(teacher)" in parts  # an API signature
    # prose is not skipped: the paragraph, the figure's caption, the API description
    for prose in ("A teacher labels tokens", "Fig. 1 The error of each teacher.", "Moments of a teacher."):
        at = text.index(prose)
        assert not any(a <= at < b for a, b in skip), prose
    ids = {s[0]: text[s[1] : s[2]] for s in sections}
    assert "Moments of a teacher." in ids["lib.teachers.teacher_moments"]
    assert ids["the-model"].strip().startswith("The model of a teacher")


def _node(code: str):
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node to run book-search.js's snippet logic")
    script = f"const S = require({json.dumps(str(SCRIPT))});\nconsole.log(JSON.stringify(({code})));"
    out = subprocess.run([node, "-e", script], capture_output=True, text=True, check=True, timeout=60)
    return json.loads(out.stdout)


def test_snippet_is_prose_around_the_first_match():
    text, _, skip = book_search._main_text(PAGE)
    got = _node(f"S.summary({json.dumps(text)}, S.words('teacher', new Set(['teacher'])), {json.dumps(skip)})")
    # not the heading at the page's start: the first match in prose, from its sentence
    # (here one sentence earlier: the paragraph is short), and not into the printed output
    assert got == "...Intro text. A teacher labels tokens with y = f(z) ....", got
    long = (
        "Overview of the chapter. "
        + "Many words come first here. " * 8
        + "The effective noise sets the floor of the error. "
        + "Then more text. " * 20
    )
    snip = _node(f"S.summary({json.dumps(long)}, S.words('noise floor'), [], ['nois', 'floor'])")
    assert snip.startswith("...The effective noise sets the floor"), snip
    assert snip.endswith("...") and len(snip) < 260
    body = snip.strip(".")
    assert long.find(body) > 0 and long[long.find(body) + len(body)] == " "  # ends at a word's end
    # the first match of any of the words, at the start of a word ("preteacher" is not one)
    first_text = (
        "A preteacher. " + "Filler words here. " * 10 + "The floor is here. The teacher comes later." + " More." * 40
    )
    first = _node(f"S.summary({json.dumps(first_text)}, ['teacher', 'floor'], [])")
    assert first.startswith("...The floor is here."), first
    # Sphinx's stems (a Set) count as words; the query as typed is split at non-letters
    assert _node("S.words('new_figure Noise', new Set(['nois']))") == ["new_figure", "new", "figure", "noise", "nois"]
    # the words as typed win over Sphinx's stems ("effect" of "effective")
    pad, tail = json.dumps("Filler words here. " * 10), json.dumps(" More." * 40)
    stems = _node(
        f"S.summary({pad} + 'The effect is small. The effective noise is large.' + {tail}, ['effective'], [], ['effect'])"
    )
    assert stems.startswith("...The effective noise"), stems
    noisy = _node(f"S.summary({pad} + 'The noisy data.' + {tail}, ['noise'], [], ['nois'])")
    assert noisy.startswith("...The noisy data."), noisy
    # a name typed without its accents finds the accented place, and with them too
    acc = f"{pad} + 'As Raventós et al. show, it holds.' + {tail}"
    for typed in ("raventos", "raventós"):
        got = _node(f"S.summary({acc}, ['{typed}'], [])")
        assert got.startswith("...As Raventós et al. show"), (typed, got)
    # no match: the text's start, never empty
    assert _node("S.summary('Some prose here.', ['absent'], [])") == "Some prose here."
    # only a heading matches: the heading, rather than nothing
    assert "teacher" in _node("S.summary('The teacher. Other prose follows here.', ['teacher'], [[0, 12]])")


# every hit of the search page: its page (docname), anchor and snippet
HITS_JS = r"""
const root = new URL(document.documentElement.dataset.content_root || "", location.href).href;
return [...document.querySelectorAll('#search-results ul.search > li')].map(li => {
  const a = li.querySelector('a[href]');
  const url = new URL(a.getAttribute('href'), location.href);
  const path = url.href.split('#')[0].split('?')[0];
  return {
    doc: decodeURIComponent(path.slice(root.length).replace(/\.html$/, '')),
    anchor: decodeURIComponent(url.hash.slice(1)),
    title: a.textContent,
    snippet: (li.querySelector('p.context') || {}).textContent || '',
  };
});
"""


@pytest.mark.html
@pytest.mark.parametrize("query", ["teacher", "effective noise", "ridge", "glossary", "Marchenko", "new_figure"])
def test_search_snippets_show_the_query_words(query):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_html import SEARCH_JS, _console_errors, _fresh, browser_session

    session = browser_session()
    base, driver = next(session)
    try:
        _fresh(driver)
        driver.get(f"{base}search.html?q={query}")
        found = driver.execute_async_script(SEARCH_JS)
        assert not found.get("fatal"), found
        hits = driver.execute_script(HITS_JS)
        assert hits, found
        texts = driver.execute_script("return window.BOOK_SEARCH_TEXT || {}")
        words = [w.lower() for w in query.replace("_", " ").split()]
        empty, missing = [], []
        for hit in hits:
            if len(hit["snippet"].strip()) < 20:
                empty.append(hit["title"])
                continue
            page = texts.get(hit["doc"])
            assert page, hit
            text = page["text"]
            for sid, a, b in page["sections"]:
                if sid == hit["anchor"] and b > a:
                    text = text[a:b]
                    break
            # the page's (or section's) stored text holds a query word: so must the snippet
            if any(w in text.lower() for w in words) and not any(w in hit["snippet"].lower() for w in words):
                missing.append((hit["doc"], hit["anchor"], hit["snippet"][:100]))
        assert not empty, f"{query}: hits without a snippet: {empty}"
        assert not missing, f"{query}: snippets without the query's words: {missing}"
        assert not _console_errors(driver)
    finally:
        session.close()


def test_accented_terms_are_also_indexed_without_accents():
    # the front-end pass typed "Raventos" and "Akyurek" and found nothing: Sphinx's search
    # matches a query's stem exactly, and the index held only the accented stems
    terms = {"raventó": [3, 5], "akyürek": 4, "ravento": 7, "péché": 1, "plain": 2}
    out = book_search.with_folded_terms(terms, stem=lambda w: w[:-1] if w == "peche" else w)
    assert out["raventó"] == [3, 5] and out["akyürek"] == 4 and out["plain"] == 2  # kept
    assert out["akyurek"] == 4 and out["ravento"] == [3, 5, 7]  # merged with its pages
    assert out["peche"] == out["pech"] == 1  # as typed, and as the query's stemmer stems it
    assert set(out) == {*terms, "akyurek", "peche", "pech"}  # the control: no other term
    assert book_search.fold_accents("Zdeborová Péché Szegő") == "Zdeborova Peche Szego"
