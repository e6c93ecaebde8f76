"""Plotting helpers shared by every chapter.

The book's figures follow one convention: theory as lines, simulation as markers with
error bars, one colour per teacher everywhere in the book. Chapters call these helpers
instead of repeating matplotlib boilerplate.

Used in: every chapter.
"""

from __future__ import annotations

from typing import Any

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np

__all__ = [
    "TEACHER_COLORS",
    "color_for",
    "use_book_style",
    "new_figure",
    "theory_line",
    "sim_points",
]

#: One colour per teacher, used in every chapter (colour-blind safe, Okabe-Ito).
TEACHER_COLORS: dict[str, str] = {
    "linear": "#000000",
    "relu": "#E69F00",
    "tanh": "#56B4E9",
    "sign": "#009E73",
    "cubic": "#CC79A7",
    "h2": "#D55E00",
    "abs": "#0072B2",
    "erf": "#999999",
    "sin": "#F0E442",
    "offset": "#7F3C8D",
}

_CYCLE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#999999"]


def color_for(name: str, index: int = 0) -> str:
    """Colour of the teacher called ``name``; unknown names get a colour from the cycle.

    Parameters
    ----------
    name : str
        Teacher name as in :data:`TEACHER_COLORS` (``"relu"``, ``"h2"``, ...).
    index : int
        Position in the cycle used for names that have no fixed colour.
    """
    return TEACHER_COLORS.get(str(name).lower(), _CYCLE[index % len(_CYCLE)])


def use_book_style() -> None:
    """Set the matplotlib defaults used by every figure of the book."""
    mpl.rcParams.update(
        {
            "figure.figsize": (6.0, 3.8),
            "figure.dpi": 110,
            "savefig.dpi": 150,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "grid.alpha": 0.25,
            "axes.prop_cycle": mpl.cycler(color=_CYCLE),
            "legend.frameon": False,
            "font.size": 10,
            "lines.linewidth": 1.8,
            "errorbar.capsize": 2.5,
        }
    )


def new_figure(ncols: int = 1, nrows: int = 1, width: float | None = None, height: float | None = None, **kwargs: Any):
    """Create a figure with the book's style and return ``(fig, axes)``.

    Parameters
    ----------
    ncols, nrows : int
        Grid of panels.
    width, height : float, optional
        Size in inches; defaults scale with the number of panels.
    """
    use_book_style()
    width = 4.2 * ncols + 0.6 if width is None else width
    height = 3.4 * nrows if height is None else height
    kwargs.setdefault("constrained_layout", True)
    return plt.subplots(nrows, ncols, figsize=(width, height), **kwargs)


def theory_line(ax, x, y, *, label: str | None = None, color: str | None = None, **kwargs: Any):
    """Draw a theory curve as a line.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    x, y : array_like, shape (m,)
        Non-finite values of ``y`` (for instance the ridgeless peak at tau = 1) leave a gap.
    """
    y = np.asarray(y, dtype=float)
    y = np.where(np.isfinite(y), y, np.nan)
    kwargs.setdefault("lw", 1.8)
    return ax.plot(x, y, "-", label=label, color=color, **kwargs)


def sim_points(ax, x, mean, err=None, *, label: str | None = None, color: str | None = None, marker: str = "o", **kwargs: Any):
    """Draw simulation results as markers with error bars (no connecting line).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    x, mean : array_like, shape (m,)
    err : array_like, shape (m,), optional
        Half-width of the error bar (the book uses the standard error over draws).
    """
    kwargs.setdefault("ms", 5)
    kwargs.setdefault("mfc", "white")
    kwargs.setdefault("mew", 1.3)
    return ax.errorbar(x, mean, yerr=err, fmt=marker, label=label, color=color, **kwargs)
