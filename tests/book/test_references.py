"""The project refers only to itself: no file names a working note outside the repository."""

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# the names of the authors' private working notes, spelled so that this file does not match
OUTSIDE_NOTES = ("THEORY" + ".md", "STYLE" + ".md", "shared" + "/THEORY")


def _tracked_text_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode != 0:  # not a git checkout (an sdist): walk the tree instead
        return [p for p in ROOT.rglob("*") if p.is_file() and ".venv" not in p.parts]
    return [ROOT / name for name in out.stdout.split("\0") if name]


def test_no_file_refers_to_notes_outside_the_project():
    hits = []
    for path in _tracked_text_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            if any(name in line for name in OUTSIDE_NOTES):
                hits.append(f"{path.relative_to(ROOT)}:{lineno}: {line.strip()[:80]}")
    assert not hits, "the book is the reference; cite its chapters instead:\n" + "\n".join(hits)


def test_bibliography_parses_and_every_citation_resolves():
    """references.bib is valid BibTeX (a dropped brace stops the whole book build) and every
    key cited in the chapters is in it, so a merge that breaks either fails here, fast."""
    import json
    import re

    pybtex_db = __import__("pytest").importorskip("pybtex.database")
    errors = __import__("pytest").importorskip("pybtex.errors")
    errors.set_strict_mode(True)
    keys = set(pybtex_db.parse_file(ROOT / "references.bib").entries)
    cited: set[str] = set()
    for path in list((ROOT / "book").rglob("*.md")) + list((ROOT / "book").rglob("*.ipynb")):
        if "_build" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".ipynb":
            cells = json.loads(text)["cells"]
            text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        for group in re.findall(r"\{cite(?::[pt])?\}`([^`]*)`", text):
            cited.update(k.strip() for k in group.split(","))
    missing = sorted(cited - keys)
    assert not missing, f"cited but not in references.bib: {missing}"
