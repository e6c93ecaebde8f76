r"""The analysis helpers of chapter 3: fits per variant, paired gaps, fits through the origin.

Used in :doc:`testing the equivalence </book/equivalence/verification>`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np
from scipy import stats

from lib._checks import check_choice, check_int, check_real, check_scalar
from lib.finite_size.data import gap, summarize, table
from lib.finite_size.fits import FiniteSizeFit, check_dims, extrapolate, t_quantile, weighted_least_squares

__all__ = [
    "OriginFit",
    "VariantFits",
    "GapFits",
    "floored_se",
    "slope_through_origin",
    "extrapolate_summary",
    "fits_for",
    "gap_for",
    "PairedLimits",
    "paired_limits",
]

# ----------------------------------------------------------------------------------------
# analysis helpers of chapter 3: fits per variant, paired gaps, fits through the origin
# ----------------------------------------------------------------------------------------


class OriginFit(NamedTuple):
    """Result of :func:`slope_through_origin`: the fit ``g(d) = c / d``.

    Attributes
    ----------
    c, c_se : float
        The slope and its standard error.
    chi2 : float
        Weighted residual sum of squares.
    dof : int
        Number of points minus 1.
    p_value : float
        ``P(chi2_dof >= chi2)``; small values reject a gap that vanishes like ``c/d``.
    """

    c: float
    c_se: float
    chi2: float
    dof: int
    p_value: float


class VariantFits(NamedTuple):
    """Result of :func:`fits_for` for one variant.

    Attributes
    ----------
    summary : dict of str to numpy.ndarray
        Per-d means and standard errors (:func:`summarize`), only the d with enough draws.
    fit : FiniteSizeFit
        The ``e_inf + c/d`` fit.
    free_fit : FiniteSizeFit or None
        The ``e_inf + c/d**b`` fit, or None when there are too few d or it did not converge.
    """

    summary: dict
    fit: FiniteSizeFit
    free_fit: FiniteSizeFit | None


class GapFits(NamedTuple):
    """Result of :func:`gap_for`.

    Attributes
    ----------
    gap : dict of str to numpy.ndarray
        ``d``, ``gap``, ``gap_se`` (floored, see :func:`gap_for`), ``draws``.
    fit : FiniteSizeFit
        The fit ``gap_inf + c/d`` (does the gap vanish?).
    origin : OriginFit
        The fit ``c_Delta/d`` through the origin.
    """

    gap: dict
    fit: FiniteSizeFit
    origin: OriginFit


def floored_se(se: Any, draws: Any, floor: Any) -> np.ndarray:
    """Standard errors of a mean over draws, never below the Monte Carlo error.

    .. math::

        \\mathrm{se}' = \\sqrt{\\max(m\\,\\mathrm{se}^2,\\ v_{\\mathrm{MC}}) / m}

    for ``m`` draws, where ``m se^2`` is the draw-to-draw variance and ``v_MC`` the
    Monte Carlo variance of one draw (the ``floor``). With two or three draws the
    sample variance can come out small by accident; the floor stops a point from
    getting an absurd weight in a fit.

    Parameters
    ----------
    se : array_like, shape (m_d,)
        Standard errors of the per-d means (``>= 0``).
    draws : array_like, shape (m_d,)
        Number of draws behind each mean (``>= 1``).
    floor : float or array_like, shape (m_d,)
        Monte Carlo variance of a single draw at each d (``>= 0``).

    Returns
    -------
    numpy.ndarray, shape (m_d,)
        The standard errors, never below the Monte Carlo error of the mean.

    Raises
    ------
    ValueError
        If an argument is negative, not finite, or the shapes do not broadcast.

    Notes
    -----
    Used in: chapter 3 (standard errors of the paired gaps, :func:`gap_for`).
    """
    se = check_real("se", se, low=0.0)
    m = check_real("draws", draws, low=1.0)
    floor = check_real("floor", floor, low=0.0)
    try:
        se, m, floor = np.broadcast_arrays(se, m, floor)
    except ValueError as exc:
        raise ValueError(
            f"se, draws and floor must broadcast; got shapes {se.shape}, {m.shape}, {floor.shape}"
        ) from exc
    # sqrt(max(se^2 m, floor) / m), written without squaring se (no overflow)
    return np.maximum(se, np.sqrt(floor / m))


def slope_through_origin(d: Any, gap: Any, se: Any) -> OriginFit:
    """Weighted least-squares fit of ``gap(d) = c / d`` (a gap that vanishes at infinity).

    .. math::

        \\hat c = \\frac{\\sum_i g_i / (d_i \\mathrm{se}_i^2)}{\\sum_i 1/(d_i^2 \\mathrm{se}_i^2)},
        \\qquad \\mathrm{se}(\\hat c) = \\Big(\\sum_i \\frac{1}{d_i^2\\,\\mathrm{se}_i^2}\\Big)^{-1/2},

    with the ``se`` taken as absolute errors; the p-value is that of
    :math:`\\chi^2 = \\sum_i ((g_i - \\hat c/d_i)/\\mathrm{se}_i)^2` with ``m - 1``
    degrees of freedom.

    Parameters
    ----------
    d : array_like, shape (m,)
        Dimensions (``> 0``), at least two points.
    gap : array_like, shape (m,)
        Measured gaps.
    se : array_like, shape (m,)
        Their standard errors (``> 0``).

    Returns
    -------
    OriginFit
        ``(c, c_se, chi2, dof, p_value)``.

    Raises
    ------
    ValueError
        If the shapes differ, there are fewer than 2 points, ``d`` are not positive normal
        floats, ``se`` not positive, or ``c`` or ``c_se`` is not representable as a normal
        float (the fit runs on rescaled data, so only a result outside the float range fails).

    Notes
    -----
    Used in: :doc:`testing the equivalence </book/equivalence/verification>`.

    Examples
    --------
    >>> d = np.array([50.0, 100.0, 200.0])
    >>> round(slope_through_origin(d, 1.5 / d, np.full(3, 1e-3)).c, 6)
    1.5
    """
    d = check_dims(d)
    g = check_real("gap", gap)
    se = check_real("se", se, low=0.0, low_open=True)
    if d.ndim != 1 or g.shape != d.shape or se.shape != d.shape:
        raise ValueError(f"d, gap and se must be 1-D of one length; got {d.shape}, {g.shape}, {se.shape}")
    if d.size < 2:
        raise ValueError(f"slope_through_origin needs at least 2 points; got d = {d.tolist()}")
    (c,), (c_se,), chi2, _ = weighted_least_squares(d, g, se, (1.0,), ("c",), f"d = {d.tolist()}, se = {se.tolist()}")
    dof = int(d.size - 1)
    return OriginFit(c, c_se, chi2, dof, float(stats.chi2.sf(chi2, dof)))


def extrapolate_summary(
    summary: Mapping[str, Any], quantity: str = "icl", power: float | None = 1.0, d_min: float | None = None
) -> FiniteSizeFit:
    """:func:`extrapolate` applied to a summary, optionally without its smallest d.

    Parameters
    ----------
    summary : dict
        From :func:`summarize` (keys ``d``, ``icl``, ``icl_se``, ``idg``, ``idg_se``).
    quantity : {"icl", "idg"}
        Which error.
    power : float or None
        As in :func:`extrapolate`.
    d_min : float, optional
        Keep only the points with ``d >= d_min``.

    Returns
    -------
    FiniteSizeFit
        The fit of :func:`lib.finite_size.extrapolate` to the summary's means.

    Raises
    ------
    ValueError
        If ``quantity`` is invalid or too few points remain.

    Notes
    -----
    Used in: :doc:`testing the equivalence </book/equivalence/verification>`.
    """
    check_choice("quantity", quantity, ("icl", "idg"))
    d = np.asarray(summary["d"], dtype=float)
    keep = np.ones(d.shape, bool) if d_min is None else d >= check_scalar("d_min", d_min)
    e = np.asarray(summary[quantity], dtype=float)[keep]
    se = np.asarray(summary[quantity + "_se"], dtype=float)[keep]
    return extrapolate(d[keep], e, se, power=power)


def _enough_draws(columns: dict[str, np.ndarray], min_draws: int) -> dict[str, np.ndarray]:
    keep = columns["draws"] >= min_draws
    return {k: np.asarray(v)[keep] for k, v in columns.items()}


def fits_for(
    experiment: str,
    variants: Sequence[str],
    quantity: str = "icl",
    min_draws: int = 2,
    data_dir: str | Path | None = None,
    **filters: Any,
) -> dict[str, VariantFits]:
    """Summaries and finite-size fits of several variants of one configuration.

    For each variant: ``summarize`` its rows (per-d means; standard errors from the
    spread of the draws, floored by the Monte Carlo error, see :func:`summarize`), drop
    the d with fewer than ``min_draws`` draws (a study that is still being extended may
    hold a single draw at its largest d), and fit ``e_inf + c/d`` and, when at least
    four d remain, ``e_inf + c/d**b``.

    Parameters
    ----------
    experiment : str
        Experiment name (see :func:`load`).
    variants : sequence of str
        Variant names, e.g. ``("teacher", "gaussian")``.
    quantity : {"icl", "idg"}
        Which error.
    min_draws : int, default 2
        Smallest number of draws for a d to enter the fits.
    data_dir : str, pathlib.Path or None
        Folder holding the CSV files; None is the package's ``lib/data/``.
    **filters
        Select one configuration (without ``variant``), as in :func:`~lib.finite_size.data.table`.

    Returns
    -------
    dict of str to VariantFits
        ``{variant: (summary, fit, free_fit)}``.

    Raises
    ------
    ValueError
        If ``quantity`` or ``min_draws`` is invalid, a filter is ``variant``, or too few
        d remain for a fit.

    Notes
    -----
    Used in: :doc:`testing the equivalence </book/equivalence/verification>`.
    """
    check_choice("quantity", quantity, ("icl", "idg"))
    min_draws = int(check_int("min_draws", min_draws, low=1))
    if "variant" in filters:
        raise ValueError("fits_for takes the variants through `variants`, not a `variant` filter")
    out = {}
    for v in variants:
        s = _enough_draws(summarize(table(experiment, data_dir=data_dir, variant=v, **filters)), min_draws)
        fit1 = extrapolate_summary(s, quantity)
        free = None
        if s["d"].size >= 4:
            try:
                free = extrapolate_summary(s, quantity, power=None)
            except ValueError:  # the free-exponent fit may not converge
                free = None
        out[v] = VariantFits(s, fit1, free)
    return out


def gap_for(
    experiment: str,
    variants: tuple[str, str],
    quantity: str = "icl",
    min_draws: int = 2,
    data_dir: str | Path | None = None,
    **filters: Any,
) -> GapFits:
    """Paired gap between two variants per d, with its two fits.

    The gap ``e_a - e_b`` is averaged draw by draw (:func:`gap`); its standard error is
    floored (:func:`floored_se`) by the sum of the two variants' Monte Carlo variances
    at that d, :math:`\\overline{\\mathrm{se}_a^2} + \\overline{\\mathrm{se}_b^2}`
    (conservative: the common random numbers make the true Monte Carlo error of the
    difference smaller). The d with fewer than ``min_draws`` paired draws are dropped.
    Two fits follow: ``gap_inf + c/d`` (:func:`extrapolate`: does the gap vanish?) and
    ``c_Delta/d`` through the origin (:func:`slope_through_origin`).

    Parameters
    ----------
    experiment : str
        Experiment name.
    variants : tuple of two str
        ``(a, b)``.
    quantity : {"icl", "idg"}
        Which error.
    min_draws : int, default 2
        Smallest number of paired draws for a d to enter.
    data_dir : str, pathlib.Path or None
        Folder holding the CSV files.
    **filters
        Select one configuration (without ``variant``).

    Returns
    -------
    GapFits
        ``(gap, fit, origin)``.

    Raises
    ------
    ValueError
        As :func:`gap`, or if too few d remain.

    Notes
    -----
    Used in: :doc:`testing the equivalence </book/equivalence/verification>`.
    """
    min_draws = int(check_int("min_draws", min_draws, low=1))
    g = _floored_gap(experiment, variants, quantity, min_draws, data_dir, filters)
    fit1 = extrapolate(g["d"], g["gap"], g["gap_se"])
    return GapFits(g, fit1, slope_through_origin(g["d"], g["gap"], g["gap_se"]))


def _floored_gap(
    experiment: str,
    variants: tuple[str, str],
    quantity: str,
    min_draws: int,
    data_dir: str | Path | None,
    filters: dict[str, Any],
) -> dict[str, np.ndarray]:
    """The paired gap of :func:`gap`, its s.e. floored by the two Monte Carlo variances."""
    g = gap(experiment, variants, quantity, data_dir=data_dir, **filters)
    mc = np.zeros(g["d"].shape)
    for v in variants:
        t = table(experiment, data_dir=data_dir, variant=v, **filters)
        mc += np.array([np.mean(t[quantity + "_se"][t["d"] == d] ** 2) for d in g["d"]])
    g = dict(g, gap_se=floored_se(g["gap_se"], g["draws"], mc))
    return _enough_draws(g, min_draws)


class PairedLimits(NamedTuple):
    """Result of :func:`paired_limits`: two variants and their paired gap, extrapolated.

    Attributes
    ----------
    gap : dict of str to numpy.ndarray
        ``d``, ``gap``, ``gap_se`` (floored as in :func:`gap_for`), ``draws``: the d
        with at least ``min_draws`` paired draws.
    gap_fit : FiniteSizeFit
        The fit ``Delta_inf + c/d`` of the gap (``dof = 0`` and ``p_value`` NaN when it
        rests on two dimensions).
    summaries : dict of str to dict
        Per variant, its per-d means and standard errors (:func:`summarize`) at the d of
        ``gap``.
    fits : dict of str to FiniteSizeFit
        Per variant, the fit ``e_inf + c/d`` of its error.
    t : float
        The two-sided Student-t quantile at the requested level for the fewest paired
        draws at one d (:func:`lib.finite_size.t_quantile`): the half-width of an interval
        is ``t`` times a standard error.
    """

    gap: dict
    gap_fit: FiniteSizeFit
    summaries: dict
    fits: dict
    t: float

    @property
    def gap_half_width(self) -> float:
        """Half-width of the interval of ``Delta_inf``: ``t * gap_fit.e_inf_se``."""
        return self.t * self.gap_fit.e_inf_se


def paired_limits(
    experiment: str,
    variants: tuple[str, str] = ("teacher", "gaussian"),
    quantity: str = "icl",
    level: float = 0.95,
    min_draws: int = 2,
    data_dir: str | Path | None = None,
    **filters: Any,
) -> PairedLimits:
    """Two variants of one configuration and their paired gap, each extrapolated in d.

    The paired gap ``e_a - e_b`` (draw by draw, :func:`gap`; standard error floored as
    in :func:`gap_for`) and each variant's mean error (:func:`summarize`) are fitted with
    ``e_inf + c/d`` (:func:`lib.finite_size.extrapolate`) on the dimensions that have at
    least ``min_draws`` paired draws. Unlike :func:`gap_for`, two dimensions suffice:
    the fit then passes through both points (``min_dof=0``), so a table that is still
    being extended d by d can already be read, with wide intervals and no test of the
    ``1/d`` law. The Student-t quantile ``t`` turns the standard errors into intervals
    at ``level``; it takes the degrees of freedom of the fewest paired draws at one d
    (a standard error from ``m`` draws has ``m - 1``), as the chapter does elsewhere.

    Parameters
    ----------
    experiment : str
        Experiment name (see :func:`lib.finite_size.load`).
    variants : tuple of two str, default ("teacher", "gaussian")
        ``(a, b)``; the gap is ``e_a - e_b``.
    quantity : {"icl", "idg"}
        Which error.
    level : float, default 0.95
        Confidence level of the interval, in ``(0, 1)``.
    min_draws : int, default 2
        Smallest number of paired draws for a d to enter (at least 2, so that ``t`` is
        defined).
    data_dir : str, pathlib.Path or None
        Folder holding the CSV files; None is the package's ``lib/data/``.
    **filters
        Select one configuration (without ``variant``), as in :func:`~lib.finite_size.data.table`.

    Returns
    -------
    PairedLimits
        ``(gap, gap_fit, summaries, fits, t)``, and the property ``gap_half_width``.

    Raises
    ------
    ValueError
        If ``quantity``, ``level`` or ``min_draws`` is invalid, a filter is ``variant``,
        the variants share no draw, or fewer than two dimensions have ``min_draws``
        paired draws.

    Notes
    -----
    Used in: :doc:`testing the equivalence </book/equivalence/verification>` and
    :doc:`learning curves </book/linear/learning_curves>`.

    Examples
    --------
    >>> r = paired_limits("stretched", label="relu rho=0.5")   # doctest: +SKIP
    >>> r.gap_fit.e_inf, r.gap_half_width                       # doctest: +SKIP
    """
    check_choice("quantity", quantity, ("icl", "idg"))
    level = check_scalar("level", level, low=0.0, high=1.0, low_open=True, high_open=True)
    min_draws = int(check_int("min_draws", min_draws, low=2))
    if "variant" in filters:
        raise ValueError("paired_limits takes the variants through `variants`, not a `variant` filter")
    g = _floored_gap(experiment, variants, quantity, min_draws, data_dir, filters)
    if g["d"].size < 2:
        raise ValueError(
            f"paired_limits needs at least two dimensions with {min_draws} or more paired draws; "
            f"got d = {g['d'].tolist()} for {filters}"
        )
    gap_fit = extrapolate(g["d"], g["gap"], g["gap_se"], min_dof=0)
    summaries, fits = {}, {}
    for v in variants:
        s = summarize(table(experiment, data_dir=data_dir, variant=v, **filters))
        keep = np.isin(s["d"], g["d"])
        summaries[v] = {k: np.asarray(col)[keep] for k, col in s.items()}
        fits[v] = extrapolate(summaries[v]["d"], summaries[v][quantity], summaries[v][quantity + "_se"], min_dof=0)
    return PairedLimits(g, gap_fit, summaries, fits, t_quantile(g["draws"], level))
