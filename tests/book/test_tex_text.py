"""Tests for book/_ext/tex_text.py: formulas as plain text (search index, page titles)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import tex_text  # noqa: E402


def test_environments_and_line_spacing_leave_no_debris():
    # the search snippets showed "beginaligned", "endaligned" and "[2mm]"
    text = tex_text.tex_to_text(r"\begin{aligned} a &= b \\[2mm] c &= d \end{aligned}")
    assert text == "a = b c = d"
    cases = tex_text.tex_to_text(r"\begin{cases} 1 & x > 0 \\ 0 & x \le 0 \end{cases}")
    assert "begin" not in cases and "end" not in cases and cases.startswith("1 x > 0 0")


def test_plain_formulas_are_unchanged():
    assert tex_text.tex_to_text(r"x^2 + \frac{a}{b}") == "x² + a/b"
    assert tex_text.plain(r"the error $\rho + 1$ here") == "the error ρ + 1 here"
