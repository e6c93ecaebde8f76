r"""The error of the best predictor that never reads the context, at finite dimension.

The model of the book draws the task :math:`w` uniformly on the sphere of radius
:math:`\sqrt d`, the query :math:`x \sim N(0, I_d/d)` and the label
:math:`y = f(x^\top w) + \varepsilon` with :math:`\varepsilon \sim N(0, \rho)`. A
predictor that sees the query but not the context can do no better than the conditional
mean :math:`g(x) = E[y \mid x]`, and its error is

.. math::

    e_{\mathrm{cf}}(d) = E\big[(y - E[y \mid x])^2\big] = \rho + E f(z)^2 - E\, g(x)^2 .

Given :math:`\|x\|`, the direction of :math:`w` is uniform, so
:math:`z = x^\top w = \sqrt{s}\, t` with :math:`s = d\|x\|^2 \sim \chi^2_d` and :math:`t`
the first coordinate of a uniform unit vector of :math:`\mathbb R^d` (density
proportional to :math:`(1 - t^2)^{(d-3)/2}`), independent of :math:`s`. Hence
:math:`g` depends on :math:`\|x\|` only, :math:`g = G(s) = E_t f(\sqrt s\, t)`, and
:math:`z \sim N(0, 1)` exactly.

**Hermite form.** Two independent tasks :math:`w, w'` have overlap
:math:`c = w^\top w'/d`, distributed as :math:`t`, and given :math:`c` the pair
:math:`(x^\top w, x^\top w')` is standard Gaussian with correlation :math:`c`. Mehler's
formula then gives, with the normalized Hermite coefficients :math:`a_m` of :math:`f`,

.. math::

    E\, g^2 = E_c\, E[f(x^\top w) f(x^\top w') \mid c] = \sum_m a_m^2\, E[t^m],

.. math::

    e_{\mathrm{cf}}(d) = \rho + \sum_{m \ge 1} a_m^2 \big(1 - E[t^m]\big),

with :math:`E[t^m] = 0` for odd :math:`m` and
:math:`E[t^{2k}] = (2k-1)!!/\big(d(d+2)\cdots(d+2k-2)\big)`. For :math:`h_2` this is
:math:`1 + \rho - 1/d` (and :math:`g(x) = (\|x\|^2 - 1)/\sqrt2`). As
:math:`d \to \infty`, :math:`E[t^m] \to 0` for :math:`m \ge 1` and the error tends to
:math:`\rho + \operatorname{Var} f(z) = \rho + E f^2 - a_0^2`, which at finite :math:`d`
it exceeds; the effective-noise floor :math:`\rho_{nl} = \rho + E f^2 - a_1^2` is not a
bound on it (for :math:`h_2`, :math:`e_{\mathrm{cf}} = \rho_{nl} - 1/d`).

**Homogeneous links.** For ReLU, :math:`G(s) = \sqrt s\, E[t_+] = c_d \|x\|` with
:math:`c_d = \sqrt d\, E|t|/2` and
:math:`E|t| = \Gamma(d/2)/(\sqrt\pi\, \Gamma((d+1)/2))`, so
:math:`e_{\mathrm{cf}} = \rho + 1/2 - d\,(E|t|)^2/4`; for :math:`|z|`,
:math:`\rho + 1 - d\,(E|t|)^2`; for odd links (``linear``, ``sign``, ``h3``, ...)
:math:`g = 0` and :math:`e_{\mathrm{cf}} = \rho + E f^2`.

:func:`context_free_error` evaluates these closed forms where they exist and otherwise
integrates over :math:`t` and :math:`s` by adaptive quadrature (scipy).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import integrate, special, stats

from lib._checks import check_choice, check_int, check_scalar
from lib.hermite import LINKS
from lib.quadrature import call_f
from lib.teachers import as_link, teacher_moments

__all__ = ["context_free_error", "CONTEXT_FREE_QUAD_ATOL", "sphere_moment"]

#: Absolute accuracy of the quadrature path of :func:`context_free_error` for teachers
#: with :math:`E f^2 \le 1`-sized values (tested against the closed forms for ``h2``,
#: ``relu``, ``abs`` and a cubic at :math:`2 \le d \le 256`).
CONTEXT_FREE_QUAD_ATOL = 1e-8

# Hermite series: used when the closed-form coefficients to this degree leave a tail
# tail = E f^2 - sum_m a_m^2 whose largest possible contribution, tail * E[t^m] for the
# first even m above the degree, is at most _SERIES_BOUND (polynomials: exactly zero).
_SERIES_DEGREE = 60
_SERIES_BOUND = 1e-14

# the quadrature over t uses the algebraic weight (1 - t)^((d-3)/2) up to this d
_ALG_MAX_D = 64


def sphere_moment(m: int, d: int) -> float:
    r""":math:`E[t^m]` for :math:`t` the first coordinate of a uniform unit vector of :math:`\mathbb R^d`.

    Parameters
    ----------
    m : int
        The power, ``m >= 0``.
    d : int
        The dimension, ``d >= 2``.

    Returns
    -------
    float
        0 for odd ``m``; :math:`(m-1)!!/(d(d+2)\cdots(d+m-2))` for even ``m``.

    Examples
    --------
    >>> sphere_moment(2, 8)
    0.125
    """
    m = check_int("m", m, low=0)
    d = check_int("d", d, low=2)
    if m % 2:
        return 0.0
    k = m // 2
    # Gamma(k + 1/2) Gamma(d/2) / (Gamma(1/2) Gamma(d/2 + k)), in logs
    return math.exp(math.lgamma(k + 0.5) + math.lgamma(d / 2) - math.lgamma(0.5) - math.lgamma(d / 2 + k))


def _mean_abs_t(d: int) -> float:
    return math.exp(math.lgamma(d / 2) - math.lgamma((d + 1) / 2)) / math.sqrt(math.pi)


def _series(link: Any, d: int) -> float | None:
    """``sum_{m >= 1} a_m^2 (1 - E t^m)`` when the closed-form coefficients are complete."""
    if not link.has_closed_form:
        return None
    a = link.coefficients(_SERIES_DEGREE)
    ef2 = float(link.closed_second_moment)
    tail = max(ef2 - float(np.sum(a**2)), 0.0)
    if tail * sphere_moment(_SERIES_DEGREE + 2 - _SERIES_DEGREE % 2, d) > _SERIES_BOUND:
        return None
    mu = np.array([sphere_moment(m, d) for m in range(a.size)])
    return float(np.sum(a[1:] ** 2 * (1.0 - mu[1:])))


def _quadrature(f: Any, d: int, ef2: float) -> float:
    """``E f^2 - E G(s)^2`` by nested adaptive quadrature (inner over t, outer over s)."""
    beta = (d - 3) / 2.0
    log_norm = math.log(special.beta(0.5, (d - 1) / 2.0))  # of (1 - t^2)^beta on [-1, 1]

    def f1(z: float) -> float:
        return float(call_f(f, np.array([z]))[0])

    def half(r: float, sign: float) -> float:
        """The integral of f(r t) p(t) over t in [0, 1] (sign = 1) or [-1, 0] (sign = -1)."""
        if d <= _ALG_MAX_D:
            # (1 - t^2)^beta = (1 + t)^beta (1 - t)^beta: the factor singular or vanishing
            # at t = 1 is the algebraic weight of the rule; splitting at 0 puts the kink
            # of ReLU, |z|, sign on an end point
            return integrate.quad(
                lambda t: f1(sign * r * t) * (1.0 + t) ** beta * math.exp(-log_norm),
                0.0,
                1.0,
                weight="alg",
                wvar=(0.0, beta),
                epsabs=1e-13,
                epsrel=1e-12,
                limit=200,
            )[0]
        # large d: p(t) is smooth, zero at the ends and concentrated on |t| ~ 1/sqrt(d);
        # beyond |t| = 12/sqrt(d) it is below exp(-70) of its peak
        top = min(1.0, 12.0 / math.sqrt(d))
        return integrate.quad(
            lambda t: f1(sign * r * t) * math.exp(beta * math.log1p(-t * t) - log_norm),
            0.0,
            top,
            epsabs=1e-13,
            epsrel=1e-12,
            limit=200,
        )[0]

    def G(s: float) -> float:
        r = math.sqrt(s)
        return half(r, 1.0) + half(r, -1.0)

    chi2 = stats.chi2(d)
    # the outer integral over s ~ chi^2_d, split at the quartiles to guide the adaptivity
    cuts = [0.0, *chi2.ppf([0.25, 0.5, 0.75, 0.999]), np.inf]
    eg2 = sum(
        integrate.quad(lambda s: G(s) ** 2 * chi2.pdf(s), lo, hi, epsabs=1e-12, epsrel=1e-11, limit=200)[0]
        for lo, hi in zip(cuts[:-1], cuts[1:])
    )
    return ef2 - eg2


def context_free_error(teacher: Any, d: int, rho: float, *, method: str = "auto") -> float:
    r"""Error of the best predictor that sees only the query, :math:`E[(y - E[y \mid x])^2]`.

    The baseline for in-context learning at dimension ``d``: a prediction that beats it
    must read the context. At finite ``d`` it is below :math:`\rho + \operatorname{Var} f`
    because :math:`\|x\|^2 \sim \chi^2_d/d` carries information on :math:`|x^\top w|`;
    see the module docstring for the derivation.

    Parameters
    ----------
    teacher : None, str, Link, callable or array_like
        Any teacher :func:`lib.teachers.as_link` accepts (a catalogue name, a vectorized
        callable ``f(z)``, Hermite coefficients ``a_0, a_1, ...``).
    d : int
        Dimension of the tokens, ``d >= 2``.
    rho : float
        Label-noise variance, finite and ``>= 0``.
    method : {"auto", "quadrature"}, keyword-only
        ``"auto"`` uses a closed form when one exists (a finite or converged Hermite
        series: polynomials, ``sin``, ``erf`` at moderate ``d``; the homogeneous links ``relu``, ``abs``,
        ``sign``, ``linear``) and quadrature otherwise (``tanh``, a callable).
        ``"quadrature"`` forces the quadrature (to check the closed forms).

    Returns
    -------
    float
        :math:`\rho + E f(z)^2 - E\,g(x)^2` with :math:`g(x) = E[f(x^\top w) \mid x]`.

    Raises
    ------
    TypeError
        If ``d`` is not an integer, ``rho`` not a real number, or ``teacher`` not a
        teacher.
    ValueError
        If ``d < 2``, ``rho`` is negative or not finite, ``method`` is unknown, or the
        teacher is not square-integrable or has a divergent fourth moment (the
        condition :func:`lib.teachers.teacher_moments` imposes on every teacher).

    Notes
    -----
    Accuracy: the closed forms are exact up to round-off. A Hermite series is used only
    when the largest possible contribution of its coefficients above degree 60 is below
    :math:`10^{-14}`. The quadrature (inner integral over :math:`t \ge 0` and
    :math:`t \le 0` separately, with the algebraic weight :math:`(1 - |t|)^{(d-3)/2}` up
    to :math:`d = 64` and on :math:`|t| \le 12/\sqrt d` above; outer integral over
    :math:`s \sim \chi^2_d`; both ``scipy.integrate.quad``) is accurate to
    :data:`CONTEXT_FREE_QUAD_ATOL` (:math:`10^{-8}`) for teachers of unit scale, as
    tested against the closed forms at :math:`2 \le d \le 256`. For a callable
    :math:`E f^2` comes from :func:`lib.teachers.teacher_moments`. The quadrature takes
    about a second.

    Used in: :doc:`trained networks </book/trained/networks>`.

    Examples
    --------
    >>> round(context_free_error("h2", 8, 0.1), 12)  # 1 + rho - 1/d
    0.975
    >>> round(context_free_error("linear", 8, 0.1), 12)  # E[y | x] = 0
    1.1
    """
    d = check_int("d", d, low=2)
    rho = check_scalar("rho", rho, low=0.0)
    check_choice("method", method, ("auto", "quadrature"))
    link = as_link(teacher)  # a user's callable is probed there, once
    ef2 = teacher_moments(link)[2]
    if method == "auto":
        if link is LINKS["relu"]:
            return rho + 0.5 - d * _mean_abs_t(d) ** 2 / 4.0
        if link is LINKS["abs"]:
            return rho + 1.0 - d * _mean_abs_t(d) ** 2
        if link is LINKS["sign"]:
            return rho + 1.0
        series = _series(link, d)
        if series is not None:
            return rho + series
    return rho + _quadrature(link.f, d, ef2)
