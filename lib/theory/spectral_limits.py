r"""Asymptotic theory of the spectral in-context estimator of :mod:`lib.spectral` (book chapter 6).

The estimator takes the top eigenvector of :math:`\sum_i T(y_i) x_i x_i^\top` after a label
preprocessing :math:`T`. In the limit :math:`d \to \infty` at fixed :math:`\alpha`,
:func:`spectral_overlap` gives its squared overlap with the task, :func:`spectral_threshold`
the weak-recovery threshold, :func:`spectral_error` the error with the best 1-d link,
:func:`optimal_preprocess` the preprocessing with the smallest threshold and
:func:`weak_recovery_threshold` that threshold. Built from the posterior moment
:math:`v(y) = E[z^2 \mid y]` (:func:`posterior_second_moment`): the rivals :func:`shifted_preprocess`
of :math:`T^* = 1 - 1/v`, the truncation :func:`truncated_preprocess` that makes :math:`T^*`
bounded, and :func:`floor_crossing`, the context length at which :func:`spectral_error` meets
the effective-noise floor of linear attention. The built-in preprocessings
(``SPECTRAL_PREPROCESSINGS``) are defined here, where their population version is needed,
and :func:`lib.spectral.spectral_preprocess` applies them to data. Each public name has
this one address, ``lib.theory.spectral_limits.<name>`` (not re-exported elsewhere).

Used in :doc:`beyond linear attention </book/beyond/spectral>`.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy.integrate import trapezoid
from scipy.optimize import brentq

from lib._checks import (
    RHO_MAX,
    check_callable,
    check_choice,
    check_int,
    check_param,
    check_range,
    check_real,
    check_rho,
    check_scalar,
    check_vectorized,
)
from lib._checks import scalar_or_array as _out
from lib.hermite import Link
from lib.quadrature import gauss_hermite
from lib.teachers import as_link, effective_noise, resolve_teacher, teacher_moments

__all__ = [
    "SPECTRAL_PREPROCESSINGS",
    "spectral_overlap",
    "spectral_threshold",
    "spectral_psi_phi",
    "spectral_error",
    "optimal_preprocess",
    "weak_recovery_threshold",
    "posterior_second_moment",
    "shifted_preprocess",
    "truncated_preprocess",
    "floor_crossing",
    "spectral_threshold_spread",
]

#: Names of the built-in label preprocessings of :func:`lib.spectral.spectral_predict`. Each acts on the
#: labels standardized within the context, ``u_i = (y_i - mean(y)) / std(y)``.
SPECTRAL_PREPROCESSINGS = ("tanh", "clip", "square")
#: Level of the ``"clip"`` and ``"square"`` preprocessings (in units of the label std).
SPECTRAL_CLIP = 3.0


def standardized_preprocess(name: str) -> Any:
    """The function ``u -> T(u)`` of a validated built-in preprocessing (on standardized labels)."""
    if name == "tanh":
        return np.tanh
    if name == "clip":
        return lambda u: np.clip(u, -SPECTRAL_CLIP, SPECTRAL_CLIP)
    return lambda u: np.minimum(u * u, SPECTRAL_CLIP**2)


def check_preprocess(preprocess: Any) -> Any:
    """``None`` -> ``"tanh"``; a name of SPECTRAL_PREPROCESSINGS (lower case); or a callable."""
    if preprocess is None:
        return "tanh"
    if isinstance(preprocess, str):
        key = preprocess.strip().lower()
        return check_choice("preprocess", key, SPECTRAL_PREPROCESSINGS, also="None, ", hint=" or a callable T(y)")
    if callable(preprocess):
        return preprocess
    raise TypeError(
        f"preprocess must be None, one of {SPECTRAL_PREPROCESSINGS} or a callable T(y); "
        f"got {preprocess!r} of type {type(preprocess).__name__}"
    )


#: Gauss-Hermite nodes in z and in the label noise for the expectations of the spectral
#: theory (probabilists' rule, :func:`lib.quadrature.gauss_hermite`).
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
#: Largest ``alpha`` :func:`spectral_overlap` accepts (its root brackets grow like
#: ``sqrt(alpha)`` and must stay finite); the overlap there is 1 - O(1/alpha).
SPECTRAL_OVERLAP_ALPHA_MAX = 1e300


#: Labels at which a user's preprocessing is probed for boundedness above (both signs).
SPECTRAL_PROBE_LABELS = np.geomspace(1.0, 1e12, 25)


def _check_bounded_above(pre: Any, sup_nodes: float, y_max: float) -> None:
    """Refuse a preprocessing that exceeds, far out, its largest value on the quadrature
    labels: the theory needs sup T < inf (unbounded below is allowed; see
    :func:`spectral_overlap`)."""
    y = y_max * np.concatenate([-SPECTRAL_PROBE_LABELS, SPECTRAL_PROBE_LABELS])
    t = check_vectorized("preprocess", pre, y, what="labels far out (|y| up to 1e12 times the largest)")
    j = int(np.argmax(t))
    if t[j] > sup_nodes + 1e-3 * (1.0 + abs(sup_nodes)):
        raise ValueError(
            f"preprocess must be bounded above for the spectral theory (chapter 6 states it for "
            f"bounded T): T({y[j]:.3g}) = {t[j]:.6g} exceeds its largest value {sup_nodes:.6g} on the "
            "labels' range; use a truncation such as lambda y: np.minimum(T(y), K)"
        )


class _SpectralLaw:
    r"""Quadrature for the joint law of :math:`(z, T(y))`, :math:`y = f(z) + \sqrt\rho\,\epsilon`.

    Holds nodes ``z2`` (values of :math:`z^2`), ``t`` (values of :math:`T(y)`) and
    weights ``w`` (summing to 1), so that :math:`E[F(z^2, T)] \approx \sum_j w_j
    F(z^2_j, t_j)`.
    """

    def __init__(
        self,
        teacher: Any,
        rho: float,
        preprocess: Any,
        nodes: tuple[int, int] = (SPECTRAL_NODES_Z, SPECTRAL_NODES_NOISE),
    ) -> None:

        f = resolve_teacher(teacher)
        pre = check_preprocess(preprocess)
        z, wz = gauss_hermite(nodes[0])
        if rho > 0.0:
            e, we = gauss_hermite(nodes[1])
            zz, ee = np.meshgrid(z, e, indexing="ij")
            y = np.asarray(f(zz.ravel()), dtype=float) + np.sqrt(rho) * ee.ravel()
            w = np.outer(wz, we).ravel()
            zv = zz.ravel()
        else:
            y, w, zv = np.asarray(f(z), dtype=float), wz, z
        if callable(pre):
            t = check_vectorized("preprocess", pre, y.copy(), what="the labels")
            _check_bounded_above(pre, float(t[w > 1e-300].max()), float(np.abs(y).max()))
        else:
            a0, _, ef2 = teacher_moments(teacher)
            sd = np.sqrt(max(ef2 + rho - a0 * a0, 0.0))
            u = (y - a0) / sd if sd > 0.0 else np.zeros_like(y)
            t = standardized_preprocess(pre)(u)
        if t.shape != y.shape or not np.all(np.isfinite(t)):
            raise ValueError("preprocess must return finite values of the labels' shape")
        self.z2, self.t, self.w = zv * zv, t, w
        self.tau = float(t[w > 1e-300].max())
        if not self.tau > 0.0:
            raise ValueError(f"preprocess: the spectral theory needs sup T(y) > 0; got sup T = {self.tau:.3g}")

    def moments(self, lam: float) -> tuple[float, float, float]:
        """E[S^2], E[S (z^2 - 1)], E[S^2 z^2] with S = T / (lam - T)."""
        s = self.t / (lam - self.t)
        ws2 = self.w * s * s
        return float(ws2.sum()), float(np.dot(self.w * s, self.z2 - 1.0)), float(np.dot(ws2, self.z2))

    def lam_bar(self, alpha: float) -> float:
        """The minimizer of psi_alpha on (tau, inf): the root of E[S^2] = 1/alpha."""

        def g(u: float) -> float:  # alpha E[S^2] - 1: same sign, no underflow at large alpha
            return alpha * self.moments(self.tau + np.exp(u))[0] - 1.0

        lo, hi = np.log(self.tau) - 30.0, np.log(self.tau) + 30.0
        if g(lo) <= 0.0:
            return self.tau + np.exp(lo)
        while g(hi) > 0.0:  # E[S^2] ~ E[T^2] / lam^2: lam_bar grows like sqrt(alpha)
            hi += 30.0
        return self.tau + np.exp(brentq(g, lo, hi, xtol=1e-13))

    def overlap(self, alpha: float) -> float:

        lb = self.lam_bar(alpha)

        def delta(lam: float) -> float:  # alpha (phi - psi) / lam
            return alpha * self.moments(lam)[1] - 1.0

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


def _check_spectral(teacher: Any, rho: Any) -> tuple[Link, float]:
    rho = check_rho(rho)
    link = as_link(teacher)
    teacher_moments(link)  # validates the teacher
    return link, rho


def spectral_overlap(alpha: ArrayLike, teacher: Any, rho: float, preprocess: Any = None) -> float | np.ndarray:
    r"""Asymptotic squared overlap :math:`\cos^2\theta` of the spectral estimator with the task.

    For the top eigenvector :math:`\hat w` of
    :math:`\hat M = \frac1\ell \sum_i T(y_i)(d\,x_i x_i^\top - I)`
    (:func:`lib.spectral.spectral_direction`) at angle :math:`\theta` to the task,
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

    This is the book's reconstruction of the characterization announced by Lu and Li
    (2020), whose random-matrix analysis Mondelli and Montanari (2019) generalize,
    translated to the book's scaling (it is invariant under multiplying :math:`T` by a
    positive constant, and the shift by :math:`-\bar T I` does not change the
    eigenvectors); only the abstracts of these papers were consulted, so chapter 6 states
    it as a conjecture, checked against simulation and against the closed forms of a
    two-valued preprocessing (chapter 6 and ``tests/test_spectral.py``). Gauss-Hermite
    quadrature resolves a jump of :math:`T` only roughly (for the step
    :math:`T = 1\{y > 1.5\}` of chapter 6 the overlap is off by about 0.01), so a
    continuous :math:`T` is preferable. The built-in preprocessings use the population
    mean and standard deviation of the labels for the standardization.

    Expectations use a tensor Gauss-Hermite rule in :math:`(z, \varepsilon)`
    (``SPECTRAL_NODES_Z`` x ``SPECTRAL_NODES_NOISE`` nodes); the roots are found with
    :func:`scipy.optimize.brentq` in :math:`\log(\vartheta - \sup T)` (the code calls
    :math:`\vartheta` ``lam``, :math:`r_\vartheta` ``s`` and :math:`\sup T` ``tau``).

    Parameters
    ----------
    alpha : float or array_like
        Context length per dimension, :math:`\alpha = \ell/d`, in
        :math:`(0, 10^{300}]` (``SPECTRAL_OVERLAP_ALPHA_MAX``).
    teacher : None, str, Link, callable or 1-D array_like
        The link :math:`f` (:func:`lib.teachers.resolve_teacher`).
    rho : float
        Label-noise variance (>= 0).
    preprocess : None, str or callable
        As in :func:`lib.spectral.spectral_preprocess` (default ``"tanh"``). It must
        be bounded above with :math:`\sup T > 0`: a callable is probed at labels up to
        :math:`10^{12}` times the largest quadrature label, and one that grows there is
        refused. A ``T`` unbounded *below* (as :func:`optimal_preprocess`) is accepted
        and used as it is on the quadrature nodes: this is the limit :math:`K \to \infty`
        of its bounded truncations :math:`\max(T, -K)`, which chapter 6 checks (at
        :math:`K = 5` the threshold is within 0.1 % of the limit).

    Returns
    -------
    float or numpy.ndarray
        The limit of :math:`\cos^2\theta`, in :math:`[0, 1]`, shape of ``alpha``.

    Notes
    -----
    Used in: :doc:`beyond linear attention </book/beyond/spectral>`.
    """
    alpha = check_param("alpha", alpha)
    if np.any(alpha > SPECTRAL_OVERLAP_ALPHA_MAX):
        raise ValueError(
            f"alpha must be <= SPECTRAL_OVERLAP_ALPHA_MAX = {SPECTRAL_OVERLAP_ALPHA_MAX:g} for the "
            f"spectral theory (the overlap there is 1 - O(1/alpha)); got max alpha = {alpha.max():g}"
        )
    teacher, rho = _check_spectral(teacher, rho)
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
        The threshold :math:`\alpha_c` (``inf`` if it lies beyond ``SPECTRAL_ALPHA_MAX``).

    Notes
    -----
    Used in: :doc:`beyond linear attention </book/beyond/spectral>`.
    """
    teacher, rho = _check_spectral(teacher, rho)
    return _SpectralLaw(teacher, rho, preprocess).threshold()


