"""Tests of lib.teaching.plotting."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest
from numpy.testing import assert_allclose

from lib import teachers, theory
from lib.finite_size import extrapolate
from lib.teaching import plotting, widgets
from lib.teaching.plotting import task_diversity_figure
from lib.teaching.widgets import task_diversity_explorer


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


# --------------------------------------------------------------------------------------
# Tests of the chapter-5 figure helper and explorer (lib.teaching.plotting.task_diversity_figure,
# --------------------------------------------------------------------------------------
def teardown_function():
    plt.close("all")


def test_figure_draws_the_theory_curves():
    fig = task_diversity_figure("relu", alpha=2.0, tau=3.0, rho=0.2, lam=0.0, kappa_range=(0.1, 10.0), n_points=11)
    ax = fig.axes[0]
    icl, idg = ax.lines[0], ax.lines[1]
    kappa = np.logspace(-1, 1, 11)
    assert_allclose(icl.get_xdata(), kappa)
    assert_allclose(icl.get_ydata(), theory.nonlinear_icl_error("relu", 2.0, kappa, 3.0, 0.2))
    assert_allclose(idg.get_ydata(), theory.nonlinear_idg_error("relu", 2.0, kappa, 3.0, 0.2))
    assert idg.get_linestyle() == "--"
    assert ax.get_xscale() == "log"


def test_figure_reference_levels():
    fig = task_diversity_figure("tanh", alpha=5.0, tau=5.0, rho=0.1, lam=0.3)
    levels = sorted(float(line.get_ydata()[0]) for line in fig.axes[0].lines[2:])
    expected = sorted(
        [teachers.effective_noise("tanh", 0.1), theory.nonlinear_icl_error("tanh", 5.0, np.inf, 5.0, 0.1, 0.3)]
    )
    assert_allclose(levels, expected)


def test_figure_interpolation_peak_leaves_gaps():
    fig = task_diversity_figure("h2", tau=1.0)  # ridgeless tau = 1: infinite error, not drawn
    assert np.all(np.isnan(fig.axes[0].lines[0].get_ydata()))


@pytest.mark.parametrize("bad", [(0.0, 1.0), (2.0, 1.0), (1.0, np.inf), (-1.0, 3.0)])
def test_figure_rejects_bad_kappa_range(bad):
    with pytest.raises(ValueError, match="kappa_range"):
        task_diversity_figure("relu", kappa_range=bad)


def test_explorer_controls():
    w = task_diversity_explorer("cubic", alpha=2.0, tau=3.0, rho=0.2, lam=0.1, kappa_range=(1e-2, 1e2))
    values = {c.description: c.value for c in w.children[:-1]}
    assert values["f"] == "cubic"
    assert_allclose([values["α"], values["τ"], values["ρ"], values["λ"]], [2.0, 3.0, 0.2, 0.1])
    assert_allclose(values["log₁₀ κ"], (-2.0, 2.0))


def test_explorer_rejects_unknown_teacher():
    with pytest.raises((ValueError, KeyError)):
        task_diversity_explorer("not-a-link")


# --- issue 19, items 5 and 6: figures refuse what they used to clamp or round ------------
@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: task_diversity_figure(n_points=10**8), r"n_points must be an integer in \[2, 10000\]"),
        (lambda: task_diversity_figure(n_points=2.5), "n_points must be an integer"),
        (lambda: task_diversity_figure(kappa_range=(0, 10)), "kappa_range must be > 0"),
        (lambda: task_diversity_figure(kappa_range=(10, 1)), "kappa_range must be a pair"),
        (lambda: task_diversity_figure(kappa_range=(1, float("nan"))), "kappa_range must not be NaN"),
        (lambda: task_diversity_figure(kappa_range=("a", 1)), "kappa_range must be a real"),
        (lambda: plotting.finite_data_figure(tau_max=0.5), "tau_max must be > 1"),
        (lambda: plotting.finite_data_figure(n_points=1), "n_points must be an integer in"),
        (lambda: plotting.equivalence_figure(tau_range=(1, 2, 3)), "tau_range must be a pair"),
        (lambda: plotting.hermite_expansion_figure(degree=2.5), "degree must be an integer"),
        (lambda: plotting.hermite_expansion_figure(z_max=-1), "z_max must be > 0"),
        (lambda: plotting.figure_size(width="wide"), "width must be a real number"),
    ],
)
def test_figures_refuse_bad_arguments(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()
    plt.close("all")
