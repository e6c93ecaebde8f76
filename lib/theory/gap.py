r"""The finite-size gap heuristic: how far a teacher sits from its Gaussian twin at finite d.

Used in :doc:`testing the equivalence </book/equivalence/verification>`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from lib._checks import check_param, check_scalar
from lib.teachers import gaussian_equivalent, label_moments

__all__ = ["GapEstimate", "gap_estimate"]


class GapEstimate(NamedTuple):
    """Result of :func:`gap_estimate` (all floats).

    Attributes
    ----------
    c_delta : float
        Estimated slope :math:`c_\\Delta = c_{het} + c_{tail}` of the gap :math:`c_\\Delta/d`.
    c_het, c_tail : float
        Its heteroscedastic and kurtosis parts.
    delta_ey2z2, delta_ey4 : float
        Teacher minus twin: :math:`\\Delta E[y^2 z^2]` and :math:`\\Delta E[y^4]`.
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
    Gaussian-equivalent linear teacher, :func:`lib.teachers.gaussian_equivalent`). The
    gap :math:`\Delta(d) = e_f(d) - e_g(d)` of ridgeless linear attention at
    :math:`\tau > 1` is estimated as :math:`c_\Delta/d` with

    .. math::

        c_\Delta = \frac{1}{\tau - 1}\Big[\Big(1 - \frac2\tau\Big)\,\Delta E[y^2 z^2]
        + \frac{\Delta E[y^4]}{\tau\,\alpha\,E[y^2]}\Big],

    :math:`\Delta` the teacher's moment minus the twin's (:func:`lib.teachers.label_moments`).
    The first term is the heteroscedastic part (label variance growing along the task,
    weighted by the leverage factor :math:`1 - 2/\tau`), the second the kurtosis part
    (random row scales of the design). It is a heuristic of the book, derived for
    :math:`a_1 = 0`, not a theorem.

    Parameters
    ----------
    teacher : None, str, Link, callable or array_like
        The link ``f`` (as in :func:`lib.teachers.resolve_teacher`).
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

    Notes
    -----
    Used in: :doc:`testing the equivalence </book/equivalence/verification>`.
    """
    alpha = check_param("alpha", alpha, scalar=True)
    tau = check_scalar("tau", tau, low=1.0, low_open=True)
    if twin is None:
        twin, rho_twin = gaussian_equivalent(teacher, rho)
    elif rho_twin is None:
        raise ValueError("gap_estimate: give rho_twin, the noise of the twin teacher")
    mf, mg = label_moments(teacher, rho), label_moments(twin, rho_twin)
    d_het, d_tail = mf.ey2z2 - mg.ey2z2, mf.ey4 - mg.ey4
    c_het = (1.0 - 2.0 / tau) * d_het / (tau - 1.0)
    c_tail = d_tail / (tau * alpha * mf.ey2) / (tau - 1.0)
    return GapEstimate(float(c_het + c_tail), float(c_het), float(c_tail), float(d_het), float(d_tail))
