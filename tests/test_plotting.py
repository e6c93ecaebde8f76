"""Tests of lib.teaching.plotting."""

from __future__ import annotations

import re
from itertools import combinations

import matplotlib.pyplot as plt
import numpy as np
import pytest
from _colour import ciede2000, difference
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


# --- issue 32: the teachers' colours are far apart, also for colour-blind readers ------
#: Teachers drawn together in one figure: chapter 1's Hermite coefficients
#: (book/hermite/basics.ipynb) and chapter 3's simulations (verification.ipynb; the
#: linear teacher is chapter 3's reference).
FIGURE_GROUPS = {
    "chapter 1": ("relu", "abs", "sign", "tanh", "erf", "sin"),
    "chapter 3": ("linear", "offset", "relu", "tanh", "sign", "cubic", "h2", "abs"),
}
#: Smallest CIEDE2000 difference, stated in the docstring of TEACHER_COLORS.
IN_ONE_FIGURE, COLOUR_BLIND, ANY_TWO = 25.0, 12.0, 20.0


def _assert_apart(colours, pairwise):
    """Each of ``colours`` far from every teacher's colour; ``pairwise`` far from each other,
    also for the two common colour-vision deficiencies."""
    for c in colours:
        for t, b in plotting.TEACHER_COLORS.items():
            assert difference(c, b) >= ANY_TWO, f"{c} and the teacher {t}"
    for a, b in combinations(pairwise, 2):
        assert difference(a, b) >= IN_ONE_FIGURE, f"{a} and {b}"
        for vision in ("deuteranopia", "protanopia"):
            assert difference(a, b, vision) >= COLOUR_BLIND, f"{a} and {b} ({vision})"


@pytest.mark.parametrize(
    ("lab1", "lab2", "expected"),  # Sharma, Wu and Dalal (2005), their table 1, pairs 1, 2, 3, 7
    [
        ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
        ((50.0, 3.1571, -77.2803), (50.0, 0.0, -82.7485), 2.8615),
        ((50.0, 2.8361, -74.0200), (50.0, 0.0, -82.7485), 3.4412),
        ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
    ],
)
def test_ciede2000_reproduces_published_pairs(lab1, lab2, expected):
    assert_allclose(ciede2000(lab1, lab2), expected, atol=1e-4)


def test_colour_difference_sees_the_old_clash():
    # the palette before issue 32 fails the test below: ReLU orange and h2 vermilion,
    # abs blue and offset purple (the second pair for a deuteranope)
    assert difference("#E69F00", "#D55E00") < IN_ONE_FIGURE
    assert difference("#0072B2", "#7F3C8D", "deuteranopia") < COLOUR_BLIND


@pytest.mark.parametrize("group", FIGURE_GROUPS)
@pytest.mark.parametrize(
    ("vision", "least"),
    [("normal", IN_ONE_FIGURE), ("deuteranopia", COLOUR_BLIND), ("protanopia", COLOUR_BLIND)],
)
def test_teachers_of_one_figure_have_distinct_colours(group, vision, least):
    colours = {t: plotting.color_for(t) for t in FIGURE_GROUPS[group]}
    assert all(t in plotting.TEACHER_COLORS for t in colours)  # none from the cycle
    for (s, a), (t, b) in combinations(colours.items(), 2):
        assert difference(a, b, vision) >= least, f"{group}: {s} and {t} ({vision})"


def test_every_teacher_colour_is_distinct():
    for (s, a), (t, b) in combinations(plotting.TEACHER_COLORS.items(), 2):
        assert difference(a, b) >= ANY_TWO, f"{s} and {t}"


def test_chapter_7_sweep_figure_draws_no_teacher_colour():
    # its models and the spectral learner are not teachers: every colour it draws is grey
    # or at least ANY_TWO from every teacher's, and its colours stay apart from one another
    pytest.importorskip("jax", reason="training_widgets needs the optional extra 'training' (JAX)")
    from matplotlib.colors import to_hex, to_rgb

    from lib.teaching import training_widgets

    fig = training_widgets.sweep_figure("h2", 8, 0.1)
    drawn = {to_hex(line.get_color()) for line in fig.axes[0].get_lines()}
    plt.close(fig)
    hues = sorted(c for c in drawn if len(set(to_rgb(c))) > 1)  # greys have r = g = b
    assert len(hues) == 3  # softmax, linear attention, the spectral learner
    _assert_apart(hues, hues)


# --- issue 29: chapter 7's control sweep at a glance ----------------------------------
def _control_data():
    pytest.importorskip("jax", reason="training_widgets needs the optional extra 'training' (JAX)")
    from lib import bayes, training_runs
    from lib.teaching import training_widgets

    return training_widgets, training_runs.load_control_runs("controls"), bayes.load_bayes()


def test_control_seeds_are_the_stored_paired_differences():
    from scipy import stats

    tw, rows, _ = _control_data()
    for series in sorted({r["series"] for r in rows}):  # "alpha", and "tau" where stored
        seeds = tw.control_seeds(rows, level=0.9, series=series)
        chosen = [r for r in rows if r["series"] == series]
        points = {(r["teacher"], r["d"], r["alpha"], r["kind"]) for r in chosen}
        assert set(seeds) == points
        for (t, d, a, k), s in seeds.items():
            mine = sorted(
                (r for r in chosen if (r["teacher"], r["d"], r["alpha"], r["kind"]) == (t, d, a, k)),
                key=lambda r: r["draw"],
            )
            assert list(s["draw"]) == [r["draw"] for r in mine]
            assert_allclose(s["diff"], [r["diff_cf"] for r in mine], rtol=0, atol=0)
            assert_allclose(s["half"], stats.norm.ppf(0.95) * np.array([r["diff_cf_se"] for r in mine]), rtol=1e-12)
    # the default is the series at fixed alpha
    assert set(tw.control_seeds(rows)) == {
        (r["teacher"], r["d"], r["alpha"], r["kind"]) for r in rows if r["series"] == "alpha"
    }


