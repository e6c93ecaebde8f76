"""lib.widgets: what a reader without a kernel is told to do."""

import re
from pathlib import Path

from lib import widgets

ROOT = Path(__file__).resolve().parents[1]


def test_live_note_names_a_make_target_that_starts_jupyterlab():
    """The note's command exists and opens JupyterLab (`make env` alone installs none)."""
    targets = re.findall(r"make (\w[\w-]*)", widgets.LIVE_NOTE)
    assert targets == ["lab"], targets
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^lab:.*\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert recipe and "jupyter lab" in recipe.group(1)
    assert "jupyterlab" in (ROOT / "requirements-lab.txt").read_text().lower()
