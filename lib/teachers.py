r"""Teachers: the catalogue of link functions, their moments and Gaussian equivalents.

A teacher is the link :math:`f` of the labels :math:`y = f(x^\top w) + \varepsilon`. It
may be given as ``None`` (the linear teacher), a name in :data:`LINKS`, a
:class:`~lib.hermite.Link`, any vectorized callable, or a 1-D array of Hermite
coefficients (:data:`TeacherLike`). :func:`as_link` resolves it once, at the public
boundary, into a :class:`~lib.hermite.Link` that caches its coefficients and moments;
the functions of ``lib`` pass that object inward.

From the Hermite coefficients :math:`a_m` (:mod:`lib.hermite`) this module derives what
the theory needs: :func:`teacher_moments` :math:`(a_0, a_1, E f^2)`,
:func:`effective_noise` :math:`\rho_{nl}`, the Gaussian-equivalent twin
(:func:`gaussian_equivalent`, :func:`gaussian_equivalent_ridge`) and the label moments of
the finite-size heuristic (:func:`label_moments`).

The catalogue is used in every chapter; :doc:`Hermite basics </book/hermite/basics>`
introduces it and :doc:`the equivalence theorem </book/equivalence/theorem>` uses the
effective noise and the Gaussian equivalent.
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple, Sequence, Union

import numpy as np
from numpy.typing import ArrayLike

from lib._checks import callee_name, check_param, check_real, check_returned, check_rho, user_call
from lib._checks import scalar_or_array as _out
from lib.hermite import (
    LINKS,
    Link,
    gaussian_integrals,
    get_link,
    pad_coefficients,
    partial_sum,
)
from lib.quadrature import CALL_OPTIONS, PROBE_GRID, check_probe_values, probe_fourth_moment

__all__ = [
    "TeacherLike",
    "Link",
    "LINKS",
    "get_link",
    "as_link",
    "resolve_teacher",
    "teacher_moments",
    "effective_noise",
    "gaussian_equivalent",
    "gaussian_equivalent_ridge",
    "LabelMoments",
    "label_moments",
    "remainder",
    "A1_ZERO_RTOL",
    "A1_ZERO_ATOL",
    "a1_is_zero",
    "rho_nl_from_moments",
]

#: Every way of naming a teacher that :func:`as_link` accepts: ``None`` (linear), a name
#: in :data:`LINKS`, a :class:`~lib.hermite.Link`, a vectorized callable ``f(z)`` or a
#: 1-D array of Hermite coefficients ``a_0, a_1, ...``.
TeacherLike = Union[None, str, Link, Callable[[np.ndarray], np.ndarray], Sequence[float], np.ndarray]


#: :math:`a_1` counts as zero when :math:`|a_1| \le` ``A1_ZERO_RTOL`` :math:`\sqrt{E f^2}`
#: ``+ A1_ZERO_ATOL``. The threshold is not delicate: the :math:`a_1 \ne 0` formula tends
#: to :func:`pure_noise_error` as :math:`a_1 \to 0` (relative gap of order
#: :math:`a_1^2/\rho_{nl}`, and evaluated stably down to :math:`a_1 = 10^{-8}`), so a
#: numerically computed :math:`a_1` of size 1e-9 for an even link gives the same error
#: either way; the threshold only decides which formula is evaluated.
A1_ZERO_RTOL = 1e-10
A1_ZERO_ATOL = 1e-12


def _as_coefficient_array(teacher: Any) -> np.ndarray | None:
    if isinstance(teacher, (list, tuple, np.ndarray)):
        a = check_real("teacher", teacher)
        if a.ndim != 1 or a.size == 0:
            raise ValueError(
                f"teacher given as Hermite coefficients must be a non-empty 1-D array; got shape {a.shape}"
            )
        return a
    return None


def as_link(teacher: TeacherLike = None) -> Link:
    r"""Resolve a teacher, once, into a :class:`~lib.hermite.Link`.

    The returned ``Link`` caches its Hermite coefficients and its moments
    (:func:`teacher_moments`), so a function that receives it computes them at most once
    however many inner functions use them. Resolve a teacher at the public boundary and
    pass the ``Link`` inward.

    Parameters
    ----------
    teacher : None, str, Link, callable or array_like of shape (M + 1,)
        ``None`` is the linear teacher :math:`f(z) = z`; a string is a key of
        :data:`~lib.hermite.LINKS`; a ``Link`` is returned unchanged; another callable
        ``f(z)`` is probed once, here (called on :data:`lib.quadrature.PROBE_GRID` in
        this function, inside :func:`lib._checks.user_call`; its values checked by
        :func:`lib._checks.check_returned` and
        :func:`lib.quadrature.check_probe_values`: finite values of the right shape, a
        decaying Gaussian tail of ``f^2``) and wrapped (its integrals computed
        numerically when needed, without probing it again); a 1-D array
        gives the coefficients :math:`a_0, \dots, a_M` of
        :math:`f = \sum_m a_m h_m` (closed-form coefficients and :math:`E f^2 = \sum_m a_m^2`).

    Returns
    -------
    Link
        The teacher with its cached Hermite data.

    Raises
    ------
    TypeError
        For any other type.
    ValueError
        For an unknown name, a callable that fails the probe (not vectorized, non-finite
        values, not square-integrable), a coefficient array that is not 1-D and non-empty, or
        coefficients whose :math:`\sum_m a_m^2` overflows (is not finite in floating
        point).

    See Also
    --------
    resolve_teacher : the same, for code that only evaluates ``f``.
    teacher_moments : the moments the returned ``Link`` caches.

    Examples
    --------
    >>> link = as_link("relu")
    >>> link is as_link(link)
    True
    >>> as_link([0.0, 1.0, 0.5]).coefficients(3)
    array([0. , 1. , 0.5, 0. ])
    """
    if isinstance(teacher, Link):
        return teacher
    if teacher is None:
        return LINKS["linear"]
    if isinstance(teacher, str):
        return get_link(teacher, argument="teacher")  # the one look-up of a name
    if callable(teacher):
        # the probe, done here: the one call of a user's f that validates it. The call is
        # made in this module (inside lib._checks.user_call, which only reports its
        # failure); from then on only its values travel, to the shared checks of lib._checks
        # and lib.quadrature
        opts = CALL_OPTIONS
        try:
            with user_call(
                "f", PROBE_GRID, callee=callee_name(teacher), call_error=opts["call_error"], quiet=opts["quiet"]
            ):
                out = teacher(PROBE_GRID)
            values = check_probe_values(
                check_returned("f", out, PROBE_GRID, check_finite=opts["check_finite"], hint=opts["hint"])
            )
        except (TypeError, ValueError) as exc:
            raise ValueError(f"teacher: {exc}") from exc
        link = Link(getattr(teacher, "__name__", "f"), teacher, r"$f$", description="a teacher given as a callable")
        link._cache.update(user_callable=True, probed=True, probe_values=values)
        return link
    a = _as_coefficient_array(teacher)
    if a is not None:
        coeffs = a.copy()
        with np.errstate(over="ignore"):
            ef2 = float(np.sum(coeffs**2))
        if not math.isfinite(ef2):
            raise ValueError(
                "teacher given as Hermite coefficients must have a finite E f^2 = sum_m a_m^2 in floating "
                f"point; it overflows (largest |a_m| = {np.max(np.abs(coeffs)):.3g}); rescale the coefficients"
            )

        def series(z: np.ndarray) -> np.ndarray:
            return partial_sum(coeffs, z)

        return Link(
            "hermite_series",
            series,
            r"$\sum_m a_m h_m$",
            description="a teacher given by its Hermite coefficients",
            closed_form=lambda degree: pad_coefficients(coeffs, degree),
            closed_second_moment=ef2,
        )
    raise TypeError(
        "teacher must be None (linear), a name in LINKS, a callable f(z) or a 1-D array of "
        f"Hermite coefficients; got {teacher!r} of type {type(teacher).__name__}"
    )


def resolve_teacher(teacher: Any = None) -> Callable[[np.ndarray], np.ndarray]:
    """Turn any way of naming a teacher into a vectorized callable ``f``.

    A thin alias of :func:`as_link` (which does all the checking, and probes a user's
    callable once) that hands a user's callable back unchanged instead of its ``Link``.

    Parameters
    ----------
    teacher : None, str, Link, callable or array_like of shape (M + 1,)
        ``None`` is the linear teacher ``f(z) = z``; a string is a key of :data:`LINKS`;
        a callable (including a :class:`Link`) is returned unchanged; a 1-D array is read
        as Hermite coefficients ``a_0..a_M`` and gives ``z -> sum_m a_m h_m(z)``.

    Returns
    -------
    callable
        ``f(z)`` for ``z`` of shape (n,), returning shape (n,).

    Raises
    ------
    TypeError
        For any other type. ``ValueError`` for an unknown name or a bad array.

    Notes
    -----
    Used in: :doc:`beyond linear attention </book/beyond/spectral>`.
    Through other functions of ``lib``: every chapter.
    """
    link = as_link(teacher)
    return teacher if link._cache.get("user_callable") else link


def teacher_moments(teacher: Any = None) -> tuple[float, float, float]:
    """``(a_0, a_1, E[f(z)^2])`` of a teacher, ``z ~ N(0, 1)``.

    Parameters
    ----------
    teacher : None, str, Link, callable or array_like of shape (M + 1,)
        As in :func:`resolve_teacher`. For an array the ``a_m`` are given and
        ``E[f^2] = sum_m a_m^2``; for a catalogue link the closed forms are used; for
        another callable the integrals are computed numerically.

    Returns
    -------
    (a0, a1, ef2) : tuple of float
        The mean :math:`a_0`, the linear coefficient :math:`a_1` and :math:`E[f(z)^2]`.

    Raises
    ------
    ValueError
        If ``E[f(z)^4]`` diverges (``f(z)^4 phi(z)`` does not decay by ``|z| = 30``): the
        equivalence theorem and the simulations need a finite fourth moment (section 3.1);
        or if a moment is not finite in floating point (a teacher with huge values, such as
        coefficients of size 1e200, whose ``E f^2`` overflows to ``inf``).

    Notes
    -----
    Used in: :doc:`Hermite basics </book/hermite/basics>`,
    :doc:`the equivalence theorem </book/equivalence/theorem>`,
    :doc:`testing the equivalence </book/equivalence/verification>`,
    :doc:`finite pretraining data </book/regimes/finite_data>`,
    :doc:`task diversity </book/regimes/task_diversity>`,
    :doc:`beyond linear attention </book/beyond/spectral>`.
    """
    link = as_link(teacher)
    moments = link._cache.get("moments")
    if moments is None:
        if link._cache.get("user_callable"):
            try:
                probe_fourth_moment(link._cache["probe_values"])
                a01, ef2 = gaussian_integrals(link.f, 1, probed=True)
            except (ValueError, TypeError) as exc:  # name the argument: the teacher
                raise type(exc)(f"teacher (the link f): {exc}") from exc
        else:
            a01, ef2 = link.coefficients(1), link.second_moment
        moments = (float(a01[0]), float(a01[1]), float(ef2))
        if not all(math.isfinite(m) for m in moments):
            raise ValueError(
                f"teacher {link.name!r}: its moments (a_0, a_1, E f^2) = {moments} are not all finite in "
                "floating point; rescale the teacher"
            )
        link._cache["moments"] = moments
    return moments


def gaussian_equivalent(teacher: Any, rho: float) -> tuple[Link, float]:
    """The linear teacher with the same mean, ``E[y z]`` and ``E[y^2]`` as ``teacher``.

    .. math::

        g(z) = a_0 + a_1 z, \\qquad
        \\rho_{\\mathrm{eq}} = \\rho + \\mathbb{E}[f(z)^2] - a_0^2 - a_1^2
        = \\rho + \\sum_{m \\ge 2} a_m^2 .

    Labels ``y = g(z) + sqrt(rho_eq) eps`` have the same first and second moments
    (jointly with ``z``) as ``y = f(z) + sqrt(rho) eps``.

    Parameters
    ----------
    teacher : None, str, Link, callable or array_like
        As in :func:`resolve_teacher`.
    rho : float
        Label-noise variance, ``rho >= 0``.

    Returns
    -------
    g : Link
        The affine link ``a_0 + a_1 z`` (closed-form coefficients).
    rho_eq : float
        Its noise variance (a rounding error below 1e-12 is clipped to zero).

    Notes
    -----
    Used in: :doc:`the equivalence theorem </book/equivalence/theorem>`,
    :doc:`testing the equivalence </book/equivalence/verification>`.
    """
    rho = check_rho(rho)
    link = as_link(teacher)
    a0, a1, ef2 = teacher_moments(link)
    extra = ef2 - a0**2 - a1**2
    if -1e-12 * max(1.0, ef2) < extra < 0.0:
        extra = 0.0
    if teacher is None or isinstance(teacher, str):
        name = link.name
    else:
        name = getattr(teacher, "name", getattr(teacher, "__name__", "teacher"))

    def affine(z: np.ndarray) -> np.ndarray:
        return a0 + a1 * np.asarray(z, dtype=float)

    g = Link(
        f"{name}_gauss_eq",
        affine,
        rf"${a0:.3g} + {a1:.3g}\,z$",
        description=f"Gaussian-equivalent linear teacher of {name}",
        closed_form=lambda degree: pad_coefficients([a0, a1], degree),
        closed_second_moment=a0**2 + a1**2,
    )
    return g, rho + extra


class LabelMoments(NamedTuple):
    """The four label moments of :func:`label_moments` (all floats).

    Attributes
    ----------
    eyz : float
        :math:`E[y z] = a_1`.
    ey2 : float
        :math:`E[y^2] = E[f^2] + \\rho`.
    ey2z2 : float
        :math:`E[y^2 z^2] = E[f^2 z^2] + \\rho`.
    ey4 : float
        :math:`E[y^4] = E[f^4] + 6\\rho E[f^2] + 3\\rho^2`.
    """

    eyz: float
    ey2: float
    ey2z2: float
    ey4: float


def label_moments(teacher: Any, rho: float) -> LabelMoments:
    """Moments of the labels ``y = f(z) + sqrt(rho) eps`` that set finite-size effects.

    For :math:`z, \\varepsilon \\sim \\mathcal N(0, 1)` independent,

    .. math::

        \\begin{aligned}
        E[yz] &= a_1, & E[y^2] &= E[f^2] + \\rho, \\\\
        E[y^2 z^2] &= E[f^2 z^2] + \\rho,
            & E[y^4] &= E[f^4] + 6\\rho\\,E[f^2] + 3\\rho^2 .
        \\end{aligned}

    The first two are all the equivalence theorem keeps; :math:`E[y^2 z^2]` (how the
    label variance grows along the task) and :math:`E[y^4]` (the tails of the labels)
    set the fluctuations of :math:`S/\\ell` and :math:`q` and the finite-size gap to the
    Gaussian-equivalent teacher. Gaussian integrals are computed by the adaptive
    quadrature of :func:`second_moment` (closed forms where the link has them).

    Parameters
    ----------
    teacher : None, str, Link, callable or array_like
        The link ``f``, as in :func:`resolve_teacher`.
    rho : float
        Label-noise variance, ``rho >= 0``.

    Returns
    -------
    LabelMoments
        ``(eyz, ey2, ey2z2, ey4)``, floats.

    Raises
    ------
    ValueError
        If ``rho`` is negative or not finite, or the teacher is invalid.

    Notes
    -----
    Used in: :doc:`the equivalence theorem </book/equivalence/theorem>`,
    :doc:`testing the equivalence </book/equivalence/verification>`.

    Examples
    --------
    >>> m = label_moments("linear", 0.0)  # y = z: E[z^2 z^2] = 3, E[z^4] = 3
    >>> [round(v, 8) for v in m]
    [1.0, 1.0, 3.0, 3.0]
    """
    rho = check_rho(rho)
    link = as_link(teacher)
    _, a1, ef2 = teacher_moments(link)  # validates the teacher (finite fourth moment), naming it
    f = link.f
    # f^4 phi decays (checked by teacher_moments), so these need no probe of their own
    ef2z2 = gaussian_integrals(lambda z: f(z) * np.asarray(z, dtype=float), -1, probed=True)[1]
    ef4 = gaussian_integrals(lambda z: f(z) ** 2, -1, probed=True)[1]
    return LabelMoments(
        eyz=a1,
        ey2=ef2 + rho,
        ey2z2=ef2z2 + rho,
        ey4=ef4 + 6.0 * rho * ef2 + 3.0 * rho**2,
    )


def remainder(f: Callable) -> Link:
    """The part of ``f`` that linear attention cannot use: ``f_perp = f - a_1 h_1``.

    .. math::

        f_\\perp(z) = f(z) - a_1 z, \\qquad \\mathbb{E}[f_\\perp(z)\\, z] = 0, \\qquad
        \\mathbb{E}[f_\\perp(z)^2] = \\mathbb{E}[f(z)^2] - a_1^2.

    Parameters
    ----------
    f : callable
        As in :func:`lib.hermite.coefficients`.

    Returns
    -------
    Link
        A callable :class:`Link` named ``"<name>_perp"``; its coefficients are those of
        ``f`` with ``a_1`` set to zero (closed form if ``f`` is a catalogue link).

    Notes
    -----
    Used in: :doc:`Hermite basics </book/hermite/basics>`,
    :doc:`the equivalence theorem </book/equivalence/theorem>`.
    """
    parent = as_link(f)
    a1 = float(parent.coefficients(1)[1])

    def f_perp(z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, dtype=float)
        return np.asarray(parent.f(z), dtype=float) - a1 * z

    closed = None
    if parent.has_closed_form:

        def closed(degree: int) -> np.ndarray:
            a = parent.coefficients(degree)
            if degree >= 1:
                a[1] = 0.0
            return a

    ef2 = parent.second_moment - a1**2 if parent.has_closed_form else None
    return Link(
        f"{parent.name}_perp",
        f_perp,
        r"$f_\perp$",
        description=f"remainder of {parent.name} after removing its linear part a_1 z",
        closed_form=closed,
        closed_second_moment=ef2,
    )


# --------------------------------------------------------------------------------------
# effective noise and the Gaussian-equivalent ridge
# --------------------------------------------------------------------------------------
def a1_is_zero(a1: float, ef2: float) -> bool:
    """The documented test for a vanishing linear Hermite coefficient.

    Parameters
    ----------
    a1, ef2 : float
        :math:`a_1` and :math:`E f^2` of a teacher (:func:`teacher_moments`).

    Returns
    -------
    bool
        Whether :math:`|a_1| \\le` ``A1_ZERO_RTOL`` :math:`\\sqrt{E f^2}` ``+ A1_ZERO_ATOL``.
    """
    return abs(a1) <= A1_ZERO_RTOL * np.sqrt(max(ef2, 0.0)) + A1_ZERO_ATOL


def rho_nl_from_moments(rho: np.ndarray, a1: float, ef2: float) -> np.ndarray:
    """:math:`\\rho_{nl} = \\rho + E f^2 - a_1^2` from validated values (no checks).

    Parameters
    ----------
    rho : float or numpy.ndarray
        Validated label-noise variance.
    a1, ef2 : float
        :math:`a_1` and :math:`E f^2` (:func:`teacher_moments`).

    Returns
    -------
    float or numpy.ndarray
        :math:`\\rho_{nl}`; :math:`E f^2 \\ge a_1^2` (Bessel), so the rounding error of
        numerically computed moments is clipped.
    """
    return rho + max(ef2 - a1 * a1, 0.0)


def effective_noise(teacher: Any, rho: ArrayLike) -> float | np.ndarray:
    r"""Effective noise of a teacher: label noise plus the nonlinear part of :math:`f`.

    .. math::

        \rho_{nl} = \rho + E[f(z)^2] - a_1^2 = \rho + a_0^2 + \sum_{m \ge 2} a_m^2,
        \qquad z \sim N(0, 1),

    with :math:`a_m = E[f(z) h_m(z)]` the Hermite coefficients
    (:func:`lib.teachers.teacher_moments`). The rounding error of numerically computed
    moments is clipped so that :math:`\rho_{nl} \ge \rho`; the linear teacher gives
    :math:`\rho_{nl} = \rho` exactly.

    Parameters
    ----------
    teacher : None, str, Link, callable or 1-D array_like
        The link :math:`f` in any form accepted by :func:`lib.teachers.teacher_moments`
        (``None`` is the linear teacher, a string names a catalogue link, a 1-D array
        gives the coefficients :math:`a_0, a_1, \dots`).
    rho : float or array_like
        Label-noise variance, :math:`\rho \ge 0`.

    Returns
    -------
    float or numpy.ndarray
        :math:`\rho_{nl}`, shape of ``rho``.

    Notes
    -----
    Used in: :doc:`Hermite basics </book/hermite/basics>`,
    :doc:`the equivalence theorem </book/equivalence/theorem>`,
    :doc:`testing the equivalence </book/equivalence/verification>`,
    :doc:`finite pretraining data </book/regimes/finite_data>`,
    :doc:`task diversity </book/regimes/task_diversity>`,
    :doc:`beyond linear attention </book/beyond/spectral>`.
    """
    rho = check_param("rho", rho)
    _, a1, ef2 = teacher_moments(teacher)
    return _out(rho_nl_from_moments(rho, a1, ef2))


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

    Notes
    -----
    Used in: :doc:`task diversity </book/regimes/task_diversity>`.
    """
    rho = check_param("rho", rho)
    if not isinstance(intercept, (bool, np.bool_)):
        raise TypeError(f"intercept must be True or False; got {intercept!r}")
    a0, a1, ef2 = teacher_moments(teacher)
    c = a0 if intercept else 0.0
    s2 = rho_nl_from_moments(rho, a1, ef2) - 2.0 * c * a0 + c * c
    ridge = np.inf * np.ones_like(s2) if a1_is_zero(a1, ef2) else s2 / (a1 * a1)
    return float(c), _out(np.asarray(ridge, dtype=float))
