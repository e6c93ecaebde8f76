"""The main text of the rewritten chapters reads as lecture notes: short sentences.

scripts/prose_stats.py measures each page's core path (its Markdown outside the sections
whose heading contains "audit"); the pages in CHECKED must keep a mean sentence length
of at most 24 words and at most 12 % of sentences over 40 words."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("prose_stats", ROOT / "scripts/prose_stats.py")
prose = importlib.util.module_from_spec(_spec)
sys.modules["prose_stats"] = prose  # its dataclass looks its module up there
_spec.loader.exec_module(prose)

# the pages held to the targets: every chapter page, the intro, the teaching page and
# the students' page
# (the glossary, syllabus and notation are reference lists, not read as prose)
CHECKED = (
    "book/intro.md",
    "book/teaching.md",
    "book/student.md",
    "book/hermite/basics.ipynb",
    "book/linear/index.md",
    "book/linear/model.ipynb",
    "book/linear/learning_curves.ipynb",
    "book/equivalence/index.md",
    "book/equivalence/theorem.ipynb",
    "book/equivalence/verification.ipynb",
    "book/regimes/finite_data.ipynb",
    "book/regimes/task_diversity.ipynb",
    "book/beyond/spectral.ipynb",
    "book/trained/networks.ipynb",
    "book/appendix/random_matrices.ipynb",
    "book/appendix/performance.ipynb",
)

LONG = " ".join(["word"] * 45)
EXAMPLE = [
    "# Title\n\nThe error is $e = 1$ for {term}`every teacher <teacher>` here. "
    "It is {eval}`x_txt` in {doc}`the chapter <../a>`, see {prf:ref}`thm-a`.\n\n"
    "$$\na^2 + b^2\n$$ (eq-a)\n\nwhich is short! Visit https://example.org <b>now</b>, e.g. $x$ {eq}`eq-a`.",
    "",  # a code cell
    "## Audit: the details\n\n" + LONG + ". Another sentence here.\n\n"
    "### Deeper\n\nStill audit.\n\n## Back\n\n"
    "```{note}\n:class: dropdown\nA note of five words.\n```\n\n"
    "```python\nthis code is stripped\n```\n\n- An item\n- $x$ starts the next item.",
]


def test_the_measure_on_a_synthetic_page():
    sents = prose.sentences(prose.clean(prose._strip_lines(prose.core_lines(EXAMPLE))))
    # only [.!?] + capital ends a sentence: not the display math, the paragraph or the list
    # item; inline math counts its tokens as words ("e = 1" is two)
    assert [prose.n_words(s) for s in sents] == [9, 11, 5, 5, 7]
    assert sents[1].split()[:6] == ["It", "is", "N", "in", "the", "chapter"]
    assert "word word" not in " ".join(sents) and "Still" not in " ".join(sents)
    stats = prose.text_stats(EXAMPLE)
    assert stats.sentences == 5 and stats.words == 37 and stats.long_share == 0.0
    # without the audit heading, its long sentence counts: 1 of 7 is over 40 words
    plain = [b.replace("Audit: the details", "Details") for b in EXAMPLE]
    stats = prose.text_stats(plain)
    assert stats.sentences == 7 and stats.long_share == pytest.approx(1 / 7)
    assert not prose.Stats(4, 100, 25.0, 0.0).passes()
    assert not prose.Stats(10, 200, 20.0, 0.2).passes()


def test_a_notebook_page_skips_code_and_hidden_cells(tmp_path):
    cells = [
        {"cell_type": "markdown", "metadata": {"tags": ["remove-cell"]}, "source": ["Hidden. X y."]},
        {"cell_type": "markdown", "metadata": {}, "source": ["One two three. Four five."]},
        {"cell_type": "code", "metadata": {}, "source": ["print('Not prose. At all.')"]},
    ]
    path = tmp_path / "page.ipynb"
    path.write_text(json.dumps({"cells": cells}), encoding="utf-8")
    stats = prose.page_stats(path)
    assert (stats.sentences, stats.words) == (2, 5)


def test_the_check_flag_fails_on_a_long_page(tmp_path, capsys):
    page = tmp_path / "long.md"
    page.write_text("# T\n\n" + (LONG + ". ") * 3, encoding="utf-8")
    assert prose.main(["--check", str(page)]) == 1
    page.write_text("# T\n\nShort one. Short two.", encoding="utf-8")
    assert prose.main(["--check", str(page)]) == 0
    capsys.readouterr()


@pytest.mark.parametrize("page", CHECKED)
def test_rewritten_pages_meet_the_targets(page):
    stats = prose.page_stats(ROOT / page)
    assert stats.sentences >= 8, f"{page}: too little text measured"
    assert stats.passes(), (
        f"{page}: mean {stats.mean:.1f} words (target <= {prose.MAX_MEAN:g}), "
        f"{stats.long_share:.0%} over {prose.LONG} words (target <= {prose.MAX_LONG_SHARE:.0%})"
    )
