"""Tests of the chapter-3 helpers: lib.widgets.link_from_expression / equivalence_explorer
and lib.plotting.equivalence_figure / extrapolation_panel."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from numpy.testing import assert_allclose  # noqa: E402

from lib import hermite, plotting, teachers, theory, widgets  # noqa: E402
from lib.finite_size import extrapolate  # noqa: E402


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


def test_equivalence_figure_draws_theory_and_floor():
    fig = plotting.equivalence_figure("relu", alpha=2.0, kappa=1.5, rho=0.1, tau_range=(2.0, 50.0), n_points=50)
    ax = fig.axes[0]
    curve = ax.lines[0]
    tau = np.geomspace(2.0, 50.0, 50)
    assert_allclose(curve.get_ydata(), theory.nonlinear_icl_error("relu", 2.0, 1.5, tau, 0.1))
    levels = [ln.get_ydata()[0] for ln in ax.lines[1:]]
    assert_allclose(min(levels), teachers.effective_noise("relu", 0.1))  # the floor line
    plt.close(fig)


def test_equivalence_figure_accepts_callables_and_a1_zero():
    fig = plotting.equivalence_figure(widgets.link_from_expression("cos(z)"), kappa=np.inf, lam=0.1)
    plt.close(fig)
    with pytest.raises(ValueError, match="tau_range"):
        plotting.equivalence_figure("relu", tau_range=(5.0, 1.0))


def test_extrapolation_panel_line_reaches_intercept():
    d = np.array([50.0, 100.0, 150.0, 200.0])
    e = 1.0 + 3.0 / d
    fit = extrapolate(d, e, np.full(4, 1e-3))
    fig, ax = plotting.new_figure()
    plotting.extrapolation_panel(ax, d, e, np.full(4, 1e-3), fit, color="k")
    line = next(ln for ln in ax.lines if len(ln.get_xdata()) == 200)  # the fitted curve
    assert_allclose(line.get_xdata()[0], 0.0)
    assert_allclose(line.get_ydata()[0], 1.0, atol=1e-9)
    plt.close(fig)
