r"""Label preprocessings built from the posterior, and where a spectral error meets a floor.

Companions of :mod:`lib.spectral` (chapter 6), kept apart because that module is at its
size limit:

- :func:`posterior_second_moment`: :math:`v(y) = E[z^2 \mid y]`, from which the optimal
  preprocessing :math:`T^* = 1 - 1/v` is built (:func:`lib.spectral.optimal_preprocess`);
- :func:`shifted_preprocess`: the family :math:`(v - 1)/(v + b)`, :math:`b \ge 0`, of
  rivals of :math:`T^*` (:math:`b = 0` is :math:`T^*` itself);
- :func:`truncated_preprocess`: a preprocessing cut from below at a level :math:`-K`,
  which makes the unbounded :math:`T^*` bounded;
- :func:`floor_crossing`: the context length at which the spectral estimator's
  asymptotic error with the best link (:func:`lib.spectral.spectral_error`) equals the
  effective noise :math:`\rho_{nl}` of linear attention.

Used in :doc:`beyond linear attention </book/beyond/spectral>`.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from scipy.optimize import brentq

from lib._checks import RHO_MAX, check_callable, check_range, check_scalar, check_vectorized
from lib.spectral import _posterior_moment, spectral_error
from lib.teachers import _moments, effective_noise

__all__ = ["posterior_second_moment", "shifted_preprocess", "truncated_preprocess", "floor_crossing"]


def posterior_second_moment(teacher: Any, rho: float) -> Callable[[np.ndarray], np.ndarray]:
    r"""The posterior second moment :math:`v(y) = E[z^2 \mid y]` as a vectorized function.

    For :math:`z \sim N(0, 1)` and :math:`y = f(z) + \varepsilon`,
    :math:`\varepsilon \sim N(0, \rho)`, tabulated on a grid of labels by the trapezoidal
    rule in :math:`z` and interpolated linearly (constant beyond the grid), as
    :func:`lib.spectral.optimal_preprocess` does: :math:`T^* = 1 - 1/v`.

    Parameters
    ----------
    teacher : None, str, Link, callable or 1-D array_like
        The link :math:`f`.
    rho : float
        Label-noise variance, > 0 (the posterior needs a density).

    Returns
    -------
    callable
        ``v(y)``, vectorized, positive.

    Raises
    ------
    ValueError
        If ``rho`` is not in (0, RHO_MAX] or the teacher is invalid.

    Notes
    -----
    Used in: :doc:`beyond linear attention </book/beyond/spectral>`.
    """
    rho = check_scalar("rho", rho, low=0.0, low_open=True, high=RHO_MAX)
    _moments(teacher)  # validates the teacher
    return _posterior_moment(teacher, rho, 2)


def shifted_preprocess(teacher: Any, rho: float, shift: float) -> Callable[[np.ndarray], np.ndarray]:
    r"""The preprocessing :math:`T_b(y) = (v(y) - 1)/(v(y) + b)` with :math:`v = E[z^2 \mid y]`.

    At :math:`b = 0` it is the optimal :math:`T^* = 1 - 1/v`; for :math:`b > 0` it is a
    bounded rival with the same sign pattern (:math:`T_b \in (-1/b, 1)`).

    Parameters
    ----------
    teacher : None, str, Link, callable or 1-D array_like
        The link :math:`f`.
    rho : float
        Label-noise variance, > 0.
    shift : float
        The shift :math:`b \ge 0` of the denominator.

    Returns
    -------
    callable
        ``T_b(y)``, vectorized, for :func:`lib.spectral.spectral_overlap` and
        :func:`lib.spectral.spectral_predict`.

    Raises
    ------
    ValueError
        If ``shift`` is negative or not finite, or ``rho`` is out of range.

    Notes
    -----
    Used in: :doc:`beyond linear attention </book/beyond/spectral>`.
    """
    shift = check_scalar("shift", shift, low=0.0)
    v = posterior_second_moment(teacher, rho)

    def T(y: np.ndarray) -> np.ndarray:
        vy = v(y)
        return (vy - 1.0) / (vy + shift)

    return T


def truncated_preprocess(
    preprocess: Callable[[np.ndarray], np.ndarray], low: float
) -> Callable[[np.ndarray], np.ndarray]:
    r"""A preprocessing cut from below: :math:`y \mapsto \max(T(y), \mathrm{low})`.

    Parameters
    ----------
    preprocess : callable
        A vectorized preprocessing :math:`T` (for instance
        :func:`lib.spectral.optimal_preprocess`, which is unbounded below).
    low : float
        The level at which :math:`T` is cut (finite).

    Returns
    -------
    callable
        The truncated preprocessing, vectorized; bounded below by ``low`` (and bounded
        whenever :math:`T` is bounded above).

    Raises
    ------
    TypeError
        If ``preprocess`` is not callable.
    ValueError
        If ``low`` is not a finite number, or ``preprocess`` does not return one real
        number per label.

    Notes
    -----
    Used in: :doc:`beyond linear attention </book/beyond/spectral>`.
    """
    preprocess = check_callable("preprocess", preprocess)
    low = check_scalar("low", low)
    check_vectorized("preprocess", preprocess, np.linspace(-3.0, 3.0, 7))

    def T(y: np.ndarray) -> np.ndarray:
        return np.maximum(preprocess(y), low)

    return T


def floor_crossing(
    teacher: Any, rho: float, preprocess: Any = None, bracket: tuple[float, float] = (1.0, 100.0)
) -> float:
    r"""The context length :math:`\alpha` at which the spectral error equals :math:`\rho_{nl}`.

    The root of :math:`e_{\mathrm{spec}}(\alpha) - \rho_{nl}` in ``bracket``, with
    :math:`e_{\mathrm{spec}}` the asymptotic error with the best link
    (:func:`lib.spectral.spectral_error`) and :math:`\rho_{nl} = \rho + E f^2 - a_1^2` the
    effective noise (:func:`lib.teachers.effective_noise`), found with
    :func:`scipy.optimize.brentq`. Above it (where the error decreases in
    :math:`\alpha`) the spectral estimator is under the floor of linear attention.

    Parameters
    ----------
    teacher : None, str, Link, callable or 1-D array_like
        The link :math:`f`.
    rho : float
        Label-noise variance, > 0.
    preprocess : None, str or callable
        As in :func:`lib.spectral.spectral_overlap` (default: the standardized
        :math:`\tanh`).
    bracket : pair of float
        ``(low, high)`` with ``0 < low < high``, where the difference changes sign.

    Returns
    -------
    float
        The crossing :math:`\alpha`.

    Raises
    ------
    ValueError
        If the bracket is invalid or the difference has the same sign at both ends.

    Notes
    -----
    Used in: :doc:`beyond linear attention </book/beyond/spectral>`.
    """
    rho = check_scalar("rho", rho, low=0.0, low_open=True, high=RHO_MAX)
    lo, hi = check_range("bracket", bracket, low=0.0, low_open=True)
    floor = float(effective_noise(teacher, rho))
    ends = [float(spectral_error(a, teacher, rho, preprocess)) - floor for a in (lo, hi)]
    if not ends[0] * ends[1] < 0:
        raise ValueError(
            f"bracket must enclose a sign change of spectral_error - rho_nl; got {bracket!r} "
            f"with differences {ends[0]:.4g} and {ends[1]:.4g}"
        )
    return float(brentq(lambda a: float(spectral_error(a, teacher, rho, preprocess)) - floor, lo, hi, xtol=1e-10))
