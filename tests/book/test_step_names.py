"""The name "Step 3" means one thing in the book: the step of section 3.1's sketch with the
unproved assumption (issue 32).

The sketch of section 2.2 ("Where the formulas come from") and the random-matrix
appendix name their parts by content ("the random-matrix step", "the ridgeless limit"),
so a numbered "Step N" in their text would be read as a step of section 3.1. Each part
has a label that other pages link to instead of a step number."""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = ("book/linear/learning_curves.ipynb", "book/appendix/random_matrices.ipynb")
# the labels of the parts of section 2.2's sketch, and the appendix's detail sections
LABELS = {
    "book/linear/learning_curves.ipynb": (
        "sec-formulas-origin",
        "sec-lc-regression",
        "sec-lc-population",
        "sec-lc-rmt-step",
        "sec-lc-ridgeless",
    ),
    "book/appendix/random_matrices.ipynb": ("sec-rmt-sphere", "sec-rmt-ch2-step"),
}


def _cells(page: str) -> list[str]:
    nb = json.loads((ROOT / page).read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"]]


@pytest.mark.parametrize("page", PAGES)
def test_no_numbered_steps(page):
    hits = [m.group(0) for text in _cells(page) for m in re.finditer(r".{0,40}\bSteps? \d.{0,40}", text)]
    assert not hits, f"{page} numbers a step; name it by its content: {hits}"


@pytest.mark.parametrize("page", PAGES)
def test_part_labels(page):
    text = "\n".join(_cells(page))
    missing = [lab for lab in LABELS[page] if f"({lab})=" not in text]
    assert not missing, f"{page} lost the labels {missing}"
