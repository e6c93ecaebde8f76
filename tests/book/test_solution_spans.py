"""Tests for scripts/solution_spans.py, the parser both notebook scripts use."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("solution_spans", ROOT / "scripts/solution_spans.py")
spans = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(spans)


def test_roles_of_a_span_inside_one_cell():
    text = (
        "Exercise text.\n```{solution-start} ex-a\n:class: dropdown\n```\n"
        "The answer.\n````{solution-end}\n````\nNext exercise."
    )
    roles, inside = spans.line_roles(text, False, "t")
    assert roles == ["out", "start", "start", "start", "sol", "end", "end", "out"]
    assert inside is False


def test_a_span_left_open_and_closed_in_a_later_cell():
    roles, inside = spans.line_roles(":::{solution-start} ex-a\n:::\nAnswer", False, "t")
    assert roles == ["start", "start", "sol"] and inside is True
    roles, inside = spans.line_roles("More.\n```{solution-end}\n```\n", True, "t")
    assert roles == ["sol", "end", "end"] and inside is False


def test_a_longer_closing_fence_closes_and_a_shorter_does_not():
    roles, inside = spans.line_roles("````{solution-end}\n```\nstill\n`````", True, "t")
    assert roles == ["end", "end", "end", "end"] and inside is False


def test_outside_text_keeps_only_the_lines_outside():
    text = "A\n```{solution-start} ex\n```\nsecret\n```{solution-end}\n```\nB\n"
    kept, inside = spans.outside_text(text, False, "t")
    assert kept == "A\nB\n" and inside is False


@pytest.mark.parametrize(
    ("text", "inside", "message"),
    [
        ("```{solution-start} x\n```", True, "inside a solution"),
        ("```{solution-end}\n```", False, "without solution-start"),
        ("```{solution-start} x\n:class: dropdown", False, "not closed"),
        ("```{solution} ex\nanswer\n```", False, "solution-start/solution-end"),
    ],
)
def test_unpaired_or_foreign_markers_are_refused(text, inside, message):
    with pytest.raises(spans.SolutionMarkerError, match=message):
        spans.line_roles(text, inside, "book/x.ipynb, cell 3")
