"""The chapters' code cells are formatted like lib (ruff format, 88 characters a line)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_notebook_code_is_ruff_formatted():
    # ruff is pinned in requirements.txt; the floors environment (requirements-min.txt)
    # does not have it and skips this test
    pytest.importorskip("ruff")
    notebooks = sorted(str(p) for p in (ROOT / "book").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    assert notebooks, "no notebooks found under book/"
    out = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "--line-length", "88", "--diff", *notebooks],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 0, (
        "notebook code cells are not ruff-formatted; run `.venv/bin/ruff format "
        "--line-length 88 book/` and commit:\n" + out.stdout[-3000:] + out.stderr[-2000:]
    )


@pytest.mark.parametrize("command", [["format", "--check", "--diff"], ["check"]], ids=["format", "check"])
def test_python_code_is_ruff_clean(command):
    # lib, tests, scripts and bench with the settings of pyproject.toml ([tool.ruff]);
    # the pinned ruff of requirements.txt
    pytest.importorskip("ruff")
    out = subprocess.run(
        [sys.executable, "-m", "ruff", *command, "lib", "tests", "scripts", "bench"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 0, (
        f"`ruff {' '.join(command)}` fails; run `.venv/bin/ruff format lib tests scripts bench` "
        "and `.venv/bin/ruff check --fix lib tests scripts bench`:\n" + out.stdout[-3000:] + out.stderr[-2000:]
    )
