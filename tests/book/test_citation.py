"""CITATION.cff and the README's "How to cite" entry describe the same work."""

import re
from pathlib import Path

import yaml

import lib

ROOT = Path(__file__).resolve().parents[2]


def _bibtex_field(entry: str, name: str) -> str:
    match = re.search(rf"^\s*{name}\s*=\s*\{{(.*)\}},?\s*$", entry, re.MULTILINE)
    assert match, f"the README's BibTeX has no {name} field"
    return match.group(1).strip("{}")


def test_citation_matches_readme_and_package():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0"
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## How to cite", 1)[1]
    entry = re.search(r"```bibtex\n(.*?)```", section, re.DOTALL).group(1)
    assert " ".join(cff["title"].split()) == _bibtex_field(entry, "title")
    assert cff["authors"][0]["name"] == _bibtex_field(entry, "author")
    assert cff["version"] == _bibtex_field(entry, "version") == lib.__version__
    assert cff["repository-code"] == _bibtex_field(entry, "url")
    for ref in cff["references"]:
        arxiv = ref["identifiers"][0]["value"]
        assert arxiv in section, f"the README does not cite {arxiv}"
