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
