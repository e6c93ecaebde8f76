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
from matplotlib.axes import Axes
from matplotlib.path import Path
from matplotlib.transforms import Bbox

from lib import hermite, teachers, theory
from lib._checks import check_choice, check_int, check_param, check_range, check_scalar

__all__ = [
    "TEACHER_COLORS",
    "COLUMN_WIDTH",
    "MIN_FONT_PT",
    "MAX_COLUMNS",
    "PHONE_VISIBLE",
    "SWEEP_COLORS",
    "color_for",
    "sweep_styles",
    "use_book_style",
    "figure_size",
    "new_figure",
    "theory_line",
    "sim_points",
    "plain_log_ticks",
    "coefficient_stems",
    "hermite_expansion_figure",
    "task_diversity_figure",
    "finite_data_figure",
    "extrapolation_panel",
    "equivalence_figure",
]

#: One colour per teacher, in every chapter: Okabe-Ito and Paul Tol hues, colour-blind
#: safe; teachers drawn in one figure stay far apart (distances: the API page's intro).
TEACHER_COLORS: dict[str, str] = {
    "linear": "#000000",
    "relu": "#E69F00",
    "tanh": "#66CCEE",
    "sign": "#009E73",
    "cubic": "#CC79A7",
    "h2": "#882255",
    "abs": "#0072B2",
    "erf": "#332288",
    "sin": "#666633",
    "offset": "#CC3311",
}

_CYCLE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#999999"]

#: Width of the text column of the HTML book in inches (at 96 CSS px per inch): the
#: article of sphinx-book-theme 1.3 is 660 px wide in a 1280 px window (measured with
#: headless chromium; the output area of a code cell is the same). A figure this wide is
#: shown at its natural size, so that its fonts have their nominal size on screen.
COLUMN_WIDTH: float = 6.8

#: Smallest font size (pt) of any text in a book figure, at the displayed size.
MIN_FONT_PT: float = 9.0

#: At most this many panels side by side (narrower panels would need smaller fonts).
MAX_COLUMNS: int = 3

#: Fraction of a figure's width, from its left edge, that a phone shows before the
#: reader scrolls: at 390 px, book/_static/book.js shows a figure at 80 % of its natural
#: size (0.8 x 6.8 in x 96 px = 522 px) in a box 358 px wide, 0.69 of it; less a margin.
#: An automatic legend of ``_BookAxes`` stays in that part when it fits there.
PHONE_VISIBLE: float = 0.66

#: Height (inches) of one row of panels, by number of panels in the row.
_ROW_HEIGHT = {1: 3.7, 2: 3.0, 3: 2.5}

