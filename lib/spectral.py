r"""The spectral in-context estimator and its asymptotic theory (book chapter 6).

The estimator (:func:`spectral_direction`, :func:`spectral_fit`, :func:`spectral_predict`,
:func:`spectral_test_error`) estimates the task direction of one context from the top
eigenvector of :math:`\sum_i T(y_i) x_i x_i^\top` after a label preprocessing
:math:`T` (:func:`spectral_preprocess`); its theory (:func:`spectral_overlap`,
:func:`spectral_threshold`, :func:`spectral_error`, :func:`optimal_preprocess`,
:func:`weak_recovery_threshold`) gives the limit :math:`d \to \infty` at fixed
:math:`\alpha`. Estimator and theory live together so that the preprocessings are
defined once for both.

Used in :doc:`beyond linear attention </book/beyond/spectral>`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.integrate import trapezoid
from scipy.optimize import brentq

from lib._checks import RHO_MAX, check_int, check_param, check_real, check_scalar, check_vectorized
from lib._checks import scalar_or_array as _out
from lib.baselines import _check_contexts
from lib.hermite import coefficients, hermite_functions
from lib.quadrature import gauss_hermite
from lib.samplers import BATCH_BYTES, _check_rho
from lib.teachers import TeacherLike, _moments, as_link, resolve_teacher, teacher_moments

__all__ = [
    "SPECTRAL_PREPROCESSINGS",
    "spectral_preprocess",
    "spectral_direction",
    "spectral_fit",
    "spectral_predict",
    "spectral_test_error",
    "spectral_overlap",
    "spectral_threshold",
    "spectral_error",
    "optimal_preprocess",
    "weak_recovery_threshold",
]


#: Names of the built-in label preprocessings of :func:`spectral_predict`. Each acts on the
#: labels standardized within the context, ``u_i = (y_i - mean(y)) / std(y)``.
SPECTRAL_PREPROCESSINGS = ("tanh", "clip", "square")
#: Level of the ``"clip"`` and ``"square"`` preprocessings (in units of the label std).
SPECTRAL_CLIP = 3.0
#: Default degree of the Hermite regression that fits the link of :func:`spectral_predict`.
SPECTRAL_LINK_DEGREE = 4
#: Largest batch of ``d x d`` matrices :func:`spectral_direction` agrees to hold, in bytes.
MAX_SPECTRAL_BYTES = 1_000_000_000


def _standardized_preprocess(name: str) -> Any:
    """The function ``u -> T(u)`` of a built-in preprocessing (on standardized labels)."""
    if name == "tanh":
        return np.tanh
    if name == "clip":
        return lambda u: np.clip(u, -SPECTRAL_CLIP, SPECTRAL_CLIP)
    return lambda u: np.minimum(u * u, SPECTRAL_CLIP**2)


def _check_preprocess(preprocess: Any) -> Any:
    """``None`` -> ``"tanh"``; a name of SPECTRAL_PREPROCESSINGS; or a callable."""
    if preprocess is None:
        return "tanh"
    if isinstance(preprocess, str):
        key = preprocess.strip().lower()
        if key not in SPECTRAL_PREPROCESSINGS:
            raise ValueError(
                f"preprocess must be None, one of {SPECTRAL_PREPROCESSINGS} or a callable T(y); got {preprocess!r}"
            )
        return key
    if callable(preprocess):
        return preprocess
    raise TypeError(
        f"preprocess must be None, one of {SPECTRAL_PREPROCESSINGS} or a callable T(y); "
        f"got {preprocess!r} of type {type(preprocess).__name__}"
    )


def spectral_preprocess(y: Any, preprocess: Any = None) -> np.ndarray:
    r"""Label preprocessing :math:`T(y_i)` of the spectral estimator, context by context.

    A built-in name acts on the labels standardized within each context (row),
    :math:`u_i = (y_i - \bar y)/s_y` with the row mean :math:`\bar y` and standard
    deviation :math:`s_y` (``ddof=0``; a constant row gives :math:`u = 0`):

    - ``"tanh"`` (the default): :math:`T = \tanh(u)`, bounded, smooth and increasing;
    - ``"clip"``: :math:`T = \max(-3, \min(u, 3))`;
    - ``"square"``: :math:`T = \min(u^2, 9)`, an even function of the centered label.

    A callable ``T`` is applied to the raw labels (for instance the optimal
    preprocessing of :func:`lib.spectral.optimal_preprocess`); it must return finite
    values of the same shape.

    Parameters
    ----------
    y : array_like, shape (n, ell)
        Labels of ``n`` contexts.
    preprocess : None, str or callable
        As above.

    Returns
    -------
    numpy.ndarray, shape (n, ell)
        The preprocessed labels :math:`T(y)`.

    Notes
    -----
    Used in: chapter 6 (beyond linear attention).
    """
    y = check_real("y", y)
    if y.ndim != 2 or min(y.shape) < 1:
        raise ValueError(f"y must have shape (n, ell) with n, ell >= 1; got shape {y.shape}")
    pre = _check_preprocess(preprocess)
    if callable(pre):
        return check_vectorized("preprocess", pre, y.copy(), what="the labels")
    sd = y.std(axis=1, keepdims=True)
    u = (y - y.mean(axis=1, keepdims=True)) / np.where(sd > 0.0, sd, 1.0)
    return _standardized_preprocess(pre)(u)


def spectral_direction(X: Any, y: Any, preprocess: Any = None) -> np.ndarray:
    r"""Top eigenvector of the spectral matrix of each context, as a unit vector.

    .. math::

        \hat M = \frac1\ell \sum_{i=1}^{\ell} T(y_i)\,\big(d\, x_i x_i^\top - I_d\big),
        \qquad \hat w = \text{unit top eigenvector of } \hat M .

    Since :math:`\hat M = (d/\ell) X^\top \operatorname{diag}(T) X - \bar T I_d`, its
    eigenvectors are those of :math:`X^\top \operatorname{diag}(T) X`, computed with one
    batched :func:`numpy.linalg.eigh` per batch of contexts. An eigenvector is defined up
    to its sign; the sign returned makes :math:`\sum_i y_i\, x_i^\top \hat w \ge 0`
    (it points along the linear part of the teacher when there is one).

    Parameters
    ----------
    X : array_like, shape (n, ell, d)
        Context tokens.
    y : array_like, shape (n, ell)
        Context labels.
    preprocess : None, str or callable
        The label preprocessing :math:`T` (:func:`spectral_preprocess`; default
        ``"tanh"``).

    Returns
    -------
    numpy.ndarray, shape (n, d)
        Unit vectors :math:`\hat w / \|\hat w\|`.

    Raises
    ------
    ValueError
        For inconsistent shapes, or when a single ``d x d`` matrix (with the workspace of
        ``eigh``, about ``24 d^2`` bytes) would exceed ``MAX_SPECTRAL_BYTES``.

    Notes
    -----
    Cost ``O(ell d^2 + d^3)`` per context; contexts are processed in batches whose
    temporaries stay below about ``BATCH_BYTES``.

    Used in: :doc:`beyond linear attention </book/beyond/spectral>`.
    """
    X = check_real("X", X)
    if X.ndim != 3 or min(X.shape) < 1:
        raise ValueError(f"X must have shape (n, ell, d) with n, ell, d >= 1; got shape {X.shape}")
    n, ell, d = X.shape
    y = check_real("y", y)
    if y.shape != (n, ell):
        raise ValueError(f"y must have shape (n, ell) = {(n, ell)} to match X; got shape {y.shape}")
    T = spectral_preprocess(y, preprocess)
    per_context = 8 * (3 * d * d + ell * d)
    if 8 * 3 * d * d > MAX_SPECTRAL_BYTES:
        raise ValueError(
            f"X: d = {d} needs about {8 * 3 * d * d / 1e9:.2f} GB per context for the d x d "
            f"spectral matrix; at most {MAX_SPECTRAL_BYTES / 1e9:.2f} GB is allowed"
        )
    batch = max(1, BATCH_BYTES // per_context)
    out = np.empty((n, d))
    for start in range(0, n, batch):
        sl = slice(start, min(n, start + batch))
        A = np.matmul(np.swapaxes(X[sl] * T[sl][..., None], 1, 2), X[sl])  # X^T diag(T) X
        vecs = np.linalg.eigh(A)[1][..., -1]  # eigenvalues ascending: the last is the top
        proj = np.einsum("bld,bd->bl", X[sl], vecs)
        sign = np.where(np.einsum("bl,bl->b", y[sl], proj) < 0.0, -1.0, 1.0)
        out[sl] = vecs * sign[:, None]
    return out


def spectral_fit(
    X: Any, y: Any, preprocess: Any = None, *, degree: int = SPECTRAL_LINK_DEGREE
) -> tuple[np.ndarray, np.ndarray]:
    r"""Direction and fitted Hermite link of the spectral estimator, context by context.

    :math:`\hat w` from :func:`spectral_direction`, then the least-squares coefficients
    :math:`\hat f_0, \dots, \hat f_{\mathrm{degree}}` of
    :math:`y_i \approx \sum_k \hat f_k h_k(s_i)`, :math:`s_i = \sqrt d\, x_i^\top \hat w`,
    over the context (normal equations,
    batched over contexts; a pseudo-inverse gives the minimum-norm fit when the
    projections are degenerate).

    Parameters
    ----------
    X : array_like, shape (n, ell, d)
    y : array_like, shape (n, ell)
    preprocess : None, str or callable
        As in :func:`spectral_preprocess`.
    degree : int, keyword-only
        Largest Hermite degree of the link, >= 0; ``ell >= degree + 1`` is required.

    Returns
    -------
    w_hat : numpy.ndarray, shape (n, d)
        Unit directions.
    coef : numpy.ndarray, shape (n, degree + 1)
        Hermite coefficients :math:`\hat f_k` of the fitted link :math:`\hat f`.

    Notes
    -----
    Used in: chapter 6.
    """

    degree = check_int("degree", degree, low=0)
    w_hat = spectral_direction(X, y, preprocess)
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    _, ell, d = X.shape
    if ell < degree + 1:
        raise ValueError(
            f"degree = {degree} needs at least degree + 1 = {degree + 1} context tokens to "
            f"fit the link; got ell = {ell}"
        )
    s = np.sqrt(d) * np.einsum("nld,nd->nl", X, w_hat)
    H = np.moveaxis(hermite_functions(degree, s), 0, -1)  # (n, ell, D + 1)
    gram = np.einsum("nlk,nlm->nkm", H, H)  # normal equations of the n small fits
    # pseudo-inverse: a minimum-norm fit when the projections are degenerate
    coef = np.einsum("nkm,nm->nk", np.linalg.pinv(gram), np.einsum("nlk,nl->nk", H, y))
    return w_hat, coef


def spectral_predict(
    X: Any,
    y: Any,
    x_query: Any,
    preprocess: Any = None,
    link: Any = None,
    *,
    degree: int = SPECTRAL_LINK_DEGREE,
) -> np.ndarray:
    r"""Spectral in-context prediction: estimate the direction, then a 1-d link.

    From each context, :func:`spectral_direction` gives the unit top eigenvector
    :math:`\hat w` of :math:`\hat M = \frac1\ell\sum_i T(y_i)(d\,x_i x_i^\top - I_d)`.
    With the projections :math:`s = \sqrt d\, x^\top \hat w` (which are
    :math:`N(0, 1)` for a fresh token, like :math:`z = x^\top w`) the prediction is

    .. math::

        \hat y = \hat f(s_{\ell+1}),

    where :math:`\hat f` is the given ``link`` or, by default, the least-squares fit
    :math:`\hat f(s) = \sum_{k \le \mathrm{degree}} \hat f_k h_k(s)` of :math:`y_i` on
    the Hermite functions :math:`h_k(s_i)` over the context tokens (a Hermite regression
    of degree ``degree``). With a given link the sign of :math:`\hat w` is chosen, per
    context, to minimize :math:`\sum_i (y_i - \hat f(s_i))^2`, which matters when
    :math:`\hat f` has an odd part; the fitted link absorbs the sign by itself.

    Parameters
    ----------
    X : array_like, shape (n, ell, d)
        Context tokens of ``n`` contexts.
    y : array_like, shape (n, ell)
        Context labels.
    x_query : array_like, shape (n, d)
        Query tokens.
    preprocess : None, str or callable
        Label preprocessing :math:`T` (:func:`spectral_preprocess`; default ``"tanh"``
        of the standardized labels: bounded, as the asymptotic theory
        :func:`lib.spectral.spectral_overlap` requires, and increasing, so that large
        labels weigh more, which is what the :math:`h_2` component calls for).
    link : None or callable
        The link :math:`\hat f`, a vectorized function of :math:`s`; ``None`` fits it.
    degree : int, keyword-only
        Largest Hermite degree (>= 0) of the fitted link (ignored when ``link`` is given);
        ``ell`` must be at least ``degree + 1``.

    Returns
    -------
    numpy.ndarray, shape (n,)
        Predictions of the query labels.

    Notes
    -----
    The fitted link uses the same tokens that determined :math:`\hat w`, whose
    projections are not exactly Gaussian; chapter 6 measures the effect against the
    oracle link :math:`\sum_k a_k \cos^k\theta\, h_k(s)`, :math:`\theta` the angle between
    :math:`\hat w` and :math:`w`.

    Used in: chapter 6 (beyond linear attention).
    """

    X, y, x_query = _check_contexts(X, y, x_query)
    _, ell, d = X.shape
    degree = check_int("degree", degree, low=0)
    if link is not None and not callable(link):
        raise TypeError(f"link must be None (fit it) or a callable g(s); got {link!r}")
    if link is None and ell < degree + 1:
        raise ValueError(
            f"degree = {degree} needs at least degree + 1 = {degree + 1} context tokens to "
            f"fit the link; got ell = {ell}"
        )
    if link is not None:
        w_hat = spectral_direction(X, y, preprocess)
        s = np.sqrt(d) * np.einsum("nld,nd->nl", X, w_hat)  # (n, ell)
        s_q = np.sqrt(d) * np.einsum("nd,nd->n", x_query, w_hat)  # (n,)
        g_plus = _apply_link(link, s)
        g_minus = _apply_link(link, -s)
        flip = np.sum((y - g_minus) ** 2, axis=1) < np.sum((y - g_plus) ** 2, axis=1)
        return _apply_link(link, np.where(flip, -s_q, s_q))
    w_hat, coef = spectral_fit(X, y, preprocess, degree=degree)
    s_q = np.sqrt(d) * np.einsum("nd,nd->n", x_query, w_hat)
    return np.einsum("nk,kn->n", coef, hermite_functions(degree, s_q))


def spectral_test_error(
    X: Any,
    y: Any,
    w: Any,
    teacher: TeacherLike = None,
    rho: float = 0.0,
    preprocess: Any = None,
    *,
    degree: int = SPECTRAL_LINK_DEGREE,
    return_cosine: bool = False,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    r"""Exact test error of the fitted spectral predictor of each context, over fresh queries.

    Given a context's :math:`\hat w` and fitted link :math:`\hat f = \sum_k \hat f_k h_k`
    (:func:`spectral_fit`), a fresh query has :math:`z = x^\top w` and
    :math:`s = \sqrt d\, x^\top \hat w` standard Gaussian with correlation
    :math:`\cos\theta = \hat w^\top w/\|w\|`; Mehler's formula gives
    :math:`E[f(z) h_k(s)] = a_k \cos^k\theta`, hence, with sums over
    :math:`k \le` ``degree``,

    .. math::

        E\big(y_{\ell+1} - \hat f(s)\big)^2
        = \rho + E f^2 - 2 \sum_k \hat f_k a_k \cos^k\theta + \sum_k \hat f_k^2 ,

    with no Monte Carlo over the query.

    Parameters
    ----------
    X : array_like, shape (n, ell, d)
    y : array_like, shape (n, ell)
    w : array_like, shape (n, d)
        The task of each context (e.g. ``Contexts.w``), any nonzero norm.
    teacher : None, str, Link, callable or 1-D array_like
        The link :math:`f` (its Hermite coefficients are computed with
        :func:`lib.hermite.coefficients`).
    rho : float
        Label-noise variance (>= 0).
    preprocess, degree
        As in :func:`spectral_fit`.
    return_cosine : bool, keyword-only
        Also return :math:`\cos\theta` (so that a simulation needs one fit, not two).

    Returns
    -------
    numpy.ndarray, shape (n,)
        Per-context test errors; with ``return_cosine``, the tuple
        ``(errors, cos_theta)``.

    Notes
    -----
    Used in: :doc:`beyond linear attention </book/beyond/spectral>`.
    """

    rho = _check_rho(rho)
    ef2 = teacher_moments(teacher)[2]  # validates the teacher first, naming it
    w_hat, coef = spectral_fit(X, y, preprocess, degree=degree)
    w = check_real("w", w)
    if w.shape != w_hat.shape:
        raise ValueError(f"w must have shape (n, d) = {w_hat.shape}; got shape {w.shape}")
    norms = np.linalg.norm(w, axis=1)
    if np.any(norms == 0.0):
        raise ValueError("w must not contain a zero row (a task vector of norm 0)")
    c = np.einsum("nd,nd->n", w_hat, w) / norms
    if isinstance(teacher, (list, tuple, np.ndarray)):
        a = np.zeros(coef.shape[1])
        given = np.asarray(teacher, dtype=float)[: a.size]
        a[: given.size] = given
    else:
        a = coefficients(resolve_teacher(teacher), coef.shape[1] - 1)
    powers = c[:, None] ** np.arange(coef.shape[1])[None, :]
    err = rho + ef2 - 2.0 * np.einsum("nk,k,nk->n", coef, a, powers) + np.sum(coef**2, axis=1)
    return (err, c) if return_cosine else err


def _apply_link(link: Any, s: np.ndarray) -> np.ndarray:
    """Evaluate a user link on an array and check its output."""
    return check_vectorized("link", link, s)


# --------------------------------------------------------------------------------------
# asymptotic theory of the estimator
# --------------------------------------------------------------------------------------
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

    def __init__(self, teacher: Any, rho: float, preprocess: Any) -> None:

        f = resolve_teacher(teacher)
        pre = _check_preprocess(preprocess)
        z, wz = gauss_hermite(SPECTRAL_NODES_Z)
        if rho > 0.0:
            e, we = gauss_hermite(SPECTRAL_NODES_NOISE)
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
            a0, _, ef2 = _moments(teacher)
            sd = np.sqrt(max(ef2 + rho - a0 * a0, 0.0))
            u = (y - a0) / sd if sd > 0.0 else np.zeros_like(y)
            t = _standardized_preprocess(pre)(u)
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


def _check_spectral(teacher: Any, rho: Any) -> float:
    rho = check_param("rho", rho, scalar=True)
    _moments(teacher)  # validates the teacher
    return rho


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

    This is the book's reconstruction of the characterization of Lu and Li (2020) and
    Mondelli and Montanari (2019), translated to the book's scaling (it is invariant
    under multiplying :math:`T` by a positive constant, and the shift by
    :math:`-\bar T I` does not change the eigenvectors); the exact published statements
    were not consulted, and the book checks the formula against simulation (chapter 6
    and ``tests/test_spectral.py``). The built-in preprocessings use the population
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
    rho = _check_spectral(teacher, rho)
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
    rho = _check_spectral(teacher, rho)
    return _SpectralLaw(teacher, rho, preprocess).threshold()


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

    q = np.asarray(spectral_overlap(alpha, teacher, rho, preprocess), dtype=float)
    _, _, ef2 = _moments(teacher)
    if degree is not None:
        degree = check_int("degree", degree, low=0)
    kmax = 60 if degree is None else degree
    link = as_link(teacher)
    a = link.coefficients(kmax) if link.has_closed_form else coefficients(link.f, kmax)
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
    _moments(teacher)
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
    _moments(teacher)  # validates the teacher (finite, vectorized, real)
    f = resolve_teacher(teacher)
    z, wz = gauss_hermite(SPECTRAL_NODES_Z)
    e, we = gauss_hermite(SPECTRAL_NODES_NOISE)
    w = np.outer(wz, we).ravel()
    y = (check_vectorized("teacher", f, z)[:, None] + np.sqrt(rho) * e[None, :]).ravel()
    if np.dot(w, _posterior_moment(teacher, rho, 1)(y) ** 2) > 1e-10:  # E[z | y] != 0
        return 0.0
    m = _posterior_moment(teacher, rho, 2)(y)
    return float(1.0 / np.dot(w, (m - 1.0) ** 2))
