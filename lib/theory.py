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

Used in: chapters 2-5.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import elementwise

from lib._checks import check_real
from lib.hermite import teacher_moments

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
    "A1_ZERO_RTOL",
    "A1_ZERO_ATOL",
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


def _check_params(alpha: Any, kappa: Any, tau: Any, rho: Any) -> tuple[np.ndarray, ...]:
    """Validate the four model parameters; kappa may be +inf."""
    alpha = check_real("alpha", alpha, low=0.0, low_open=True)
    kappa = check_real("kappa", kappa, low=0.0, low_open=True, allow_inf=True)
    tau = check_real("tau", tau, low=0.0, low_open=True)
    rho = check_real("rho", rho, low=0.0)
    return alpha, kappa, tau, rho


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


def _inv(kappa: np.ndarray) -> np.ndarray:
    """1/kappa with 1/inf = 0 (numpy does this without a warning)."""
    return 1.0 / kappa


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

    Used in: chapters 2-5.
    """
    x = check_real("x", x, low=0.0, low_open=True)
    kappa = check_real("kappa", kappa, low=0.0, low_open=True, allow_inf=True)
    return _out(_mp(x, _inv(kappa)))


def dM_kappa(x: ArrayLike, kappa: ArrayLike) -> float | np.ndarray:
    r"""Derivative :math:`M_\kappa'(x)` of :func:`M_kappa`.

    .. math::

        M_\kappa'(x) = -\frac12 M_\kappa(x)^2 \left(1 + \frac{x + 1 + 1/\kappa}
        {\sqrt{(x + 1 - 1/\kappa)^2 + 4x/\kappa}}\right),
        \qquad M_\infty'(x) = -\frac{1}{(1 + x)^2}.

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
    return _out(_dmp(x, _inv(kappa)))


# --------------------------------------------------------------------------------------
# linear teacher: ridgeless
# --------------------------------------------------------------------------------------
def _icl_ridgeless_below(x, ik, tau, rho):
    r"""Ridgeless ICL error for tau < 1 (arrays of one shape)."""
    mu = x * _mp(x, ik * tau)  # mu* = x* M_{kappa/tau}(x*)
    bracket = 1.0 - tau * (1.0 - mu) ** 2 - (1.0 - rho / x) * mu
    return tau * (1.0 + x) / (1.0 - tau) * bracket - 2.0 * tau * (1.0 - mu) + 1.0 + rho


def _icl_ridgeless_above(x, ik, tau, rho):
    r"""Ridgeless ICL error for tau > 1 (arrays of one shape)."""
    m = _mp(x, ik)
    # kappa (m/(kappa+m))^2 = (m^2/kappa)/(1 + m/kappa)^2: no inf*0 at kappa = inf.
    q = ik * m * m / (1.0 + ik * m) ** 2
    kstar = 1.0 / (1.0 - q)
    t1 = 1.0 / (tau - 1.0)
    return (
        (kstar - t1) * (1.0 + x) * (x * m) ** 2
        + (3.0 - 2.0 * tau) * t1 * m * x * x
        + ((1.0 + rho) * m * t1 + 1.0) * x
        + rho * m * t1
        + rho
    )


def _idg_ridgeless_below(x, ik, tau, rho):
    r"""Ridgeless IDG error for tau < 1 (arrays of one shape)."""
    mu = x * _mp(x, ik * tau)
    eps = (1.0 - tau) * x / (tau * mu)
    # kappa/(1 + kappa eps/(1-tau))^2 = (1/kappa)/(1/kappa + eps/(1-tau))^2.
    c = 1.0 / (1.0 - ik / (ik + eps / (1.0 - tau)) ** 2)
    num = rho + x - 2.0 * x * (1.0 - tau) * (x / eps + 1.0)
    return tau * ((x + eps) ** 2 / eps + num / (1.0 - tau - c * (1.0 - tau) ** 2))


