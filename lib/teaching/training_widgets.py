"""The figures and explorer of the stored training sweeps (chapter 7).

:func:`control_figure` draws the control sweep (``lib/data/training_controls.csv``):
each seed's test error minus the context-free error, for the attention networks and
the control without attention, beside the Bayes error; :func:`control_seeds` gives
the numbers it draws. :func:`sweep_figure` draws the ICL error of the stored transformer runs
(``lib/data/training_transformers.csv``) against the context length ``alpha`` for one
teacher and dimension, beside the effective-noise floor ``rho_nl`` of the reduced linear attention and
the asymptotic error of the spectral learner of chapter 6; :func:`sweep_explorer` redraws
it as a drop-down changes the teacher or the dimension. Imported on demand (it needs
ipywidgets and matplotlib).

Used in: :doc:`chapter 7 </book/trained/networks>`.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

import lib
import lib.bayes
import lib.teaching.plotting
import lib.theory
import lib.training  # noqa: F401 (kept: chapter 7's explorer belongs to the training extra; without JAX its import names the extra)
import lib.training_runs
from lib._checks import check_rho, check_scalar

__all__ = [
    "CONTROL_KINDS",
    "KIND_COLORS",
    "KIND_LABELS",
    "control_figure",
    "control_seeds",
    "sweep_explorer",
    "sweep_figure",
]

#: Legend labels of the architectures in the sweeps; ``"none"`` is the control, the
#: same network without attention.
KIND_LABELS = {
    "softmax": "softmax attention + MLPs",
    "linear": "linear attention + MLPs",
    "none": "no attention (control)",
}
_MARKERS = {"softmax": "o", "linear": "s", "none": "D"}
#: Colours of the models and of the spectral learner: none is a teacher's colour
#: (:data:`lib.teaching.plotting.TEACHER_COLORS`), each at a CIEDE2000 difference of at
#: least 20 from every teacher's, the palette's own least difference (tests/test_plotting.py).
#: The control without attention is grey, as the other no-context references are.
KIND_COLORS = {"softmax": "#9944FF", "linear": "#006666", "spectral": "#88AA00", "none": "#999999"}

#: The networks of the control sweep, in the order :func:`control_figure` draws them.
CONTROL_KINDS = ("none", "softmax", "linear")
_TEACHER_TICKS = {"h2": r"$h_2$", "relu": "ReLU"}

_NOTE = (
    "Interactive explorer: it needs a running Python kernel (run this notebook in "
    "Jupyter); the figure above shows the default values."
)


class _Explorer(widgets.interactive):
    """``ipywidgets.interactive`` with a text note for readers without a kernel."""

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        bundle["text/plain"] = _NOTE
        bundle["text/html"] = f'<p class="live-explorer-note">{_NOTE}</p>'
        return bundle


def sweep_figure(teacher: str = "h2", d: int = 8, rho: float = 0.1, rows: list | None = None, ax: Any = None):
    """ICL error of the stored transformer runs against ``alpha``, with its baselines.

    The baselines: ``rho_nl`` (every prediction linear in the query), the error of the best
    predictor that never reads the context at this ``d``
    (:func:`lib.theory.context_free_error`) and the spectral learner as ``d -> infinity``.

    Parameters
    ----------
    teacher : str
        A teacher of the sweep (``"h2"`` or ``"relu"``).
    d : int
        The dimension (the sweep's alpha grid is at ``d = 8``).
    rho : float
        Label noise of the sweep: the runs stored at this ``rho`` are drawn, with the
        theory at the same ``rho`` (another ``rho`` than the stored runs' is refused).
    rows : list of dict, optional
        :func:`lib.training_runs.load_runs` rows (default: the stored ``transformers`` sweep).
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    rows = lib.training_runs.load_runs("transformers") if rows is None else rows
    sel = [r for r in rows if r["teacher"] == teacher and r["d"] == d and r["width"] == 32]
    stored = sorted({r["rho"] for r in sel})
    sel = [r for r in sel if r["rho"] == rho]
    if stored and not sel:  # the theory would be drawn at a rho the points do not have
        raise ValueError(f"rho: the stored runs of {teacher!r} at d = {d} have rho in {stored}; got {rho!r}")
    if ax is None:
        fig, ax = lib.teaching.plotting.new_figure()
    else:
        fig = ax.figure
    alphas = np.logspace(np.log10(1.5), np.log10(20.0), 60)
    floor = float(lib.effective_noise(teacher, rho))
    ax.axhline(floor, color="0.3", ls=":", lw=1.3, label=r"$\rho_{\mathrm{nl}}$ (linear attention, $\tau \to \infty$)")
    e_cf = lib.theory.context_free_error(teacher, d, rho)
    ax.axhline(e_cf, color="0.1", ls="--", lw=1.3, label=rf"no context (query only), $d = {d}$")
    lib.teaching.plotting.theory_line(
        ax,
        alphas,
        lib.theory.spectral_limits.spectral_error(alphas, teacher, rho),
        color=KIND_COLORS["spectral"],
        label=r"spectral learner, $d \to \infty$",
    )
    for kind in ("softmax", "linear"):
        s = lib.training_runs.summarize_runs([r for r in sel if r["kind"] == kind], ("alpha",))
        if s:
            a = np.array([g["alpha"] for g in s])
            lib.teaching.plotting.sim_points(
                ax,
                a,
                [g["mean"] for g in s],
                [g["se"] for g in s],
                color=KIND_COLORS[kind],
                marker=_MARKERS[kind],
                label=KIND_LABELS[kind],
            )
    ax.set_xscale("log")
    lib.teaching.plotting.plain_log_ticks(ax, "x")  # 2, 5, 10: no 2 x 10^0 labels
    ax.set_xlabel(r"context length $\alpha = \ell/d$")
    ax.set_ylabel(r"$e_{\mathrm{ICL}}$")
    ax.legend()  # at the book's legend size, lib.teaching.plotting.MIN_FONT_PT
    return fig


def sweep_explorer(teacher: str = "h2", d: int = 8, rho: float = 0.1) -> widgets.Widget:
    """Redraw :func:`sweep_figure` for the teacher and dimension chosen in drop-downs."""
    rows = lib.training_runs.load_runs("transformers")
    teachers = sorted({r["teacher"] for r in rows}) or [teacher]
    dims = sorted({int(r["d"]) for r in rows if r["width"] == 32}) or [d]

    def draw(teacher: str, d: int) -> None:
        sweep_figure(teacher, d, rho, rows)
        plt.show()

    return _Explorer(
        draw,
        teacher=widgets.Dropdown(options=teachers, value=teacher, description="teacher"),
        d=widgets.Dropdown(options=dims, value=d, description="d"),
    )


def control_seeds(
    rows: list | None = None, level: float = 0.95, series: str = "alpha"
) -> dict[tuple[str, int, float, str], dict[str, np.ndarray]]:
    """Each seed's test error minus the context-free error, per point and network.

    In the control sweep every network of a (teacher, d, alpha) is scored on one common
    test set, with the context-free predictor ``E[y | x_q]`` (the best predictor that
    never reads the context). The stored paired difference ``diff_cf`` of a run is its
    test error minus that predictor's on the same test set; ``diff_cf_se`` is the test
    set's standard error of it.

    Parameters
    ----------
    rows : list of dict, optional
        :func:`lib.training_runs.load_control_runs` rows (default: the stored
        ``controls`` sweep).
    level : float
        Confidence level of each seed's test-set interval, in (0, 1).
    series : str
        The series of the sweep to read (``"alpha"``: the points at fixed ``alpha``).

    Returns
    -------
    dict
        Keyed by ``(teacher, d, alpha, kind)``: ``"draw"`` (the seeds, ascending),
        ``"diff"`` (their ``diff_cf``) and ``"half"`` (the half-width of each seed's
        normal interval at ``level``: the quantile times ``diff_cf_se``), arrays in the
        order of ``"draw"``. A negative ``diff``: the network's error is below the
        context-free error.

    Raises
    ------
    ValueError
        If ``level`` is not in (0, 1), no row is of ``series``, or two rows of one
        point and network share a seed.

    Notes
    -----
    Used in: :doc:`trained networks </book/trained/networks>` (and by
    :func:`control_figure`).
    """
    level = check_scalar("level", level, low=0.0, high=1.0, low_open=True, high_open=True)
    rows = lib.training_runs.load_control_runs("controls") if rows is None else rows
    chosen = [r for r in rows if r.get("series") == series]
    if not chosen:
        found = sorted({str(r.get("series")) for r in rows})
        raise ValueError(f"series: no row of series {series!r}; the rows have {found}")
    q = float(stats.norm.ppf(0.5 + level / 2))
    groups: dict[tuple[str, int, float, str], list[dict[str, Any]]] = {}
    for r in chosen:
        groups.setdefault((r["teacher"], int(r["d"]), float(r["alpha"]), r["kind"]), []).append(r)
    out = {}
    for key, rs in sorted(groups.items()):
        draws = [int(r["draw"]) for r in rs]
        if len(set(draws)) != len(draws):
            raise ValueError(f"rows: the point {key!r} has several rows per seed (draw) {sorted(draws)}")
        rs = sorted(rs, key=lambda r: int(r["draw"]))
        out[key] = {
            "draw": np.array(sorted(draws)),
            "diff": np.array([float(r["diff_cf"]) for r in rs]),
            "half": q * np.array([float(r["diff_cf_se"]) for r in rs]),
        }
    return out


def control_figure(
    rows: list | None = None,
    bayes_points: dict | None = None,
    rho: float = 0.1,
    level: float = 0.95,
    series: str = "alpha",
):
    """The control sweep at a glance: every seed against the context-free and Bayes errors.

    One panel per dimension ``d``; in each, one group per (teacher, ``alpha``). A group
    shows, for the control without attention and the two attention networks
    (:data:`CONTROL_KINDS`), each seed's test error minus the context-free error on the
    common test set (:func:`control_seeds`), with its test-set interval at ``level``.
    The dashed line at 0 is the context-free error ``e_cf(d)``; a black bar marks the
    Bayes error minus the exact ``e_cf(d)`` (:func:`lib.theory.context_free_error`),
    with its Monte Carlo standard error, where :func:`lib.bayes.load_bayes` has the point.

    Parameters
    ----------
    rows : list of dict, optional
        :func:`lib.training_runs.load_control_runs` rows (default: the stored
        ``controls`` sweep). Those at ``rho`` are drawn.
    bayes_points : dict, optional
        :func:`lib.bayes.load_bayes` (the default): ``(teacher, d, alpha)`` to a row with
        ``"error"``, ``"se"`` and ``"rho"``.
    rho : float
        Label noise of the runs to draw (another ``rho`` than the stored runs' is refused).
    level : float
        Confidence level of each seed's interval, in (0, 1).
    series : str
        The series of the sweep to draw (:func:`control_seeds`): ``"alpha"`` (the
        points at fixed ``alpha``, 4000 steps at every ``d``) or ``"tau"`` (a fixed
        number of training contexts per ``d^2``).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        If no run is stored at ``rho``, the runs span more than
        :data:`lib.teaching.plotting.MAX_COLUMNS` dimensions, or as :func:`control_seeds`.

    Notes
    -----
    Used in: :doc:`trained networks </book/trained/networks>`.
    """
    rho = check_rho(rho)
    rows = lib.training_runs.load_control_runs("controls") if rows is None else rows
    stored = sorted({float(r["rho"]) for r in rows})
    rows = [r for r in rows if float(r["rho"]) == rho]
    if not rows:
        raise ValueError(f"rho: the control runs have rho in {stored}; got {rho!r}")
    seeds = control_seeds(rows, level, series)
    bayes_points = lib.bayes.load_bayes() if bayes_points is None else bayes_points
    dims = sorted({d for _, d, _, _ in seeds})
    if len(dims) > lib.teaching.plotting.MAX_COLUMNS:
        raise ValueError(
            f"rows: the runs span the dimensions {dims}; at most {lib.teaching.plotting.MAX_COLUMNS} (one panel each)"
        )
    groups = sorted({(t, a) for t, _, a, _ in seeds})
    fig, axes = lib.teaching.plotting.new_figure(ncols=len(dims), sharey=True, height=3.6)
    axes = np.atleast_1d(axes)
    shift = dict(zip(CONTROL_KINDS, (-0.25, 0.0, 0.25)))
    labelled = set()
    for ax, d in zip(axes, dims):
        ax.axhline(0.0, color="0.1", ls="--", lw=1.3, label=r"context-free error $e_{\mathrm{cf}}(d)$")
        for j, (t, a) in enumerate(groups):
            for kind in CONTROL_KINDS:
                s = seeds.get((t, d, a, kind))
                if s is None:
                    continue
                n = s["diff"].size
                x = j + shift[kind] + (np.linspace(-0.08, 0.08, n) if n > 1 else np.zeros(1))
                lib.teaching.plotting.sim_points(
                    ax,
                    x,
                    s["diff"],
                    s["half"],
                    color=KIND_COLORS[kind],
                    marker=_MARKERS[kind],
                    ms=3.5,
                    mew=1.0,
                    elinewidth=0.8,
                    capsize=0,
                    label=None if kind in labelled else KIND_LABELS[kind],
                )
                labelled.add(kind)
            b = bayes_points.get((t, d, a))
            if b is not None and float(b["rho"]) == rho:
                e_cf = lib.theory.context_free_error(t, d, rho)
                lib.teaching.plotting.sim_points(
                    ax,
                    [j],
                    [float(b["error"]) - e_cf],
                    [float(b["se"])],
                    color="0.1",
                    marker="_",
                    ms=26,
                    mew=1.8,
                    label=None if "bayes" in labelled else "Bayes error (Monte Carlo)",
                )
                labelled.add("bayes")
        ax.set_xticks(range(len(groups)), [f"{_TEACHER_TICKS.get(t, t)}\n$\\alpha = {a:g}$" for t, a in groups])
        ax.set_xlim(-0.6, len(groups) - 0.4)
        ax.grid(False, axis="x")
        ax.set_title(rf"$d = {d}$")
    axes[0].set_ylabel(r"test error $-\ e_{\mathrm{cf}}(d)$")
    handles, labels = axes[0].get_legend_handles_labels()
    for ax in axes[1:]:  # a point drawn in one panel only still gets its entry
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="outside lower center", ncols=3)
    return fig
