"""lib.teaching.widgets: what a reader without a kernel is told to do."""

import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest
from numpy.testing import assert_allclose

from lib import teachers
from lib.teaching import widgets

ROOT = Path(__file__).resolve().parents[1]


def test_live_note_names_no_launch_button_or_make_target():
    """The note reads right in both editions: the student edition has no launch buttons or make."""
    for note in (widgets.LIVE_NOTE,):
        assert "Jupyter" in note
        assert not re.search(r"rocket|Binder|make \w", note), note


def test_expression_matches_catalogue_link():
    link = widgets.link_from_expression("relu(z)")
    z = np.linspace(-3, 3, 13)
    assert_allclose(link(z), np.maximum(z, 0.0))
    assert_allclose(teachers.teacher_moments(link), teachers.teacher_moments("relu"), atol=1e-8)
    assert_allclose(teachers.effective_noise(link, 0.1), teachers.effective_noise("relu", 0.1), atol=1e-8)


def test_expression_scalar_and_arithmetic():
    const = widgets.link_from_expression("2")  # a constant broadcasts to the shape of z
    assert const(np.zeros(5)).shape == (5,)
    a0, a1, ef2 = teachers.teacher_moments(widgets.link_from_expression("z**2 + 3*z"))
    assert_allclose([a0, a1, ef2], [1.0, 3.0, 3.0 + 9.0], atol=1e-8)  # E z^4 + 9 E z^2 = 12


@pytest.mark.parametrize(
    "expression, match",
    [
        ("", "non-empty"),
        ("z +", "not a valid formula"),
        ("z.__class__", "Attribute"),
        ("(lambda: 1)()", "Lambda"),
        ("np.exp(z)", "Attribute"),
        ("exp(y)", "'y'"),
        ("open('f')", "'open'"),
        ("'a'", "numbers"),
        ("1/z", "finite"),
        ("9**9**9 * z", "cannot be evaluated"),
    ],
)
def test_expression_rejects_bad_input(expression, match):
    with pytest.raises(ValueError, match=match):
        widgets.link_from_expression(expression)


def test_expression_type_error():
    with pytest.raises(TypeError, match="expression"):
        widgets.link_from_expression(3)


def test_explorer_builds():
    w = widgets.equivalence_explorer("tanh", kappa=np.inf)
    assert w.children  # controls and output
    with pytest.raises(ValueError):
        widgets.equivalence_explorer("no-such-link")
    plt.close("all")


# --- issue 19, items 5 and 6: explorers refuse what their sliders would clamp ----------
@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: widgets.hermite_explorer(degree=2.5), "degree must be an integer"),
        (lambda: widgets.hermite_explorer(degree=50), r"degree must be an integer in \[0, 40\]"),
        (lambda: widgets.task_diversity_explorer(alpha=-1), r"alpha must lie in the slider's range"),
        (lambda: widgets.task_diversity_explorer(kappa_range=(0, 10)), "kappa_range must be >= 0.001"),
        (lambda: widgets.finite_data_explorer(tau_max=100), r"tau_max must lie in the slider's range \[1.5, 20\]"),
        (lambda: widgets.finite_data_explorer(kappa=-1), "kappa must"),
        (lambda: widgets.equivalence_explorer(rho=5), r"rho must lie in the slider's range \[0, 2\]"),
        (lambda: widgets.equivalence_explorer(teacher=3), "teacher must be a name"),
        (lambda: widgets.spectral_explorer(alpha=1000), "alpha must lie in the slider's range"),
        (lambda: widgets.spectral_explorer(preprocess="cube"), "preprocess must be one of"),
        (lambda: widgets.spectral_figure(alpha_range=(5, 1)), "alpha_range must be a pair"),
    ],
)
def test_explorers_refuse_values_their_sliders_would_clamp(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


@pytest.mark.parametrize(
    ("expression", "match"),
    [
        ("z" + "*z" * 100000, "at most MAX_EXPRESSION_LENGTH"),
        ("z" + "*z" * 300, "nested .* levels deep"),
        ("tanh(" * 70 + "z" + ")" * 70, "nested .* levels deep"),
    ],
)
def test_link_from_expression_refuses_huge_or_deep_formulas(expression, match):
    with pytest.raises(ValueError, match=match):
        widgets.link_from_expression(expression)
    assert widgets.link_from_expression("(" * 20 + "z" + ")" * 20).name == "custom"
