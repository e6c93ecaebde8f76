"""Gaussian expectations of a user's function: probing, adaptive integration, Gauss-Hermite.

:func:`lib.hermite.coefficients` and the teacher moments (:mod:`lib.teachers`) integrate
an arbitrary callable ``f`` against the standard Gaussian weight. This module holds what
those integrals need and nothing about Hermite functions: the checked call of ``f``
(:func:`call_f`: :func:`lib._checks.check_vectorized` with :data:`CALL_OPTIONS`), the
probes that refuse a function before integrating (non-finite values, Gaussian tails of
``f^2`` or ``f^4`` that do not decay), the adaptive integration over pieces of the real
line, and the fixed Gauss-Hermite rule for smooth integrands (:func:`gauss_hermite`).
The probe's checks take ``f``'s values, not ``f`` (:func:`check_probe_values`,
:func:`probe_fourth_moment`): :func:`lib.teachers.as_link` calls a teacher on
:data:`PROBE_GRID` itself, once, so a teacher is resolved in ``lib.teachers`` and only
its values come here.

Adaptive bisection (:func:`scipy.integrate.cubature` on ``[-36, 36]`` cut at every integer
of ``[-20, 20]``) finds kinks and jumps whose location is not known in advance; a fixed
Gauss-Hermite rule cannot (200 nodes are off by about 2e-2 for a step at 0.5), so
:func:`gauss_hermite` is for smooth integrands only (the spectral theory, chapter 6).
"""

from __future__ import annotations

import math
from types import MappingProxyType
from typing import Callable

import numpy as np
from scipy import integrate, special

from lib._checks import check_int, check_vectorized

__all__ = [
    "gauss_hermite",
    "CALL_OPTIONS",
    "call_f",
    "check_f_values",
    "check_probe_values",
    "probe",
    "probe_fourth_moment",
    "integrate_pieces",
    "PROBE_GRID",
    "PHI0",
    "ATOL",
    "RTOL",
]

PHI0 = 1.0 / math.sqrt(2.0 * math.pi)  # phi(0)
_HALF_WIDTH = 36.0  # phi(36) ~ 1e-282: beyond it nothing square-integrable matters
_BREAKPOINTS = np.concatenate([[-32.0, -28.0, -24.0], np.arange(-20.0, 21.0), [24.0, 28.0, 32.0]])
ATOL = 1e-12
RTOL = 1e-11
_MAX_SUBDIVISIONS = 4000
_TAIL_START = 30.0  # f^2 phi must be negligible beyond this |z|
_TAIL_TOL = 1e-13
#: Where :func:`probe` evaluates ``f``: a fine grid of ``[-36, 36]`` plus a few points near 0.
PROBE_GRID = _PROBE = np.unique(
    np.concatenate(
        [
            np.linspace(-_HALF_WIDTH, _HALF_WIDTH, 1441),
            [0.0, 1e-9, -1e-9, 1e-5, -1e-5, 0.1234567, -0.7654321, 1.3579, -2.4681],
        ]
    )
)


#: How ``lib`` calls a user's ``f`` (the options of :func:`lib._checks.check_vectorized`,
#: split between :func:`~lib._checks.user_call` and :func:`~lib._checks.check_returned`
#: where :func:`lib.teachers.as_link` makes the call itself):
#: a failing call is a ``TypeError``, floating-point warnings are silenced, and non-finite
#: values are left to :func:`check_f_values`, which says whether ``f`` grows too fast.
CALL_OPTIONS = MappingProxyType(
    {"call_error": TypeError, "check_finite": False, "quiet": True, "hint": " (for a constant use np.full_like(z, c))"}
)


