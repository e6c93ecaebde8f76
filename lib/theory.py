r"""Asymptotic error formulas for linear attention trained in context.

The model (see the book's notation page): tokens :math:`x_i \sim N(0, I_d/d)`, tasks
:math:`\|w\|^2 = d`, labels :math:`y_i = f(x_i^\top w) + \varepsilon_i` with
:math:`\varepsilon_i \sim N(0, \rho)`, context length :math:`\ell = \alpha d`,
:math:`k = \kappa d` pretraining tasks (:math:`\kappa = \infty`: a fresh task for every
context), :math:`n = \tau d^2` pretraining contexts and the ridge penalty
:math:`(n/d)\lambda\|\Gamma\|_F^2`. In the limit :math:`d \to \infty` at fixed
:math:`(\alpha, \kappa, \tau, \rho, \lambda)` the test errors of the pretrained
one-layer linear attention are deterministic; this module evaluates them.

Linear teacher (:math:`f(z) = z`): :func:`icl_error` (ridgeless and ridge) and
:func:`idg_error` (ridgeless), built on the Marchenko-Pastur transform
:func:`M_kappa`. Nonlinear teachers, through the nonlinearity-noise equivalence
:math:`f \mapsto a_1 z` plus noise :math:`\rho_{nl} = \rho + E[f^2] - a_1^2`:
:func:`effective_noise`, :func:`nonlinear_icl_error`, :func:`nonlinear_idg_error` and
the :math:`a_1 = 0` branch :func:`pure_noise_error`. Helpers: :func:`icl_limit`,
:func:`ridge_epsilon`, :func:`optimal_lambda`, :func:`nonlinear_optimal_lambda`,
:func:`transition_kappa`.

Every function is vectorized: the parameters broadcast against each other like numpy
arrays; all-scalar input gives a Python ``float``, array input an ``ndarray`` of the
broadcast shape.

Used in: :doc:`Hermite basics </book/hermite/basics>`,
:doc:`the model </book/linear/model>`,
:doc:`learning curves </book/linear/learning_curves>`,
:doc:`the equivalence theorem </book/equivalence/theorem>`,
:doc:`testing the equivalence </book/equivalence/verification>`,
:doc:`finite pretraining data </book/regimes/finite_data>`,
:doc:`task diversity </book/regimes/task_diversity>`,
:doc:`beyond linear attention </book/beyond/spectral>`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import elementwise

from lib._checks import check_broadcast, check_real
from lib.hermite import gaussian_equivalent, label_moments, teacher_moments

__all__ = [
    "M_kappa",
    "dM_kappa",
    "icl_error",
    "idg_error",
    "icl_limit",
    "ridge_epsilon",
    "optimal_lambda",
    "effective_noise",
    "pure_noise_error",
    "nonlinear_icl_error",
    "nonlinear_idg_error",
    "nonlinear_optimal_lambda",
    "transition_kappa",
    "pure_noise_error_integral",
    "GapEstimate",
    "gap_estimate",
    "kappa_inf_floor",
    "kappa_inf_ridgeless_error",
    "kappa_inf_optimal_lambda",
    "context_ridge_error",
    "gaussian_equivalent_ridge",
    "A1_ZERO_RTOL",
    "A1_ZERO_ATOL",
    "spectral_overlap",
    "spectral_threshold",
    "spectral_error",
    "optimal_preprocess",
    "weak_recovery_threshold",
]

#: Relative tolerance of the root of the ridge equation (Chandrupatla's method stops
#: when the bracket is narrower than this times the root, so the root is correct to it).
_ROOT_XRTOL = 1e-13

#: :math:`a_1` counts as zero when :math:`|a_1| \le` ``A1_ZERO_RTOL`` :math:`\sqrt{E f^2}`
#: ``+ A1_ZERO_ATOL``. The threshold is not delicate: the :math:`a_1 \ne 0` formula tends
#: to :func:`pure_noise_error` as :math:`a_1 \to 0` (relative gap of order
#: :math:`a_1^2/\rho_{nl}`, and evaluated stably down to :math:`a_1 = 10^{-8}`), so a
#: numerically computed :math:`a_1` of size 1e-9 for an even link gives the same error
#: either way; the threshold only decides which formula is evaluated.
A1_ZERO_RTOL = 1e-10
A1_ZERO_ATOL = 1e-12


# --------------------------------------------------------------------------------------
# small internal helpers
# --------------------------------------------------------------------------------------
def _out(value: np.ndarray) -> float | np.ndarray:
    """A float for a 0-d result, the array otherwise."""
    value = np.asarray(value, dtype=float)
    return float(value) if value.ndim == 0 else value


#: Supported range of :math:`x^* = (1+\rho)/\alpha`: the ridgeless formulas are evaluated
#: in cancellation-free forms up to here (beyond it :math:`x^*` overflows).
X_MAX = 1e305
#: Supported range of the ridge formula (:math:`\lambda > 0`): :math:`x^* \le` ``RIDGE_MAX``,
#: so that :math:`M_\kappa'(x^* + \varepsilon) \approx -1/(x^*+\varepsilon)^2` does not
#: underflow while it still matters (it multiplies :math:`x^*`); :math:`\lambda \le` ``X_MAX``.
RIDGE_MAX = 1e150


def _check_params(
    alpha: Any, kappa: Any, tau: Any, rho: Any, lam: Any = None, *, lam_low_open: bool = False
) -> tuple[np.ndarray, ...]:
    r"""Validate the model parameters (and ``lam`` if given); kappa may be +inf.

    Also checks that they broadcast together (naming the first two that do not, in the
    order of the call) and that :math:`x^* = (1+\rho)/\alpha` and :math:`\lambda` are
    inside the supported ranges ``X_MAX`` and ``RIDGE_MAX``.
    """
    alpha = check_real("alpha", alpha, low=0.0, low_open=True)
    kappa = check_real("kappa", kappa, low=0.0, low_open=True, allow_inf=True)
    tau = check_real("tau", tau, low=0.0, low_open=True)
    rho = check_real("rho", rho, low=0.0)
    named = [("alpha", alpha), ("kappa", kappa), ("tau", tau), ("rho", rho)]
    if lam is not None:
        lam = check_real("lam", lam, low=0.0, low_open=lam_low_open)
        named.append(("lam", lam))
    check_broadcast(*named)
    with np.errstate(over="ignore"):
        x = (1.0 + rho) / alpha
    ridge = np.zeros((), bool) if lam is None else lam > 0.0
    xmax = np.where(ridge, RIDGE_MAX, X_MAX)
    if np.any(x > xmax):
        i = np.unravel_index(np.argmax(x / xmax), np.broadcast_shapes(x.shape, xmax.shape))
        xi, ai, ri, mi = (float(np.broadcast_to(v, xmax.shape if xmax.ndim else x.shape)[i])
                          if np.ndim(v) else float(v) for v in (x, alpha, rho, xmax))
        raise ValueError(
            f"alpha = {ai:g} and rho = {ri:g} give x* = (1 + rho)/alpha = {xi:.3g}, outside the "
            f"supported range x* <= {mi:g}{' of the ridge formula (lam > 0)' if mi < X_MAX else ''}; "
            f"alpha must be at least (1 + rho)/{mi:g} = {(1.0 + ri) / mi:.3g} here"
        )
    if lam is not None and np.any(lam > X_MAX):
        raise ValueError(f"lam must be <= {X_MAX:g} (the supported range of the ridge formula); got {lam.max():g}")
    return (alpha, kappa, tau, rho) if lam is None else (alpha, kappa, tau, rho, lam)


def _check_lam(lam: Any) -> np.ndarray:
    return check_real("lam", lam, low=0.0)


def _mp(x: np.ndarray, ik: np.ndarray) -> np.ndarray:
    r""":math:`M_\kappa(x)` for ``x > 0`` in terms of ``ik`` :math:`= 1/\kappa \ge 0`.

    With :math:`b = x + 1 - 1/\kappa` and :math:`s = \sqrt{b^2 + 4x/\kappa}`,
    :math:`M = 2/(b + s)`. When :math:`b < 0` the sum :math:`b + s` cancels, and we use
    the equal form :math:`b + s = 4x\kappa^{-1}/(|b| + s)`. Both forms only divide by
    :math:`|b| + s > 0`, so :math:`\kappa = \infty` (``ik = 0``) needs no special case.
    """
    b = x + 1.0 - ik
    s = np.hypot(b, 2.0 * np.sqrt(x) * np.sqrt(ik))  # no overflow of b**2 for huge x
    t = np.abs(b) + s
    denom = np.where(b >= 0.0, t, 4.0 * x * (ik / t))
    return 2.0 / denom


def _dmp(x: np.ndarray, ik: np.ndarray) -> np.ndarray:
    r""":math:`M_\kappa'(x) = -\tfrac12 M^2 (1 + (x + 1 + 1/\kappa)/s)`, ``ik`` = 1/kappa."""
    b = x + 1.0 - ik
    s = np.hypot(b, 2.0 * np.sqrt(x) * np.sqrt(ik))
    m = _mp(x, ik)
    return -0.5 * m * m * (1.0 + (x + 1.0 + ik) / s)


#: Smallest task diversity evaluated: a smaller :math:`\kappa` is evaluated at this one.
#: The formulas are smooth in :math:`\kappa` with corrections of order :math:`\kappa` as
#: :math:`\kappa \to 0` (already at 1e-20 the errors agree with this value to rounding),
#: and :math:`1/\kappa \le 10^{100}` keeps products such as :math:`S/\kappa` finite.
KAPPA_MIN = 1e-100


def _inv(kappa: np.ndarray) -> np.ndarray:
    """1/kappa with 1/inf = 0 (numpy does this without a warning), capped at 1/KAPPA_MIN."""
    return 1.0 / np.maximum(kappa, KAPPA_MIN)


# --------------------------------------------------------------------------------------
# Marchenko-Pastur transform
# --------------------------------------------------------------------------------------
def M_kappa(x: ArrayLike, kappa: ArrayLike) -> float | np.ndarray:
    r"""Marchenko-Pastur trace of the resolvent, :math:`M_\kappa(x)`.

    .. math::

        M_\kappa(x) = \lim_{d\to\infty} \frac1d \operatorname{tr}(R + xI)^{-1}
        = \frac{2}{x + 1 - 1/\kappa + \sqrt{(x + 1 - 1/\kappa)^2 + 4x/\kappa}},

    where :math:`R = \frac1k \sum_{j \le k} w_j w_j^\top` is the sample covariance of
    :math:`k = \kappa d` standard Gaussian task vectors. :math:`M_\kappa` is the
    Stieltjes transform :math:`m(-x)` of the Marchenko-Pastur law of ratio
    :math:`1/\kappa` (which has an atom of mass :math:`1 - \kappa` at 0 when
    :math:`\kappa < 1`). It is evaluated in a cancellation-free form (see the source),
    and :math:`\kappa = \infty` gives the limit :math:`M_\infty(x) = 1/(1 + x)`
    (:math:`R = I`).

    Parameters
    ----------
    x : float or array_like
        Shift, :math:`x > 0` and finite.
    kappa : float or array_like
        Tasks per dimension, :math:`\kappa > 0`; ``numpy.inf`` allowed. Broadcasts
        against ``x``.

    Returns
    -------
    float or numpy.ndarray
        :math:`M_\kappa(x)`, of the broadcast shape of ``x`` and ``kappa``; a float if
        both are scalars.

    Raises
    ------
    TypeError, ValueError
        For non-numbers, NaN, :math:`x \le 0`, :math:`x = \infty` or :math:`\kappa \le 0`.

    Used in: :doc:`learning curves </book/linear/learning_curves>`,
    :doc:`finite pretraining data </book/regimes/finite_data>`.
    """
    x = check_real("x", x, low=0.0, low_open=True)
    kappa = check_real("kappa", kappa, low=0.0, low_open=True, allow_inf=True)
    check_broadcast(("x", x), ("kappa", kappa))
    return _out(_mp(x, _inv(kappa)))


def dM_kappa(x: ArrayLike, kappa: ArrayLike) -> float | np.ndarray:
    r"""Derivative :math:`M_\kappa'(x)` of :func:`M_kappa`.

    .. math::

        \begin{aligned}
        M_\kappa'(x) &= -\frac12 M_\kappa(x)^2 \left(1 + \frac{x + 1 + 1/\kappa}
            {\sqrt{(x + 1 - 1/\kappa)^2 + 4x/\kappa}}\right), \\
        M_\infty'(x) &= -\frac{1}{(1 + x)^2}.
        \end{aligned}

    Parameters
    ----------
    x : float or array_like
        :math:`x > 0`, finite.
    kappa : float or array_like
        :math:`\kappa > 0`, ``numpy.inf`` allowed; broadcasts against ``x``.

    Returns
    -------
    float or numpy.ndarray
        :math:`M_\kappa'(x) < 0`, broadcast shape; a float for scalar input.

    Used in: chapters 2-5.
    """
    x = check_real("x", x, low=0.0, low_open=True)
    kappa = check_real("kappa", kappa, low=0.0, low_open=True, allow_inf=True)
    check_broadcast(("x", x), ("kappa", kappa))
    return _out(_dmp(x, _inv(kappa)))


# --------------------------------------------------------------------------------------
# linear teacher: ridgeless
# --------------------------------------------------------------------------------------
def _icl_ridgeless_below(x, ik, tau, rho):
    r"""Ridgeless ICL error for tau < 1 (arrays of one shape).

    With :math:`T = 1 - \mu^*` computed without cancellation (:func:`_one_minus_nu_m`
    at :math:`\kappa/\tau`), the bracket of the formula is
    :math:`1 - \tau T^2 - (1 - \rho/x^*)(1 - T) = T(1 - \tau T) + \rho\mu^*/x^*`: a sum of
    non-negative terms, so that large :math:`x^*` (tiny :math:`\alpha`), where
    :math:`T \approx 1/x^*`, loses no digits.
    """
    ikt = ik * tau
    S = _mp(x, ikt)
    T = _one_minus_nu_m(S, ikt)  # 1 - mu*
    bracket = T * (1.0 - tau * T) + rho * S  # rho mu*/x* = rho M
    return tau / (1.0 - tau) * ((1.0 + x) * bracket) - 2.0 * tau * T + 1.0 + rho


def _icl_ridgeless_above(x, ik, tau, rho):
    r"""Ridgeless ICL error for tau > 1 (arrays of one shape).

    The published form adds terms of order :math:`x^{*2} m^*` and :math:`x^*` that cancel
    for large :math:`x^*`. With :math:`u = x^* m^*`, :math:`T = 1 - u`
    (:func:`_one_minus_nu_m`) and :math:`t = 1/(\tau - 1)` it equals (expand and use
    :math:`t(\tau - 1) = 1`)

    .. math::

        e = x^*\big[(k^* - 1)u^2 + T(t u + T)\big] + (k^* - t)u^2 + (1+\rho)t u
            + \rho m^* t + \rho ,

    where :math:`x^* T \to 1` and :math:`x^*(k^* - 1) \to 0` as :math:`x^* \to \infty`:
    the limit :math:`\alpha \to 0` is :math:`(1+\rho)\tau/(\tau-1)`.
    """
    m = _mp(x, ik)
    T = _one_minus_nu_m(m, ik)  # 1 - u, accurate when u is near 1
    u = x * m  # accurate when u is small
    # kappa (m/(kappa+m))^2 = (m^2/kappa)/(1 + m/kappa)^2: no inf*0 at kappa = inf.
    q = ik * m * m / (1.0 + ik * m) ** 2
    kstar = 1.0 / (1.0 - q)
    km1 = q / (1.0 - q)  # k* - 1 without cancellation
    t1 = 1.0 / (tau - 1.0)
    return (
        x * (km1 * u * u) + (x * T) * (t1 * u + T)
        + (kstar - t1) * u * u
        + (1.0 + rho) * t1 * u
        + rho * m * t1
        + rho
    )


def _idg_ridgeless_below(x, ik, tau, rho):
    r"""Ridgeless IDG error for tau < 1 (arrays of one shape).

    With :math:`s = 1 - \tau`, :math:`T = 1 - \mu^*` and :math:`\delta = c - 1`, the
    terms of order :math:`x^*` of the formula cancel exactly; what is left is

    .. math::

        e = \tau\Big[x^* T\Big(\frac{1+s}{s} + \frac{s}{\tau\mu^*}\Big)
            + \frac{\rho}{s\tau}
            + \frac{\delta\,(\rho - x^* + 2\tau x^* T)}{\tau(\tau - \delta s)}\Big],

    which is evaluated instead (no cancellation for large :math:`x^*`).
    """
    ikt = ik * tau
    S = _mp(x, ikt)
    T = _one_minus_nu_m(S, ikt)  # 1 - mu*, accurate when mu* is near 1
    mu = x * S  # mu*, accurate when it is small
    s = 1.0 - tau
    with np.errstate(over="ignore"):  # huge 1/(tau S) (x* near X_MAX) gives q = 0
        r = 1.0 / (tau * S)  # eps/(1 - tau) = x*/(tau mu*), eps = (1 - tau) x*/(tau mu*)
        # c = 1/(1 - q), q = kappa/(1 + kappa eps/(1-tau))^2 = (1/kappa)/(1/kappa + r)^2.
        q = (ik / (ik + r)) / (ik + r)
    delta = q / (1.0 - q)  # c - 1
    num = rho - x + 2.0 * tau * (x * T)
    return tau * (
        (x * T) * ((1.0 + s) / s + s / (tau * mu))
        + rho / (s * tau)
        + delta * num / (tau * (tau - delta * s))
    )


def _idg_ridgeless_above(x, ik, tau, rho):
    r"""Ridgeless IDG error for tau > 1 (arrays of one shape); :math:`1 - x^*m^* = T`."""
    m = _mp(x, ik)
    return tau * (rho + x * _one_minus_nu_m(m, ik)) / (tau - 1.0)


# --------------------------------------------------------------------------------------
# linear teacher: ridge
# --------------------------------------------------------------------------------------
def _ridge_residual(eps, tau, lam, x, ik):
    r""":math:`g(\varepsilon) = 1 - \tau + \tau\lambda/\varepsilon - \varepsilon M_\kappa(\varepsilon + x^*)`.

    Two groupings of the same function, each accurate (to rounding relative to the
    slope scale :math:`|g'(\varepsilon)|\varepsilon`) where it is used:

    * :math:`\tau \ge 1/2`: :math:`(1 - \tau) + \tau(\lambda/\varepsilon) - \varepsilon S`,
      with :math:`1 - \tau` exact near :math:`\tau = 1` (where the root can be tiny,
      :math:`\varepsilon \sim \sqrt\lambda`);
    * :math:`\tau < 1/2`: :math:`(T + x^* S) + \tau\,[(\lambda - \varepsilon)/\varepsilon]`,
      where :math:`1 - \varepsilon S = T + x^* S` is computed without cancellation
      through :math:`T = 1 - \nu S = S/(1 + S/\kappa)` (:func:`_one_minus_nu_m`); the
      root is then large, :math:`\varepsilon \sim x^*/\tau`, and :math:`1 - \varepsilon S`
      is small.

    Here :math:`S = M_\kappa(\nu)`, :math:`\nu = x^* + \varepsilon`. In the bracket
    :math:`\varepsilon \ge \lambda`, so no term can overflow.
    """
    S = _mp(eps + x, ik)
    near_one = (1.0 - tau) + tau * (lam / eps) - eps * S
    small_tau = (_one_minus_nu_m(S, ik) + x * S) + tau * ((lam - eps) / eps)
    return np.where(tau < 0.5, small_tau, near_one)


def _one_minus_nu_m(S, ik):
    r""":math:`1 - \nu M_\kappa(\nu) = S/(1 + S/\kappa)` given :math:`S = M_\kappa(\nu)`.

    From the quadratic :math:`(\nu/\kappa) S^2 + (\nu + 1 - 1/\kappa) S - 1 = 0` that
    :math:`S` solves, :math:`T = 1 - \nu S` satisfies :math:`T = S(1 - T/\kappa)`. The
    left form cancels for large :math:`\nu` (:math:`T \approx 1/\nu`); the right one
    does not.
    """
    return S / (1.0 + ik * S)


def _ridge_root(x, ik, tau, lam):
    r"""Vectorized positive root of the ridge equation (1-d arrays of one shape, lam > 0).

    Existence and uniqueness. Write :math:`M_\kappa(y) = \int \frac{d\mu(r)}{r + y}`
    with :math:`\mu` the Marchenko-Pastur law (mean 1, support in :math:`[0,\infty)`).
    Then

    .. math::

        g(\varepsilon) = 1 - \tau + \frac{\tau\lambda}{\varepsilon}
        - \int \frac{\varepsilon}{r + x^* + \varepsilon}\, d\mu(r).

    Each integrand :math:`\varepsilon/(r + x^* + \varepsilon)` is increasing and concave
    in :math:`\varepsilon`, and :math:`\tau\lambda/\varepsilon` is decreasing and convex,
    so :math:`g` is strictly decreasing and convex on :math:`(0, \infty)`, with
    :math:`g \to +\infty` at :math:`0^+` (as :math:`\lambda > 0`) and
    :math:`g \to -\tau < 0` at :math:`\infty`: exactly one positive root.

    Guaranteed bracket :math:`[\varepsilon_-, \varepsilon_+]`, with margins that
    survive rounding:

    * the integral is :math:`< 1` and :math:`\le \varepsilon/(x^* + \varepsilon)`, so
      :math:`g(\varepsilon) > \tau(\lambda/\varepsilon - 1) \ge 0` for
      :math:`\varepsilon \le \lambda`; and, if :math:`\tau < 1`, at
      :math:`\varepsilon = (1-\tau)x^*/(2\tau)`,
      :math:`g \ge \tau\lambda/\varepsilon + 1 - \tau - \varepsilon/(x^*+\varepsilon)
      > \tau(1-\tau)/(1+\tau) > 0`. Hence
      :math:`\varepsilon_- = \max(\lambda, (1-\tau)x^*/(2\tau))`.
    * by Jensen (the integrand is convex in :math:`r`, :math:`\int r\,d\mu = 1`) the
      integral is :math:`\ge \varepsilon/(1 + x^* + \varepsilon)`, so
      :math:`g(\varepsilon) < -\tau + (\tau\lambda + 1 + x^*)/\varepsilon = -\tau/2`
      at :math:`\varepsilon = 2\lambda + 2(1 + x^*)/\tau`; and if :math:`\tau > 1`,
      at :math:`\varepsilon = \lambda(\tau+1)/(\tau-1)`,
      :math:`1 - \tau + \tau\lambda/\varepsilon = (1-\tau)/(1+\tau)`, so
      :math:`g = (1-\tau)/(1+\tau) - \varepsilon M_\kappa(\nu) < 0`.
      Hence :math:`\varepsilon_+` is the smaller of the two.

    The root is then found by Chandrupatla's bracketing method
    (:func:`scipy.optimize.elementwise.find_root`), all elements at once.
    """
    lo = lam.copy()
    hi = 2.0 * lam + 2.0 * (1.0 + x) / tau
    below = tau < 1.0
    lo[below] = np.maximum(lo[below], 0.5 * (1.0 - tau[below]) * x[below] / tau[below])
    above = tau > 1.0
    with np.errstate(over="ignore"):  # inf (huge lam, tau near 1) leaves the other bound
        hi[above] = np.minimum(hi[above], lam[above] * ((tau[above] + 1.0) / (tau[above] - 1.0)))
    # In exact arithmetic g(lo) > 0 > g(hi). Where rounding cannot tell an endpoint
    # from the root (g computes to <= 0 at lo, or >= 0 at hi; e.g. lam huge and
    # tau > 1, where the root is lam(1 + O(1/lam))), that endpoint is the root to working
    # precision; where the bracket is already narrower than the target accuracy
    # (tau >> 1), its midpoint is.
    eps = 0.5 * (lo + hi)
    g_lo = _ridge_residual(lo, tau, lam, x, ik)
    g_hi = _ridge_residual(hi, tau, lam, x, ik)
    eps = np.where(g_lo <= 0.0, lo, np.where(g_hi >= 0.0, hi, eps))
    todo = (g_lo > 0.0) & (g_hi < 0.0) & (hi - lo > _ROOT_XRTOL * hi)
    if np.any(todo):
        res = elementwise.find_root(
            _ridge_residual,
            (lo[todo], hi[todo]),
            args=(tau[todo], lam[todo], x[todo], ik[todo]),
            tolerances=dict(xrtol=_ROOT_XRTOL, xatol=0.0),
        )
        if not np.all(res.success):  # pragma: no cover - the bracket is guaranteed
            first = np.flatnonzero(~res.success)[0]
            bad = np.flatnonzero(todo)[first]
            raise RuntimeError(
                f"ridge equation: root finder failed (status {int(res.status[first])}) at "
                f"x*={x[bad]}, 1/kappa={ik[bad]}, tau={tau[bad]}, lam={lam[bad]}"
            )
        eps[todo] = res.x
    return eps


def _icl_ridge(x, ik, tau, rho, lam):
    r"""Ridge ICL error (1-d arrays of one shape, lam > 0).

    Every combination of :math:`S = M_\kappa(\nu)` and :math:`S' = M_\kappa'(\nu)` in
    the formula is a moment of the Marchenko-Pastur law :math:`\mu` (mean 1), e.g.
    :math:`1 - 2\nu S - \nu^2 S' = \int r^2/(r+\nu)^2\,d\mu(r)`, which the published
    form computes as a difference of numbers of order 1 (all digits lost when
    :math:`\nu = x^* + \varepsilon` is large: huge :math:`\lambda`, tiny
    :math:`\alpha`). They are evaluated here in closed forms that are sums and products
    of positive terms. With :math:`g = 1 + S/\kappa`, :math:`q_2 = -S'`:

    * :math:`T = \int r/(r+\nu) = 1 - \nu S = S/g`;
    * :math:`U = \int r/(r+\nu)^2 = -T' = q_2/g^2`;
    * :math:`a = \int r^2/(r+\nu)^2 = U\,[(1 + 1/\kappa)/g + (1/\kappa - 1) S/(\kappa g)]`
      (from :math:`1 - \nu T = S(1 + 1/\kappa + S/\kappa^2)/g^2`, differentiated);
    * :math:`S + \varepsilon S' = \int (r + x^*)/(r+\nu)^2 = U + x^* q_2`;
    * :math:`1 - \tau - 2\varepsilon S - \varepsilon^2 S' = W - \tau` with
      :math:`W = \int ((r+x^*)/(r+\nu))^2 = a + 2x^* U + x^{*2} q_2`, evaluated as
      :math:`(1 - \tau) - (1 - W)` with :math:`1 - W = \varepsilon(2U + (x^* + \nu) q_2)`
      where :math:`W \ge 1/2` (at :math:`\tau = 1` the root is tiny and :math:`W \approx 1`);
    * :math:`\nu T - \varepsilon a = \int r(\nu^2 + x^* r)/(r+\nu)^2 = \nu^2 U + x^* a`.

    Then :math:`c = (\rho + \nu^2 U + x^* a)/(W - \tau)` and
    :math:`e = (1+x^*)(a - c(U + x^* q_2)) - 2T + 1 + \rho
    = \nu^2 q_2 + x^* a - (1 + x^*)\,c\,(U + x^* q_2) + \rho`, using
    :math:`1 - 2T + a = \int (\nu/(r+\nu))^2\,d\mu = \nu^2 q_2` (no cancellation for
    small :math:`x^*`, i.e. long contexts, either). It tends to :math:`1 + \rho` (the
    zero predictor) as :math:`\lambda \to \infty`.
    """
    eps = _ridge_root(x, ik, tau, lam)
    nu = x + eps
    S = _mp(nu, ik)
    # q2 = -M'(nu) = S^2 fac (see _dmp); nu^2 q2 = (nu S)^2 fac does not underflow for huge nu
    fac = 0.5 * (1.0 + (nu + 1.0 + ik) / np.hypot(nu + 1.0 - ik, 2.0 * np.sqrt(nu) * np.sqrt(ik)))
    q2 = S * S * fac
    nu2q2 = (nu * S) ** 2 * fac
    g = 1.0 + ik * S
    T = S / g  # 1 - nu S
    U = q2 / g / g
    a = U * ((1.0 + ik) / g + (ik - 1.0) * (ik * S / g))
    P = U + x * q2  # S + eps S'
    W = a + 2.0 * x * U + x * (x * q2)
    # W - tau, with 1 - W = eps (2U + (x* + nu) q2) where W is near 1 (tau near 1 and a
    # tiny root: there 1 - tau is exact and W - tau would cancel)
    one_minus_W = eps * (2.0 * U + (x + nu) * q2)
    denom = np.where(W >= 0.5, (1.0 - tau) - one_minus_W, W - tau)
    c = (rho + nu2q2 / g / g + x * a) / denom  # nu^2 U = nu^2 q2 / g^2
    # 1 - 2T + a = int (nu/(r + nu))^2 = nu^2 q2: no cancellation for small x* either
    return nu2q2 + x * a - (1.0 + x) * (c * P) + rho


def ridge_epsilon(
    alpha: ArrayLike, kappa: ArrayLike, tau: ArrayLike, rho: ArrayLike, lam: ArrayLike
) -> float | np.ndarray:
    r"""The positive root :math:`\varepsilon` of the ridge equation.

    .. math::

        1 - \tau + \frac{\tau\lambda}{\varepsilon}
        - \varepsilon\, M_\kappa(\varepsilon + x^*) = 0, \qquad x^* = \frac{1+\rho}{\alpha},

    which has exactly one positive root for :math:`\lambda > 0` (the left side is
    strictly decreasing and convex in :math:`\varepsilon`, from :math:`+\infty` to
    :math:`-\tau`). It is found in the guaranteed bracket
    :math:`[\max(\lambda, (1-\tau)^+ x^*/(2\tau)),\
    \min(2\lambda + 2(1+x^*)/\tau,\ \lambda(\tau+1)/(\tau-1)^+)]`
    (both bounds hold for every :math:`\kappa`; the derivation is in the source) by
    :func:`scipy.optimize.elementwise.find_root`, to relative accuracy 1e-13.

    Parameters
    ----------
    alpha, kappa, tau, rho : float or array_like
        Model parameters (see :func:`icl_error`); broadcast together.
    lam : float or array_like
        Ridge strength, :math:`\lambda > 0`.

    Returns
    -------
    float or numpy.ndarray
        :math:`\varepsilon > 0`, broadcast shape.

    Used in: chapter 4 (ridge pretraining).
    """
    alpha, kappa, tau, rho, lam = _check_params(alpha, kappa, tau, rho, lam, lam_low_open=True)
    x, ik, tau, lam = np.broadcast_arrays((1.0 + rho) / alpha, _inv(kappa), tau, lam)
    shape = x.shape
    eps = _ridge_root(*(np.array(a, dtype=float).ravel() for a in (x, ik, tau, lam)))
    return _out(eps.reshape(shape))


# --------------------------------------------------------------------------------------
# linear teacher: public errors
# --------------------------------------------------------------------------------------
def icl_error(
    alpha: ArrayLike, kappa: ArrayLike, tau: ArrayLike, rho: ArrayLike, lam: ArrayLike = 0.0
) -> float | np.ndarray:
    r"""Asymptotic in-context-learning (ICL) error, linear teacher.

    Test error on fresh tasks, :math:`d \to \infty`. With :math:`x^* = (1+\rho)/\alpha`,
    :math:`m^* = M_\kappa(x^*)`, :math:`\mu^* = x^* M_{\kappa/\tau}(x^*)`
    (:func:`M_kappa`):

    Ridgeless (:math:`\lambda = 0`), :math:`\tau < 1`:

    .. math::

        e = \frac{\tau(1+x^*)}{1-\tau}\Big[1 - \tau(1-\mu^*)^2
            - \big(1 - \tfrac{\rho}{x^*}\big)\mu^*\Big] - 2\tau(1-\mu^*) + 1 + \rho .

    Ridgeless, :math:`\tau > 1`, with
    :math:`k^* = 1/\big(1 - \kappa\,(m^*/(\kappa + m^*))^2\big)` (:math:`k^* = 1` at
    :math:`\kappa = \infty`):

    .. math::

        \begin{aligned}
        e = {}& \Big(k^* - \frac{1}{\tau-1}\Big)(1+x^*)(x^* m^*)^2
            + \frac{3-2\tau}{\tau-1} m^* x^{*2} \\
            &+ \Big(\frac{(1+\rho)m^*}{\tau-1} + 1\Big)x^* + \frac{\rho m^*}{\tau-1} + \rho .
        \end{aligned}

    Ridgeless, :math:`\tau = 1`: the interpolation peak, the error is ``inf``
    (returned on purpose, without a warning).

    Ridge (:math:`\lambda > 0`): with :math:`\varepsilon` the unique positive root of
    :math:`1 - \tau + \tau\lambda/\varepsilon - \varepsilon M_\kappa(\varepsilon + x^*) = 0`
    (:func:`ridge_epsilon`), :math:`\nu = x^* + \varepsilon`,
    :math:`S = M_\kappa(\nu)`, :math:`S' = M_\kappa'(\nu)`:

    .. math::

        \begin{aligned}
        c &= \frac{\rho + \nu - \nu^2 S - \varepsilon(1 - 2\nu S - \nu^2 S')}
                 {1 - 2\varepsilon S - \varepsilon^2 S' - \tau}, \\
        e &= (1+x^*)\big(1 - 2\nu S - \nu^2 S' - c(S + \varepsilon S')\big)
            - 2(1 - \nu S) + 1 + \rho .
        \end{aligned}

    It is finite at :math:`\tau = 1` and tends to the ridgeless value as
    :math:`\lambda \to 0^+` on both sides of :math:`\tau = 1`.

    Parameters
    ----------
    alpha : float or array_like
        Context length per dimension, :math:`\alpha = \ell/d > 0`.
    kappa : float or array_like
        Pretraining tasks per dimension, :math:`\kappa = k/d > 0`; ``numpy.inf`` for a
        fresh task per context (handled as the limit, :math:`M_\infty(x) = 1/(1+x)`).
    tau : float or array_like
        Pretraining contexts per parameter, :math:`\tau = n/d^2 > 0`.
    rho : float or array_like
        Label-noise variance, :math:`\rho \ge 0`.
    lam : float or array_like, default 0
        Ridge strength, :math:`\lambda \ge 0`; 0 is the ridgeless (minimum-norm) limit.
        Entries may mix zero and positive values.

    Returns
    -------
    float or numpy.ndarray
        The error, of the broadcast shape of the five parameters; a float if they are
        all scalars. ``inf`` where :math:`\tau = 1` and :math:`\lambda = 0`.

    Raises
    ------
    TypeError
        If a parameter is not a real number or array of them.
    ValueError
        If a parameter is NaN or out of range (the message names it):
        :math:`\alpha, \kappa, \tau > 0`, :math:`\rho, \lambda \ge 0`, only
        :math:`\kappa` may be infinite; if the parameters do not broadcast together
        (the message names the first two that clash, in the order of the call); or
        outside the supported range: :math:`x^* = (1+\rho)/\alpha \le 10^{305}`
        (``X_MAX``), and for :math:`\lambda > 0` :math:`x^* \le 10^{150}` (``RIDGE_MAX``)
        and :math:`\lambda \le 10^{305}`. Inside it every regime (huge :math:`\lambda`,
        tiny :math:`\alpha`, tiny :math:`\kappa`, tiny roots near :math:`\tau = 1`) is
        evaluated in cancellation-free forms, checked by ``tests/test_theory_properties.py``.

    Notes
    -----
    The ridge branch solves all the root equations at once, so a 400-point curve costs
    a few milliseconds (``bench/bench_theory.py``).

    Used in: :doc:`the model </book/linear/model>`,
    :doc:`learning curves </book/linear/learning_curves>`,
    :doc:`the equivalence theorem </book/equivalence/theorem>`,
    :doc:`task diversity </book/regimes/task_diversity>`.
    """
    alpha, kappa, tau, rho, lam = _check_params(alpha, kappa, tau, rho, lam)
    x, ik, tau, rho, lam = (
        np.array(a, dtype=float)
        for a in np.broadcast_arrays((1.0 + rho) / alpha, _inv(kappa), tau, rho, lam)
    )
    out = np.full(x.shape, np.inf)
    ridge = lam > 0.0
    below = ~ridge & (tau < 1.0)
    above = ~ridge & (tau > 1.0)
    if np.any(ridge):
        out[ridge] = _icl_ridge(x[ridge], ik[ridge], tau[ridge], rho[ridge], lam[ridge])
    if np.any(below):
        out[below] = _icl_ridgeless_below(x[below], ik[below], tau[below], rho[below])
    if np.any(above):
        out[above] = _icl_ridgeless_above(x[above], ik[above], tau[above], rho[above])
    return _out(out)


def idg_error(alpha: ArrayLike, kappa: ArrayLike, tau: ArrayLike, rho: ArrayLike) -> float | np.ndarray:
    r"""Asymptotic in-distribution generalization (IDG) error, linear teacher, ridgeless.

    Test error on tasks drawn from the :math:`k = \kappa d` pretraining tasks. With
    :math:`x^*, m^*, \mu^*` as in :func:`icl_error`:

    :math:`\tau < 1`: with :math:`\varepsilon = (1-\tau)x^*/(\tau\mu^*)` and
    :math:`c = 1/\big(1 - \kappa/(1 + \kappa\varepsilon/(1-\tau))^2\big)`,

    .. math::

        e = \tau\left[\frac{(x^*+\varepsilon)^2}{\varepsilon}
            + \frac{\rho + x^* - 2x^*(1-\tau)(x^*/\varepsilon + 1)}{1 - \tau - c(1-\tau)^2}\right].

    :math:`\tau > 1`:

    .. math::

        e = \frac{\tau\,\big(\rho + x^*(1 - x^* m^*)\big)}{\tau - 1}.

    :math:`\tau = 1`: ``inf`` (the interpolation peak).

    At :math:`\kappa = \infty` the pretraining tasks never repeat and the IDG error
    equals :func:`icl_error`. The formulas are evaluated through :math:`1/\kappa`
    (:math:`c = 1` at :math:`\kappa = \infty`), and both reduce algebraically to the
    ICL ones there: for :math:`\tau < 1` both become
    :math:`\big((1-\tau)^2 + x^* + \rho(1+x^*)\big)/\big((1+x^*)(1-\tau)\big)`, for
    :math:`\tau > 1` both become :math:`\tfrac{\tau}{\tau-1}\big(\rho + x^*/(1+x^*)\big)`.

    Parameters
    ----------
    alpha, kappa, tau, rho : float or array_like
        As in :func:`icl_error`; broadcast together.

    Returns
    -------
    float or numpy.ndarray
        The error, broadcast shape; a float for scalar input.

    Raises
    ------
    TypeError, ValueError
        As :func:`icl_error`.

    Used in: :doc:`learning curves </book/linear/learning_curves>`.
    """
    alpha, kappa, tau, rho = _check_params(alpha, kappa, tau, rho)
    x, ik, tau, rho = (
        np.array(a, dtype=float) for a in np.broadcast_arrays((1.0 + rho) / alpha, _inv(kappa), tau, rho)
    )
    out = np.full(x.shape, np.inf)
    below = tau < 1.0
    above = tau > 1.0
    if np.any(below):
        out[below] = _idg_ridgeless_below(x[below], ik[below], tau[below], rho[below])
    if np.any(above):
        out[above] = _idg_ridgeless_above(x[above], ik[above], tau[above], rho[above])
    return _out(out)


def icl_limit(alpha: ArrayLike, rho: ArrayLike) -> float | np.ndarray:
    r"""The ICL error in the limit of infinite pretraining data and task diversity.

    .. math::

        \lim_{\tau,\kappa\to\infty} e_{\mathrm{ICL}} = \rho + \frac{x^*}{1 + x^*},
        \qquad x^* = \frac{1+\rho}{\alpha}.

    This is also a lower bound: no finite :math:`\tau`, :math:`\kappa` or
    :math:`\lambda` does better on fresh tasks (it is the ICL error of the best
    :math:`\Gamma` for the fresh-task distribution).

    Parameters
    ----------
    alpha : float or array_like
        :math:`\alpha > 0`.
    rho : float or array_like
        :math:`\rho \ge 0`.

    Returns
    -------
    float or numpy.ndarray
        Broadcast shape.

    Used in: :doc:`learning curves </book/linear/learning_curves>`.
    """
    alpha = check_real("alpha", alpha, low=0.0, low_open=True)
    rho = check_real("rho", rho, low=0.0)
    check_broadcast(("alpha", alpha), ("rho", rho))
    with np.errstate(over="ignore"):
        x = (1.0 + rho) / alpha
    # x/(1 + x) = 1/(1 + 1/x): the limit 1 for x = inf (alpha -> 0) without inf/inf
    return _out(rho + 1.0 / (1.0 + 1.0 / x))


def optimal_lambda(
    alpha: ArrayLike,
    kappa: ArrayLike,
    tau: ArrayLike,
    rho: ArrayLike,
    *,
    lam_bounds: tuple[float, float] = (1e-8, 1e4),
) -> tuple[float | np.ndarray, float | np.ndarray]:
    r"""The ridge strength that minimizes the ICL error, and that error.

    .. math::

        \lambda^* = \operatorname*{arg\,min}_{\lambda \ge 0} e_{\mathrm{ICL}}(\alpha,\kappa,\tau,\rho,\lambda),
        \qquad e^* = e_{\mathrm{ICL}}(\alpha,\kappa,\tau,\rho,\lambda^*).

    Minimized over :math:`t = \log\lambda` in ``lam_bounds``, vectorized over all
    parameter points: :func:`scipy.optimize.elementwise.bracket_minimum` brackets the
    minimum starting from the :math:`\kappa = \infty` optimum below, then
    :func:`scipy.optimize.elementwise.find_minimum` refines it (relative accuracy
    about 1e-8 in :math:`\log\lambda`). Where the error keeps decreasing towards the
    lower bound, the search ends at that bound; where it keeps decreasing
    towards the upper bound, :math:`\lambda^*` is that bound. Finally the ridgeless
    error (:math:`\lambda = 0`, continuous limit of the ridge error) is compared, and
    :math:`\lambda^* = 0` is returned where it is at least as good (this happens for
    finite :math:`\kappa` and large :math:`\tau`, where the ICL error increases with
    :math:`\lambda` from :math:`\lambda = 0`).

    Parameters
    ----------
    alpha, kappa, tau, rho : float or array_like
        As in :func:`icl_error`; broadcast together.
    lam_bounds : (float, float), keyword-only
        Search interval for :math:`\lambda`, :math:`0 < \lambda_{lo} < \lambda_{hi}`.

    Returns
    -------
    lam_star, e_star : float or numpy.ndarray
        Broadcast shape; floats for scalar input.

    Notes
    -----
    Found numerically (``tests/test_theory.py`` checks it to 1e-5 over a grid of
    :math:`\alpha, \tau, \rho`): at :math:`\kappa = \infty`

    .. math::

        \begin{aligned}
        \lambda^* &= \frac{(1 + x^*)^2\, e_\infty}{\tau}
                  = \frac{(1 + x^*)\,\big(x^* + \rho(1 + x^*)\big)}{\tau}, \\
        e_\infty &= \rho + \frac{x^*}{1 + x^*},
        \end{aligned}

    with :math:`e_\infty` the value of :func:`icl_limit`; i.e. the penalty
    :math:`(n/d)\lambda^* = d\,(1+x^*)^2 e_\infty` does not grow with :math:`n`: the
    irreducible error :math:`e_\infty` plays the role of the noise in the familiar
    "noise over signal" optimal ridge. For finite :math:`\kappa`
    (observed at :math:`\alpha = 2, \rho = 0.1`): :math:`\lambda^*` is close to this
    value at small :math:`\tau`; at large :math:`\tau` it becomes exactly 0 for
    :math:`\kappa \gtrsim 0.9` (the ICL error then increases with :math:`\lambda`
    from :math:`\lambda = 0`), while for small :math:`\kappa` (0.2, 0.5) it stays
    positive as :math:`\tau \to \infty` (shrinking the memorized task set helps).

    Used in: :doc:`learning curves </book/linear/learning_curves>`,
    :doc:`finite pretraining data </book/regimes/finite_data>`,
    :doc:`task diversity </book/regimes/task_diversity>`.
    """
    alpha, kappa, tau, rho = _check_params(alpha, kappa, tau, rho)
    if isinstance(lam_bounds, (str, bytes)) or np.ndim(lam_bounds) != 1 or len(lam_bounds) != 2:
        raise TypeError(
            f"lam_bounds must be a pair (lam_lo, lam_hi) with 0 < lam_lo < lam_hi; got {lam_bounds!r}"
        )
    lo = float(check_real("lam_bounds[0]", lam_bounds[0], low=0.0, low_open=True))
    hi = float(check_real("lam_bounds[1]", lam_bounds[1], low=lo, low_open=True))
    if hi > X_MAX:
        raise ValueError(f"lam_bounds[1] must be <= {X_MAX:g}; got {hi!r}")
    shape = np.broadcast_shapes(alpha.shape, kappa.shape, tau.shape, rho.shape)
    x, ik, tau, rho = (
        np.array(a, dtype=float).ravel()
        for a in np.broadcast_arrays((1.0 + rho) / alpha, _inv(kappa), tau, rho)
    )

    def objective(t, x, ik, tau, rho):
        flat = [np.ravel(a) for a in np.broadcast_arrays(t, x, ik, tau, rho)]
        return _icl_ridge(flat[1], flat[2], flat[3], flat[4], np.exp(flat[0])).reshape(np.shape(t))

    t_lo, t_hi = np.log(lo), np.log(hi)
    args = (x, ik, tau, rho)
    # Start from the kappa = inf optimum (1 + x*)^2 e_inf / tau (see Notes).
    t0 = np.log((1.0 + x) * (x + rho * (1.0 + x)) / tau)
    t0 = np.clip(t0, t_lo + 0.5, t_hi - 0.5)
    br = elementwise.bracket_minimum(
        objective, t0, xl0=t0 - 0.25, xr0=t0 + 0.25, xmin=t_lo, xmax=t_hi, args=args
    )
    # Where no interior bracket exists (status -1: the search reached a bound), take the
    # best of the three final points, which is then the bound itself.
    fb = np.stack(br.f_bracket)
    t_star = np.take_along_axis(np.stack(br.bracket), np.argmin(fb, axis=0)[None], axis=0)[0]
    ok = br.success
    if np.any(ok):
        fm = elementwise.find_minimum(
            objective,
            tuple(b[ok] for b in br.bracket),
            args=tuple(a[ok] for a in args),
            tolerances=dict(xrtol=1e-8, xatol=1e-10),
        )
        t_star[ok] = fm.x
    lam_star = np.exp(t_star)
    e_star = _icl_ridge(x, ik, tau, rho, lam_star)
    # lam = 0 is allowed: where the ridgeless error (inf at tau = 1) is at least as
    # good (the error increases with lam from lam = 0), lam* = 0.
    e0 = np.full(x.shape, np.inf)
    b, a = tau < 1.0, tau > 1.0
    e0[b] = _icl_ridgeless_below(x[b], ik[b], tau[b], rho[b])
    e0[a] = _icl_ridgeless_above(x[a], ik[a], tau[a], rho[a])
    use0 = e0 <= e_star
    lam_star[use0] = 0.0
    e_star[use0] = e0[use0]
    return _out(lam_star.reshape(shape)), _out(e_star.reshape(shape))


# --------------------------------------------------------------------------------------
# nonlinear teachers
# --------------------------------------------------------------------------------------
def _a1_is_zero(a1: float, ef2: float) -> bool:
    """The documented test for a vanishing linear Hermite coefficient."""
    return abs(a1) <= A1_ZERO_RTOL * np.sqrt(max(ef2, 0.0)) + A1_ZERO_ATOL


def _moments(teacher: Any) -> tuple[float, float, float]:
    """(a0, a1, E f^2) of a teacher, through :func:`lib.hermite.teacher_moments`."""
    a0, a1, ef2 = teacher_moments(teacher)
    return float(a0), float(a1), float(ef2)


def _rho_nl(rho: np.ndarray, a1: float, ef2: float) -> np.ndarray:
    # E f^2 >= a1^2 (Bessel); clip the rounding error of numerically computed moments.
    return rho + max(ef2 - a1 * a1, 0.0)


def effective_noise(teacher: Any, rho: ArrayLike) -> float | np.ndarray:
    r"""Effective noise of a teacher: label noise plus the nonlinear part of :math:`f`.

    .. math::

        \rho_{nl} = \rho + E[f(z)^2] - a_1^2 = \rho + a_0^2 + \sum_{m \ge 2} a_m^2,
        \qquad z \sim N(0, 1),

    with :math:`a_m = E[f(z) h_m(z)]` the Hermite coefficients
    (:func:`lib.hermite.teacher_moments`). The rounding error of numerically computed
    moments is clipped so that :math:`\rho_{nl} \ge \rho`; the linear teacher gives
    :math:`\rho_{nl} = \rho` exactly.

    Parameters
    ----------
    teacher : None, str, Link, callable or 1-D array_like
        The link :math:`f` in any form accepted by :func:`lib.hermite.teacher_moments`
        (``None`` is the linear teacher, a string names a catalogue link, a 1-D array
        gives the coefficients :math:`a_0, a_1, \dots`).
    rho : float or array_like
        Label-noise variance, :math:`\rho \ge 0`.

    Returns
    -------
    float or numpy.ndarray
        :math:`\rho_{nl}`, shape of ``rho``.

    Used in: :doc:`Hermite basics </book/hermite/basics>`,
    :doc:`the equivalence theorem </book/equivalence/theorem>`,
    :doc:`testing the equivalence </book/equivalence/verification>`,
    :doc:`finite pretraining data </book/regimes/finite_data>`,
    :doc:`task diversity </book/regimes/task_diversity>`,
    :doc:`beyond linear attention </book/beyond/spectral>`.
    """
    rho = check_real("rho", rho, low=0.0)
    _, a1, ef2 = _moments(teacher)
    return _out(_rho_nl(rho, a1, ef2))


def pure_noise_error(
    rho_nl: ArrayLike, alpha: ArrayLike, tau: ArrayLike, lam: ArrayLike = 0.0
) -> float | np.ndarray:
    r"""Error of linear attention when no task information reaches it (:math:`a_1 = 0`).

    .. math::

        \begin{aligned}
        e &= \rho_{nl}\Big[1 + \frac1\tau\big(m(-\zeta_0) - \zeta_0\, m'(-\zeta_0)\big)\Big] \\
          &= \rho_{nl}\Big[1 + \frac{2/\tau}{\chi\,(\zeta_0 + 1 + 1/\tau + \chi)}\Big], \\
        \zeta_0 &= \frac{\lambda\alpha}{\rho_{nl}},\quad
        \chi = \sqrt{(\zeta_0 + 1 - 1/\tau)^2 + 4\zeta_0/\tau},
        \end{aligned}

    with :math:`m(\zeta) = \big(1 - 1/\tau - \zeta - \sqrt{(1 - 1/\tau - \zeta)^2 -
    4\zeta/\tau}\big)/(2\zeta/\tau)` the Marchenko-Pastur Stieltjes transform at ratio
    :math:`p/n = 1/\tau`. Ridgeless
    (:math:`\lambda = 0`): :math:`e = \rho_{nl}/(1-\tau)` for :math:`\tau < 1`,
    :math:`e = \rho_{nl}\,\tau/(\tau-1)` for :math:`\tau > 1` and ``inf`` at
    :math:`\tau = 1` (the second form covers all cases, :math:`\lambda = 0` included).
    :math:`\rho_{nl} = 0` (then :math:`f \equiv 0` and there is no noise) gives 0.

    Derivation. With :math:`a_1 = 0` the target :math:`y_{\ell+1}` is uncorrelated
    with the regressor :math:`\operatorname{vec}(H_Z)`, :math:`H_Z = x_{\ell+1}\phi^\top`
    (to leading order, independent of it), so pretraining is least squares on pure noise
    of variance :math:`E[y^2] = \rho_{nl}`, and :math:`e = \rho_{nl} + E[\hat\beta^\top
    \Sigma\hat\beta]`. The regressor covariance is isotropic: :math:`E[u u^\top] \approx
    (d/\ell) E[y^2] I = (\rho_{nl}/\alpha) I` and :math:`E[x x^\top] = I/d`, so
    :math:`\Sigma \approx (\rho_{nl}/(\alpha d))\, I_p` (the last column of
    :math:`\Gamma`, :math:`d` of the :math:`p \approx d^2` parameters, does not matter in
    the limit). Dividing the objective by :math:`n`, the penalty is
    :math:`(\lambda/d)\|\Gamma\|^2`; in whitened coordinates
    :math:`\tilde\beta = \sqrt{\rho_{nl}/(\alpha d)}\;\hat\beta` it becomes
    :math:`\zeta_0\|\tilde\beta\|^2` with :math:`\zeta_0 = \lambda\alpha/\rho_{nl}`. For
    whitened ridge with :math:`n` samples and :math:`p` parameters, :math:`p/n = 1/\tau`,
    the variance term is :math:`(\rho_{nl}/\tau) \int s/(s+\zeta_0)^2\,dF_{1/\tau}(s) =
    (\rho_{nl}/\tau)\,(m(-\zeta_0) - \zeta_0 m'(-\zeta_0))`. Since
    :math:`m(-\zeta_0) = M_\tau(\zeta_0)` (:func:`M_kappa` with :math:`\kappa = \tau`),
    :math:`m(-\zeta_0) - \zeta_0 m'(-\zeta_0) = \tfrac{d}{d\zeta_0}[\zeta_0
    M_\tau(\zeta_0)]`, and with :math:`\zeta_0 M_\tau(\zeta_0) = \tau(\chi - (\zeta_0 + 1
    - 1/\tau))/2` this derivative is :math:`2/(\chi(\zeta_0 + 1 + 1/\tau + \chi))`, free of
    the :math:`1/\zeta_0` cancellation of the first form as :math:`\zeta_0 \to 0` when
    :math:`\tau < 1`.

    It is the :math:`a_1 \to 0` limit of :func:`nonlinear_icl_error` at fixed
    :math:`\rho_{nl}` (checked numerically in ``tests/test_theory.py``).

    Parameters
    ----------
    rho_nl : float or array_like
        Effective noise :math:`\rho_{nl} \ge 0` (:func:`effective_noise`).
    alpha : float or array_like
        :math:`\alpha > 0` (enters only through :math:`\zeta_0`).
    tau : float or array_like
        :math:`\tau > 0`.
    lam : float or array_like, default 0
        :math:`\lambda \ge 0`.

    Returns
    -------
    float or numpy.ndarray
        Broadcast shape; a float for scalar input.

    Used in: :doc:`the equivalence theorem </book/equivalence/theorem>`,
    :doc:`finite pretraining data </book/regimes/finite_data>`.
    """
    rho_nl = check_real("rho_nl", rho_nl, low=0.0)
    alpha = check_real("alpha", alpha, low=0.0, low_open=True)
    tau = check_real("tau", tau, low=0.0, low_open=True)
    lam = _check_lam(lam)
    check_broadcast(("rho_nl", rho_nl), ("alpha", alpha), ("tau", tau), ("lam", lam))
    rho_nl, alpha, tau, lam = (np.array(a, dtype=float) for a in np.broadcast_arrays(rho_nl, alpha, tau, lam))
    out = np.zeros(rho_nl.shape)
    peak = (rho_nl > 0.0) & (lam == 0.0) & (tau == 1.0)
    out[peak] = np.inf
    ok = (rho_nl > 0.0) & ~peak
    r, g = rho_nl[ok], 1.0 / tau[ok]
    with np.errstate(over="ignore"):  # mu = inf (lam > 0, rho_nl subnormal) gives e = rho_nl
        mu = lam[ok] * alpha[ok] / r
        s = np.hypot(mu + 1.0 - g, 2.0 * np.sqrt(g * mu))
        out[ok] = r * (1.0 + 2.0 * g / (s * (mu + 1.0 + g + s)))
    return _out(out)


def nonlinear_icl_error(
    teacher: Any,
    alpha: ArrayLike,
    kappa: ArrayLike,
    tau: ArrayLike,
    rho: ArrayLike,
    lam: ArrayLike = 0.0,
) -> float | np.ndarray:
    r"""Asymptotic ICL error for a nonlinear teacher :math:`y = f(x^\top w) + \varepsilon`.

    The nonlinearity-noise equivalence: with :math:`a_1 = E[f(z)z]` and
    :math:`\rho_{nl} = \rho + E[f^2] - a_1^2` (:func:`effective_noise`),

    .. math::

        e_f(\alpha, \kappa, \tau, \rho, \lambda) =
        \begin{cases}
        a_1^2\, e_{\mathrm{lin}}\big(\alpha, \kappa, \tau, \rho_{nl}/a_1^2, \lambda/a_1^2\big)
            & a_1 \ne 0, \\
        e_{\mathrm{noise}}(\rho_{nl}, \alpha, \tau, \lambda) & a_1 = 0,
        \end{cases}

    where :math:`e_{\mathrm{lin}}` is :func:`icl_error` and :math:`e_{\mathrm{noise}}`
    is :func:`pure_noise_error` (ridgeless: :math:`\rho_{nl}/(1-\tau)` for
    :math:`\tau < 1`, :math:`\rho_{nl}\tau/(\tau-1)` for :math:`\tau > 1`, ``inf`` at
    :math:`\tau = 1`; it does not depend on :math:`\kappa`). :math:`a_1` counts as
    zero when :math:`|a_1| \le 10^{-10}\sqrt{E f^2} + 10^{-12}` (``A1_ZERO_RTOL``,
    ``A1_ZERO_ATOL``); the two branches agree in the limit :math:`a_1 \to 0`, so the
    threshold is not delicate. :math:`f \equiv 0` with :math:`\rho = 0` gives 0.
    The linear teacher (:math:`a_1 = 1`, :math:`\rho_{nl} = \rho`) gives
    :func:`icl_error` exactly.

    Parameters
    ----------
    teacher : None, str, Link, callable or 1-D array_like
        The link :math:`f`, as accepted by :func:`lib.hermite.teacher_moments`.
    alpha, kappa, tau, rho, lam : float or array_like
        As in :func:`icl_error`; broadcast together.

    Returns
    -------
    float or numpy.ndarray
        Broadcast shape; a float for scalar input.

    Used in: :doc:`the equivalence theorem </book/equivalence/theorem>`,
    :doc:`testing the equivalence </book/equivalence/verification>`,
    :doc:`finite pretraining data </book/regimes/finite_data>`,
    :doc:`task diversity </book/regimes/task_diversity>`,
    :doc:`beyond linear attention </book/beyond/spectral>`.
    """
    alpha, kappa, tau, rho, lam = _check_params(alpha, kappa, tau, rho, lam)
    _, a1, ef2 = _moments(teacher)
    rho_nl = _rho_nl(rho, a1, ef2)
    if _a1_is_zero(a1, ef2):
        shape = np.broadcast_shapes(alpha.shape, kappa.shape, tau.shape, rho.shape, lam.shape)
        return _out(np.broadcast_to(pure_noise_error(rho_nl, alpha, tau, lam), shape).copy())
    s = a1 * a1
    return _out(s * np.asarray(icl_error(alpha, kappa, tau, rho_nl / s, lam / s)))


def nonlinear_idg_error(
    teacher: Any, alpha: ArrayLike, kappa: ArrayLike, tau: ArrayLike, rho: ArrayLike
) -> float | np.ndarray:
    r"""Asymptotic ridgeless IDG error for a nonlinear teacher.

    .. math::

        e_f =
        \begin{cases}
        a_1^2\, e^{\mathrm{IDG}}_{\mathrm{lin}}\big(\alpha, \kappa, \tau, \rho_{nl}/a_1^2\big)
            & a_1 \ne 0, \\
        e_{\mathrm{noise}}(\rho_{nl}, \alpha, \tau, 0) & a_1 = 0,
        \end{cases}

    with :func:`idg_error` and :func:`pure_noise_error`. For :math:`a_1 = 0` no task
    information is learned, so the IDG error equals the ICL error. Conventions as in
    :func:`nonlinear_icl_error`.

    Parameters
    ----------
    teacher : None, str, Link, callable or 1-D array_like
        The link :math:`f`.
    alpha, kappa, tau, rho : float or array_like
        As in :func:`idg_error`; broadcast together.

    Returns
    -------
    float or numpy.ndarray
        Broadcast shape; a float for scalar input.

    Used in: :doc:`the equivalence theorem </book/equivalence/theorem>`,
    :doc:`testing the equivalence </book/equivalence/verification>`,
    :doc:`task diversity </book/regimes/task_diversity>`.
    """
    alpha, kappa, tau, rho = _check_params(alpha, kappa, tau, rho)
    _, a1, ef2 = _moments(teacher)
    rho_nl = _rho_nl(rho, a1, ef2)
    if _a1_is_zero(a1, ef2):
        shape = np.broadcast_shapes(alpha.shape, kappa.shape, tau.shape, rho.shape)
        return _out(np.broadcast_to(pure_noise_error(rho_nl, alpha, tau), shape).copy())
    s = a1 * a1
    return _out(s * np.asarray(idg_error(alpha, kappa, tau, rho_nl / s)))


def nonlinear_optimal_lambda(
    teacher: Any, alpha: ArrayLike, kappa: ArrayLike, tau: ArrayLike, rho: ArrayLike
) -> tuple[float | np.ndarray, float | np.ndarray]:
    r"""The ridge strength that minimizes the ICL error of a nonlinear teacher, and that error.

    By the nonlinearity-noise equivalence (:func:`nonlinear_icl_error`) the teacher's
    error at ridge :math:`\lambda` is the linear error at :math:`\tilde\rho = \rho_{nl}/a_1^2`
    and :math:`\lambda / a_1^2`, times :math:`a_1^2`, so

    .. math::

        \lambda^*_f = a_1^2\, \lambda^*_{\mathrm{lin}}\big(\alpha, \kappa, \tau, \rho_{nl}/a_1^2\big),
        \qquad e^*_f = a_1^2\, e^*_{\mathrm{lin}}\big(\alpha, \kappa, \tau, \rho_{nl}/a_1^2\big),

    with :math:`(\lambda^*_{\mathrm{lin}}, e^*_{\mathrm{lin}})` from :func:`optimal_lambda`
    (numerical minimization; :math:`\lambda^*` is searched in ``[1e-8, 1e4]`` for the
    linear problem, hence in :math:`a_1^2` times that interval here).

    :math:`a_1 = 0` (same test as :func:`nonlinear_icl_error`): the ridge error
    :func:`pure_noise_error` decreases in :math:`\lambda` all the way to
    :math:`\lambda = \infty`, so ``lam_star = inf`` and ``e_star`` is its limit
    :math:`\rho_{nl}`, the error of the zero predictor.

    Parameters
    ----------
    teacher : None, str, Link, callable or 1-D array_like
        The link :math:`f`, as accepted by :func:`lib.hermite.teacher_moments`.
    alpha, kappa, tau, rho : float or array_like
        As in :func:`icl_error`; broadcast together.

    Returns
    -------
    lam_star, e_star : float or numpy.ndarray
        Broadcast shape; floats for scalar input.

    Used in: :doc:`finite pretraining data </book/regimes/finite_data>`,
    :doc:`task diversity </book/regimes/task_diversity>`.
    """
    alpha, kappa, tau, rho = _check_params(alpha, kappa, tau, rho)
    _, a1, ef2 = _moments(teacher)
    rho_nl = _rho_nl(rho, a1, ef2)
    if _a1_is_zero(a1, ef2):
        shape = np.broadcast_shapes(alpha.shape, kappa.shape, tau.shape, rho.shape)
        return _out(np.full(shape, np.inf)), _out(np.broadcast_to(rho_nl, shape).copy())
    s = a1 * a1
    lam, e = optimal_lambda(alpha, kappa, tau, rho_nl / s)
    return _out(s * np.asarray(lam)), _out(s * np.asarray(e))


#: :math:`\kappa` at which :func:`transition_kappa` evaluates the memorization level :math:`e(0)`.
TRANSITION_KAPPA0 = 1e-8
#: Grid of :math:`\log_{10}\kappa` scanned by :func:`transition_kappa` for a crossing.
TRANSITION_LOG10_GRID = np.linspace(-4.0, 4.0, 161)


def transition_kappa(
    q: float,
    teacher: Any,
    alpha: float,
    tau: float,
    rho: float,
    lam: float = 0.0,
    *,
    missing: str = "raise",
) -> float:
    r"""Task diversity :math:`\kappa_q` at which the ICL error has covered the fraction ``q`` of its drop.

    .. math::

        e_{\mathrm{ICL}}(\kappa_q) = e_{\mathrm{ICL}}(0) - q\,\big[e_{\mathrm{ICL}}(0) - e_{\mathrm{ICL}}(\infty)\big],

    with :math:`e_{\mathrm{ICL}}` = :func:`nonlinear_icl_error` (ridge ``lam``), the
    memorization level :math:`e_{\mathrm{ICL}}(0)` evaluated at
    :math:`\kappa = 10^{-8}` (``TRANSITION_KAPPA0``) and the generalization level at
    :math:`\kappa = \infty`. :math:`\kappa_{1/2}` is the transition point and
    :math:`\kappa_{0.9} - \kappa_{0.1}` its width. The error can rise slightly before
    it falls (small :math:`\alpha, \tau`), so the level is located as the **last
    down-crossing** on the grid :math:`\log_{10}\kappa \in [-4, 4]` (161 points,
    ``TRANSITION_LOG10_GRID``), refined with :func:`scipy.optimize.brentq` in
    :math:`\log_{10}\kappa` (``xtol = 1e-12``).

    Parameters
    ----------
    q : float
        Fraction of the drop, :math:`0 < q < 1`.
    teacher : None, str, Link, callable or 1-D array_like
        The link :math:`f` (:func:`lib.hermite.teacher_moments`).
    alpha, tau : float
        Context length and pretraining data (> 0); scalars.
    rho : float
        Label noise (>= 0).
    lam : float, default 0
        Ridge strength (>= 0).
    missing : {"raise", "nan"}, keyword-only
        What to do when there is no crossing: raise ``ValueError`` (default) or return
        ``nan`` (for curves over a parameter grid, where such points are left blank).

    Returns
    -------
    float
        :math:`\kappa_q`.

    Raises
    ------
    ValueError
        Bad arguments, or (with ``missing="raise"``) no crossing: the memorization
        level is not above the generalization level (e.g. :math:`a_1 = 0`, or short
        contexts with little data), or the error does not fall through the level
        inside :math:`[10^{-4}, 10^4]`.

    Used in: :doc:`task diversity </book/regimes/task_diversity>`.
    """
    from scipy.optimize import brentq

    q = float(check_real("q", q, low=0.0, high=1.0, low_open=True, high_open=True))
    alpha = float(check_real("alpha", alpha, low=0.0, low_open=True))
    tau = float(check_real("tau", tau, low=0.0, low_open=True))
    rho = float(check_real("rho", rho, low=0.0))
    lam = float(_check_lam(lam))
    if missing not in ("raise", "nan"):
        raise ValueError(f"missing must be 'raise' or 'nan'; got {missing!r}")

    def e(kappa):
        return nonlinear_icl_error(teacher, alpha, kappa, tau, rho, lam)

    e0, e_inf = e(TRANSITION_KAPPA0), e(np.inf)
    level = e0 - q * (e0 - e_inf)

    def g(u):
        return e(10.0**u) - level

    grid = TRANSITION_LOG10_GRID
    s = g(grid)
    down = np.flatnonzero((s[:-1] > 0) & (s[1:] <= 0))
    if e0 <= e_inf or down.size == 0:
        if missing == "nan":
            return float("nan")
        why = (
            f"the memorization level e(0) = {e0:.6g} is not above the generalization level e(inf) = {e_inf:.6g}"
            if e0 <= e_inf
            else f"the ICL error does not fall through the level {level:.6g} for kappa in [1e-4, 1e4]"
        )
        raise ValueError(
            f"transition_kappa: no kappa_q for q = {q:g} at alpha = {alpha:g}, tau = {tau:g}, rho = {rho:g}, "
            f"lam = {lam:g}: {why}; pass missing='nan' to get nan instead"
        )
    return float(10.0 ** brentq(g, grid[down[-1]], grid[down[-1] + 1], xtol=1e-12))


def pure_noise_error_integral(rho_nl: float, alpha: float, tau: float, lam: float) -> float:
    r"""The pure-noise ridge risk as an integral over the Marchenko-Pastur law.

    .. math::

        e = \rho_{nl}\Big[1 + \frac1\tau \int \frac{r}{(r + \zeta_0)^2}\, dF(r)\Big],
        \qquad \zeta_0 = \frac{\lambda\alpha}{\rho_{nl}},

    with :math:`F` the Marchenko-Pastur law of ratio :math:`p/n = 1/\tau`: density
    :math:`\sqrt{(r_+ - r)(r - r_-)}/(2\pi r/\tau)` on :math:`[r_-, r_+]`,
    :math:`r_\pm = (1 \pm \tau^{-1/2})^2`, plus an atom at 0 of mass
    :math:`1 - \tau` when :math:`\tau < 1` (which does not contribute). The integral is
    computed by adaptive quadrature (:func:`scipy.integrate.quad`). It is the
    definition that :func:`pure_noise_error` evaluates in closed form, and serves as an
    independent check of it; ``lam > 0`` is required (the ridgeless limit at
    :math:`\tau < 1` is a limit, not this integral at :math:`\lambda = 0`).

    Parameters
    ----------
    rho_nl : float
        Effective noise, ``> 0``.
    alpha : float
        Context length per dimension, ``> 0``.
    tau : float
        Pretraining contexts per parameter, ``> 0``.
    lam : float
        Ridge strength, ``> 0``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If an argument is not a positive finite number.

    Used in: chapter 3 (the exercise on the pure-noise risk; tests of
    :func:`pure_noise_error`).
    """
    from scipy.integrate import quad

    vals = {"rho_nl": rho_nl, "alpha": alpha, "tau": tau, "lam": lam}
    r, a, t, lm = (float(check_real(k, v, low=0.0, low_open=True)) for k, v in vals.items())
    ratio, zeta0 = 1.0 / t, lm * a / r
    lo, hi = (1.0 - np.sqrt(ratio)) ** 2, (1.0 + np.sqrt(ratio)) ** 2

    def integrand(s: float) -> float:
        density = np.sqrt(max((hi - s) * (s - lo), 0.0)) / (2.0 * np.pi * ratio * s)
        return s / (s + zeta0) ** 2 * density

    integral, _ = quad(integrand, lo, hi, limit=200, epsabs=1e-13, epsrel=1e-11)
    return float(r * (1.0 + ratio * integral))


class GapEstimate(NamedTuple):
    """Result of :func:`gap_estimate` (all floats).

    Attributes
    ----------
    c_delta : float
        Estimated slope :math:`c_\\Delta = c_{het} + c_{tail}` of the gap :math:`c_\\Delta/d`.
    c_het, c_tail : float
        Its heteroscedastic and heavy-tail parts.
    delta_ey2z2, delta_ey4 : float
        Teacher minus twin: :math:`\\delta E[y^2 z^2]` and :math:`\\delta E[y^4]`.
    """

    c_delta: float
    c_het: float
    c_tail: float
    delta_ey2z2: float
    delta_ey4: float


def gap_estimate(
    teacher: Any,
    rho: float,
    alpha: float,
    tau: float,
    twin: Any = None,
    rho_twin: float | None = None,
) -> GapEstimate:
    r"""Leading-order estimate of the finite-size gap between a teacher and a twin.

    The twin has the same :math:`E[y^2]` as the teacher (by default its
    Gaussian-equivalent linear teacher, :func:`lib.hermite.gaussian_equivalent`). The
    gap :math:`\Delta(d) = e_f(d) - e_g(d)` of ridgeless linear attention at
    :math:`\tau > 1` is estimated as :math:`c_\Delta/d` with

    .. math::

        c_\Delta = \frac{1}{\tau - 1}\Big[\Big(1 - \frac2\tau\Big)\,\delta E[y^2 z^2]
        + \frac{\delta E[y^4]}{\tau\,\alpha\,E[y^2]}\Big],

    :math:`\delta` the teacher's moment minus the twin's (:func:`lib.hermite.label_moments`).
    The first term is the heteroscedastic part (label variance growing along the task,
    weighted by the leverage factor :math:`1 - 2/\tau`), the second the heavy-tail part
    (random row scales of the design). It is a heuristic of the book, derived for
    :math:`a_1 = 0`, not a theorem.

    Parameters
    ----------
    teacher : None, str, Link, callable or array_like
        The link ``f`` (as in :func:`lib.hermite.resolve_teacher`).
    rho : float
        Its label-noise variance, ``>= 0``.
    alpha : float
        Context length per dimension, ``> 0``.
    tau : float
        Pretraining contexts per parameter, ``> 1``.
    twin : teacher, optional
        The comparison teacher; default the Gaussian equivalent of ``teacher``.
    rho_twin : float, optional
        Its noise; required with ``twin``, ignored without it.

    Returns
    -------
    GapEstimate
        ``(c_delta, c_het, c_tail, delta_ey2z2, delta_ey4)``.

    Raises
    ------
    ValueError
        If ``tau <= 1``, ``alpha <= 0``, a noise is negative, or ``twin`` is given
        without ``rho_twin``.

    Used in: :doc:`testing the equivalence </book/equivalence/verification>`.
    """
    alpha = float(check_real("alpha", alpha, low=0.0, low_open=True))
    tau = float(check_real("tau", tau, low=1.0, low_open=True))
    if twin is None:
        twin, rho_twin = gaussian_equivalent(teacher, rho)
    elif rho_twin is None:
        raise ValueError("gap_estimate: give rho_twin, the noise of the twin teacher")
    mf, mg = label_moments(teacher, rho), label_moments(twin, rho_twin)
    d_het, d_tail = mf.ey2z2 - mg.ey2z2, mf.ey4 - mg.ey4
    c_het = (1.0 - 2.0 / tau) * d_het / (tau - 1.0)
    c_tail = d_tail / (tau * alpha * mf.ey2) / (tau - 1.0)
    return GapEstimate(float(c_het + c_tail), float(c_het), float(c_tail), float(d_het), float(d_tail))


# --------------------------------------------------------------------------------------
# kappa = infinity closed forms (chapter 4) and the context-ridge baselines (chapter 5)
# --------------------------------------------------------------------------------------
def _check_a1_rho_nl(a1: Any, rho_nl: Any) -> tuple[np.ndarray, np.ndarray]:
    a1 = check_real("a1", a1)
    rho_nl = check_real("rho_nl", rho_nl, low=0.0)
    return a1, rho_nl


def kappa_inf_floor(a1: ArrayLike, rho_nl: ArrayLike, alpha: ArrayLike) -> tuple[Any, Any]:
    r"""The explained part :math:`B` and the floor :math:`E_\infty` of the ridgeless error at :math:`\kappa = \infty`.

    .. math::

        B = \frac{\alpha a_1^4}{(1+\alpha)\,a_1^2 + \rho_{nl}}, \qquad
        E_\infty = a_1^2 + \rho_{nl} - B
          = \rho_{nl} + \frac{a_1^2 (a_1^2 + \rho_{nl})}{(1+\alpha) a_1^2 + \rho_{nl}} .

    :math:`a_1^2 + \rho_{nl} = E[y^2]` is the label variance, :math:`B` the part of it
    that the best :math:`\Gamma` explains, and :math:`E_\infty` the
    :math:`\tau \to \infty` limit of the ridgeless ICL error. :math:`a_1 = 0` gives
    :math:`B = 0`, :math:`E_\infty = \rho_{nl}`.

    Parameters
    ----------
    a1 : float or array_like
        Linear Hermite coefficient :math:`a_1` (any sign).
    rho_nl : float or array_like
        Effective noise :math:`\rho_{nl} \ge 0` (:func:`effective_noise`).
    alpha : float or array_like
        Context length per dimension, :math:`\alpha > 0`.

    Returns
    -------
    B, E_inf : float or numpy.ndarray
        Broadcast shape (floats for scalar input). ``a1 = rho_nl = 0`` gives 0, 0.

    Used in: :doc:`finite pretraining data </book/regimes/finite_data>`.
    """
    a1, rho_nl = _check_a1_rho_nl(a1, rho_nl)
    alpha = check_real("alpha", alpha, low=0.0, low_open=True)
    a1, rho_nl, alpha = (np.array(v, dtype=float) for v in np.broadcast_arrays(a1, rho_nl, alpha))
    s = a1 * a1
    den = (1.0 + alpha) * s + rho_nl
    B = np.divide(alpha * s * s, den, out=np.zeros_like(den), where=den > 0)
    return _out(B), _out(s + rho_nl - B)


def kappa_inf_ridgeless_error(
    a1: ArrayLike, rho_nl: ArrayLike, alpha: ArrayLike, tau: ArrayLike
) -> float | np.ndarray:
    r"""Closed form of the ridgeless ICL (= IDG) error at :math:`\kappa = \infty`.

    .. math::

        e(\tau) = \begin{cases}
          E_\infty/(1-\tau) + B\,(1-\tau), & \tau < 1,\\
          E_\infty\,\tau/(\tau-1), & \tau > 1,
        \end{cases}

    with :math:`B, E_\infty` from :func:`kappa_inf_floor`, and ``inf`` at
    :math:`\tau = 1` (unless :math:`E_\infty = 0`). It equals
    :func:`nonlinear_icl_error` at :math:`\kappa = \infty`, :math:`\lambda = 0`, for
    any teacher with these :math:`a_1` and :math:`\rho_{nl}` (``tests/test_ch45_helpers.py``
    checks it to 1e-10 against the general formulas).

    Parameters
    ----------
    a1, rho_nl, alpha : float or array_like
        As in :func:`kappa_inf_floor`.
    tau : float or array_like
        Pretraining contexts per parameter, :math:`\tau > 0`.

    Returns
    -------
    float or numpy.ndarray
        Broadcast shape; a float for scalar input.

    Used in: :doc:`finite pretraining data </book/regimes/finite_data>`.
    """
    tau = check_real("tau", tau, low=0.0, low_open=True)
    B, E = (np.asarray(v) for v in kappa_inf_floor(a1, rho_nl, alpha))
    B, E, tau = (np.array(v, dtype=float) for v in np.broadcast_arrays(B, E, tau))
    out = np.full(tau.shape, np.inf)
    lo, hi = tau < 1.0, tau > 1.0
    out[lo] = E[lo] / (1.0 - tau[lo]) + B[lo] * (1.0 - tau[lo])
    out[hi] = E[hi] * tau[hi] / (tau[hi] - 1.0)
    out[(tau == 1.0) & (E == 0.0)] = 0.0
    return _out(out)


def kappa_inf_optimal_lambda(
    a1: ArrayLike, rho_nl: ArrayLike, alpha: ArrayLike, tau: ArrayLike
) -> float | np.ndarray:
    r"""The optimal ridge at :math:`\kappa = \infty` in closed form.

    .. math::

        \lambda^* = \frac{E_\infty}{\tau}
          \left(\frac{(1+\alpha)\,a_1^2 + \rho_{nl}}{\alpha\, a_1^2}\right)^2 ,

    with :math:`E_\infty` from :func:`kappa_inf_floor`: the residual variance over
    the squared norm of the best :math:`\Gamma` per parameter, divided by :math:`\tau`.
    It agrees with the numerical minimizer :func:`nonlinear_optimal_lambda` at
    :math:`\kappa = \infty` (to its optimizer tolerance, about 1e-6 relative; checked in
    ``tests/test_ch45_helpers.py``). ``inf`` when :math:`a_1 = 0`.

    Parameters
    ----------
    a1, rho_nl, alpha, tau : float or array_like
        As in :func:`kappa_inf_ridgeless_error`.

    Returns
    -------
    float or numpy.ndarray
        :math:`\lambda^*`, broadcast shape.

    Used in: :doc:`finite pretraining data </book/regimes/finite_data>`.
    """
    tau = check_real("tau", tau, low=0.0, low_open=True)
    _, E = kappa_inf_floor(a1, rho_nl, alpha)
    a1, rho_nl = _check_a1_rho_nl(a1, rho_nl)
    alpha = check_real("alpha", alpha, low=0.0, low_open=True)
    s = np.asarray(a1, dtype=float) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = ((1.0 + alpha) * s + rho_nl) / (alpha * s)
        out = np.where(s > 0, E * ratio**2 / tau, np.inf)
    return _out(np.asarray(out, dtype=float))


def context_ridge_error(
    teacher: Any, alpha: ArrayLike, rho: ArrayLike, ridge: ArrayLike, *, intercept: bool = False
) -> float | np.ndarray:
    r"""Asymptotic test error of ridge regression on one context (a query-affine baseline).

    The predictor, with :math:`X` the :math:`\ell \times d` context tokens, ridge
    :math:`\lambda_{\mathrm{ctx}}` and intercept :math:`\hat a_0` (:math:`\hat a_0 = a_0`
    if ``intercept`` else 0), is

    .. math::

        \hat y = \hat a_0 + x_{\ell+1}^\top (X^\top X + \lambda_{\mathrm{ctx}} I)^{-1}
            X^\top (y - \hat a_0),

    and in the limit :math:`d, \ell \to \infty`, :math:`\ell = \alpha d` its error on a
    fresh task is, with :math:`\lambda_{\mathrm{ctx}} = \alpha x`,

    .. math::

        \begin{aligned}
        e &= \rho_{\mathrm{ctx}} + \frac{1}{\alpha^2}\Big[
            -a_1^2 \lambda_{\mathrm{ctx}}^2 M'_\alpha(x)
            + \rho_{\mathrm{ctx}}\big(\alpha M_\alpha(x)
            + \lambda_{\mathrm{ctx}} M'_\alpha(x)\big)\Big], \\
        \rho_{\mathrm{ctx}} &= \rho_{nl} - 2 \hat a_0 a_0 + \hat a_0^2 ,
        \end{aligned}

    where :math:`M_\alpha` is :func:`M_kappa` at :math:`\kappa = \alpha` (the tokens'
    Gram matrix :math:`X^\top X` is :math:`\alpha` times a sample covariance of
    :math:`\alpha d` standard Gaussian vectors) and :math:`\rho_{\mathrm{ctx}}` is the
    second moment of the part of :math:`y - \hat a_0` that is not :math:`a_1 z` (label
    noise, :math:`a_0 - \hat a_0` and the higher Hermite modes, which act on the fit like
    noise: the Gaussian-equivalence assumption); it is :math:`\rho_{nl}` without the
    intercept and :math:`\rho_{\mathrm{eq}} = \rho_{nl} - a_0^2` with it. Derivation:
    :math:`e = \rho_{\mathrm{ctx}} + \frac1d E\|\widehat{a_1 w} - a_1 w\|^2`, with
    :math:`\widehat{a_1 w}` the fitted coefficients (Stein's lemma removes the cross
    term), and, with :math:`A = X^\top X` and the residual
    :math:`y - \hat a_0 - a_1 X w` of the context,
    :math:`\widehat{a_1 w} - a_1 w = -\lambda_{\mathrm{ctx}}(A + \lambda_{\mathrm{ctx}})^{-1}
    a_1 w + (A + \lambda_{\mathrm{ctx}})^{-1}X^\top (y - \hat a_0 - a_1 X w)`.

    At :math:`\lambda_{\mathrm{ctx}} = \rho_{\mathrm{ctx}}/a_1^2` the two :math:`M'` terms
    cancel and :math:`e = \rho_{\mathrm{ctx}} + (\rho_{\mathrm{ctx}}/\alpha)\, M_\alpha(x)`:
    this is the Bayes error of the Gaussian-equivalent teacher
    :math:`y = \hat a_0 + a_1 z + N(0, \rho_{\mathrm{ctx}})`, the smallest error of this
    family of predictors. The linear teacher with :math:`\lambda_{\mathrm{ctx}} = \rho`
    gives the Bayes-optimal error :math:`\rho + (\rho/\alpha) M_\alpha(\rho/\alpha)`.

    Parameters
    ----------
    teacher : None, str, Link, callable or 1-D array_like
        The link :math:`f` (:func:`lib.hermite.teacher_moments`).
    alpha : float or array_like
        Context length per dimension (> 0).
    rho : float or array_like
        Label-noise variance (>= 0).
    ridge : float or array_like
        Ridge :math:`\lambda_{\mathrm{ctx}} > 0` of the context regression.
    intercept : bool, keyword-only
        Subtract and add back the teacher's mean :math:`a_0` (:math:`\hat a_0 = a_0`).

    Returns
    -------
    float or numpy.ndarray
        Broadcast shape; a float for scalar input.

    Used in: :doc:`task diversity </book/regimes/task_diversity>`.
    """
    alpha = check_real("alpha", alpha, low=0.0, low_open=True)
    rho = check_real("rho", rho, low=0.0)
    ridge = check_real("ridge", ridge, low=0.0, low_open=True)
    if not isinstance(intercept, (bool, np.bool_)):
        raise TypeError(f"intercept must be True or False; got {intercept!r}")
    a0, a1, ef2 = _moments(teacher)
    c = a0 if intercept else 0.0
    s2 = _rho_nl(rho, a1, ef2) - 2.0 * c * a0 + c * c
    x = ridge / alpha
    m, dm = np.asarray(M_kappa(x, alpha)), np.asarray(dM_kappa(x, alpha))
    e = s2 + (-(a1 * a1) * ridge**2 * dm + s2 * (alpha * m + ridge * dm)) / alpha**2
    return _out(np.asarray(e, dtype=float))


def gaussian_equivalent_ridge(teacher: Any, rho: ArrayLike, *, intercept: bool = True) -> tuple[Any, Any]:
    r"""Intercept and ridge of the Bayes predictor of a teacher's Gaussian-equivalent twin.

    The twin of :math:`f` keeps its mean and linear part and replaces the rest by noise:
    :math:`y = \hat a_0 + a_1 z + N(0, \rho_{\mathrm{ctx}})`. With ``intercept=True``,
    :math:`\hat a_0 = a_0` and :math:`\rho_{\mathrm{ctx}} = \rho_{\mathrm{eq}} =
    \rho_{nl} - a_0^2`; with ``intercept=False``, :math:`\hat a_0 = 0` and
    :math:`\rho_{\mathrm{ctx}} = \rho_{nl}` (the mean counts as noise). The posterior mean
    of :math:`a_1 w` under the prior :math:`w \sim N(0, I_d)` is ridge regression of
    :math:`y - \hat a_0` on the tokens with ridge

    .. math::

        \lambda_{\mathrm{ctx}} = \rho_{\mathrm{ctx}} / a_1^2 \qquad(\text{so }
        \lambda_{\mathrm{ctx}} = \rho_{\mathrm{eff}} = \rho_{nl}/a_1^2
        \text{ without intercept}).

    Parameters
    ----------
    teacher : None, str, Link, callable or 1-D array_like
        The link :math:`f`.
    rho : float or array_like
        Label-noise variance (>= 0).
    intercept : bool, keyword-only

    Returns
    -------
    c, ridge : float (or array for array ``rho``)
        The intercept :math:`\hat a_0` and the ridge :math:`\lambda_{\mathrm{ctx}}`;
        ``ridge = inf`` when :math:`a_1 = 0` (the predictor is the constant
        :math:`\hat a_0`).

    Used in: :doc:`task diversity </book/regimes/task_diversity>`.
    """
    rho = check_real("rho", rho, low=0.0)
    if not isinstance(intercept, (bool, np.bool_)):
        raise TypeError(f"intercept must be True or False; got {intercept!r}")
    a0, a1, ef2 = _moments(teacher)
    c = a0 if intercept else 0.0
    s2 = _rho_nl(rho, a1, ef2) - 2.0 * c * a0 + c * c
    ridge = np.inf * np.ones_like(s2) if _a1_is_zero(a1, ef2) else s2 / (a1 * a1)
    return float(c), _out(np.asarray(ridge, dtype=float))


# --------------------------------------------------------------------------------------
# the spectral in-context estimator (chapter 6)
# --------------------------------------------------------------------------------------
#: Gauss-Hermite nodes in z and in the label noise for the expectations of the spectral
#: theory (probabilists' rule, :func:`scipy.special.roots_hermitenorm`).
SPECTRAL_NODES_Z = 240
SPECTRAL_NODES_NOISE = 48
#: Grid of the posterior moment E[z^2 | y] (:func:`optimal_preprocess`): a uniform z-grid
#: on [-SPECTRAL_Z_MAX, SPECTRAL_Z_MAX] integrated with the trapezoidal rule, which is
#: spectrally accurate for these smooth, Gaussian-decaying integrands.
SPECTRAL_Z_MAX = 12.0
SPECTRAL_Z_POINTS = 4801
#: Number of label values at which ``E[z^k | y]`` is tabulated (then interpolated
#: linearly), spanning ``f(z)`` for ``|z| <= 8`` widened by 8 noise standard deviations.
SPECTRAL_Y_POINTS = 4001
#: Largest context length searched for the threshold; beyond it ``inf`` is reported.
SPECTRAL_ALPHA_MAX = 1e6


class _SpectralLaw:
    r"""Quadrature for the joint law of :math:`(z, T(y))`, :math:`y = f(z) + \sqrt\rho\,\epsilon`.

    Holds nodes ``z2`` (values of :math:`z^2`), ``t`` (values of :math:`T(y)`) and
    weights ``w`` (summing to 1), so that :math:`E[F(z^2, T)] \approx \sum_j w_j
    F(z^2_j, t_j)`.
    """

    def __init__(self, teacher: Any, rho: float, preprocess: Any) -> None:
        from scipy.special import roots_hermitenorm

        from lib.baselines import _check_preprocess, _standardized_preprocess
        from lib.hermite import resolve_teacher

        f = resolve_teacher(teacher)
        pre = _check_preprocess(preprocess)
        z, wz = roots_hermitenorm(SPECTRAL_NODES_Z)
        wz = wz / wz.sum()
        if rho > 0.0:
            e, we = roots_hermitenorm(SPECTRAL_NODES_NOISE)
            we = we / we.sum()
            zz, ee = np.meshgrid(z, e, indexing="ij")
            y = np.asarray(f(zz.ravel()), dtype=float) + np.sqrt(rho) * ee.ravel()
            w = np.outer(wz, we).ravel()
            zv = zz.ravel()
        else:
            y, w, zv = np.asarray(f(z), dtype=float), wz, z
        if callable(pre):
            t = np.asarray(pre(y.copy()), dtype=float)
        else:
            a0, _, ef2 = _moments(teacher)
            sd = np.sqrt(max(ef2 + rho - a0 * a0, 0.0))
            u = (y - a0) / sd if sd > 0.0 else np.zeros_like(y)
            t = _standardized_preprocess(pre)(u)
        if t.shape != y.shape or not np.all(np.isfinite(t)):
            raise ValueError("preprocess must return finite values of the labels' shape")
        self.z2, self.t, self.w = zv * zv, t, w
        self.tau = float(t[w > 1e-300].max())
        if not self.tau > 0.0:
            raise ValueError(
                f"preprocess: the spectral theory needs sup T(y) > 0; got sup T = {self.tau:.3g}"
            )

    def moments(self, lam: float) -> tuple[float, float, float]:
        """E[S^2], E[S (z^2 - 1)], E[S^2 z^2] with S = T / (lam - T)."""
        s = self.t / (lam - self.t)
        ws2 = self.w * s * s
        return float(ws2.sum()), float(np.dot(self.w * s, self.z2 - 1.0)), float(np.dot(ws2, self.z2))

    def lam_bar(self, alpha: float) -> float:
        """The minimizer of psi_alpha on (tau, inf): the root of E[S^2] = 1/alpha."""
        from scipy.optimize import brentq

        def g(u: float) -> float:
            return self.moments(self.tau + np.exp(u))[0] - 1.0 / alpha

        lo, hi = np.log(self.tau) - 30.0, np.log(self.tau) + 30.0
        if g(lo) <= 0.0:
            return self.tau + np.exp(lo)
        return self.tau + np.exp(brentq(g, lo, hi, xtol=1e-13))

    def overlap(self, alpha: float) -> float:
        from scipy.optimize import brentq

        lb = self.lam_bar(alpha)
        def delta(lam: float) -> float:  # (phi - psi) / lam
            return self.moments(lam)[1] - 1.0 / alpha

        if delta(lb) <= 0.0:
            return 0.0
        hi = lb
        while delta(hi) > 0.0:
            hi = self.tau + 2.0 * (hi - self.tau)
        lam = brentq(delta, lb, hi, xtol=1e-14, rtol=1e-13)
        s2, _, s2z2 = self.moments(lam)
        dpsi = 1.0 / alpha - s2
        return float(min(max(dpsi / (dpsi + s2z2), 0.0), 1.0))

    def recovery_margin(self, alpha: float) -> float:
        """E[S (z^2 - 1)] - 1/alpha at lam_bar: the overlap is positive iff it is > 0."""
        return self.moments(self.lam_bar(alpha))[1] - 1.0 / alpha

    def threshold(self) -> float:
        from scipy.optimize import brentq

        def g(log_alpha: float) -> float:
            return self.recovery_margin(float(np.exp(log_alpha)))

        grid = np.linspace(np.log(1e-3), np.log(SPECTRAL_ALPHA_MAX), 121)
        vals = np.array([g(u) for u in grid])
        if vals[0] > 0.0:
            return float(np.exp(grid[0]))
        up = np.flatnonzero((vals[:-1] <= 0.0) & (vals[1:] > 0.0))
        if up.size == 0:
            return float("inf")
        return float(np.exp(brentq(g, grid[up[0]], grid[up[0] + 1], xtol=1e-13)))


def _check_spectral(teacher: Any, rho: Any) -> float:
    rho = float(check_real("rho", rho, low=0.0))
    _moments(teacher)  # validates the teacher
    return rho


def spectral_overlap(
    alpha: ArrayLike, teacher: Any, rho: float, preprocess: Any = None
) -> float | np.ndarray:
    r"""Asymptotic squared overlap :math:`\cos^2\theta` of the spectral estimator with the task.

    For the top eigenvector :math:`\hat w` of
    :math:`\hat M = \frac1\ell \sum_i T(y_i)(d\,x_i x_i^\top - I)`
    (:func:`lib.baselines.spectral_direction`) at angle :math:`\theta` to the task,
    :math:`\cos\theta = \hat w^\top w / (\|\hat w\| \|w\|)`, :math:`\cos^2\theta`
    converges as :math:`d \to \infty` at :math:`\ell = \alpha d` to the value returned
    here. With :math:`r_\vartheta = T/(\vartheta - T)` for :math:`\vartheta > \sup T > 0`
    and expectations over :math:`z \sim N(0,1)`, :math:`y = f(z) + \varepsilon`,
    :math:`\varepsilon \sim N(0, \rho)`:

    - :math:`\bar\vartheta` solves :math:`E[r_\vartheta^2] = 1/\alpha` on
      :math:`(\sup T, \infty)` (it minimizes
      :math:`\vartheta\,(1/\alpha + E[r_\vartheta])` there);
    - if :math:`E[r_{\bar\vartheta}(z^2 - 1)] \le 1/\alpha` the limit is 0; otherwise
      :math:`\vartheta^* > \bar\vartheta` solves
      :math:`E[r_\vartheta (z^2 - 1)] = 1/\alpha` and

    .. math::

        \cos^2\theta \to
        \frac{1/\alpha - E[r^2]}{1/\alpha - E[r^2] + E[r^2 z^2]}
        \quad\text{at } \vartheta = \vartheta^* .

    This is the book's reconstruction of the characterization of Lu and Li (2020) and
    Mondelli and Montanari (2019), translated to the book's scaling (it is invariant
    under multiplying :math:`T` by a positive constant, and the shift by
    :math:`-\bar T I` does not change the eigenvectors); the exact published statements
    were not consulted, and the book checks the formula against simulation (chapter 6
    and ``tests/test_spectral.py``). The built-in preprocessings use the population
    mean and standard deviation of the labels for the standardization.

    Expectations use a tensor Gauss-Hermite rule in :math:`(z, \varepsilon)`
    (``SPECTRAL_NODES_Z`` x ``SPECTRAL_NODES_NOISE`` nodes); the roots are found with
    :func:`scipy.optimize.brentq` in :math:`\log(\vartheta - \sup T)` (the code calls
    :math:`\vartheta` ``lam``, :math:`r_\vartheta` ``s`` and :math:`\sup T` ``tau``).

    Parameters
    ----------
    alpha : float or array_like
        Context length per dimension, :math:`\alpha = \ell/d > 0`.
    teacher : None, str, Link, callable or 1-D array_like
        The link :math:`f` (:func:`lib.hermite.resolve_teacher`).
    rho : float
        Label-noise variance (>= 0).
    preprocess : None, str or callable
        As in :func:`lib.baselines.spectral_preprocess` (default ``"tanh"``). It must
        be bounded above with :math:`\sup T > 0`.

    Returns
    -------
    float or numpy.ndarray
        The limit of :math:`\cos^2\theta`, in :math:`[0, 1]`, shape of ``alpha``.

    Used in: :doc:`beyond linear attention </book/beyond/spectral>`.
    """
    alpha = check_real("alpha", alpha, low=0.0, low_open=True)
    rho = _check_spectral(teacher, rho)
    law = _SpectralLaw(teacher, rho, preprocess)
    out = np.array([law.overlap(float(a)) for a in alpha.ravel()]).reshape(alpha.shape)
    return _out(out)


def spectral_threshold(teacher: Any, rho: float, preprocess: Any = None) -> float:
    r"""Weak-recovery threshold :math:`\alpha_c` of the spectral estimator.

    The smallest :math:`\alpha` with a positive limiting overlap (:func:`spectral_overlap`):
    the first root, in :math:`\log\alpha`, of the recovery margin
    :math:`E[r_{\bar\vartheta}(z^2-1)] - 1/\alpha` (positive exactly when the limiting
    overlap is; at the root the two conditions :math:`E[r_\vartheta^2] = 1/\alpha` and
    :math:`E[r_\vartheta(z^2-1)] = 1/\alpha` meet), bracketed on a log grid of
    :math:`\alpha \in [10^{-3}, 10^6]` and refined with :func:`scipy.optimize.brentq`.
    ``inf`` when the margin stays negative up to :math:`10^6` (``SPECTRAL_ALPHA_MAX``),
    for instance when :math:`T(y)` is independent of :math:`z^2`.

    Parameters
    ----------
    teacher, rho, preprocess
        As in :func:`spectral_overlap`.

    Returns
    -------
    float

    Used in: :doc:`beyond linear attention </book/beyond/spectral>`.
    """
    rho = _check_spectral(teacher, rho)
    return _SpectralLaw(teacher, rho, preprocess).threshold()


def spectral_error(
    alpha: ArrayLike,
    teacher: Any,
    rho: float,
    preprocess: Any = None,
    degree: int | None = None,
) -> float | np.ndarray:
    r"""Asymptotic error of the spectral estimator with the Bayes-optimal 1-d link.

    For a fresh query, :math:`z = x^\top w` and :math:`s = \sqrt d\, x^\top \hat w` are
    standard Gaussians with correlation :math:`\cos\theta` (exactly, given
    :math:`\hat w`). By Mehler's formula :math:`E[h_k(z) \mid s] = \cos^k\theta\, h_k(s)`,
    so the best prediction from :math:`s` is
    :math:`E[f(z)\mid s] = \sum_k a_k \cos^k\theta\, h_k(s)` and its error is

    .. math::

        e = \rho + \sum_{k \ge 0} a_k^2 \big(1 - \cos^{2k}\theta\big),

    with the limit of :math:`\cos^2\theta` from :func:`spectral_overlap`. With
    ``degree`` the link is restricted to Hermite degrees up to ``degree`` (as the fitted
    link of :func:`lib.baselines.spectral_predict`), which adds the sum of
    :math:`a_k^2` over the higher degrees. At :math:`\cos\theta = 0` the error is
    :math:`\rho + E f^2 - a_0^2`, the variance of the label.

    Parameters
    ----------
    alpha, teacher, rho, preprocess
        As in :func:`spectral_overlap`.
    degree : int or None
        Largest Hermite degree of the link; ``None``: no restriction (the series is
        summed to degree ``lib.hermite.MAX_DEGREE`` and the tail is included through
        :math:`E f^2`).

    Returns
    -------
    float or numpy.ndarray
        Shape of ``alpha``.

    Used in: :doc:`beyond linear attention </book/beyond/spectral>`.
    """
    from lib.hermite import coefficients, resolve_teacher

    q = np.asarray(spectral_overlap(alpha, teacher, rho, preprocess), dtype=float)
    _, _, ef2 = _moments(teacher)
    if degree is not None:
        from lib._checks import check_int

        degree = check_int("degree", degree, low=0)
    kmax = 60 if degree is None else degree
    if isinstance(teacher, (list, tuple, np.ndarray)):
        a = np.zeros(kmax + 1)
        given = np.asarray(teacher, dtype=float)[: kmax + 1]
        a[: given.size] = given
    else:
        a = coefficients(resolve_teacher(teacher), kmax)
    k = np.arange(kmax + 1)
    kept = np.sum(a[None, :] ** 2 * q.reshape(-1, 1) ** k[None, :], axis=1)
    return _out((rho + ef2 - kept).reshape(q.shape))


def _posterior_moment(teacher: Any, rho: float, power: int) -> Any:
    """A function y -> E[z^power | y] (rho > 0), tabulated with the trapezoidal rule."""
    from scipy.integrate import trapezoid

    from lib.hermite import resolve_teacher

    f = resolve_teacher(teacher)
    z = np.linspace(-SPECTRAL_Z_MAX, SPECTRAL_Z_MAX, SPECTRAL_Z_POINTS)
    fz = np.asarray(f(z), dtype=float)
    zp = z**power

    f_in = fz[np.abs(z) <= 8.0]
    pad = 8.0 * np.sqrt(rho)
    grid = np.linspace(f_in.min() - pad, f_in.max() + pad, SPECTRAL_Y_POINTS)
    values = np.empty(grid.size)
    for start in range(0, grid.size, 500):  # chunks of 500 x SPECTRAL_Z_POINTS
        yy = grid[start : start + 500, None]
        logp = -0.5 * z * z - (yy - fz) ** 2 / (2.0 * rho)
        p = np.exp(logp - logp.max(axis=1, keepdims=True))
        values[start : start + 500] = trapezoid(p * zp, z, axis=1) / trapezoid(p, z, axis=1)

    def m(y: np.ndarray) -> np.ndarray:  # linear interpolation, constant beyond the grid
        return np.interp(np.asarray(y, dtype=float), grid, values)

    return m


def optimal_preprocess(teacher: Any, rho: float) -> Any:
    r"""The preprocessing with the smallest spectral threshold, :math:`T^*(y) = 1 - 1/E[z^2\mid y]`.

    Derivation (chapter 6). At the threshold, :math:`r = T/(\vartheta - T)` satisfies
    :math:`E[r(z^2-1)] = E[r^2] = 1/\alpha_c`; conditioning on :math:`y`,
    :math:`E[r(z^2-1)] = E[r\,(v(y) - 1)]` with :math:`v(y) = E[z^2 \mid y]`. By
    Cauchy-Schwarz :math:`E[r^2] \le E[(v-1)^2]`, with equality iff :math:`r = v - 1`,
    i.e. :math:`T \propto 1 - 1/v`. So every preprocessing has
    :math:`\alpha_c \ge \alpha_u = 1/E[(v(y) - 1)^2]` (:func:`weak_recovery_threshold`)
    and :math:`T^*` attains it.

    Parameters
    ----------
    teacher : None, str, Link, callable or 1-D array_like
        The link :math:`f`.
    rho : float
        Label-noise variance, > 0 (the posterior needs a density).

    Returns
    -------
    callable
        ``T(y)``, vectorized, for :func:`lib.baselines.spectral_predict` and
        :func:`spectral_overlap`.

    Used in: :doc:`beyond linear attention </book/beyond/spectral>`.
    """
    rho = float(check_real("rho", rho, low=0.0, low_open=True))
    _moments(teacher)
    m = _posterior_moment(teacher, rho, 2)

    def T(y: np.ndarray) -> np.ndarray:
        return 1.0 - 1.0 / m(y)

    return T


def weak_recovery_threshold(teacher: Any, rho: float) -> float:
    r"""The smallest spectral threshold, :math:`\alpha_u = 1 / E[(E[z^2 \mid y] - 1)^2]`.

    It is :func:`spectral_threshold` at the optimal preprocessing
    (:func:`optimal_preprocess`). For teachers with :math:`E[z \mid y] = 0` (even
    :math:`f`), Mondelli and Montanari (2019) prove that no estimator achieves weak
    recovery below an information-theoretic threshold (the book expects it to be this
    one, their :math:`\delta_u`, but has not checked the identification against the
    paper). When :math:`E[z\mid y] \ne 0` (any :math:`f` that is not even), the context
    average of :math:`E[z \mid y_i]\, x_i`, a statistic linear in the tokens, already
    correlates with :math:`w` at every :math:`\alpha > 0`, and ``0.0`` is returned.

    Parameters
    ----------
    teacher : None, str, Link, callable or 1-D array_like
        The link :math:`f`.
    rho : float
        Label-noise variance, > 0.

    Returns
    -------
    float

    Used in: :doc:`beyond linear attention </book/beyond/spectral>`.
    """
    from scipy.special import roots_hermitenorm

    from lib.hermite import resolve_teacher

    rho = float(check_real("rho", rho, low=0.0, low_open=True))
    f = resolve_teacher(teacher)
    z, wz = roots_hermitenorm(SPECTRAL_NODES_Z)
    e, we = roots_hermitenorm(SPECTRAL_NODES_NOISE)
    w = np.outer(wz, we).ravel() / (wz.sum() * we.sum())
    y = (np.asarray(f(z), dtype=float)[:, None] + np.sqrt(rho) * e[None, :]).ravel()
    if np.dot(w, _posterior_moment(teacher, rho, 1)(y) ** 2) > 1e-10:  # E[z | y] != 0
        return 0.0
    m = _posterior_moment(teacher, rho, 2)(y)
    return float(1.0 / np.dot(w, (m - 1.0) ** 2))