def spectral_psi_phi(
    theta: ArrayLike, alpha: float, teacher: Any, rho: float, preprocess: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    r"""The two functions :math:`U_1, U_2` whose crossing locates the spectral outlier.

    With :math:`r_\vartheta = T/(\vartheta - T)` for :math:`\vartheta > \sup T` and
    expectations over :math:`z \sim N(0,1)`, :math:`y = f(z) + \varepsilon`,
    :math:`\varepsilon \sim N(0, \rho)`:

    .. math::

        U_1(\vartheta) = \vartheta\,\big(1/\alpha + E[r_\vartheta]\big),
        \qquad
        U_2(\vartheta) = \vartheta\, E[r_\vartheta\, z^2] .

    Their derivatives are :math:`U_1' = 1/\alpha - E[r_\vartheta^2]` and
    :math:`U_2' = -E[r_\vartheta^2 z^2]`, and :math:`U_1 = U_2` is the outlier
    equation :math:`E[r_\vartheta(z^2 - 1)] = 1/\alpha`, so the limit of
    :func:`spectral_overlap` above the threshold is
    :math:`U_1'/(U_1' - U_2')` at the crossing :math:`\vartheta^*`
    (checked with finite differences in chapter 6 and the tests).

    Parameters
    ----------
    theta : float or array_like
        Spectral variable(s) :math:`\vartheta`, each finite and above :math:`\sup T`
        (the largest value of the preprocessing on the quadrature nodes).
    alpha : float
        Context length per dimension, :math:`\alpha = \ell/d > 0`.
    teacher, rho, preprocess
        As in :func:`spectral_overlap`.

    Returns
    -------
    psi, phi : numpy.ndarray
        :math:`U_1(\vartheta)` and :math:`U_2(\vartheta)` (chapter 6's names; the
        return names are older), each of the shape of ``theta`` (0-d for a scalar).

    Raises
    ------
    ValueError
        If ``alpha`` or ``rho`` is out of range, or a ``theta`` is not above
        :math:`\sup T` (the message gives :math:`\sup T`).

    See Also
    --------
    spectral_overlap : the limit of the squared overlap that these functions express.

    Notes
    -----
    Used in: :doc:`beyond linear attention </book/beyond/spectral>`.
    """
    theta = check_real("theta", theta)
    alpha = check_param("alpha", alpha, scalar=True)
    teacher, rho = _check_spectral(teacher, rho)
    law = _SpectralLaw(teacher, rho, preprocess)
    if not np.all(theta > law.tau):
        raise ValueError(
            f"theta must be above sup T = {law.tau:.6g} (the largest value of the preprocessing); "
            f"got min theta = {theta.min():.6g}"
        )
    flat, er, erz = theta.ravel(), np.empty(theta.size), np.empty(theta.size)
    for k in range(0, flat.size, 64):  # 64 values of theta at a time: bounded memory
        r = law.t / (flat[k : k + 64, None] - law.t)
        er[k : k + 64], erz[k : k + 64] = r @ law.w, r @ (law.w * law.z2)
    return theta * (1.0 / alpha + er.reshape(theta.shape)), theta * erz.reshape(theta.shape)


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
    link of :func:`lib.spectral.spectral_predict`), which adds the sum of
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

    Notes
    -----
    Used in: :doc:`beyond linear attention </book/beyond/spectral>`.
    """

    teacher = as_link(teacher)  # resolved (and a callable probed) once
    q = np.asarray(spectral_overlap(alpha, teacher, rho, preprocess), dtype=float)
    _, _, ef2 = teacher_moments(teacher)
    if degree is not None:
        degree = check_int("degree", degree, low=0)
    kmax = 60 if degree is None else degree
    a = teacher.coefficients(kmax)  # cached on the Link (closed form, or integrals without a new probe)
    k = np.arange(kmax + 1)
    kept = np.sum(a[None, :] ** 2 * q.reshape(-1, 1) ** k[None, :], axis=1)
    return _out((rho + ef2 - kept).reshape(q.shape))


def _posterior_moment(teacher: Any, rho: float, power: int) -> Any:
    """A function y -> E[z^power | y] (rho > 0), tabulated with the trapezoidal rule."""

    f = resolve_teacher(teacher)
    # an exactly symmetric grid: for an even f, p(z | y) = p(-z | y) to the last bit, so
    # E[z | y] is 0 even when rho is so small that the posterior sits on one grid point
    half = np.linspace(0.0, SPECTRAL_Z_MAX, (SPECTRAL_Z_POINTS + 1) // 2)
    z = np.concatenate([-half[:0:-1], half])
    fz = check_vectorized("teacher", f, z)
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
        ``T(y)``, vectorized, for :func:`lib.spectral.spectral_predict` and
        :func:`spectral_overlap`.

    Notes
    -----
    Used in: :doc:`beyond linear attention </book/beyond/spectral>`.
    """
    rho = check_scalar("rho", rho, low=0.0, low_open=True, high=RHO_MAX)
    teacher_moments(teacher := as_link(teacher))
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
        :math:`\alpha_u`, the threshold of the optimal preprocessing.

    Notes
    -----
    Used in: :doc:`beyond linear attention </book/beyond/spectral>`.
    """

    rho = check_scalar("rho", rho, low=0.0, low_open=True, high=RHO_MAX)
    teacher_moments(teacher := as_link(teacher))  # validates the teacher (finite, vectorized, real)
    f = resolve_teacher(teacher)
    z, wz = gauss_hermite(SPECTRAL_NODES_Z)
    e, we = gauss_hermite(SPECTRAL_NODES_NOISE)
    w = np.outer(wz, we).ravel()
    y = (check_vectorized("teacher", f, z)[:, None] + np.sqrt(rho) * e[None, :]).ravel()
    if np.dot(w, _posterior_moment(teacher, rho, 1)(y) ** 2) > 1e-10:  # E[z | y] != 0
        return 0.0
    m = _posterior_moment(teacher, rho, 2)(y)
    return float(1.0 / np.dot(w, (m - 1.0) ** 2))


def posterior_second_moment(teacher: Any, rho: float) -> Callable[[np.ndarray], np.ndarray]:
    r"""The posterior second moment :math:`v(y) = E[z^2 \mid y]` as a vectorized function.

    For :math:`z \sim N(0, 1)` and :math:`y = f(z) + \varepsilon`,
    :math:`\varepsilon \sim N(0, \rho)`, tabulated on a grid of labels by the trapezoidal
    rule in :math:`z` and interpolated linearly (constant beyond the grid), as
    :func:`optimal_preprocess` does: :math:`T^* = 1 - 1/v`.

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
    teacher_moments(teacher := as_link(teacher))  # validates the teacher
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
        ``T_b(y)``, vectorized, for :func:`spectral_overlap` and
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
        :func:`optimal_preprocess`, which is unbounded below).
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
    (:func:`spectral_error`) and :math:`\rho_{nl} = \rho + E f^2 - a_1^2` the
    effective noise (:func:`lib.teachers.effective_noise`), found with
    :func:`scipy.optimize.brentq`. Above it (where the error decreases in
    :math:`\alpha`) the spectral estimator is under the effective-noise floor of linear attention.

    Parameters
    ----------
    teacher : None, str, Link, callable or 1-D array_like
        The link :math:`f`.
    rho : float
        Label-noise variance, > 0.
    preprocess : None, str or callable
        As in :func:`spectral_overlap` (default: the standardized
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
    teacher = as_link(teacher)
    floor = float(effective_noise(teacher, rho))
    ends = [float(spectral_error(a, teacher, rho, preprocess)) - floor for a in (lo, hi)]
    if not ends[0] * ends[1] < 0:
        raise ValueError(
            f"bracket must enclose a sign change of spectral_error - rho_nl; got {bracket!r} "
            f"with differences {ends[0]:.4g} and {ends[1]:.4g}"
        )
    return float(brentq(lambda a: float(spectral_error(a, teacher, rho, preprocess)) - floor, lo, hi, xtol=1e-10))


def spectral_threshold_spread(
    teacher: Any, rho: float, preprocess: Any = None, nodes: Any = ((120, 24), (480, 96))
) -> float:
    r"""How much the threshold :math:`\alpha_c` moves when the quadrature is changed.

    :func:`spectral_threshold` evaluates the expectations over :math:`(z, \varepsilon)`
    with a tensor Gauss–Hermite rule of ``SPECTRAL_NODES_Z`` x ``SPECTRAL_NODES_NOISE``
    nodes. For a kinked link or preprocessing (``|z|``, ``"clip"``, ``"square"``) that
    rule converges slowly and not monotonically, so the digits of :math:`\alpha_c` it
    supports are fewer than for a smooth one. This returns

    .. math:: \max_{(n_z, n_\varepsilon) \in \text{nodes}} \big|\alpha_c(n_z, n_\varepsilon)
              - \alpha_c(\text{default})\big| ,

    a practical error estimate: print :math:`\alpha_c` to the decimal place ``k`` with
    ``spread < 0.5 * 10**-k``.

    Parameters
    ----------
    teacher : None, str, Link, callable or 1-D array_like
        The link :math:`f`.
    rho : float
        Label-noise variance, as in :func:`spectral_threshold`.
    preprocess : None, str or callable
        As in :func:`spectral_overlap` (default: the standardized :math:`\tanh`).
    nodes : sequence of pairs of int
        The other resolutions ``(n_z, n_noise)``, each entry an integer >= 8.

    Returns
    -------
    float
        The largest change of :math:`\alpha_c`; 0 if it is infinite at every
        resolution, ``inf`` if it is infinite at some but not all.

    Raises
    ------
    ValueError
        If ``rho`` or the teacher is invalid, or ``nodes`` is empty or holds a pair that is not two
        integers >= 8.

    See Also
    --------
    spectral_threshold : the threshold at the default resolution.

    Notes
    -----
    Used in: :doc:`beyond linear attention </book/beyond/spectral>`.
    """
    teacher, rho = _check_spectral(teacher, rho)
    pairs = list(nodes) if isinstance(nodes, (list, tuple)) else None
    if not pairs or any(not isinstance(p, (list, tuple)) or len(p) != 2 for p in pairs):
        raise ValueError(f"nodes must be a non-empty sequence of pairs (n_z, n_noise); got {nodes!r}")
    pairs = [(check_int("nodes", p[0], low=8), check_int("nodes", p[1], low=8)) for p in pairs]
    base = _SpectralLaw(teacher, rho, preprocess).threshold()
    others = np.array([_SpectralLaw(teacher, rho, preprocess, p).threshold() for p in pairs])
    if np.isinf(base) or np.any(np.isinf(others)):
        return 0.0 if np.isinf(base) and np.all(np.isinf(others)) else float("inf")
    return float(np.max(np.abs(others - base)))
