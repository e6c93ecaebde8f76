r"""The spectral in-context estimator (book chapter 6): what a learner runs on data.

The estimator (:func:`spectral_direction`, :func:`spectral_fit`, :func:`spectral_predict`,
:func:`spectral_test_error`) estimates the task direction of one context from the top
eigenvector of :math:`\sum_i T(y_i) x_i x_i^\top` after a label preprocessing
:math:`T` (:func:`spectral_preprocess`). Its asymptotic theory, the limit
:math:`d \to \infty` at fixed :math:`\alpha`, is the module
:mod:`lib.theory.spectral_limits` (the overlap, the threshold, the error with the best
link, the optimal preprocessing), which also defines the built-in preprocessings
(``SPECTRAL_PREPROCESSINGS``). Each name has one address: the estimator's here, the
theory's there.

Used in :doc:`beyond linear attention </book/beyond/spectral>`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lib._checks import check_contexts, check_int, check_real, check_rho, check_vectorized
from lib.hermite import coefficients, hermite_polynomials
from lib.samplers import BATCH_BYTES
from lib.teachers import TeacherLike, as_link, teacher_moments
from lib.theory.spectral_limits import check_preprocess, standardized_preprocess

__all__ = [
    "spectral_preprocess",
    "spectral_direction",
    "spectral_fit",
    "spectral_predict",
    "spectral_test_error",
]


#: Default degree of the Hermite regression that fits the link of :func:`spectral_predict`.
SPECTRAL_LINK_DEGREE = 4
#: Largest batch of ``d x d`` matrices :func:`spectral_direction` agrees to hold, in bytes.
MAX_SPECTRAL_BYTES = 1_000_000_000


def spectral_preprocess(y: Any, preprocess: Any = None) -> np.ndarray:
    r"""Label preprocessing :math:`T(y_i)` of the spectral estimator, context by context.

    A built-in name acts on the labels standardized within each context (row),
    :math:`u_i = (y_i - \bar y)/s_y` with the row mean :math:`\bar y` and standard
    deviation :math:`s_y` (``ddof=0``; a constant row gives :math:`u = 0`):

    - ``"tanh"`` (the default): :math:`T = \tanh(u)`, bounded, smooth and increasing;
    - ``"clip"``: :math:`T = \max(-3, \min(u, 3))`;
    - ``"square"``: :math:`T = \min(u^2, 9)`, an even function of the centered label.

    A callable ``T`` is applied to the raw labels (for instance the optimal
    preprocessing of :func:`lib.theory.spectral_limits.optimal_preprocess`); it must return finite
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
    pre = check_preprocess(preprocess)
    if callable(pre):
        return check_vectorized("preprocess", pre, y.copy(), what="the labels")
    sd = y.std(axis=1, keepdims=True)
    u = (y - y.mean(axis=1, keepdims=True)) / np.where(sd > 0.0, sd, 1.0)
    return standardized_preprocess(pre)(u)


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
    H = np.moveaxis(hermite_polynomials(degree, s), 0, -1)  # (n, ell, D + 1)
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
        :func:`lib.theory.spectral_limits.spectral_overlap` requires, and increasing, so that large
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

    X, y, x_query = check_contexts(X, y, x_query)
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
    return np.einsum("nk,kn->n", coef, hermite_polynomials(degree, s_q))


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

    rho = check_rho(rho)
    link = as_link(teacher)
    ef2 = teacher_moments(link)[2]  # validates the teacher first, naming it
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
        a = coefficients(link, coef.shape[1] - 1)
    powers = c[:, None] ** np.arange(coef.shape[1])[None, :]
    err = rho + ef2 - 2.0 * np.einsum("nk,k,nk->n", coef, a, powers) + np.sum(coef**2, axis=1)
    return (err, c) if return_cosine else err


def _apply_link(link: Any, s: np.ndarray) -> np.ndarray:
    """Evaluate a user link on an array and check its output."""
    return check_vectorized("link", link, s)


#: The theory's names that this module re-exported before issue 33 (one address per name):
#: an old notebook gets an AttributeError that says where they are.
_MOVED = frozenset(
    {
        "SPECTRAL_PREPROCESSINGS", "SPECTRAL_CLIP", "spectral_overlap", "spectral_threshold", "spectral_psi_phi",
        "spectral_error", "optimal_preprocess", "weak_recovery_threshold", "posterior_second_moment",
        "shifted_preprocess", "truncated_preprocess", "floor_crossing", "spectral_threshold_spread",
        "SPECTRAL_ALPHA_MAX", "SPECTRAL_NODES_NOISE", "SPECTRAL_NODES_Z", "SPECTRAL_OVERLAP_ALPHA_MAX",
        "SPECTRAL_PROBE_LABELS", "SPECTRAL_Y_POINTS", "SPECTRAL_Z_MAX", "SPECTRAL_Z_POINTS",
    }
)  # fmt: skip


def __getattr__(name: str):
    if name in _MOVED:
        raise AttributeError(f"lib.spectral.{name} has moved to lib.theory.spectral_limits.{name}")
    raise AttributeError(f"module 'lib.spectral' has no attribute {name!r}")
