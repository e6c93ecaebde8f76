"""A chapter's landing page has no section headings of its own.

A chapter with several notebooks has a short landing page whose sections are the
notebooks (2.1, 2.2, ...). Sphinx numbers a heading of the landing page itself before
them, so one ``##`` heading there made the model page 2.2 and the learning curves 2.3,
while the text everywhere says 2.1 and 2.2.
"""

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def _landing_pages():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    for part in toc["parts"]:
        for chapter in part.get("chapters", []):
            if chapter.get("sections"):
                yield chapter["file"]


@pytest.mark.parametrize("page", list(_landing_pages()))
def test_a_landing_page_has_only_its_title_as_a_heading(page):
    path = next(p for p in (ROOT / f"{page}.md", ROOT / f"{page}.ipynb") if p.exists())
    lines = path.read_text().splitlines()
    in_code = False
    headings = []
    for line in lines:
        if line.startswith("```"):  # a fenced block or a directive: no heading inside
            in_code = not in_code
        if not in_code and line.startswith("#"):
            headings.append(line)
    assert len(headings) == 1 and headings[0].startswith("# "), headings


def test_there_are_landing_pages():
    assert len(list(_landing_pages())) >= 3
