r"""Asymptotic errors of linear attention for the linear teacher :math:`f(z) = z`.

In the limit :math:`d \to \infty` at fixed :math:`(\alpha, \kappa, \tau, \rho, \lambda)`
(the book's notation page) the test errors of the pretrained one-layer linear attention
are deterministic. This module evaluates them for the linear teacher: :func:`icl_error`
(ridgeless and ridge) and :func:`idg_error` (ridgeless), built on the Marchenko-Pastur
transform (:mod:`lib.theory.marchenko_pastur`), with the helpers :func:`icl_limit`,
:func:`ridge_epsilon` and :func:`optimal_lambda`.

Every function is vectorized: the parameters broadcast against each other like numpy
arrays; all-scalar input gives a Python ``float``, array input an ``ndarray`` of the
broadcast shape.

Used in chapters 2 (:doc:`the model </book/linear/model>`,
:doc:`learning curves </book/linear/learning_curves>`) and, through the nonlinear
formulas, in every later chapter.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import elementwise

from lib._checks import check_broadcast, check_param, check_real, check_result, check_scalar
from lib._checks import scalar_or_array as _out
from lib.theory.marchenko_pastur import inverse_kappa, mp_transform

__all__ = ["icl_error", "idg_error", "icl_limit", "ridge_epsilon", "optimal_lambda", "X_MAX", "RIDGE_MAX"]

#: Relative tolerance of the root of the ridge equation (Chandrupatla's method stops
#: when the bracket is narrower than this times the root, so the root is correct to it).
_ROOT_XRTOL = 1e-13


#: Supported range of :math:`x^* = (1+\rho)/\alpha`: the ridgeless formulas are evaluated
#: in cancellation-free forms up to here (beyond it :math:`x^*` overflows).
X_MAX = 1e305
#: Supported range of the ridge formula (:math:`\lambda > 0`): :math:`x^* \le` ``RIDGE_MAX``,
#: so that :math:`M_\kappa'(x^* + \varepsilon) \approx -1/(x^*+\varepsilon)^2` does not
#: underflow while it still matters (it multiplies :math:`x^*`); :math:`\lambda \le` ``X_MAX``.
RIDGE_MAX = 1e150


_NO_LAM = object()  # check_model_params without a ridge (None from a user is a bad lam)


def check_model_params(
    alpha: Any, kappa: Any, tau: Any, rho: Any, lam: Any = _NO_LAM, *, lam_low_open: bool = False
) -> tuple[np.ndarray, ...]:
    r"""Validate the model parameters (and ``lam`` if given); kappa may be +inf.

    Also checks that they broadcast together (naming the first two that do not, in the
    order of the call) and that :math:`x^* = (1+\rho)/\alpha` and :math:`\lambda` are
    inside the supported ranges ``X_MAX`` and ``RIDGE_MAX``.
    """
    alpha = check_param("alpha", alpha)
    kappa = check_param("kappa", kappa)
    tau = check_param("tau", tau)
    rho = check_param("rho", rho)
    named = [("alpha", alpha), ("kappa", kappa), ("tau", tau), ("rho", rho)]
    if lam is _NO_LAM:
        lam = None
    else:
        lam = check_real("lam", lam, low=0.0, low_open=lam_low_open)
        named.append(("lam", lam))
    check_broadcast(*named)
    with np.errstate(over="ignore"):
        x = (1.0 + rho) / alpha
    ridge = np.zeros((), bool) if lam is None else lam > 0.0
    xmax = np.where(ridge, RIDGE_MAX, X_MAX)
    if np.any(x > xmax):
        i = np.unravel_index(np.argmax(x / xmax), np.broadcast_shapes(x.shape, xmax.shape))
        xi, ai, ri, mi = (
            float(np.broadcast_to(v, xmax.shape if xmax.ndim else x.shape)[i]) if np.ndim(v) else float(v)
            for v in (x, alpha, rho, xmax)
        )
        raise ValueError(
            f"alpha = {ai:g} and rho = {ri:g} give x* = (1 + rho)/alpha = {xi:.3g}, outside the "
            f"supported range x* <= {mi:g}{' of the ridge formula (lam > 0)' if mi < X_MAX else ''}; "
            f"alpha must be at least (1 + rho)/{mi:g} = {(1.0 + ri) / mi:.3g} here"
        )
    if lam is not None and np.any(lam > X_MAX):
        raise ValueError(f"lam must be <= {X_MAX:g} (the supported range of the ridge formula); got {lam.max():g}")
    return (alpha, kappa, tau, rho) if lam is None else (alpha, kappa, tau, rho, lam)


def check_lam(lam: Any) -> np.ndarray:
    """The ridge penalty ``lam`` in its range of :data:`lib._checks.PARAMETERS`."""
    return check_param("lam", lam)


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
    S = mp_transform(x, ikt)
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
    m = mp_transform(x, ik)
    T = _one_minus_nu_m(m, ik)  # 1 - u, accurate when u is near 1
    u = x * m  # accurate when u is small
    # kappa (m/(kappa+m))^2 = (m^2/kappa)/(1 + m/kappa)^2: no inf*0 at kappa = inf.
    q = ik * m * m / (1.0 + ik * m) ** 2
    kstar = 1.0 / (1.0 - q)
    km1 = q / (1.0 - q)  # k* - 1 without cancellation
    t1 = 1.0 / (tau - 1.0)
    return x * (km1 * u * u) + (x * T) * (t1 * u + T) + (kstar - t1) * u * u + (1.0 + rho) * t1 * u + rho * m * t1 + rho


def _idg_ridgeless_below(x, ik, tau, rho):
    r"""Ridgeless IDG error for tau < 1 (arrays of one shape).

    With :math:`s = 1 - \tau`, :math:`T = 1 - \mu^*` and :math:`\Delta_c = c - 1`, the
    terms of order :math:`x^*` of the formula cancel exactly; what is left is

    .. math::

        e = \tau\Big[x^* T\Big(\frac{1+s}{s} + \frac{s}{\tau\mu^*}\Big)
            + \frac{\rho}{s\tau}
            + \frac{\Delta_c\,(\rho - x^* + 2\tau x^* T)}{\tau(\tau - \Delta_c s)}\Big],

    which is evaluated instead (no cancellation for large :math:`x^*`).
    """
    ikt = ik * tau
    S = mp_transform(x, ikt)
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
        (x * T) * ((1.0 + s) / s + s / (tau * mu)) + rho / (s * tau) + delta * num / (tau * (tau - delta * s))
    )


def _idg_ridgeless_above(x, ik, tau, rho):
    r"""Ridgeless IDG error for tau > 1 (arrays of one shape); :math:`1 - x^*m^* = T`."""
    m = mp_transform(x, ik)
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
    S = mp_transform(eps + x, ik)
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
    :math:`1 - 2\nu S - \nu^2 S' = \int r^2/(r+\nu)^2\,d\mu(r)`, which the printed
    form (the book's ``eq-icl-ridge``) computes as a difference of numbers of order 1 (all digits lost when
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
    S = mp_transform(nu, ik)
    # q2 = -M'(nu) = S^2 fac (see _dmp); nu^2 q2 = (nu S)^2 fac does not underflow for huge nu
    fac = 0.5 * (1.0 + (nu + 1.0 + ik) / np.hypot(nu + 1.0 - ik, 2.0 * np.sqrt(nu) * np.sqrt(ik)))
    q2 = S * S * fac
    nu2q2 = (nu * S) ** 2 * fac
    g = 1.0 + ik * S
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

    Notes
    -----
    The ridge root of part 1 of the book's theorem ``thm-ridge-idg`` (section 2.2).

    Used in: chapter 4 (ridge pretraining).
    """
    alpha, kappa, tau, rho, lam = check_model_params(alpha, kappa, tau, rho, lam, lam_low_open=True)
    x, ik, tau, lam = np.broadcast_arrays((1.0 + rho) / alpha, inverse_kappa(kappa), tau, lam)
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
    Status, as the book gives it (section 2.2): the ridgeless branches are the formula
    quoted from Lu et al. (2025), theorem ``thm-icl-asymptotic``; the ridge branch is
    part 1 of ``thm-ridge-idg``, quoted from the source's code release (it agrees with
    the authors' ``ridge_icl`` to 1e-6 on the grid of :func:`lib.theory.source.source_values`),
    sketched in the book and checked against simulations.

    The ridge branch solves all the root equations at once, so a 400-point curve costs
    a few milliseconds (``bench/bench_theory.py``).

    Used in: :doc:`the model </book/linear/model>`,
    :doc:`learning curves </book/linear/learning_curves>`,
    :doc:`the equivalence theorem </book/equivalence/theorem>`,
    :doc:`task diversity </book/regimes/task_diversity>`.

    Examples
    --------
    >>> import numpy as np
    >>> round(icl_error(alpha=2.0, kappa=np.inf, tau=4.0, rho=0.1), 6)
    0.606452
    >>> icl_error(2.0, [0.5, 1.0, np.inf], 4.0, 0.1).round(4)  # vectorized over kappa
    array([0.9811, 0.7988, 0.6065])
    """
    alpha, kappa, tau, rho, lam = check_model_params(alpha, kappa, tau, rho, lam)
    x, ik, tau, rho, lam = (
        np.array(a, dtype=float) for a in np.broadcast_arrays((1.0 + rho) / alpha, inverse_kappa(kappa), tau, rho, lam)
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

    Notes
    -----
    Status, as the book gives it (section 2.2): part 2 of ``thm-ridge-idg``, quoted from
    the source's code release (it agrees with the authors' ``ridgeless_idg`` to rounding
    on the grid of :func:`lib.theory.source.source_values`), sketched in the book and
    checked against simulations.

    Used in: :doc:`learning curves </book/linear/learning_curves>`.
    """
    alpha, kappa, tau, rho = check_model_params(alpha, kappa, tau, rho)
    x, ik, tau, rho = (
        np.array(a, dtype=float) for a in np.broadcast_arrays((1.0 + rho) / alpha, inverse_kappa(kappa), tau, rho)
    )
    out = np.full(x.shape, np.inf)
    below = tau < 1.0
    above = tau > 1.0
    with np.errstate(all="ignore"):  # a NaN is refused just below
        if np.any(below):
            out[below] = _idg_ridgeless_below(x[below], ik[below], tau[below], rho[below])
        if np.any(above):
            out[above] = _idg_ridgeless_above(x[above], ik[above], tau[above], rho[above])
    check_result("idg_error", out, alpha=alpha, kappa=kappa, tau=tau, rho=rho)
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

    Notes
    -----
    Used in: :doc:`learning curves </book/linear/learning_curves>`.
    """
    alpha = check_param("alpha", alpha)
    rho = check_param("rho", rho)
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
    alpha, kappa, tau, rho = check_model_params(alpha, kappa, tau, rho)
    if isinstance(lam_bounds, (str, bytes)) or np.ndim(lam_bounds) != 1 or len(lam_bounds) != 2:
        raise TypeError(f"lam_bounds must be a pair (lam_lo, lam_hi) with 0 < lam_lo < lam_hi; got {lam_bounds!r}")
    lo = check_scalar("lam_bounds[0]", lam_bounds[0], low=0.0, low_open=True)
    hi = check_scalar("lam_bounds[1]", lam_bounds[1], low=lo, low_open=True)
    if hi > X_MAX:
        raise ValueError(f"lam_bounds[1] must be <= {X_MAX:g}; got {hi!r}")
    shape = np.broadcast_shapes(alpha.shape, kappa.shape, tau.shape, rho.shape)
    x, ik, tau, rho = (
        np.array(a, dtype=float).ravel()
        for a in np.broadcast_arrays((1.0 + rho) / alpha, inverse_kappa(kappa), tau, rho)
    )

    def objective(t, x, ik, tau, rho):
        flat = [np.ravel(a) for a in np.broadcast_arrays(t, x, ik, tau, rho)]
        return _icl_ridge(flat[1], flat[2], flat[3], flat[4], np.exp(flat[0])).reshape(np.shape(t))

    t_lo, t_hi = np.log(lo), np.log(hi)
    args = (x, ik, tau, rho)
    # Start from the kappa = inf optimum (1 + x*)^2 e_inf / tau (see Notes).
    t0 = np.log((1.0 + x) * (x + rho * (1.0 + x)) / tau)
    t0 = np.clip(t0, t_lo + 0.5, t_hi - 0.5)
    br = elementwise.bracket_minimum(objective, t0, xl0=t0 - 0.25, xr0=t0 + 0.25, xmin=t_lo, xmax=t_hi, args=args)
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