#: Line styles paired with :data:`SWEEP_COLORS`, so that neighbours differ twice.
_SWEEP_DASHES = ["-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 1))]

#: Colours for the curves of a parameter sweep (kappa = 0.25, 0.5, 1, ...), in order:
#: Okabe-Ito hues, neighbours far apart in hue and in lightness.
SWEEP_COLORS: list[str] = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7"]


def color_for(name: str, index: int = 0) -> str:
    """Colour of the teacher called ``name``; unknown names get a colour from the cycle.

    Parameters
    ----------
    name : str
        Teacher name as in :data:`TEACHER_COLORS` (``"relu"``, ``"h2"``, ...).
    index : int
        Position in the cycle used for names that have no fixed colour.

    Returns
    -------
    str
        A matplotlib colour.
    """
    index = check_int("index", index)
    return TEACHER_COLORS.get(str(name).lower(), _CYCLE[index % len(_CYCLE)])


def sweep_styles(n: int) -> list[dict[str, Any]]:
    """Colour and line style of ``n`` curves of one parameter sweep, in sweep order.

    Neighbouring curves (for instance ``kappa = 0.25`` and ``kappa = 0.5``) differ both
    in hue (the colour-blind-safe :data:`SWEEP_COLORS`) and in dash pattern, so they stay
    distinguishable in grey scale and for colour-blind readers.

    Parameters
    ----------
    n : int
        Number of curves, ``1 <= n <= 6``.

    Returns
    -------
    list of dict
        ``n`` dicts with keys ``color`` and ``ls``, to be passed as ``**style`` to
        :func:`theory_line` or ``ax.plot``.

    Notes
    -----
    Used in: chapters that draw a family of curves (chapter 5, task diversity).
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"n must be an int; got {n!r}")
    if not 1 <= n <= len(SWEEP_COLORS):
        raise ValueError(f"n must be between 1 and {len(SWEEP_COLORS)}; got {n}")
    return [{"color": SWEEP_COLORS[i], "ls": _SWEEP_DASHES[i]} for i in range(int(n))]


def _use_vector_output() -> None:
    """In an IPython kernel, show figures as SVG at their natural size (no cropping)."""
    try:
        from IPython import get_ipython
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:  # plain python: nothing to configure
        return
    if get_ipython() is None:
        return
    # bbox_inches=None: the image is exactly figsize (the column width); constrained
    # layout already keeps labels and legends inside the figure.
    set_matplotlib_formats("svg", bbox_inches=None)


def use_book_style() -> None:
    """Set the matplotlib defaults used by every figure of the book.

    One style for every figure: :data:`COLUMN_WIDTH` wide, fonts of at least
    :data:`MIN_FONT_PT` pt (shown at that size in the HTML, where the figure is displayed
    at its natural width), the colour-blind-safe Okabe-Ito cycle, and, in a Jupyter
    kernel, SVG output (sharp at any zoom; PNG, when saved, at 200 dpi).
    """
    mpl.rcParams.update(
        {
            "figure.figsize": (COLUMN_WIDTH, _ROW_HEIGHT[1]),
            "figure.dpi": 100,
            "savefig.dpi": 200,
            "svg.fonttype": "path",
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "grid.alpha": 0.25,
            "axes.prop_cycle": mpl.cycler(color=_CYCLE),
            "font.size": 10.0,
            "axes.titlesize": 10.0,
            "axes.labelsize": 10.0,
            "xtick.labelsize": MIN_FONT_PT,
            "ytick.labelsize": MIN_FONT_PT,
            "legend.fontsize": MIN_FONT_PT,
            "legend.title_fontsize": MIN_FONT_PT,
            "figure.titlesize": 10.5,
            # a legend that overlaps a curve stays readable; "best" avoids the data
            "legend.frameon": True,
            "legend.framealpha": 0.85,
            "legend.edgecolor": "none",
            "legend.loc": "best",
            "lines.linewidth": 1.8,
            "errorbar.capsize": 2.5,
        }
    )
    _use_vector_output()


def figure_size(
    ncols: int = 1, nrows: int = 1, width: float | None = None, height: float | None = None
) -> tuple[float, float]:
    """Size ``(width, height)`` in inches of a book figure with ``nrows x ncols`` panels.

    The width is :data:`COLUMN_WIDTH` unless a narrower ``width`` is asked for. A request
    wider than the column (figures designed for a wide canvas) is replaced by the
    column-wide default, height included, so that panels keep a legible aspect ratio;
    a ``height`` given with a width that fits is kept.

    Parameters
    ----------
    ncols, nrows : int
        Panels per row (``1 <= ncols <= MAX_COLUMNS``) and rows (``>= 1``).
    width, height : float, optional
        Requested size in inches (positive).

    Returns
    -------
    (float, float)
        Width and height in inches.

    Notes
    -----
    Used in: :func:`new_figure` (every chapter).
    """
    for name, value in (("ncols", ncols), ("nrows", nrows)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an int; got {value!r}")
    if not 1 <= ncols <= MAX_COLUMNS:
        raise ValueError(
            f"ncols must be between 1 and {MAX_COLUMNS} (at most {MAX_COLUMNS} panels a "
            f"row, so that fonts stay >= {MIN_FONT_PT:g} pt); got {ncols}: use more rows"
        )
    if nrows < 1:
        raise ValueError(f"nrows must be >= 1; got {nrows}")
    width, height = (
        None if value is None else check_scalar(name, value, low=0.0, low_open=True)
        for name, value in (("width", width), ("height", height))
    )
    default_height = _ROW_HEIGHT[int(ncols)] * int(nrows)
    if width is None or width > COLUMN_WIDTH:
        return COLUMN_WIDTH, default_height if width is not None or height is None else height
    return float(width), default_height if height is None else float(height)


def _data_hits(ax: Axes, box: Bbox) -> int:
    """How many of the axes' lines, markers and error bars ``box`` (display
    coordinates) touches: each line or segment crossing it counts one, each marker one."""
    hits = 0
    for line in ax.get_lines():
        xy = line.get_transform().transform(np.asarray(line.get_xydata(), dtype=float))
        xy = xy[np.isfinite(xy).all(axis=1)]
        if len(xy) == 0:
            continue
        inside = (box.x0 <= xy[:, 0]) & (xy[:, 0] <= box.x1) & (box.y0 <= xy[:, 1]) & (xy[:, 1] <= box.y1)
        if line.get_marker() not in (None, "None", "", " "):
            hits += int(inside.sum())
        if line.get_linestyle() not in ("None", "", " ") and len(xy) > 1:
            hits += int(Path(xy).intersects_bbox(box, filled=False))
    for coll in ax.collections:
        offsets = np.asarray(coll.get_offsets(), dtype=float)
        if offsets.size and len(coll.get_paths()) <= 1:  # markers (scatter)
            xy = coll.get_offset_transform().transform(offsets)
            hits += int(
                ((box.x0 <= xy[:, 0]) & (xy[:, 0] <= box.x1) & (box.y0 <= xy[:, 1]) & (xy[:, 1] <= box.y1)).sum()
            )
        else:  # error bars, fills: their paths
            trans = coll.get_transform()
            hits += sum(int(path.transformed(trans).intersects_bbox(box)) for path in coll.get_paths())
    return hits


class _BookAxes(Axes):
    """The axes of :func:`new_figure`: an automatic legend that a phone shows.

    On a phone a figure is shown larger than the column and scrolls sideways
    (book/_static/book.js), so only its left :data:`PHONE_VISIBLE` is in view at first:
    a legend placed "best" at the upper right was out of view. Here a legend created
    without ``loc`` or ``bbox_to_anchor`` (``legend.loc`` "best") is placed at draw
    time, when all the data are there: "best" within the part of the axes in that view,
    unless a legend there would cover data that the unrestricted "best" place leaves
    free. An explicit ``loc`` is kept as given. Panels that are mostly out of view are
    left alone.

    Parameters
    ----------
    *args, **kwargs
        Those of :class:`matplotlib.axes.Axes` (``new_figure`` passes it as
        ``axes_class``).
    """

    _book_auto_legend = False

    def legend(self, *args: Any, **kwargs: Any):
        """:meth:`matplotlib.axes.Axes.legend`; see the class for ``loc``."""
        auto = (
            "loc" not in kwargs
            and "bbox_to_anchor" not in kwargs
            and len(args) < 3
            and mpl.rcParams["legend.loc"] == "best"
        )
        leg = super().legend(*args, **kwargs)
        self._book_auto_legend = auto
        return leg

    def draw(self, renderer):  # noqa: D102 (matplotlib's)
        leg = self.get_legend()
        if leg is not None and self._book_auto_legend and self.get_visible():
            self._place_legend(leg, renderer)
        super().draw(renderer)

    def _place_legend(self, leg, renderer) -> None:
        root = getattr(self.figure, "figure", None) or self.figure  # a subfigure's root
        fig_box, ax_box = root.bbox, self.bbox
        seen = (fig_box.x0 + PHONE_VISIBLE * fig_box.width - ax_box.x0) / ax_box.width
        leg.set_bbox_to_anchor(None)
        if seen >= 1.0 or seen < 0.5:  # the axes are (mostly) in view, or mostly out
            return
        free = _data_hits(self, leg.get_window_extent(renderer))
        leg.set_bbox_to_anchor((0.0, 0.0, seen, 1.0), transform=self.transAxes)
        if _data_hits(self, leg.get_window_extent(renderer)) > free:
            leg.set_bbox_to_anchor(None)


def new_figure(ncols: int = 1, nrows: int = 1, width: float | None = None, height: float | None = None, **kwargs: Any):
    """Create a figure with the book's style and return ``(fig, axes)``.

    Parameters
    ----------
    ncols, nrows : int
        Grid of panels; at most :data:`MAX_COLUMNS` panels a row.
    width, height : float, optional
        Size in inches, see :func:`figure_size`: the width is capped at the text column
        (:data:`COLUMN_WIDTH`); by default it is the column and the height grows with
        the number of rows.
    **kwargs
        Passed to :func:`matplotlib.pyplot.subplots` (``sharey=True``, ...). The axes
        are ``_BookAxes`` (a legend without ``loc`` stays in a phone's view).

    Returns
    -------
    (matplotlib.figure.Figure, Axes or ndarray of Axes)
        The figure and its axes (an array of axes for several panels).
    """
    use_book_style()
    size = figure_size(ncols, nrows, width, height)
    kwargs.setdefault("layout", "constrained")
    if "constrained_layout" in kwargs:
        kwargs.pop("layout")
    kwargs["subplot_kw"] = {"axes_class": _BookAxes, **(kwargs.get("subplot_kw") or {})}
    return plt.subplots(nrows, ncols, figsize=size, **kwargs)


def theory_line(ax, x, y, *, label: str | None = None, color: str | None = None, **kwargs: Any):
    """Draw a theory curve as a line.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    x, y : array_like, shape (m,)
        Non-finite values of ``y`` (for instance the ridgeless peak at tau = 1) leave a gap.
    label, color : str, optional
        Legend label and colour.
    **kwargs
        Passed to :meth:`matplotlib.axes.Axes.plot`.

    Returns
    -------
    list of matplotlib.lines.Line2D
        What ``ax.plot`` returns.
    """
    y = np.asarray(y, dtype=float)
    y = np.where(np.isfinite(y), y, np.nan)
    kwargs.setdefault("lw", 1.8)
    if "ls" not in kwargs and "linestyle" not in kwargs:
        kwargs["ls"] = "-"  # solid by default; a caller's ls="--" wins without a warning
    return ax.plot(x, y, label=label, color=color, **kwargs)


def sim_points(
    ax, x, mean, err=None, *, label: str | None = None, color: str | None = None, marker: str = "o", **kwargs: Any
):
    """Draw simulation results as markers with error bars (no connecting line).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    x, mean : array_like, shape (m,)
    err : array_like, shape (m,), optional
        Half-width of the error bar (the book uses the standard error over draws).
    label, color, marker : str, optional
        Legend label, colour and marker.
    **kwargs
        Passed to :meth:`matplotlib.axes.Axes.errorbar`.

    Returns
    -------
    matplotlib.container.ErrorbarContainer
        What ``ax.errorbar`` returns.
    """
    kwargs.setdefault("ms", 5)
    kwargs.setdefault("mfc", "white")
    kwargs.setdefault("mew", 1.3)
    return ax.errorbar(x, mean, yerr=err, fmt=marker, label=label, color=color, **kwargs)


def plain_log_ticks(ax, axis: str = "y") -> None:
    """Tick a logarithmic axis at 1, 2, 5 x 10^k and label it with plain numbers (``0.5, 1, 2``).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    axis : {"x", "y", "both"}
        Which axis to relabel; it should already be on a log scale.

    Notes
    -----
    Used in: :doc:`learning curves </book/linear/learning_curves>`,
    :doc:`the equivalence theorem </book/equivalence/theorem>`.
    """
    check_choice("axis", axis, ("x", "y", "both"))
    for name in ("x", "y") if axis == "both" else (axis,):
        target = ax.xaxis if name == "x" else ax.yaxis
        target.set_major_locator(mpl.ticker.LogLocator(base=10.0, subs=(1.0, 2.0, 5.0)))
        target.set_major_formatter(mpl.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        target.set_minor_formatter(mpl.ticker.NullFormatter())


def coefficient_stems(ax, coeffs, *, color: str | None = None, label: str | None = None, offset: float = 0.0):
    """Draw Hermite coefficients ``a_0..a_M`` as a stem plot against ``m``.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    coeffs : array_like, shape (M + 1,)
    color, label : str, optional
        Colour and legend label.
    offset : float
        Horizontal shift of the stems (to show several links side by side).

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``.

    Notes
    -----
    Used in: :doc:`Hermite basics </book/hermite/basics>`.
    """
    a = np.asarray(coeffs, dtype=float)
    m = np.arange(a.size) + offset
    color = color or _CYCLE[0]
    ax.vlines(m, 0.0, a, color=color, lw=1.6)
    ax.plot(m, a, "o", color=color, ms=4, label=label)
    ax.axhline(0.0, color="0.4", lw=0.8)
    ax.xaxis.set_major_locator(mpl.ticker.MaxNLocator(integer=True))
    ax.set_xlabel(r"$m$")
    ax.set_ylabel(r"$a_m$")
    return ax


#: Largest grid a figure function accepts for ``n_points`` (a few thousand points already
#: draw a smooth curve; more only costs time and memory).
MAX_FIGURE_POINTS = 10_000


def _check_points(n_points: Any) -> int:
    """``n_points``: an integer in [2, MAX_FIGURE_POINTS]."""
    return check_int("n_points", n_points, low=2, high=MAX_FIGURE_POINTS)


#: Largest half-width ``z_max`` of :func:`hermite_expansion_figure` (the Hermite functions
#: of the catalogue's degrees stay far from overflow there).
Z_MAX_FIGURE = 100.0


def hermite_expansion_figure(name: str = "relu", degree: int = 6, z_max: float = 3.5):
    """Two panels: the coefficients ``a_0..a_D`` of a catalogue link and its partial sum.

    Left: stems of ``a_m`` for ``m <= D``. Right: ``f(z)`` and the partial sum
    ``S_D f(z) = sum_{m <= D} a_m h_m(z)`` on ``[-z_max, z_max]``, with the ``L^2``
    error ``E[(f - S_D f)^2]^{1/2}`` (computed by :func:`lib.hermite.partial_sum_errors`)
    in the legend.

    Parameters
    ----------
    name : str
        Key of :data:`lib.hermite.LINKS`.
    degree : int
        Truncation degree ``D >= 0``.
    z_max : float
        Half-width of the plotted range, in (0, 100].

    Returns
    -------
    matplotlib.figure.Figure
        The figure (also shown inline in a notebook).

    Notes
    -----
    Used in: :doc:`Hermite basics </book/hermite/basics>`.
    """

    link = hermite.get_link(name)
    degree = check_int("degree", degree, low=0, high=hermite.MAX_DEGREE)
    z_max = check_scalar("z_max", z_max, low=0.0, low_open=True, high=Z_MAX_FIGURE)
    a = link.coefficients(degree)
    error = hermite.partial_sum_errors(link, degree)[-1]
    color = color_for(link.name)
    fig, (left, right) = new_figure(ncols=2)
    coefficient_stems(left, a, color=color)
    z = np.linspace(-z_max, z_max, 701)
    right.plot(z, link(z), color="0.2", lw=2.2, label=link.label)
    right.plot(
        z, hermite.partial_sum(a, z), "--", color=color, lw=1.8, label=rf"$S_{{{degree}}}f$, $L^2$ error {error:.3g}"
    )
    right.set_xlabel(r"$z$")
    right.set_ylabel(r"$f(z)$,  $S_D f(z)$")
    right.legend(loc="best")
    return fig


def task_diversity_figure(
    teacher: str = "relu",
    alpha: float = 5.0,
    tau: float = 5.0,
    rho: float = 0.1,
    lam: float = 0.0,
    kappa_range: tuple[float, float] = (1e-2, 1e2),
    n_points: int = 241,
):
    """The asymptotic ICL and IDG errors of one teacher against the task diversity kappa.

    Draws ``e_ICL(kappa)`` (solid, at ridge strength ``lam``) and the ridgeless
    ``e_IDG(kappa)`` (dashed) from :func:`lib.theory.nonlinear_icl_error` and
    :func:`lib.theory.nonlinear_idg_error` on a log grid of ``kappa``, with two reference
    levels: the ``kappa = inf`` ICL error (grey, dotted) and the effective noise
    ``rho_nl = rho + E[f^2] - a_1^2`` (:func:`lib.teachers.effective_noise`), the effective-noise floor
    no amount of data or diversity removes (black, dotted).

    Parameters
    ----------
    teacher : str
        Key of :data:`lib.hermite.LINKS` (sets the colour, :func:`color_for`).
    alpha, tau, rho, lam : float
        Context length ``ell/d``, pretraining contexts ``n/d^2``, label noise, ridge.
    kappa_range : (float, float)
        Plotted range ``0 < kappa_min < kappa_max < inf`` (log scale).
    n_points : int
        Grid size, in [2, MAX_FIGURE_POINTS] (10,000).

    Returns
    -------
    matplotlib.figure.Figure
        The figure (also shown inline in a notebook).

    Notes
    -----
    Used in: :doc:`task diversity </book/regimes/task_diversity>`.
    """

    link = hermite.get_link(teacher, argument="teacher")
    lo, hi = check_range("kappa_range", kappa_range, low=0.0, low_open=True)
    kappa = np.logspace(np.log10(lo), np.log10(hi), _check_points(n_points))
    color = color_for(link.name)
    fig, ax = new_figure()
    theory_line(
        ax,
        kappa,
        theory.nonlinear_icl_error(link, alpha, kappa, tau, rho, lam),
        color=color,
        label=r"$e_{\mathrm{ICL}}$" + (rf" ($\lambda = {lam:g}$)" if lam > 0 else ""),
    )
    (idg,) = theory_line(
        ax,
        kappa,
        theory.nonlinear_idg_error(link, alpha, kappa, tau, rho),
        color=color,
        label=r"$e_{\mathrm{IDG}}$ (ridgeless)",
    )
    idg.set_linestyle("--")
    e_inf = theory.nonlinear_icl_error(link, alpha, np.inf, tau, rho, lam)
    if np.isfinite(e_inf):
        ax.axhline(e_inf, color="0.55", ls=":", lw=1.4, label=r"$e_{\mathrm{ICL}}$ at $\kappa = \infty$")
    ax.axhline(teachers.effective_noise(link, rho), color="0.1", ls=":", lw=1.2, label=r"$\rho_{\mathrm{nl}}$")
    ax.set_xscale("log")
    ax.set_xlabel(r"task diversity $\kappa = k/d$")
    ax.set_ylabel(r"test error")
    ax.legend(loc="best", title=link.label)
    return fig


def finite_data_figure(
    teacher: str = "relu",
    alpha: float = 2.0,
    kappa: float = np.inf,
    rho: float = 0.1,
    lam: float = 0.0,
    tau_max: float = 6.0,
    n_points: int = 400,
):
    """The asymptotic ICL error of one teacher against the pretraining data tau.

    Draws ``e_ICL(tau)`` for ``teacher`` and, thinner, for the linear teacher
    (:func:`lib.theory.nonlinear_icl_error`, ridge ``lam``), on a log error axis with
    two reference levels per teacher: the ridgeless ``tau -> inf`` limit (dashed;
    evaluated at ``tau = 1e12``, where the ridgeless formula, affine in ``1/(tau - 1)``,
    is within 1e-11 of its limit) and the effective noise ``rho_nl``
    (:func:`lib.teachers.effective_noise`, dotted). With ``lam = 0`` the curves have the
    interpolation peak at ``tau = 1`` (a gap in the line).

    Parameters
    ----------
    teacher : str
        Key of :data:`lib.hermite.LINKS` (sets the colour, :func:`color_for`).
    alpha, kappa, rho, lam : float
        Context length ``ell/d``, task diversity ``k/d`` (``inf`` allowed), label noise,
        ridge strength.
    tau_max : float
        Largest ``tau = n/d^2`` shown (> 1).
    n_points : int
        Grid size, in [2, MAX_FIGURE_POINTS] (10,000).

    Returns
    -------
    matplotlib.figure.Figure
        The figure (also shown inline in a notebook).

    Notes
    -----
    Used in: :doc:`finite pretraining data </book/regimes/finite_data>`.
    """

    link = hermite.get_link(teacher, argument="teacher")
    tau_max = check_scalar("tau_max", tau_max, low=1.0, low_open=True)
    n_points = _check_points(n_points)
    tau = np.union1d(np.linspace(tau_max / n_points, tau_max, n_points), [1.0])
    names = [link.name] if link.name == "linear" else [link.name, "linear"]
    fig, ax = new_figure()
    levels = []
    for name in names:
        color, main = color_for(name), name == link.name
        label = hermite.get_link(name).label
        theory_line(
            ax,
            tau,
            theory.nonlinear_icl_error(name, alpha, kappa, tau, rho, lam),
            color=color,
            lw=1.8 if main else 1.0,
            label=label,
        )
        floor = theory.nonlinear_icl_error(name, alpha, kappa, 1e12, rho)
        rho_nl = teachers.effective_noise(name, rho)
        ax.axhline(floor, color=color, ls="--", lw=1.0)
        if rho_nl > 0:
            ax.axhline(rho_nl, color=color, ls=":", lw=1.0)
        levels += [floor, rho_nl]
    ax.axvline(1.0, color="0.6", lw=0.8, ls=":")
    positive = [v for v in levels if v > 0]
    ax.set_yscale("log")
    ax.set_ylim(0.7 * min(positive), 15.0 * max(positive))
    ax.set_xlim(0.0, tau_max)
    ax.plot([], [], "k--", lw=1.0, label=r"$\tau\to\infty$ limit ($\lambda \to 0$)")
    ax.plot([], [], "k:", lw=1.0, label=r"$\rho_{\mathrm{nl}}$")
    ax.set_xlabel(r"$\tau = n/d^2$")
    ax.set_ylabel(r"$e_{\mathrm{ICL}}$")
    ax.legend(loc="upper right")
    return fig


def extrapolation_panel(
    ax,
    d,
    mean,
    se=None,
    fit=None,
    *,
    color: str | None = None,
    marker: str = "o",
    label: str | None = None,
    **kwargs: Any,
):
    """Finite-size data against ``1/d`` with the fitted law drawn down to ``1/d = 0``.

    Draws the per-``d`` means as markers with error bars (:func:`sim_points`) at
    ``x = 1/d`` and, if ``fit`` is given, the fitted curve ``e_inf + c x^b`` (dashed) from
    ``x = 0`` to the largest ``x``, with the extrapolated value ``e_inf +- e_inf_se`` as
    a filled marker at ``x = 0``.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    d : array_like, shape (m,)
        Dimensions.
    mean, se : array_like, shape (m,)
        Errors and their standard errors (for instance from :func:`lib.finite_size.summarize`).
    fit : lib.finite_size.FiniteSizeFit, optional
        Output of :func:`lib.finite_size.extrapolate` (fields ``e_inf``, ``e_inf_se``,
        ``c``, ``b``).
    color, marker, label
        Passed to :func:`sim_points`.
    **kwargs
        Passed to :func:`sim_points`.

    Returns
    -------
    matplotlib.container.ErrorbarContainer
        The data's markers (for a legend).

    Notes
    -----
    Used in: :doc:`testing the equivalence </book/equivalence/verification>`.
    """
    x = 1.0 / np.asarray(d, dtype=float)
    handle = sim_points(ax, x, mean, se, color=color, marker=marker, label=label, **kwargs)
    if fit is not None:
        xs = np.linspace(0.0, 1.04 * x.max(), 200)
        ax.plot(xs, fit.e_inf + fit.c * xs**fit.b, "--", color=color, lw=1.1)
        ax.errorbar([0.0], [fit.e_inf], yerr=[fit.e_inf_se], fmt=marker, color=color, ms=4.5, mfc=color, mew=1.0)
    return handle


def equivalence_figure(
    teacher: Any = "relu",
    alpha: float = 2.0,
    kappa: float = 1.5,
    rho: float = 0.1,
    lam: float = 0.0,
    tau_range: tuple[float, float] = (0.05, 100.0),
    label: str | None = None,
    n_points: int = 400,
):
    """The predicted ICL error of one teacher against ``tau``, with its effective-noise floor.

    Draws, from the nonlinearity-noise equivalence (:func:`lib.theory.nonlinear_icl_error`),

    .. math::

        e_f(\\tau) = \\begin{cases}
        a_1^2\\, e_{\\mathrm{lin}}(\\alpha, \\kappa, \\tau, \\rho_{\\mathrm{nl}}/a_1^2, \\lambda/a_1^2),
        & a_1 \\ne 0, \\\\
        e_{\\mathrm{noise}}(\\rho_{\\mathrm{nl}}, \\alpha, \\tau, \\lambda), & a_1 = 0,
        \\end{cases}

    on a log grid of ``tau`` (solid, the teacher's colour), the error ``E[y^2] = E[f^2] + rho``
    of the zero predictor for reference (grey, dashed), the
    ``tau -> infinity`` limit of ``e_f`` at this ``alpha, kappa`` (grey, dotted) and the
    effective-noise floor ``rho_nl = rho + E[f^2] - a_1^2`` (black, dotted) that no amount of
    data removes.
    The legend title gives ``a_1`` and ``rho_nl``. At ``tau = 1`` with ``lam = 0`` the
    curves diverge (the interpolation peak) and are clipped by the axis limits.

    Parameters
    ----------
    teacher : str, Link or callable
        A key of :data:`lib.hermite.LINKS`, a :class:`lib.hermite.Link` or a vectorized
        callable ``f(z)`` (its moments are then computed by quadrature).
    alpha, kappa, rho, lam : float
        Context length ``ell/d``, task diversity ``k/d`` (``inf`` allowed), label noise,
        ridge strength.
    tau_range : (float, float)
        Plotted range ``0 < tau_min < tau_max < inf`` (log scale).
    label : str, optional
        Legend label of the teacher (default: the link's own label).
    n_points : int
        Grid size, in [2, MAX_FIGURE_POINTS] (10,000).

    Returns
    -------
    matplotlib.figure.Figure
        The figure (also shown inline in a notebook).

    Notes
    -----
    Used in: :doc:`the equivalence theorem </book/equivalence/theorem>`.
    """

    lo, hi = check_range("tau_range", tau_range, low=0.0, low_open=True)
    n_points = _check_points(n_points)
    if isinstance(teacher, str):
        teacher = hermite.get_link(teacher, argument="teacher")
    name = getattr(teacher, "name", "")
    if label is None:
        label = getattr(teacher, "label", None) or r"$f(z)$"
    alpha, kappa, rho, lam = (
        check_param(k, v, scalar=True) for k, v in zip(("alpha", "kappa", "rho", "lam"), (alpha, kappa, rho, lam))
    )
    a0, a1, ef2 = teachers.teacher_moments(teacher)
    rho_nl = teachers.effective_noise(teacher, rho)
    tau = np.geomspace(lo, hi, n_points)
    e_f = np.asarray(theory.nonlinear_icl_error(teacher, alpha, kappa, tau, rho, lam), dtype=float)
    e_lim = float(theory.nonlinear_icl_error(teacher, alpha, kappa, 1e12, rho, lam))

    fig, ax = new_figure()
    theory_line(ax, tau, e_f, color=color_for(name), label=label)
    ax.axhline(ef2 + rho, color="0.55", ls="--", lw=1.3, label=r"predicting $0$: $\mathbb{E}[y^2]$")
    ax.axhline(e_lim, color="0.55", ls=":", lw=1.3, label=r"$\tau \to \infty$ at this $\alpha, \kappa$")
    ax.axhline(rho_nl, color="0.1", ls=":", lw=1.3, label=r"effective-noise floor $\rho_{\mathrm{nl}}$")
    finite = e_f[np.isfinite(e_f)]
    bottom = 0.8 * min(rho_nl if rho_nl > 0 else np.inf, finite.min() if finite.size else np.inf, 1.0)
    ax.set(xscale="log", yscale="log", ylim=(max(bottom, 1e-3), 4.0 * max(ef2 + rho, 0.1)))
    plain_log_ticks(ax, "y")
    ax.set_xlabel(r"$\tau = n/d^2$")
    ax.set_ylabel(r"$e_{\mathrm{ICL}}$")
    ax.legend(loc="upper right", title=rf"$a_1 = {a1:.4g}$,  $\rho_{{\mathrm{{nl}}}} = {rho_nl:.4g}$")
    return fig
