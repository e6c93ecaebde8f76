r"""The Marchenko-Pastur transform :math:`M_\kappa` and its derivative.

:math:`M_\kappa(x)` is the trace of the resolvent of a Marchenko-Pastur law of aspect
ratio :math:`\kappa` (book section 2.2; the appendix on random matrices derives it); every asymptotic error of the book is built on it.

Used in :doc:`the model </book/linear/model>` and, through :mod:`lib.theory.linear`,
every chapter.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from lib._checks import check_broadcast, check_param, check_real
from lib._checks import scalar_or_array as _out

__all__ = ["M_kappa", "dM_kappa", "KAPPA_MIN"]


def mp_transform(x: np.ndarray, ik: np.ndarray) -> np.ndarray:
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
    m = mp_transform(x, ik)
    return -0.5 * m * m * (1.0 + (x + 1.0 + ik) / s)


#: Smallest task diversity evaluated: a smaller :math:`\kappa` is evaluated at this one.
#: The formulas are smooth in :math:`\kappa` with corrections of order :math:`\kappa` as
#: :math:`\kappa \to 0` (already at 1e-20 the errors agree with this value to rounding),
#: and :math:`1/\kappa \le 10^{100}` keeps products such as :math:`S/\kappa` finite.
KAPPA_MIN = 1e-100


def inverse_kappa(kappa: np.ndarray) -> np.ndarray:
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

    Notes
    -----
    Used in: :doc:`learning curves </book/linear/learning_curves>`,
    :doc:`finite pretraining data </book/regimes/finite_data>`.
    """
    x = check_real("x", x, low=0.0, low_open=True)
    kappa = check_param("kappa", kappa)
    check_broadcast(("x", x), ("kappa", kappa))
    return _out(mp_transform(x, inverse_kappa(kappa)))


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

    Notes
    -----
    Used in: chapters 2-5.
    """
    x = check_real("x", x, low=0.0, low_open=True)
    kappa = check_param("kappa", kappa)
    check_broadcast(("x", x), ("kappa", kappa))
    return _out(_dmp(x, inverse_kappa(kappa)))
