"""The figure and explorer of the stored training sweeps (chapter 7).

:func:`sweep_figure` draws the ICL error of the stored transformer runs
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

import lib
import lib.teaching.plotting
import lib.theory
import lib.training  # noqa: F401 (kept: chapter 7's explorer belongs to the training extra; without JAX its import names the extra)
import lib.training_runs

__all__ = ["KIND_COLORS", "KIND_LABELS", "sweep_explorer", "sweep_figure"]

#: Legend labels of the architectures in the sweep.
KIND_LABELS = {"softmax": "softmax attention + MLPs", "linear": "linear attention + MLPs"}
_MARKERS = {"softmax": "o", "linear": "s"}
#: Colours of the models and of the spectral learner: none is a teacher's colour
#: (:data:`lib.teaching.plotting.TEACHER_COLORS`), each at a CIEDE2000 difference of at
#: least 20 from every teacher's, the palette's own least difference (tests/test_plotting.py).
KIND_COLORS = {"softmax": "#9944FF", "linear": "#006666", "spectral": "#88AA00"}

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
    ax.legend(fontsize=8)
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