def check_f_values(values: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Refuse non-finite values of a user's ``f``, naming the place (no call of ``f``).

    Parameters
    ----------
    values : numpy.ndarray, shape (n,)
        ``f(z)``, as returned by :func:`lib._checks.check_vectorized` with
        :data:`CALL_OPTIONS` (a float array of ``z``'s shape).
    z : numpy.ndarray, shape (n,)
        Where ``f`` was evaluated.

    Returns
    -------
    numpy.ndarray, shape (n,)
        ``values``, unchanged.

    Raises
    ------
    ValueError
        At the first non-finite value, saying whether ``f`` grows too fast to be
        square-integrable (a value at ``|z| > 8`` that is infinite) or is not finite.
    """
    if not np.all(np.isfinite(values)):
        i = int(np.flatnonzero(~np.isfinite(values))[0])
        zbad, vbad = float(z[i]), float(values[i])
        if abs(zbad) > 8.0 and not np.isnan(vbad):
            raise ValueError(
                f"f is not square-integrable under the standard Gaussian weight: "
                f"f(z) = {vbad} at z = {zbad:.6g} (it grows too fast)"
            )
        raise ValueError(
            f"f must return finite values for every real z and be square-integrable under "
            f"the standard Gaussian weight; got f({zbad:.6g}) = {vbad}"
        )
    return values


def call_f(f: Callable, z: np.ndarray) -> np.ndarray:
    """Evaluate the user's ``f`` on a 1-D array, checking type, shape and finiteness.

    Parameters
    ----------
    f : callable
        The user's vectorized function ``f(z)``.
    z : numpy.ndarray, shape (n,)
        Where to evaluate it.

    Returns
    -------
    numpy.ndarray, shape (n,)
        ``f(z)`` as floats; a non-finite value raises ``ValueError`` (naming the place,
        and whether ``f`` grows too fast to be square-integrable).
    """
    return check_f_values(check_vectorized("f", f, z, **CALL_OPTIONS), z)


def check_probe_values(values: np.ndarray) -> np.ndarray:
    """The probe's checks on ``f``'s values on :data:`PROBE_GRID` (no call of ``f``).

    The values are finite (:func:`check_f_values`) and :math:`f^2 \\varphi` decays in
    the tails. A caller that evaluates ``f`` itself (:func:`lib.teachers.as_link`, with
    :func:`lib._checks.check_vectorized` and :data:`CALL_OPTIONS`) passes the values here,
    so that only validated plain values leave it.

    Parameters
    ----------
    values : numpy.ndarray, shape (1450,)
        ``f`` on :data:`PROBE_GRID`, a float array.

    Returns
    -------
    numpy.ndarray, shape (1450,)
        ``values``, unchanged (pass them to :func:`probe_fourth_moment` later).

    Raises
    ------
    ValueError
        If a value is not finite, the shape is not the grid's, or :math:`f^2 \\varphi`
        does not decay in the tails.
    """
    if np.shape(values) != _PROBE.shape:
        raise ValueError(f"values must be f on PROBE_GRID, shape {_PROBE.shape}; got shape {np.shape(values)}")
    fz = check_f_values(values, _PROBE)
    with np.errstate(over="ignore", under="ignore"):
        g = (fz * np.exp(-0.25 * _PROBE**2)) ** 2 * PHI0  # f(z)^2 phi(z)
    if not np.all(np.isfinite(g)):  # pragma: no cover - needs |f| > 1e154 at moderate z
        raise ValueError("f is too large: f(z)^2 overflows float64 on the probe grid")
    tail = np.abs(_PROBE) >= _TAIL_START
    scale = max(1.0, float(np.max(g)))
    worst = int(np.argmax(np.where(tail, g, -1.0)))
    if g[worst] > _TAIL_TOL * scale:
        raise ValueError(
            "f does not look square-integrable under the standard Gaussian weight: "
            f"f(z)^2 phi(z) = {g[worst]:.3g} at z = {_PROBE[worst]:.3g} does not decay "
            "(E[f(z)^2] must be finite, with negligible mass beyond |z| = 30)"
        )
    return fz


def probe(f: Callable) -> np.ndarray:
    """Cheap checks before integrating: finiteness, shape, and a decaying Gaussian tail.

    ``f`` is called once, on the probe grid :data:`PROBE_GRID` (1450 points of
    ``[-36, 36]``, including ``0`` and ``+-1e-9``), and its values go through
    :func:`check_probe_values`.

    Parameters
    ----------
    f : callable
        The user's vectorized function ``f(z)``.

    Returns
    -------
    numpy.ndarray, shape (1450,)
        ``f`` on the probe grid (pass it to :func:`probe_fourth_moment` to avoid a second
        call).

    Raises
    ------
    TypeError, ValueError
        If ``f`` fails on an array, returns the wrong shape or non-finite values, or
        :math:`f^2 \\varphi` does not decay in the tails.
    """
    return check_probe_values(check_vectorized("f", f, _PROBE, **CALL_OPTIONS))


def probe_fourth_moment(values: np.ndarray) -> None:
    """Refuse a link whose fourth Gaussian moment diverges (the tail of f^4 phi does not decay).

    The equivalence theorem (section 3.1) needs :math:`E[f(z)^4] < \\infty`: the feature
    :math:`q = \\ell^{-1}\\sum_i y_i^2` enters the prediction, so every :math:`\\Gamma`
    that weighs it has an infinite error otherwise. Checked in log space on the probe grid,
    with the same tail rule as :func:`probe` for :math:`f^2`, on the values the probe
    returned (``f`` is not called).

    Parameters
    ----------
    values : numpy.ndarray, shape (1450,)
        ``f`` on the probe grid, as returned by :func:`probe` or :func:`check_probe_values`.

    Raises
    ------
    ValueError
        If :math:`f^4 \\varphi` does not decay by ``|z| = 30``.
    """
    fz = check_probe_values(values)
    with np.errstate(divide="ignore"):
        log_g = 4.0 * np.log(np.abs(fz)) - 0.5 * _PROBE**2  # log(f^4 phi / phi(0))
    tail = np.abs(_PROBE) >= _TAIL_START
    log_scale = max(0.0, float(np.max(log_g)))
    worst = int(np.argmax(np.where(tail, log_g, -np.inf)))
    if log_g[worst] > math.log(_TAIL_TOL) + log_scale:
        raise ValueError(
            "teacher: E[f(z)^4] must be finite (the hypothesis of the equivalence theorem, "
            "section 3.1: the feature q = mean of y_i^2 enters the prediction, so with an "
            "infinite fourth moment every Gamma that weighs q has an infinite error); "
            f"f(z)^4 phi(z) does not decay: log(f^4 phi / phi(0)) = {log_g[worst]:.3g} at "
            f"z = {_PROBE[worst]:.3g}"
        )


def integrate_pieces(integrand: Callable, atol: float, rtol: float) -> np.ndarray:
    """Integrate a vector integrand over ``[-36, 36]``, one adaptive call per piece.

    The line is cut at ``_BREAKPOINTS`` and each piece is integrated by its own
    :func:`scipy.integrate.cubature` call (21-point Gauss-Kronrod, bisection of the
    sub-interval with the largest error). One call per piece rather than ``points=``:
    in scipy 1.17 the regions made from ``points`` are not heap-ordered, so the
    adaptive loop can refine the wrong region and stop without converging.

    Parameters
    ----------
    integrand : callable
        ``integrand(z)`` for ``z`` of shape (m, 1), returning shape (m, k).
    atol, rtol : float
        Absolute and relative tolerances of each piece.

    Returns
    -------
    numpy.ndarray, shape (k,)
        The integrals over ``[-36, 36]``.
    """
    edges = np.concatenate([[-_HALF_WIDTH], _BREAKPOINTS, [_HALF_WIDTH]])
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        res = integrate.cubature(
            integrand,
            np.array([lo]),
            np.array([hi]),
            rule="gk21",
            rtol=rtol,
            atol=atol,
            max_subdivisions=_MAX_SUBDIVISIONS,
        )
        if res.status != "converged":
            worst = max(res.regions, key=lambda r: float(np.max(np.abs(r.error))))
            where = 0.5 * float(worst.a[0] + worst.b[0])
            raise ValueError(
                "f: the Gaussian integrals of f did not converge (estimated error "
                f"{float(np.max(res.error)):.2g}, concentrated near z = {where:.6g}); f must "
                "be square-integrable under the standard Gaussian weight (no 1/(z - c) "
                "singularity) and piecewise smooth"
            )
        total = total + np.asarray(res.estimate, dtype=float)
    return total


def gauss_hermite(n: int) -> tuple[np.ndarray, np.ndarray]:
    r"""The ``n``-node Gauss-Hermite rule for :math:`z \sim N(0, 1)`, weights summing to 1.

    :math:`E[g(z)] \approx \sum_j w_j g(z_j)`, exact for polynomials of degree below
    :math:`2n`. Use it only for smooth integrands: a fixed rule converges slowly at kinks
    and jumps (this module's adaptive integrals handle those).

    Parameters
    ----------
    n : int
        Number of nodes, ``>= 1``.

    Returns
    -------
    nodes : numpy.ndarray, shape (n,)
        The roots of :math:`\mathrm{He}_n`.
    weights : numpy.ndarray, shape (n,)
        Positive weights summing to 1.

    See Also
    --------
    scipy.special.roots_hermitenorm : the same rule with weights summing to :math:`\sqrt{2\pi}`.
    """
    n = check_int("n", n, low=1)
    nodes, weights = special.roots_hermitenorm(n)
    return nodes, weights / weights.sum()
