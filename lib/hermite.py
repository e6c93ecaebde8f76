"""Hermite expansions of link functions under the standard Gaussian weight.

For ``z ~ N(0, 1)`` the normalized probabilists' Hermite polynomials

.. math::

    h_m(z) = \\frac{\\mathrm{He}_m(z)}{\\sqrt{m!}}, \\qquad
    \\mathbb{E}[h_m(z) h_n(z)] = \\delta_{mn},

form a basis of the functions with :math:`\\mathbb{E}[f(z)^2] < \\infty`, so that
:math:`f = \\sum_m a_m h_m` with :math:`a_m = \\mathbb{E}[f(z) h_m(z)]` and
:math:`\\mathbb{E}[f(z)^2] = \\sum_m a_m^2` (Parseval). The coefficient
:math:`a_1 = \\mathbb{E}[f(z) z]` is the linear part of a teacher ``y = f(x^T w)``;
everything else, :math:`f_\\perp = f - a_1 h_1`, acts like label noise on linear
attention (chapter 3).

Numerics:

* ``h_m`` is evaluated with the three-term recurrence of the *normalized* functions,
  :math:`h_{m+1}(z) = (z h_m(z) - \\sqrt{m}\\, h_{m-1}(z)) / \\sqrt{m+1}`, which never
  forms ``He_m(z)`` or ``m!`` and is stable to degree 100 and beyond.
* Gaussian integrals of an arbitrary callable use :func:`scipy.integrate.cubature`
  (adaptive, vectorized Gauss-Kronrod with global error control, the QUADPACK
  strategy) on ``[-36, 36]`` cut at every integer of ``[-20, 20]``. All coefficients and
  ``E[f^2]`` are integrated together, with the weight split as ``sqrt(phi)`` on each
  factor so that nothing overflows. Adaptive bisection finds kinks and jumps whose
  location is not known in advance (a step at ``z = 0.5``, ``floor``, ``|z - z0|``);
  a fixed Gauss-Hermite rule cannot (200 nodes are off by about 2e-2 for a step at
  0.5).
* Before integrating, ``f`` is evaluated on a probe grid (including ``z = 0``) to catch
  non-finite values, the wrong output shape and Gaussian tails of ``f^2`` that do not
  decay (``exp(z^2)``); an integral that does not converge (``1/(z - z0)``) is reported
  with the place where the error concentrates. No NaN or scipy warning escapes.

Used in: chapter 1 (Hermite basics); the link catalogue is used in every chapter
(through :func:`lib.teachers.as_link`); chapter 3 (the equivalence theorem) uses
:func:`lib.teachers.remainder`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from numpy.polynomial import hermite_e as _herme
from scipy import special

from lib._checks import check_callable, check_choice, check_int, check_real, check_scalar
from lib.quadrature import ATOL as _ATOL
from lib.quadrature import PHI0 as _PHI0
from lib.quadrature import RTOL as _RTOL
from lib.quadrature import call_f as _call_f
from lib.quadrature import integrate_pieces as _integrate_pieces
from lib.quadrature import probe as _probe

__all__ = [
    "MAX_DEGREE",
    "hermite_polynomial",
    "hermite_polynomials",
    "coefficients",
    "second_moment",
    "linear_coefficient",
    "partial_sum",
    "partial_sum_errors",
    "pad_coefficients",
    "Link",
    "LINKS",
    "get_link",
    "changing_degrees",
]

#: Largest degree accepted by the numerical routines (accuracy is tested up to here).
MAX_DEGREE: int = 150


# --------------------------------------------------------------------------------------
# Normalized Hermite polynomials (hermite_function* are the old names, kept as aliases)
# --------------------------------------------------------------------------------------
def _weighted_hermite(degree: int, z: np.ndarray, weight: np.ndarray | float = 1.0) -> np.ndarray:
    """Rows ``h_m(z) * weight`` for ``m = 0..degree`` by the normalized recurrence.

    Shape ``(degree + 1,) + z.shape``. Multiplying by a Gaussian weight *before* the
    recurrence (it is linear) keeps every intermediate value finite at large ``|z|``.
    """
    out = np.empty((degree + 1,) + z.shape)
    out[0] = weight
    if degree >= 1:
        out[1] = z * out[0]
    for m in range(1, degree):
        out[m + 1] = (z * out[m] - math.sqrt(m) * out[m - 1]) / math.sqrt(m + 1)
    return out


def _check_z(z: Any) -> np.ndarray:
    return check_real("z", z)


def _finite_or_raise(values: np.ndarray, z: np.ndarray, what: str) -> np.ndarray:
    if not np.all(np.isfinite(values)):
        raise ValueError(
            f"z: {what} overflows float64 for |z| as large as {np.max(np.abs(z)):.3g}; "
            "use smaller |z| (the normalized Hermite polynomials grow like |z|^m / sqrt(m!))"
        )
    return values


def hermite_polynomials(degree: int, z: Any) -> np.ndarray:
    """All normalized Hermite polynomials ``h_0(z), ..., h_degree(z)`` at once.

    .. math::

        h_0 = 1,\\quad h_1(z) = z,\\quad
        h_{m+1}(z) = \\frac{z\\,h_m(z) - \\sqrt{m}\\,h_{m-1}(z)}{\\sqrt{m+1}}.

    Parameters
    ----------
    degree : int
        Largest index, ``0 <= degree <= MAX_DEGREE`` (150).
    z : float or array_like, shape (...)
        Points (finite reals).

    Returns
    -------
    numpy.ndarray, shape (degree + 1, ...)
        Row ``m`` is ``h_m(z)``.

    Raises
    ------
    TypeError, ValueError
        For a non-integer or negative ``degree`` or non-real / non-finite ``z``; a
        ``ValueError`` naming ``z`` if a value overflows (``|z|`` astronomically large).

    Notes
    -----
    Used in: :doc:`Hermite basics </book/hermite/basics>`.
    """
    degree = _check_degree(degree)
    zz = _check_z(z)
    with np.errstate(over="ignore", invalid="ignore"):
        out = _weighted_hermite(degree, zz)
    return _finite_or_raise(out, zz, f"h_m(z) for m <= {degree}")


def hermite_polynomial(m: int, z: Any) -> np.ndarray:
    """Normalized probabilists' Hermite polynomial ``h_m(z) = He_m(z) / sqrt(m!)``.

    Computed by the stable recurrence of :func:`hermite_polynomials` (never through
    ``He_m`` and ``m!``). ``E[h_m(z) h_n(z)] = delta_mn`` for ``z ~ N(0, 1)``.

    Parameters
    ----------
    m : int
        Index, ``0 <= m <= MAX_DEGREE`` (150, the degrees whose accuracy is tested; the
        recurrence costs ``m`` passes over ``z``).
    z : float or array_like, shape (...)
        Points.

    Returns
    -------
    numpy.ndarray, shape (...)
        ``h_m(z)``, same shape as ``z`` (a 0-d array for scalar ``z``).

    Notes
    -----
    Used in: :doc:`Hermite basics </book/hermite/basics>`.

    Examples
    --------
    ``h_2(z) = (z^2 - 1) / sqrt(2)``, ``h_3(z) = (z^3 - 3 z) / sqrt(6)``.
    """
    m = _check_degree(m, "m")
    return hermite_polynomials(m, z)[m]


# --------------------------------------------------------------------------------------
# Gaussian integrals of a user function
# --------------------------------------------------------------------------------------
def gaussian_integrals(f: Callable, degree: int, *, probed: bool = False) -> tuple[np.ndarray, float]:
    """``(a_0..a_degree, E[f^2])`` by adaptive Gauss-Kronrod cubature (degree -1: none).

    Parameters
    ----------
    f : callable
        A vectorized function (not checked: the callers have).
    degree : int
        Highest coefficient index (``-1``: only ``E[f^2]``).
    probed : bool, keyword-only
        Whether ``f`` has already passed :func:`lib.quadrature.probe` (a ``Link`` made by
        :func:`lib.teachers.as_link` has); otherwise it is probed first.

    Returns
    -------
    coefficients : numpy.ndarray, shape (degree + 1,)
        :math:`a_0, \\dots, a_{\\mathrm{degree}}`.
    ef2 : float
        :math:`E[f(z)^2]`.
    """
    if not probed:
        _probe(f)
    root_phi_norm = (2.0 * math.pi) ** -0.25

    def integrand(x: np.ndarray) -> np.ndarray:
        z = x[:, 0]
        s = root_phi_norm * np.exp(-0.25 * z * z)  # sqrt(phi(z))
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            g = _call_f(f, z) * s
            out = np.empty((z.size, degree + 2))
            out[:, -1] = g * g
            if degree >= 0:
                out[:, :-1] = (g * _weighted_hermite(degree, z, s)).T
        if not np.all(np.isfinite(out)):  # pragma: no cover - guarded by _probe
            raise ValueError("f is too large: f(z)^2 phi(z) overflows float64")
        return out

    est = _integrate_pieces(integrand, _ATOL, _RTOL)
    return est[:-1], float(est[-1])


def _check_f(f: Any) -> Callable:
    """A callable link; a string names a catalogue link (:func:`get_link`), as everywhere."""
    if isinstance(f, str):
        return get_link(f, argument="f", also="a callable or a link name, ")
    return check_callable("f", f)


def _check_degree(degree: Any, name: str = "degree") -> int:
    """An integer index in [0, MAX_DEGREE] (the degrees whose accuracy is tested)."""
    degree = check_int(name, degree, low=0)
    if degree > MAX_DEGREE:
        raise ValueError(
            f"{name} must be an integer in [0, MAX_DEGREE = {MAX_DEGREE}] (the degrees whose "
            f"accuracy is tested); got {degree}"
        )
    return degree


def coefficients(f: Callable, degree: int) -> np.ndarray:
    """Hermite coefficients ``a_m = E[f(z) h_m(z)]``, ``m = 0..degree``, ``z ~ N(0, 1)``.

    .. math::

        a_m = \\int_{-\\infty}^{\\infty} f(z)\\, h_m(z)\\, \\varphi(z)\\,dz, \\qquad
        \\varphi(z) = e^{-z^2/2}/\\sqrt{2\\pi}.

    For a :class:`Link` the closed form is used when there is one. Otherwise the
    integrals are computed by adaptive Gauss-Kronrod cubature (see the module notes),
    with an absolute accuracy of 1e-8 or better even when ``f`` has kinks or jumps at
    unknown places (ReLU, ``|z|``, ``sign``, a step at ``z = 0.5``, ``floor``).

    Parameters
    ----------
    f : callable or str
        Vectorized real function: ``f(z)`` for ``z`` of shape ``(n,)`` returns shape
        ``(n,)``; booleans are read as 0/1. Must be finite and square-integrable under
        the Gaussian weight. A string names a link of :data:`LINKS` (``"relu"``), as
        in every function of the library that takes a link.
    degree : int
        Highest index, ``0 <= degree <= MAX_DEGREE``.

    Returns
    -------
    numpy.ndarray, shape (degree + 1,)
        :math:`a_0, \\dots, a_{\\mathrm{degree}}`.

    Raises
    ------
    TypeError
        If ``f`` is not callable or not vectorized, or ``degree`` is not an integer.
    ValueError
        If ``f`` returns non-finite values or the wrong shape, or is not
        square-integrable (``exp(z^2)``, ``1/z``); if ``degree`` is out of range.

    Notes
    -----
    Used in: :doc:`Hermite basics </book/hermite/basics>`,
    :doc:`beyond linear attention </book/beyond/spectral>`.
    Through other functions of ``lib``: every chapter.

    Examples
    --------
    >>> import numpy as np
    >>> a = coefficients(np.tanh, 3)  # odd link: the even coefficients vanish
    >>> bool(np.abs(a[::2]).max() < 1e-12), [round(float(x), 6) for x in a[1::2]]
    (True, [0.605706, -0.148437])
    >>> coefficients("relu", 2).round(6)  # a catalogue link: closed form
    array([0.398942, 0.5     , 0.282095])
    """
    f = _check_f(f)
    degree = _check_degree(degree)
    if isinstance(f, Link):
        return f.coefficients(degree)
    return gaussian_integrals(f, degree)[0]


def second_moment(f: Callable) -> float:
    """``E[f(z)^2]`` for ``z ~ N(0, 1)`` (``= sum_m a_m^2`` by Parseval).

    Parameters
    ----------
    f : callable
        As in :func:`coefficients`; a :class:`Link` uses its closed form when known.

    Returns
    -------
    float
        :math:`E[f(z)^2]`.

    Notes
    -----
    Used in: :doc:`Hermite basics </book/hermite/basics>`.
    """
    f = _check_f(f)
    if isinstance(f, Link):
        return f.second_moment
    return gaussian_integrals(f, -1)[1]


def linear_coefficient(f: Callable) -> float:
    """The linear Hermite coefficient ``a_1 = E[f(z) z]``.

    It is the slope of the best linear fit of ``f`` in ``L^2(N(0, 1))``: the minimiser
    of ``E[(f(z) - b_0 - b_1 z)^2]`` is ``b_0 = a_0``, ``b_1 = a_1``.

    Parameters
    ----------
    f : callable
        As in :func:`coefficients`.

    Returns
    -------
    float
        :math:`a_1`.

    Notes
    -----
    Used in: chapter 1 (Hermite basics); chapter 3 (the equivalence theorem).
    """
    return float(coefficients(f, 1)[1])


def partial_sum(coeffs: Any, z: Any) -> np.ndarray:
    """Evaluate a Hermite series ``sum_{m=0}^{M} a_m h_m(z)``.

    Parameters
    ----------
    coeffs : array_like, shape (M + 1,)
        Coefficients ``a_0..a_M`` (finite reals, at least one).
    z : float or array_like, shape (...)
        Points.

    Returns
    -------
    numpy.ndarray, shape (...)
        The series at every ``z``, shape of ``z``.

    Notes
    -----
    Used in: :doc:`Hermite basics </book/hermite/basics>`.
    """
    a = check_real("coeffs", coeffs)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"coeffs must be a non-empty 1-D array; got shape {a.shape}")
    zz = _check_z(z)
    degree = a.size - 1
    with np.errstate(over="ignore", invalid="ignore"):
        h_prev = np.ones_like(zz)
        total = a[0] * h_prev
        if degree >= 1:
            h = zz.copy()
            total = total + a[1] * h
            for m in range(1, degree):
                h_prev, h = h, (zz * h - math.sqrt(m) * h_prev) / math.sqrt(m + 1)
                total = total + a[m + 1] * h
    return _finite_or_raise(np.asarray(total, dtype=float), zz, f"the series of degree {degree}")


def partial_sum_errors(f: Callable, degree: int) -> np.ndarray:
    """``L^2`` error of the Hermite partial sums of ``f``, degrees ``0..degree``.

    .. math::

        r_D = \\Big(\\mathbb{E}\\big[(f(z) - \\textstyle\\sum_{m\\le D} a_m h_m(z))^2\\big]\\Big)^{1/2}
        = \\Big(\\sum_{m > D} a_m^2\\Big)^{1/2}.

    The residuals are integrated directly (not as ``E[f^2] - sum a_m^2``), so errors far
    below ``sqrt(machine epsilon) * ||f||`` are resolved.

    Parameters
    ----------
    f : callable
        As in :func:`coefficients` (closed-form coefficients for a :class:`Link`).
    degree : int
        Largest truncation degree ``D``.

    Returns
    -------
    numpy.ndarray, shape (degree + 1,)
        ``epsilon_0, ..., epsilon_degree`` (non-increasing).

    Notes
    -----
    Used in: :doc:`Hermite basics </book/hermite/basics>`.
    """
    f = _check_f(f)
    degree = _check_degree(degree)
    a = coefficients(f, degree)
    fun = f.f if isinstance(f, Link) else f
    root_phi_norm = (2.0 * math.pi) ** -0.25

    def residual(z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, dtype=float)
        s = root_phi_norm * np.exp(-0.25 * z * z)
        parts = np.cumsum(a[:, None] * _weighted_hermite(degree, z, s), axis=0)
        return _call_f(fun, z) * s - parts  # (degree + 1, n), each row times sqrt(phi)

    def integrand(x: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", under="ignore"):
            return (residual(x[:, 0]) ** 2).T

    _probe(fun)
    est = _integrate_pieces(integrand, 1e-16, 1e-9)
    err2 = np.maximum.accumulate(np.clip(est, 0.0, None)[::-1])[::-1]
    return np.sqrt(err2)


# --------------------------------------------------------------------------------------
# The catalogue of links
# --------------------------------------------------------------------------------------
@dataclass(eq=False)
class Link:
    """A named link function ``f`` with its Hermite data.

    A ``Link`` is itself callable (``link(z) == link.f(z)``), so it can be passed
    wherever a teacher callable is expected. ``coefficients(degree)`` and
    ``second_moment`` use the closed forms when given, otherwise they are computed
    numerically once and cached.

    Attributes
    ----------
    name : str
        Key in :data:`LINKS` (``"relu"``, ``"h2"``, ...).
    f : callable
        Vectorized ``f(z)``, shape (n,) -> (n,).
    label : str
        LaTeX label for legends, e.g. ``r"$\\mathrm{ReLU}(z)$"``.
    description : str
        One line of prose.

    Notes
    -----
    Used in: :doc:`beyond linear attention </book/beyond/spectral>`.
    Through other functions of ``lib``: every chapter.
    """

    name: str
    f: Callable[[np.ndarray], np.ndarray]
    label: str
    description: str = ""
    closed_form: Callable[[int], np.ndarray] | None = field(default=None, repr=False)
    closed_second_moment: float | None = field(default=None, repr=False)
    _cache: dict = field(default_factory=dict, repr=False)

    def __call__(self, z: Any) -> np.ndarray:
        return self.f(np.asarray(z, dtype=float))

    @property
    def has_closed_form(self) -> bool:
        """Whether both the coefficients and ``E[f^2]`` are known in closed form."""
        return self.closed_form is not None and self.closed_second_moment is not None

    def coefficients(self, degree: int) -> np.ndarray:
        """Hermite coefficients ``a_0..a_degree``, shape (degree + 1,)."""
        degree = _check_degree(degree)
        if self.closed_form is not None:
            return np.asarray(self.closed_form(degree), dtype=float).copy()
        cached = self._cache.get("coefficients")
        if cached is None or cached.size <= degree:
            cached, ef2 = gaussian_integrals(self.f, max(degree, 40), probed=self._cache.get("probed", False))
            self._cache["coefficients"] = cached
            self._cache.setdefault("second_moment", ef2)
        return cached[: degree + 1].copy()

    @property
    def second_moment(self) -> float:
        """``E[f(z)^2]`` for ``z ~ N(0, 1)``."""
        if self.closed_second_moment is not None:
            return float(self.closed_second_moment)
        if "second_moment" not in self._cache:
            self._cache["second_moment"] = gaussian_integrals(self.f, -1, probed=self._cache.get("probed", False))[1]
        return float(self._cache["second_moment"])


def _values_at_zero(degree: int) -> np.ndarray:
    """``h_m(0)`` for ``m = 0..degree``: ``(-1)^k (2k-1)!! / sqrt((2k)!)`` at ``m = 2k``."""
    return _weighted_hermite(degree, np.zeros(()))


def _sign_coefficients(degree: int) -> np.ndarray:
    # E[sign(z) h_m] = 2 phi(0) h_{m-1}(0) / sqrt(m)  (m >= 1): odd m only.
    a = np.zeros(degree + 1)
    if degree >= 1:
        m = np.arange(1, degree + 1)
        a[1:] = 2.0 * _PHI0 * _values_at_zero(degree - 1) / np.sqrt(m)
    return a


def _relu_coefficients(degree: int) -> np.ndarray:
    # a_0 = phi(0), a_1 = 1/2, a_m = phi(0) [h_m(0) + sqrt(m/(m-1)) h_{m-2}(0)] for m >= 2,
    # i.e. a_{2k} = (-1)^{k+1} (2k-3)!! / (sqrt(2 pi) sqrt((2k)!)) and a_{odd >= 3} = 0.
    a = np.zeros(degree + 1)
    a[0] = _PHI0
    if degree >= 1:
        a[1] = 0.5
    if degree >= 2:
        h0 = _values_at_zero(degree)
        m = np.arange(2, degree + 1)
        a[2:] = _PHI0 * (h0[2:] + np.sqrt(m / (m - 1.0)) * h0[:-2])
    return a


def _abs_coefficients(degree: int) -> np.ndarray:
    a = 2.0 * _relu_coefficients(degree)  # |z| = 2 relu(z) - z
    if degree >= 1:
        a[1] -= 1.0
    return a


def _erf_coefficients(degree: int) -> np.ndarray:
    # erf(z): a_{2k+1} = (2/sqrt(pi)) 3^{-1/2} (-2/3)^k (2k-1)!! / sqrt((2k+1)!)
    a = np.zeros(degree + 1)
    if degree >= 1:
        a[1] = 2.0 / math.sqrt(3.0 * math.pi)
        for m in range(3, degree + 1, 2):  # ratio a_m / a_{m-2}
            a[m] = a[m - 2] * (-2.0 / 3.0) * (m - 2) / math.sqrt((m - 1.0) * m)
    return a


def _sin_coefficients(degree: int) -> np.ndarray:
    # E[e^{iz} He_m] = i^m e^{-1/2}  =>  a_m = (-1)^{(m-1)/2} e^{-1/2} / sqrt(m!), m odd
    m = np.arange(degree + 1)
    sign = np.where(m % 2 == 1, (-1.0) ** ((m - 1) // 2), 0.0)
    return sign * np.exp(-0.5 - 0.5 * special.gammaln(m + 1.0))


def pad_coefficients(coeffs: Any, degree: int) -> np.ndarray:
    r"""Hermite coefficients ``a_0..a_degree``: truncated, or padded with zeros.

    Parameters
    ----------
    coeffs : array_like of shape (M + 1,)
        Coefficients :math:`a_0, \dots, a_M`.
    degree : int
        Largest degree wanted, ``>= 0``.

    Returns
    -------
    numpy.ndarray
        Shape (degree + 1,): :math:`a_m` for :math:`m \le M`, zero beyond.
    """
    a = np.zeros(_check_degree(degree) + 1)
    coeffs = check_real("coeffs", coeffs)
    if coeffs.ndim != 1:
        raise ValueError(f"coeffs must be a 1-D array of Hermite coefficients a_0, a_1, ...; got shape {coeffs.shape}")
    n = min(a.size, coeffs.size)
    a[:n] = coeffs[:n]
    return a


def _fixed(values: list[float]) -> Callable[[int], np.ndarray]:
    def closed(degree: int) -> np.ndarray:
        return pad_coefficients(values, degree)

    return closed


def _polynomial(hermite_coeffs: list[float]) -> Callable[[np.ndarray], np.ndarray]:
    """``z -> sum_m c_m h_m(z)`` through ``numpy.polynomial.hermite_e`` (small degree)."""
    c = np.asarray(hermite_coeffs, dtype=float)
    he = c / np.sqrt(special.factorial(np.arange(c.size)))  # h_m = He_m / sqrt(m!)

    def poly(z: np.ndarray) -> np.ndarray:
        return _herme.hermeval(np.asarray(z, dtype=float), he)

    return poly


def _relu(z: np.ndarray) -> np.ndarray:
    return np.maximum(z, 0.0)


def _identity(z: np.ndarray) -> np.ndarray:
    return np.asarray(z, dtype=float) * 1.0


def _make_links() -> dict[str, Link]:
    links = [
        Link("linear", _identity, r"$z$", "the linear teacher f(z) = z = h_1(z)", _fixed([0.0, 1.0]), 1.0),
        Link("relu", _relu, r"$\mathrm{ReLU}(z)$", "rectified linear unit max(z, 0)", _relu_coefficients, 0.5),
        Link("abs", np.abs, r"$|z|$", "absolute value |z| = 2 ReLU(z) - z", _abs_coefficients, 1.0),
        Link("sign", np.sign, r"$\mathrm{sign}(z)$", "sign of z (a jump at 0)", _sign_coefficients, 1.0),
        Link("tanh", np.tanh, r"$\tanh(z)$", "hyperbolic tangent (no closed form: numerical)"),
        Link(
            "erf",
            special.erf,
            r"$\mathrm{erf}(z)$",
            "error function erf(z)",
            _erf_coefficients,
            2.0 / math.pi * math.asin(2.0 / 3.0),
        ),
        Link("sin", np.sin, r"$\sin(z)$", "sine", _sin_coefficients, 0.5 * (1.0 - math.exp(-2.0))),
        Link(
            "h2",
            _polynomial([0.0, 0.0, 1.0]),
            r"$h_2(z)$",
            "h_2(z) = (z^2 - 1)/sqrt(2): a_1 = 0",
            _fixed([0.0, 0.0, 1.0]),
            1.0,
        ),
        Link(
            "h3",
            _polynomial([0.0, 0.0, 0.0, 1.0]),
            r"$h_3(z)$",
            "h_3(z) = (z^3 - 3z)/sqrt(6)",
            _fixed([0.0, 0.0, 0.0, 1.0]),
            1.0,
        ),
        Link(
            "cubic",
            _polynomial([0.0, 1.0, 0.0, 0.5]),
            r"$h_1(z) + \frac{1}{2}h_3(z)$",
            "h_1 + 0.5 h_3",
            _fixed([0.0, 1.0, 0.0, 0.5]),
            1.25,
        ),
        Link(
            "offset", _polynomial([0.5, 1.0]), r"$\frac{1}{2} + z$", "0.5 + z (a mean offset)", _fixed([0.5, 1.0]), 1.25
        ),
    ]
    return {link.name: link for link in links}


#: The catalogue of teachers used throughout the book, keyed by name: ``linear``,
#: ``relu``, ``abs``, ``sign``, ``tanh``, ``erf``, ``sin``, ``h2``, ``h3``, ``cubic``,
#: ``offset``. Each value is a :class:`Link` (its ``description`` says what it is; chapter 1
#: tabulates their Hermite coefficients).
#:
#: :meta hide-value:
LINKS: dict[str, Link] = _make_links()


def get_link(name: str, *, argument: str = "name", also: str = "") -> Link:
    """The catalogue :class:`Link` called ``name`` (case-insensitive).

    The one look-up of a teacher's name in ``lib``: :func:`lib.teachers.as_link` and the
    functions of this module that accept a name for ``f`` call it.

    Parameters
    ----------
    name : str
        A key of :data:`LINKS` (``"relu"``, ``"h2"``, ...); case and surrounding spaces
        are ignored.
    argument : str, keyword-only
        How the messages name the value (a caller's argument, ``"teacher"``).
    also : str, keyword-only
        Other kinds of value the caller accepts, named in the message before the list of
        names (``"a callable or a link name, "``).

    Returns
    -------
    Link
        The catalogue entry itself (not a copy).

    Raises
    ------
    TypeError
        If ``name``, ``argument`` or ``also`` is not a string.
    ValueError
        If ``name`` is not in :data:`LINKS`; the message lists the names.

    Notes
    -----
    Used in: :doc:`Hermite basics </book/hermite/basics>`,
    :doc:`the equivalence theorem </book/equivalence/theorem>`,
    :doc:`testing the equivalence </book/equivalence/verification>`,
    :doc:`finite pretraining data </book/regimes/finite_data>`,
    :doc:`task diversity </book/regimes/task_diversity>`.
    Through other functions of ``lib``: every chapter.
    """
    for key, value in (("argument", argument), ("also", also)):
        if not isinstance(value, str):  # else the message would read "3 must be Noneone of ..."
            raise TypeError(f"get_link: {key} must be a str (words for the message); got {value!r}")
    if not isinstance(name, str):
        raise TypeError(f"{argument} must be a string naming a link; got {name!r}")
    link = LINKS.get(name.strip().lower())  # the one look-up of a name
    if link is None:
        check_choice(argument, name, LINKS, also=also)  # raises, naming the value as given
    return link


def changing_degrees(f: Callable, max_degree: int, min_degree: int = 10, tol: float = 1e-14) -> np.ndarray:
    r"""Degrees at which the partial-sum error of ``f`` actually changes.

    The error :math:`r_D = \|f - \Pi_D f\|` of the partial sum
    :math:`\Pi_D f = \sum_{m \le D} a_m h_m` drops at degree ``D`` only when
    :math:`a_D \ne 0`: for an odd link :math:`r_{2k} = r_{2k-1}`, for an even one
    :math:`r_{2k+1} = r_{2k}`. A fit of the decay of :math:`r_D` against ``D``
    should use one point per step, so this returns the mask of the degrees
    ``min_degree <= D <= max_degree`` with :math:`|a_D| > \mathrm{tol}`.

    Parameters
    ----------
    f : callable or Link
        The link (``Link`` objects use their closed-form coefficients).
    max_degree : int
        Largest degree ``D`` (``0 <= max_degree <= MAX_DEGREE``).
    min_degree : int, optional
        Smallest degree kept (``0 <= min_degree <= max_degree``; default 10).
    tol : float, optional
        Coefficients with ``|a_D| <= tol`` count as zero (>= 0; default 1e-14).

    Returns
    -------
    numpy.ndarray of bool, shape (max_degree + 1,)
        ``mask[D]`` is true when ``D`` is in range and :math:`|a_D| > \mathrm{tol}`.

    Raises
    ------
    ValueError
        If a degree is out of range or ``tol`` is negative.

    Notes
    -----
    Used in: :doc:`Hermite basics </book/hermite/basics>`.

    Examples
    --------
    >>> mask = changing_degrees(get_link("sign"), 15, min_degree=10)
    >>> np.flatnonzero(mask).tolist()
    [11, 13, 15]
    """
    max_degree = check_int("max_degree", max_degree, low=0)
    if max_degree > MAX_DEGREE:
        raise ValueError(f"max_degree must be an integer in [0, {MAX_DEGREE}]; got {max_degree}")
    min_degree = check_int("min_degree", min_degree, low=0)
    if min_degree > max_degree:
        raise ValueError(f"min_degree must be <= max_degree = {max_degree}; got {min_degree}")
    tol = check_scalar("tol", tol, low=0.0)
    if isinstance(f, Link):
        coeffs = f.coefficients(max_degree)
    else:
        coeffs = coefficients(_check_f(f), max_degree)
    degrees = np.arange(max_degree + 1)
    return (degrees >= min_degree) & (np.abs(coeffs) > tol)


#: Names that moved out of ``lib.hermite`` in the split of ``lib`` by concept, and where they
#: are now (an old notebook gets an AttributeError that says where to look).
_MOVED = {
    "remainder": "lib.teachers",
    "resolve_teacher": "lib.teachers",
    "teacher_moments": "lib.teachers",
    "gaussian_equivalent": "lib.teachers",
    "LabelMoments": "lib.teachers",
    "label_moments": "lib.teachers",
}


def __getattr__(name: str):
    if name in _MOVED:
        raise AttributeError(f"lib.hermite.{name} has moved to {_MOVED[name]}.{name}")
    raise AttributeError(f"module 'lib.hermite' has no attribute {name!r}")


#: Old names of :func:`hermite_polynomial` and :func:`hermite_polynomials` (the functions
#: compute polynomials, not Hermite functions), kept so that existing code runs.
hermite_function = hermite_polynomial
hermite_functions = hermite_polynomials