def test_control_seeds_refuse_bad_input():
    tw, rows, _ = _control_data()
    with pytest.raises(ValueError, match="level must be"):
        tw.control_seeds(rows, level=1.0)
    stored = sorted({r["series"] for r in rows})
    with pytest.raises(ValueError, match=re.escape(f"series: no row of series 'fixed'; the rows have {stored}")):
        tw.control_seeds(rows, series="fixed")
    with pytest.raises(ValueError, match="several rows per seed"):
        tw.control_seeds(rows + rows[:1])


def _marker_lines(ax, marker):
    """The data lines of the error bars drawn with ``marker`` (not their caps)."""
    return [c.lines[0] for c in ax.containers if c.lines[0].get_marker() == marker]


def test_control_figure_draws_every_seed_and_the_bayes_error():
    tw, rows, bay = _control_data()
    from lib import theory

    seeds = tw.control_seeds(rows)
    fig = tw.control_figure(rows, bay, 0.1)
    dims = sorted({d for _, d, _, _ in seeds})
    groups = sorted({(t, a) for t, _, a, _ in seeds})
    assert [ax.get_title() for ax in fig.axes] == [f"$d = {d}$" for d in dims]
    for ax, d in zip(fig.axes, dims):
        # the context-free error: the dashed line at 0
        assert any(ln.get_linestyle() == "--" and set(ln.get_ydata()) == {0.0} for ln in ax.get_lines())
        for kind in tw.CONTROL_KINDS:
            drawn = _marker_lines(ax, tw._MARKERS[kind])
            assert len(drawn) == len(groups)  # one set of markers per (teacher, alpha)
            for ln, (t, a) in zip(drawn, groups):
                assert_allclose(ln.get_ydata(), seeds[t, d, a, kind]["diff"])
                assert ln.get_color() == tw.KIND_COLORS[kind]
        bars = _marker_lines(ax, "_")
        want = [bay[t, d, a]["error"] - theory.context_free_error(t, d, 0.1) for t, a in groups]
        assert_allclose([ln.get_ydata()[0] for ln in bars], want)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "Bayes error (Monte Carlo)" in labels and tw.KIND_LABELS["none"] in labels
    plt.close(fig)
    # the series at fixed tau, where stored: its own seeds, one panel per d
    if any(r["series"] == "tau" for r in rows):
        tau_seeds = tw.control_seeds(rows, series="tau")
        fig = tw.control_figure(rows, bay, 0.1, series="tau")
        tau_dims = sorted({d for _, d, _, _ in tau_seeds})
        assert [ax.get_title() for ax in fig.axes] == [f"$d = {d}$" for d in tau_dims]
        tau_groups = sorted({(t, a) for t, _, a, _ in tau_seeds})
        for ax, d in zip(fig.axes, tau_dims):
            for kind in tw.CONTROL_KINDS:
                drawn = _marker_lines(ax, tw._MARKERS[kind])
                for ln, (t, a) in zip(drawn, tau_groups, strict=True):
                    assert_allclose(ln.get_ydata(), tau_seeds[t, d, a, kind]["diff"])
        plt.close(fig)
    # without a stored Bayes error for a point, no mark (and no legend entry) for it
    fig = tw.control_figure(rows, {}, 0.1)
    assert not any(_marker_lines(ax, "_") for ax in fig.axes)
    assert "Bayes error (Monte Carlo)" not in [t.get_text() for t in fig.legends[0].get_texts()]
    plt.close(fig)


def test_control_figure_refuses_a_rho_without_runs():
    tw, rows, bay = _control_data()
    with pytest.raises(ValueError, match=r"rho: the control runs have rho in \[0.1\]; got 0.5"):
        tw.control_figure(rows, bay, 0.5)
    with pytest.raises(ValueError, match="level must be"):
        tw.control_figure(rows, bay, 0.1, level=0.0)
    many = [dict(r, d=d) for d in (8, 16, 24, 32) for r in rows if r["d"] == 8]
    with pytest.raises(ValueError, match=r"the runs span the dimensions \[8, 16, 24, 32\]; at most 3"):
        tw.control_figure(many, bay, 0.1)


def test_control_figure_colours_are_apart_and_no_teachers():
    tw, rows, bay = _control_data()
    from matplotlib.colors import to_hex, to_rgb

    fig = tw.control_figure(rows, bay, 0.1)
    drawn = {to_hex(ln.get_color()) for ax in fig.axes for ln in ax.get_lines()}
    plt.close(fig)
    assert {to_hex(tw.KIND_COLORS[k]) for k in tw.CONTROL_KINDS} <= drawn
    hues = sorted(c for c in drawn if len(set(to_rgb(c))) > 1)  # greys have r = g = b
    assert len(hues) == 2  # the two attention networks; the control and references are grey
    kinds = [tw.KIND_COLORS[k] for k in tw.CONTROL_KINDS]
    _assert_apart(hues + kinds, kinds)  # the control's grey too (KIND_COLORS's docstring)
