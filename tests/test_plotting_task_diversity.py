"""Tests of the chapter-5 figure helper and explorer (lib.plotting.task_diversity_figure,
lib.widgets.task_diversity_explorer)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from numpy.testing import assert_allclose

from lib import teachers, theory
from lib.plotting import task_diversity_figure
from lib.widgets import task_diversity_explorer


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
    expected = sorted([teachers.effective_noise("tanh", 0.1), theory.nonlinear_icl_error("tanh", 5.0, np.inf, 5.0, 0.1, 0.3)])
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