def _idg_ridgeless_above(x, ik, tau, rho):
    r"""Ridgeless IDG error for tau > 1 (arrays of one shape)."""
    m = _mp(x, ik)
    return tau * (rho + x * (1.0 - x * m)) / (tau - 1.0)


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
    hi[above] = np.minimum(hi[above], lam[above] * (tau[above] + 1.0) / (tau[above] - 1.0))
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
    """Ridge ICL error (1-d arrays of one shape, lam > 0)."""
    eps = _ridge_root(x, ik, tau, lam)
    nu = x + eps
    S = _mp(nu, ik)
    Sp = _dmp(nu, ik)
    T = _one_minus_nu_m(S, ik)  # 1 - nu S without cancellation
    nSp, eSp = nu * Sp, eps * Sp  # grouped so that nothing overflows
    a = 1.0 - 2.0 * nu * S - nu * nSp  # 1 - 2 nu S - nu^2 S'
    c = (rho + nu * T - eps * a) / ((1.0 - tau) - 2.0 * eps * S - eps * eSp)
    return (1.0 + x) * (a - c * (S + eSp)) - 2.0 * T + 1.0 + rho


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
    alpha, kappa, tau, rho = _check_params(alpha, kappa, tau, rho)
    lam = check_real("lam", lam, low=0.0, low_open=True)
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

        e = \Big(k^* - \frac{1}{\tau-1}\Big)(1+x^*)(x^* m^*)^2
            + \frac{3-2\tau}{\tau-1} m^* x^{*2}
            + \Big(\frac{(1+\rho)m^*}{\tau-1} + 1\Big)x^* + \frac{\rho m^*}{\tau-1} + \rho .

    Ridgeless, :math:`\tau = 1`: the interpolation peak, the error is ``inf``
    (returned on purpose, without a warning).

    Ridge (:math:`\lambda > 0`): with :math:`\varepsilon` the unique positive root of
    :math:`1 - \tau + \tau\lambda/\varepsilon - \varepsilon M_\kappa(\varepsilon + x^*) = 0`
    (:func:`ridge_epsilon`), :math:`\nu = x^* + \varepsilon`,
    :math:`S = M_\kappa(\nu)`, :math:`S' = M_\kappa'(\nu)`:

    .. math::

        c = \frac{\rho + \nu - \nu^2 S - \varepsilon(1 - 2\nu S - \nu^2 S')}
                 {1 - 2\varepsilon S - \varepsilon^2 S' - \tau}, \qquad
        e = (1+x^*)\big(1 - 2\nu S - \nu^2 S' - c(S + \varepsilon S')\big)
            - 2(1 - \nu S) + 1 + \rho .

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
        :math:`\kappa` may be infinite.

    Notes
    -----
    The ridge branch solves all the root equations at once, so a 400-point curve costs
    a few milliseconds (``bench/bench_theory.py``).

    Used in: chapters 2-5.
    """
    alpha, kappa, tau, rho = _check_params(alpha, kappa, tau, rho)
    lam = _check_lam(lam)
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

    Used in: chapters 2-5 (chapter 3: the task-diversity transition).
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

    Used in: chapters 2-3.
    """
    alpha = check_real("alpha", alpha, low=0.0, low_open=True)
    rho = check_real("rho", rho, low=0.0)
    x = (1.0 + rho) / alpha
    return _out(rho + x / (1.0 + x))


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

        \lambda^* = \frac{(1 + x^*)^2\, e_\infty}{\tau}
                  = \frac{(1 + x^*)\,\big(x^* + \rho(1 + x^*)\big)}{\tau},
        \qquad e_\infty = \rho + \frac{x^*}{1 + x^*} \ (:func:`icl_limit`),

    i.e. the penalty :math:`(n/d)\lambda^* = d\,(1+x^*)^2 e_\infty` does not grow
    with :math:`n`: the irreducible error :math:`e_\infty` plays the role of the noise
    in the familiar "noise over signal" optimal ridge. For finite :math:`\kappa`
    (observed at :math:`\alpha = 2, \rho = 0.1`): :math:`\lambda^*` is close to this
    value at small :math:`\tau`; at large :math:`\tau` it becomes exactly 0 for
    :math:`\kappa \gtrsim 0.9` (the ICL error then increases with :math:`\lambda`
    from :math:`\lambda = 0`), while for small :math:`\kappa` (0.2, 0.5) it stays
    positive as :math:`\tau \to \infty` (shrinking the memorized task set helps).

    Used in: chapter 4 (regularization and the double-descent peak).
    """
    alpha, kappa, tau, rho = _check_params(alpha, kappa, tau, rho)
    lo = float(check_real("lam_bounds[0]", lam_bounds[0], low=0.0, low_open=True))
    hi = float(check_real("lam_bounds[1]", lam_bounds[1], low=lo, low_open=True))
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

    Used in: chapters 1 and 5.
    """
    rho = check_real("rho", rho, low=0.0)
    _, a1, ef2 = _moments(teacher)
    return _out(_rho_nl(rho, a1, ef2))


def pure_noise_error(
    rho_nl: ArrayLike, alpha: ArrayLike, tau: ArrayLike, lam: ArrayLike = 0.0
) -> float | np.ndarray:
    r"""Error of linear attention when no task information reaches it (:math:`a_1 = 0`).

    .. math::

        e = \rho_{nl}\Big[1 + \frac1\tau\big(m(-\mu) - \mu\, m'(-\mu)\big)\Big]
          = \rho_{nl}\Big[1 + \frac{2\gamma}{s\,(\mu + 1 + \gamma + s)}\Big],
        \qquad \mu = \frac{\lambda\alpha}{\rho_{nl}},\ \gamma = \frac1\tau,\
        s = \sqrt{(\mu + 1 - \gamma)^2 + 4\gamma\mu},

    with :math:`m(z) = \big(1 - \gamma - z - \sqrt{(1-\gamma-z)^2 - 4\gamma z}\big)/(2\gamma z)`
    the Marchenko-Pastur Stieltjes transform at ratio :math:`\gamma`. Ridgeless
    (:math:`\lambda = 0`): :math:`e = \rho_{nl}/(1-\tau)` for :math:`\tau < 1`,
    :math:`e = \rho_{nl}\,\tau/(\tau-1)` for :math:`\tau > 1` and ``inf`` at
    :math:`\tau = 1` (the second form covers all cases, :math:`\lambda = 0` included).
    :math:`\rho_{nl} = 0` (then :math:`f \equiv 0` and there is no noise) gives 0.

    Derivation. With :math:`a_1 = 0` the target :math:`y_{\ell+1}` is uncorrelated
    with the feature :math:`\phi = \operatorname{vec}(x_{\ell+1} f^\top)` (to leading
    order, independent of it), so pretraining is least squares on pure noise of
    variance :math:`E[y^2] = \rho_{nl}`, and :math:`e = \rho_{nl} + E[\hat\beta^\top
    \Sigma\hat\beta]`. The feature covariance is isotropic: :math:`E[h h^\top] \approx
    (d/\ell) E[y^2] I = (\rho_{nl}/\alpha) I` and :math:`E[x x^\top] = I/d`, so
    :math:`\Sigma = \sigma^2 I_p` with :math:`\sigma^2 = \rho_{nl}/(\alpha d)` per
    parameter (the last column of :math:`\Gamma`, :math:`d` of the :math:`p \approx d^2`
    parameters, does not matter in the limit). Dividing the objective by :math:`n`, the
    penalty is :math:`(\lambda/d)\|\Gamma\|^2`; in whitened coordinates
    :math:`\sigma\Gamma` it becomes :math:`\mu\|\sigma\Gamma\|^2` with
    :math:`\mu = (\lambda/d)/\sigma^2 = \lambda\alpha/\rho_{nl}`. For whitened ridge
    with :math:`n` samples and :math:`p = n\gamma` parameters, :math:`\gamma = p/n =
    1/\tau`, the variance term is :math:`\rho_{nl}\,\gamma \int s/(s+\mu)^2\,dF_\gamma(s)
    = \rho_{nl}\,\gamma\,(m(-\mu) - \mu m'(-\mu))`. Since
    :math:`m(-\mu) = M_\tau(\mu)` (:func:`M_kappa` with :math:`\kappa = \tau`),
    :math:`m(-\mu) - \mu m'(-\mu) = \tfrac{d}{d\mu}[\mu M_\tau(\mu)]`, and with
    :math:`\mu M_\tau(\mu) = (s - (\mu + 1 - \gamma))/(2\gamma)` this derivative is
    :math:`2/(s(\mu + 1 + \gamma + s))`, free of the :math:`1/\mu` cancellation of
    the first form as :math:`\mu \to 0` when :math:`\tau < 1`.

    It is the :math:`a_1 \to 0` limit of :func:`nonlinear_icl_error` at fixed
    :math:`\rho_{nl}` (checked numerically in ``tests/test_theory.py``).

    Parameters
    ----------
    rho_nl : float or array_like
        Effective noise :math:`\rho_{nl} \ge 0` (:func:`effective_noise`).
    alpha : float or array_like
        :math:`\alpha > 0` (enters only through :math:`\mu`).
    tau : float or array_like
        :math:`\tau > 0`.
    lam : float or array_like, default 0
        :math:`\lambda \ge 0`.

    Returns
    -------
    float or numpy.ndarray
        Broadcast shape; a float for scalar input.

    Used in: chapter 5 (teachers with :math:`a_1 = 0`, e.g. :math:`h_2`).
    """
    rho_nl = check_real("rho_nl", rho_nl, low=0.0)
    alpha = check_real("alpha", alpha, low=0.0, low_open=True)
    tau = check_real("tau", tau, low=0.0, low_open=True)
    lam = _check_lam(lam)
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

    Used in: chapter 5.
    """
    alpha, kappa, tau, rho = _check_params(alpha, kappa, tau, rho)
    lam = _check_lam(lam)
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

        e_f = a_1^2\, e^{\mathrm{IDG}}_{\mathrm{lin}}\big(\alpha, \kappa, \tau, \rho_{nl}/a_1^2\big)
        \quad (a_1 \ne 0), \qquad
        e_f = e_{\mathrm{noise}}(\rho_{nl}, \alpha, \tau, 0) \quad (a_1 = 0),

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

    Used in: chapter 5.
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

    Used in: chapter 4 (finite pretraining data: the best ridge for a nonlinear teacher).
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

    Used in: chapter 5 (task diversity: location and width of the transition).
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
