r"""Weighted least-squares fits of the finite-size law :math:`e(d) = e_\infty + c/d^b`.

Used in chapters 2, 3 and the Performance appendix.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np
from scipy import optimize, stats

from lib._checks import check_choice, check_int, check_real, check_scalar
from lib.finite_size.data import summarize, table

__all__ = [
    "FiniteSizeFit",
    "extrapolate",
    "fit",
    "QuadraticFit",
    "extrapolate_quadratic",
    "point_label",
    "B_BOUNDS",
    "POWER_BOUNDS",
    "MAX_CONDITION",
    "WeightedMean",
    "weighted_mean",
    "t_quantile",
]

#: Range of the exponent b in the free-power fit of :func:`extrapolate`.
B_BOUNDS: tuple[float, float] = (0.2, 5.0)
#: Allowed range of a fixed exponent ``power`` of :func:`extrapolate` (outside it ``d**-power``
#: is constant or underflows on any sensible set of dimensions).
POWER_BOUNDS: tuple[float, float] = (0.01, 10.0)
#: Largest condition number of the (column-scaled, weighted) design matrix of a fit;
#: beyond it the fitted parameters are not determined in double precision.
MAX_CONDITION = 1e12
_TINY = float(np.finfo(float).tiny)


class FiniteSizeFit(NamedTuple):
    """Result of :func:`extrapolate`: the fit ``e(d) = e_inf + c / d**b``.

    Attributes
    ----------
    e_inf, e_inf_se : float
        The extrapolated ``d -> infinity`` value and its standard error.
    c, c_se : float
        The finite-size amplitude and its standard error.
    b, b_se : float
        The exponent. When it was fixed (``power`` a number) ``b = power`` and
        ``b_se = 0``.
    chi2 : float
        Weighted residual sum of squares ``sum ((e - fit) / se)**2``.
    dof : int
        Degrees of freedom: number of points minus number of fitted parameters.
    p_value : float
        ``P(chi2_dof >= chi2)``: small values (say < 0.01) mean the law does not describe
        the data within their error bars. NaN when ``se`` was not given (the scale of the
        errors is then estimated from the residuals, so ``chi2`` carries no test).
    """

    e_inf: float
    e_inf_se: float
    c: float
    c_se: float
    b: float
    b_se: float
    chi2: float
    dof: int
    p_value: float


# ----------------------------------------------------------------------------------------
# finite-size extrapolation
# ----------------------------------------------------------------------------------------


def check_dims(d: Any) -> np.ndarray:
    """The dimensions ``d`` of a fit: positive normal floats (shared with :mod:`.study`)."""
    d = check_real("d", d, low=0.0, low_open=True)
    if np.any(d < _TINY):
        raise ValueError(
            f"d must be positive normal floats (>= {_TINY:.4g}; subnormal values have lost "
            f"precision); got d = {d.tolist()}"
        )
    return d


def _unscale(name: str, value: float, log_factor: float, inputs: str) -> float:
    """``value * exp(log_factor)``, or a ValueError if that is not a normal float."""
    if value == 0.0:
        return 0.0
    log_abs = math.log(abs(value)) + log_factor
    if not math.log(_TINY) <= log_abs <= math.log(np.finfo(float).max):
        sign = "-" if value < 0 else ""
        raise ValueError(
            f"the fitted {name} = {sign}10**{log_abs / math.log(10.0):.6g} is not representable as a "
            f"normal float (magnitude {_TINY:.4g} to {np.finfo(float).max:.4g}); rescale the data ({inputs})"
        )
    return math.copysign(math.exp(log_abs), value)


def weighted_least_squares(
    d: np.ndarray, e: np.ndarray, se: np.ndarray | None, powers: Sequence[float], names: Sequence[str], inputs: str
) -> tuple[list[float], list[float], float, dict[str, Any]]:
    """Weighted least squares of ``e = sum_j p_j d**-powers[j]``, computed on rescaled data.

    The columns ``d**-p`` are divided by their largest value (computed as
    ``exp(-p (log d - log min d))``, so they neither overflow nor underflow), the errors
    and ``e`` by ``max(se)``; the parameters and their standard errors are scaled back in
    log space. Returns ``(params, errors, chi2, scaled)``: the errors are those of
    absolute ``se`` (rescale them by ``sqrt(chi2 / dof)`` when ``se`` is None); ``scaled``
    holds the rescaled problem (for a nonlinear fit that starts from it).

    Raises ValueError if the design matrix is numerically singular (condition number
    above :data:`MAX_CONDITION`) or a result is not a normal float.
    """
    sigma = np.ones_like(e) if se is None else se
    scale = float(sigma.max())
    sigma_s = sigma / scale
    y = e / scale / sigma_s
    if not np.all(np.isfinite(y)):
        raise ValueError(f"e / se overflows; rescale the data ({inputs})")
    log_d = np.log(d)
    log_ref = float(log_d.min())
    with np.errstate(under="ignore"):  # a column entry below 1e-308 is 0 for the fit
        basis = np.column_stack([np.exp(-p * (log_d - log_ref)) for p in powers])
    design = basis / sigma_s[:, None]
    cond = float(np.linalg.cond(design))
    if not cond <= MAX_CONDITION:
        raise ValueError(
            f"the fit is numerically singular: its basis functions "
            f"{', '.join('1' if p == 0 else f'd**-{p:g}' for p in powers)} cannot be told apart on "
            f"these points (condition number {cond:.3g} > {MAX_CONDITION:g}); the d must be "
            f"distinct and span a moderate range (max(d)/min(d) = {math.exp(float(log_d.max()) - log_ref):.6g}) "
            f"and the se comparable ({inputs})"
        )
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    r = np.linalg.qr(design, mode="r")
    r_inv = np.linalg.inv(r)
    errs_s = np.sqrt(np.sum(r_inv**2, axis=1))  # sqrt(diag((A^T A)^-1)) = row norms of R^-1
    resid = y - design @ coef
    with np.errstate(over="ignore"):  # an absurdly bad fit has chi2 = inf (p-value 0)
        chi2 = float(resid @ resid)
    log_scale = math.log(scale)
    params = [_unscale(n, float(c), log_scale + p * log_ref, inputs) for n, p, c in zip(names, powers, coef)]
    errs = [_unscale(f"{n}_se", float(v), log_scale + p * log_ref, inputs) for n, p, v in zip(names, powers, errs_s)]
    scaled = {
        "coef": coef,
        "sigma": sigma_s,
        "e": e / scale,
        "t": np.exp(log_d - log_ref),
        "log_ref": log_ref,
        "log_scale": log_scale,
    }
    return params, errs, chi2, scaled


def _check_fit_input(
    d: Any, e: Any, se: Any, n_params: int, min_dof: int = 1
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    d = check_dims(d)
    e = check_real("e", e)
    if d.ndim != 1 or e.shape != d.shape:
        raise ValueError(f"d and e must be 1-D arrays of the same length; got shapes {d.shape} and {e.shape}")
    if se is not None:
        se = check_real("se", se, low=0.0, low_open=True)
        if se.shape != d.shape:
            raise ValueError(f"se must have the shape of d, {d.shape}; got {se.shape}")
    if np.unique(d).size < n_params or d.size < n_params + min_dof:
        raise ValueError(
            f"d must hold at least {n_params} distinct values and {n_params + min_dof} points for "
            f"this fit ({n_params} parameters, at least {min_dof} degree(s) of freedom); got d = {d.tolist()}"
        )
    return d, e, se


def extrapolate(d: Any, e: Any, se: Any = None, power: float | None = 1.0, *, min_dof: int = 1) -> FiniteSizeFit:
    """Fit ``e(d) = e_inf + c / d**b`` by weighted least squares.

    With ``power`` a number ``b`` is fixed and the model is linear in ``(e_inf, c)``:
    the fit minimises

    .. math::

        \\chi^2 = \\sum_i \\Big( \\frac{e_i - e_\\infty - c\\, d_i^{-b}}{\\mathrm{se}_i} \\Big)^2 ,

    and the standard errors are the square roots of the diagonal of ``(J^T W J)^{-1}``
    (``J`` the design matrix ``[1, d^{-b}]``, ``W = diag(se^{-2})``), that is, the
    ``se`` are taken as absolute errors. The fit runs on rescaled data (``d / min(d)``,
    ``e / max(se)``), so that tiny or huge scales give the same relative accuracy. With ``power=None`` the exponent ``b`` is fitted
    too (:func:`scipy.optimize.curve_fit`, starting from the ``b = 1`` fit), which tests
    whether ``1/d`` describes the data: ``b`` within a few ``b_se`` of 1 and an acceptable
    ``p_value`` say it does. ``b`` is kept in ``B_BOUNDS``; a fit that ends on a bound
    (or with ``b_se`` of order 1) means the data cannot pin the exponent down, and its
    ``e_inf`` should not be used.

    Parameters
    ----------
    d : array_like, shape (m,)
        Dimensions (> 0). Repeated values are allowed (for instance one point per draw).
    e : array_like, shape (m,)
        Measured errors.
    se : array_like, shape (m,), optional
        Their standard errors (> 0), for instance from :func:`summarize`. If None all
        points get equal weight and the error scale is estimated from the residuals
        (then ``p_value`` is NaN).
    power : float or None
        Fixed exponent ``b`` in :data:`POWER_BOUNDS` = ``[0.01, 10]`` (default 1: the ``1/d``
        law), or None to fit it within :data:`B_BOUNDS`.
    min_dof : {1, 0}, keyword-only
        Fewest degrees of freedom allowed (default 1). ``min_dof=0`` accepts a fit that
        passes through its points exactly (for instance ``e_inf + c/d`` through two
        dimensions, a table still being extended): the parameters and their standard
        errors are then those of the exact solution, with ``chi2 = 0``, and
        ``p_value`` is NaN (nothing is left to test the law with). It needs ``se``.

    Returns
    -------
    FiniteSizeFit
        ``e_inf, e_inf_se, c, c_se, b, b_se, chi2, dof, p_value``.

    Raises
    ------
    ValueError
        If the arrays do not match, contain non-finite values, ``d`` are not positive
        normal floats or ``se`` not positive, ``power`` is outside :data:`POWER_BOUNDS`, or
        there are too few points (fixed power: at least 2 distinct d and 3 points; free
        power: 3 distinct d and 4 points; one point fewer with ``min_dof=0``),
        ``min_dof`` is not 0 or 1, or is 0 without ``se``, the fit is numerically singular (the d too close
        together or spread over too many orders of magnitude: condition number of the
        design above :data:`MAX_CONDITION`), a fitted value is not representable as a
        normal float, or the free-power fit does not converge.

    Notes
    -----
    Used in: :doc:`learning curves </book/linear/learning_curves>`.

    Examples
    --------
    >>> d = np.array([50, 100, 150, 200])
    >>> fit = extrapolate(d, 1.0 + 5.0 / d, se=np.full(4, 1e-3))
    >>> round(fit.e_inf, 6), round(fit.c, 6)
    (1.0, 5.0)
    """
    if power is not None:
        power = check_scalar("power", power, low=0.0, low_open=True)
        if not POWER_BOUNDS[0] <= power <= POWER_BOUNDS[1]:
            raise ValueError(
                f"power must be a fixed exponent in POWER_BOUNDS = {list(POWER_BOUNDS)} (or None to fit "
                f"it within B_BOUNDS = {list(B_BOUNDS)}); got power = {power!r}"
            )
    min_dof = int(check_int("min_dof", min_dof, low=0, high=1))
    n_params = 2 if power is not None else 3
    if min_dof == 0 and se is None:
        raise ValueError("min_dof=0 needs se: an exact fit leaves no residuals to estimate the error scale from")
    d, e, se = _check_fit_input(d, e, se, n_params, min_dof)
    b0 = 1.0 if power is None else power
    inputs = f"d = {d.tolist()}, power = {power}"

    # Linear weighted least squares for a fixed exponent (also the start of the free fit).
    params, errs, chi2, sc = weighted_least_squares(d, e, se, (0.0, b0), ("e_inf", "c"), inputs)
    dof = int(d.size - n_params)
    if power is not None:
        b, b_se = power, 0.0
    else:
        # The free fit runs on the rescaled problem: t = d / min(d), e / max(se); then
        # c = max(se) * c' * min(d)**b and its error follows from the Jacobian of that map.
        def model(x, e_inf, c, b):
            return e_inf + c * x**-b

        try:
            p_s, cov_s = optimize.curve_fit(
                model,
                sc["t"],
                sc["e"],
                p0=[sc["coef"][0], sc["coef"][1], 1.0],
                sigma=sc["sigma"],
                absolute_sigma=True,
                bounds=([-np.inf, -np.inf, B_BOUNDS[0]], [np.inf, np.inf, B_BOUNDS[1]]),
                max_nfev=10_000,
                ftol=1e-12,
                xtol=1e-12,
                gtol=1e-12,
            )
        except RuntimeError as exc:
            raise ValueError(f"the free-power fit e_inf + c/d**b did not converge: {exc}") from exc
        if not np.all(np.isfinite(cov_s)):
            raise ValueError(f"the free-power fit e_inf + c/d**b is degenerate (infinite covariance; {inputs})")
        resid = (sc["e"] - model(sc["t"], *p_s)) / sc["sigma"]
        with np.errstate(over="ignore"):
            chi2 = float(resid @ resid)
        b = float(p_s[2])
        log_k = sc["log_scale"] + b * sc["log_ref"]
        dc = np.array([0.0, 1.0, float(p_s[1]) * sc["log_ref"]])  # d(c / (scale k)) / d(e_inf', c', b)
        params = [
            _unscale("e_inf", float(p_s[0]), sc["log_scale"], inputs),
            _unscale("c", float(p_s[1]), log_k, inputs),
        ]
        errs = [
            _unscale("e_inf_se", math.sqrt(max(float(cov_s[0, 0]), 0.0)), sc["log_scale"], inputs),
            _unscale("c_se", math.sqrt(max(float(dc @ cov_s @ dc), 0.0)), log_k, inputs),
        ]
        b_se = math.sqrt(max(float(cov_s[2, 2]), 0.0))
    if se is None:
        factor = math.sqrt(chi2 / dof)  # scale from the residuals
        errs = [v * factor for v in errs]
        if power is None:
            b_se *= factor
        p_value = float("nan")
    elif dof == 0:
        chi2, p_value = 0.0, float("nan")  # an exact fit: its residuals are rounding
    else:
        p_value = float(stats.chi2.sf(chi2, dof))
    return FiniteSizeFit(
        e_inf=float(params[0]),
        e_inf_se=float(errs[0]),
        c=float(params[1]),
        c_se=float(errs[1]),
        b=float(b),
        b_se=float(b_se),
        chi2=chi2,
        dof=dof,
        p_value=p_value,
    )


def fit(
    experiment: str,
    quantity: str = "icl",
    power: float | None = 1.0,
    data_dir: str | Path | None = None,
    **filters: Any,
) -> tuple[dict[str, np.ndarray], FiniteSizeFit]:
    """Summarize one configuration of an experiment and extrapolate it to ``d = infinity``.

    Shorthand for ``s = summarize(table(experiment, **filters))`` followed by
    ``extrapolate(s["d"], s[quantity], s[quantity + "_se"], power)``.

    Parameters
    ----------
    experiment : str
        Experiment name (see :func:`load`).
    quantity : {"icl", "idg"}
        Which error to extrapolate.
    power : float or None
        As in :func:`extrapolate`.
    data_dir : str, pathlib.Path or None
        Folder holding the CSV files; None is the package's ``lib/data/``.
    **filters
        Select one configuration, as in :func:`~lib.finite_size.data.table`.

    Returns
    -------
    summary : dict of numpy.ndarray
        The output of :func:`summarize`.
    fit : FiniteSizeFit
        The output of :func:`extrapolate`.
    """
    check_choice("quantity", quantity, ("icl", "idg"))
    summary = summarize(table(experiment, data_dir=data_dir, **filters))
    return summary, extrapolate(summary["d"], summary[quantity], summary[f"{quantity}_se"], power)


class QuadraticFit(NamedTuple):
    """Result of :func:`extrapolate_quadratic`: ``e(d) = e_inf + c/d + c2/d**2``.

    Attributes
    ----------
    e_inf, e_inf_se : float
        Intercept (the extrapolation to ``d = infinity``) and its standard error.
    c, c_se : float
        Coefficient of ``1/d`` and its standard error.
    c2, c2_se : float
        Coefficient of ``1/d**2`` and its standard error.
    chi2 : float
        Weighted sum of squared residuals.
    dof : int
        Degrees of freedom (points minus 3).
    p_value : float
        Probability of a chi-square at least ``chi2`` with ``dof`` degrees of freedom
        (NaN when no standard errors were given).
    """

    e_inf: float
    e_inf_se: float
    c: float
    c_se: float
    c2: float
    c2_se: float
    chi2: float
    dof: int
    p_value: float


def extrapolate_quadratic(d: Any, e: Any, se: Any = None) -> QuadraticFit:
    r"""Fit ``e(d) = e_inf + c / d + c2 / d**2`` by weighted least squares.

    The next order after :func:`extrapolate`: when the ``1/d`` law misses the smallest
    dimensions, a ``1/d^2`` term tests whether the misfit is a higher-order finite-size
    correction. The fit minimises

    .. math::

        \chi^2 = \sum_i \Big( \frac{e_i - e_\infty - c\, d_i^{-1} - c_2\, d_i^{-2}}
        {\mathrm{se}_i} \Big)^2 ,

    with standard errors from the diagonal of ``(J^T W J)^{-1}`` (``J = [1, 1/d, 1/d^2]``,
    ``W = diag(se^{-2})``; the ``se`` are taken as absolute errors).

    Parameters
    ----------
    d : array_like, shape (m,)
        Dimensions (> 0), at least 3 distinct values and 4 points.
    e : array_like, shape (m,)
        Measured errors.
    se : array_like, shape (m,), optional
        Their standard errors (> 0). If None all points get equal weight, the error scale
        is estimated from the residuals and ``p_value`` is NaN.

    Returns
    -------
    QuadraticFit
        ``e_inf, e_inf_se, c, c_se, c2, c2_se, chi2, dof, p_value``.

    Raises
    ------
    ValueError
        If the arrays do not match, contain non-finite values, ``d`` are not positive
        normal floats or ``se`` not positive, there are too few points, the fit is
        numerically singular (condition number above :data:`MAX_CONDITION`, for instance
        d spread over many orders of magnitude) or a result is not a normal float.

    Notes
    -----
    Used in: :doc:`learning curves </book/linear/learning_curves>`.

    Examples
    --------
    >>> d = np.array([20.0, 40.0, 60.0, 100.0])
    >>> q = extrapolate_quadratic(d, 1.0 + 2.0 / d + 30.0 / d**2, se=np.full(4, 1e-3))
    >>> round(q.e_inf, 6), round(q.c, 6), round(q.c2, 6)
    (1.0, 2.0, 30.0)
    """
    d, e, se = _check_fit_input(d, e, se, 3)
    coef, errs, chi2, _ = weighted_least_squares(d, e, se, (0.0, 1.0, 2.0), ("e_inf", "c", "c2"), f"d = {d.tolist()}")
    dof = int(d.size - 3)
    if se is None:
        errs = [v * math.sqrt(chi2 / dof) for v in errs]
        p_value = float("nan")
    else:
        p_value = float(stats.chi2.sf(chi2, dof))
    return QuadraticFit(
        e_inf=float(coef[0]),
        e_inf_se=float(errs[0]),
        c=float(coef[1]),
        c_se=float(errs[1]),
        c2=float(coef[2]),
        c2_se=float(errs[2]),
        chi2=chi2,
        dof=dof,
        p_value=p_value,
    )


def point_label(params: Mapping[str, Any]) -> str:
    r"""LaTeX label ``$(\alpha, \kappa, \tau, \rho, \lambda)$`` of a parameter point.

    Parameters
    ----------
    params : mapping
        With the keys ``"alpha", "kappa", "tau", "rho", "lam"`` (numbers; ``kappa`` may be
        ``inf``, printed as ``\infty``).

    Returns
    -------
    str
        For instance ``"$(1, 0.5, 2, 0.01, 0)$"``; numbers in ``%g`` format.

    Raises
    ------
    ValueError
        If a key is missing or a value is not a real number.

    Notes
    -----
    Used in: :doc:`learning curves </book/linear/learning_curves>`.

    Examples
    --------
    >>> point_label(dict(alpha=2.0, kappa=float("inf"), tau=0.5, rho=0.1, lam=0.0))
    '$(2, \\infty, 0.5, 0.1, 0)$'
    """
    keys = ("alpha", "kappa", "tau", "rho", "lam")
    if not isinstance(params, Mapping):
        raise TypeError(f"params must be a mapping with the keys {keys}; got {params!r}")
    missing = [k for k in keys if k not in params]
    if missing:
        raise ValueError(f"params must have the keys {keys}; missing {missing}")
    parts = []
    for k in keys:
        value = check_scalar(k, params[k], allow_inf=(k == "kappa"))
        parts.append(r"\infty" if np.isinf(value) else f"{value:g}")
    return "$(" + ", ".join(parts) + ")$"


class WeightedMean(NamedTuple):
    """Result of :func:`weighted_mean`.

    Attributes
    ----------
    value, se : float
        The inverse-variance weighted mean and its standard error.
    chi2 : float
        ``sum(((x - value) / se)**2)``.
    dof : int
        Number of values minus one.
    p_value : float
        ``P(chi2_dof >= chi2)``: the p-value of "the values are one constant".
    """

    value: float
    se: float
    chi2: float
    dof: int
    p_value: float


def weighted_mean(x: Any, se: Any) -> WeightedMean:
    r"""Inverse-variance weighted mean, its standard error and a test of constancy.

    .. math::

        \bar x = \frac{\sum_i x_i/s_i^2}{\sum_i 1/s_i^2}, \qquad
        \mathrm{se}(\bar x) = \Big(\sum_i 1/s_i^2\Big)^{-1/2}, \qquad
        \chi^2 = \sum_i \Big(\frac{x_i - \bar x}{s_i}\Big)^2,

    and the p-value of :math:`\chi^2` with ``len(x) - 1`` degrees of freedom.

    Parameters
    ----------
    x : array_like, shape (m,)
        The values, ``m >= 2``, finite.
    se : array_like, shape (m,)
        Their standard errors, finite and ``> 0``.

    Returns
    -------
    WeightedMean
        ``(value, se, chi2, dof, p_value)``.

    Raises
    ------
    ValueError
        If the shapes differ, there are fewer than two values, or a value or standard
        error is not finite (or a standard error not positive).

    Notes
    -----
    Used in: :doc:`testing the equivalence </book/equivalence/verification>` (the
    :math:`h_2` gap from :math:`d = 100` on; the two task diversities compared).

    Examples
    --------
    >>> weighted_mean([1.0, 3.0], [1.0, 1.0]).value
    2.0
    """
    x, se = check_real("x", x), check_real("se", se)
    if x.ndim != 1 or x.shape != se.shape or x.size < 2:
        raise ValueError(f"x and se must be 1-D of one length >= 2; got shapes {x.shape} and {se.shape}")
    if np.any(se <= 0):
        raise ValueError(f"se must be > 0; got {se.tolist()}")
    w = 1.0 / se**2
    value = float(np.sum(w * x) / np.sum(w))
    chi2 = float(np.sum(((x - value) / se) ** 2))
    dof = x.size - 1
    return WeightedMean(value, float(1.0 / np.sqrt(np.sum(w))), chi2, dof, float(stats.chi2.sf(chi2, dof)))


def t_quantile(draws: Any, level: float = 0.95) -> float:
    r"""Two-sided Student-t quantile for a standard error from ``draws`` draws.

    A mean of :math:`m` draws has a standard error with :math:`m - 1` degrees of freedom;
    the half-width of its ``level`` confidence interval is this quantile times the
    standard error, :math:`t_{m-1}^{-1}\big((1 + \mathrm{level})/2\big)`. With an array
    of draws (one per point of a fit) the smallest sets the degrees of freedom.

    Parameters
    ----------
    draws : int or array_like of int
        Number(s) of draws, each ``>= 2``.
    level : float, optional
        Confidence level, in ``(0, 1)`` (default 0.95).

    Returns
    -------
    float
        The quantile, e.g. 3.18 for four draws at 95 %.

    Raises
    ------
    ValueError
        If a number of draws is below 2 or not an integer, or ``level`` is not in (0, 1).

    Notes
    -----
    Used in: :doc:`the equivalence theorem </book/equivalence/theorem>` and
    :doc:`testing the equivalence </book/equivalence/verification>`.

    Examples
    --------
    >>> round(t_quantile(4), 2)
    3.18
    """
    m = check_real("draws", draws)
    if m.size == 0 or np.any(m != np.round(m)) or np.min(m) < 2:
        raise ValueError(f"draws must be integers >= 2; got {draws!r}")
    level = check_scalar("level", level, low=0.0, high=1.0, low_open=True, high_open=True)
    return float(stats.t.ppf(0.5 + level / 2.0, int(np.min(m)) - 1))
