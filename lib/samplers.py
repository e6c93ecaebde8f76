"""Tokens, tasks, teacher labels, contexts and the attention feature H_Z.

The data model of the book (book section 2.1):

- tokens ``x ~ N(0, I_d / d)``;
- tasks ``w`` uniform on the sphere of radius ``sqrt(d)``, so that ``z = x^T w ~ N(0, 1)``
  exactly;
- labels ``y = f(x^T w) + sqrt(rho) * eps`` with ``eps ~ N(0, 1)`` and a teacher (link) ``f``;
- a context is ``ell`` labelled tokens plus a query token ``x_query`` whose label
  ``y_query`` is to be predicted.

One layer of linear attention sees a context only through the matrix feature
``H_Z = x_query f^T`` with ``f = [(d/ell) sum_i y_i x_i, (1/ell) sum_i y_i^2]``
(book section 2.1), so the samplers here return the query, the vector ``f`` (called
the *features* of the context) and the target ``y_query``. :func:`sample_features` draws
them either exactly from sufficient statistics in ``O(ell + d)`` per context or, as a
check, from full contexts.

Teachers are given as ``None`` (the linear teacher ``f(z) = z``), a name from the link
catalogue of :mod:`lib.hermite` (``"relu"``, ``"h2"``, ...) or a vectorized callable.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from lib._checks import (
    as_rng,
    check_choice,
    check_int,
    check_memory,
    check_param,
    check_real,
    check_rho,
    check_tasks,
    check_teacher_values,
)
from lib.hermite import Link
from lib.teachers import TeacherLike, as_link

__all__ = [
    "Contexts",
    "FeatureBatch",
    "sample_tokens",
    "sample_tasks",
    "sample_task_set",
    "sample_labels",
    "sample_contexts",
    "context_features",
    "sample_features",
    "feature_matrix",
]


#: Target size, in bytes, of the temporary arrays of one batch of a sampler (small batches
#: are also faster: they stay in cache and avoid page faults on fresh large arrays).
BATCH_BYTES = 50_000_000
#: Largest array :func:`feature_matrix` agrees to build, in bytes.
MAX_FEATURE_MATRIX_BYTES = 1_000_000_000
_METHODS = ("sufficient", "direct")


class Contexts(NamedTuple):
    """Full contexts drawn by :func:`sample_contexts`.

    Attributes
    ----------
    X : numpy.ndarray, shape (n, ell, d)
        Context tokens ``x_1, ..., x_ell`` of each of the ``n`` contexts.
    y : numpy.ndarray, shape (n, ell)
        Their labels ``y_i = f(x_i^T w) + sqrt(rho) eps_i``.
    x_query : numpy.ndarray, shape (n, d)
        The query token ``x_{ell+1}`` of each context.
    y_query : numpy.ndarray, shape (n,)
        Its label, the target of the prediction.
    w : numpy.ndarray, shape (n, d)
        The task vector used by each context.
    """

    X: np.ndarray
    y: np.ndarray
    x_query: np.ndarray
    y_query: np.ndarray
    w: np.ndarray


class FeatureBatch(NamedTuple):
    """What linear attention sees of ``n`` contexts, from :func:`sample_features`.

    Attributes
    ----------
    queries : numpy.ndarray, shape (n, d)
        Query tokens ``x_{ell+1}``.
    features : numpy.ndarray, shape (n, d + 1)
        ``f = [(d/ell) sum_i y_i x_i, (1/ell) sum_i y_i^2]`` of each context, so that
        ``H_Z = x_query f^T`` (see :func:`feature_matrix`).
    targets : numpy.ndarray, shape (n,)
        Query labels ``y_{ell+1}``.
    """

    queries: np.ndarray
    features: np.ndarray
    targets: np.ndarray


# ----------------------------------------------------------------------------------------
# validation helpers (private)
# ----------------------------------------------------------------------------------------


def _labels(f: Callable, z: np.ndarray, rho: float, rng: np.random.Generator) -> np.ndarray:
    """``f(z) + sqrt(rho) eps`` without validation of rho; no draw at all when rho = 0."""
    y = check_teacher_values(f, z)
    if rho > 0.0:
        eps = rng.standard_normal(z.shape)
        eps *= np.sqrt(rho)
        y += eps
    return y


def _pick_tasks(n: int, d: int, tasks: np.ndarray | None, rng: np.random.Generator) -> np.ndarray:
    """Task vector of each of ``n`` contexts: fresh ones, or uniform picks from ``tasks``."""
    if tasks is None:
        return sample_tasks(n, d, rng)
    return tasks[rng.integers(tasks.shape[0], size=n)]


def contexts_peak_bytes(n: int, d: int, ell: int) -> float:
    """Estimated peak memory of :func:`sample_contexts`, in bytes.

    The ``n x ell x d`` tokens, about five ``n x ell`` arrays (pre-activations, labels,
    noise) and three ``n x d`` ones (tasks, query tokens).
    """
    return 8.0 * (float(n) * ell * d + 5.0 * n * ell + 3.0 * n * d)


def features_peak_bytes(n: int, d: int, ell: int, method: str = "sufficient", batch_size: int | None = None) -> float:
    """Estimated peak memory of :func:`sample_features`, in bytes.

    The outputs (``8 n (2d + 2)`` bytes) plus one batch's temporaries (about
    ``BATCH_BYTES``; see ``_default_batch_size``).
    """
    if batch_size is None:
        batch_size = _default_batch_size(d, ell, method)
    per_context = 8.0 * (5 * ell + 6 * d) + (8.0 * ell * d if method == "direct" else 0.0)
    return 8.0 * n * (2 * d + 2) + min(n, batch_size) * per_context


def _default_batch_size(d: int, ell: int, method: str) -> int:
    """Contexts per batch so that one batch's temporary arrays stay below ``BATCH_BYTES``.

    The sufficient sampler holds about five arrays of ``ell`` numbers (z, f(z), noise,
    y, products) and six of ``d`` numbers per context; the direct one also holds the
    ``ell x d`` context tokens.
    """
    per_context = 8 * (5 * ell + 6 * d)
    if method == "direct":
        per_context += 8 * ell * d
    return max(1, BATCH_BYTES // per_context)


# ----------------------------------------------------------------------------------------
# tokens, tasks, labels
# ----------------------------------------------------------------------------------------


def sample_tokens(n: int, d: int, rng: Any = None) -> np.ndarray:
    """Draw ``n`` tokens ``x ~ N(0, I_d / d)``.

    Parameters
    ----------
    n, d : int
        Number of tokens (>= 1) and dimension (>= 1).
    rng : numpy.random.Generator, int or None
        Random source (see :func:`lib._checks.as_rng`).

    Returns
    -------
    numpy.ndarray, shape (n, d)
        Independent rows with ``E[x x^T] = I_d / d``, so ``E ||x||^2 = 1``.

    Notes
    -----
    Used in: chapter 2 (linear ICL review) and every simulation.
    """
    n = check_int("n", n, low=1)
    d = check_int("d", d, low=1)
    check_memory(f"sample_tokens(n={n}, d={d})", 8.0 * n * d, "n and d (an n x d array)")
    x = as_rng(rng).standard_normal((n, d))
    x *= 1.0 / np.sqrt(d)
    return x


def sample_tasks(k: int, d: int, rng: Any = None) -> np.ndarray:
    """Draw ``k`` task vectors uniformly on the sphere of radius ``sqrt(d)``.

    A standard Gaussian vector divided by its norm is uniform on the unit sphere;
    multiplying by ``sqrt(d)`` gives ``||w||^2 = d`` exactly, hence ``z = x^T w ~ N(0, 1)``
    exactly for a token ``x ~ N(0, I_d / d)``.

    Parameters
    ----------
    k, d : int
        Number of tasks (>= 1) and dimension (>= 1).
    rng : numpy.random.Generator, int or None
        Random source.

    Returns
    -------
    numpy.ndarray, shape (k, d)
        Rows with ``||w_j||^2 = d``.

    Notes
    -----
    Used in: :doc:`the model </book/linear/model>`,
    :doc:`the equivalence theorem </book/equivalence/theorem>`.
    """
    k = check_int("k", k, low=1)
    d = check_int("d", d, low=1)
    check_memory(f"sample_tasks(k={k}, d={d})", 16.0 * k * d, "k and d (a k x d array)")
    w = as_rng(rng).standard_normal((k, d))
    w *= (np.sqrt(d) / np.linalg.norm(w, axis=1))[:, None]
    return w


def sample_task_set(d: int, kappa: Any, rng: Any = None) -> np.ndarray | None:
    """Draw the pretraining task set ``w_1, ..., w_k`` with ``k = round(kappa d)``.

    Parameters
    ----------
    d : int
        Dimension (>= 1).
    kappa : float
        Task diversity ``kappa = k / d`` (> 0, or ``inf``).
    rng : numpy.random.Generator, int or None
        Random source.

    Returns
    -------
    numpy.ndarray, shape (k, d), or None
        The task set (rows on the sphere of radius ``sqrt(d)``), or ``None`` when
        ``kappa = inf``: every context then gets a fresh task (``tasks=None`` in the
        other samplers).

    Raises
    ------
    ValueError
        If ``kappa d`` rounds to zero tasks.

    Notes
    -----
    Used in: :doc:`the model </book/linear/model>`,
    :doc:`learning curves </book/linear/learning_curves>`.
    """
    d = check_int("d", d, low=1)
    kappa = check_param("kappa", kappa, scalar=True)
    if np.isinf(kappa):
        return None
    check_memory(
        f"sample_task_set(d={d}, kappa={kappa:g})",
        16.0 * kappa * d * d,
        f"kappa (k = kappa d = {kappa * d:.3g} tasks of dimension d = {d}; kappa = inf needs no task set)",
    )
    k = int(round(kappa * d))
    if k < 1:
        raise ValueError(
            f"kappa = {kappa!r} gives k = round(kappa * d) = round({kappa * d:g}) = 0 tasks at "
            f"d = {d}; kappa must be at least 1/d = {1.0 / d:g} here"
        )
    return sample_tasks(k, d, rng)


def sample_labels(z: Any, teacher: TeacherLike = None, rho: float = 0.0, rng: Any = None) -> np.ndarray:
    """Teacher labels ``y = f(z) + sqrt(rho) eps`` with ``eps ~ N(0, 1)``.

    Parameters
    ----------
    z : array_like, any shape
        Pre-activations ``z = x^T w``.
    teacher : None, str or callable
        ``None`` is the linear teacher ``f(z) = z``; a string names a link of the catalogue
        :data:`lib.hermite.LINKS`; a callable must be vectorized and return finite values of
        the shape of ``z``.
    rho : float
        Label-noise variance (>= 0). At ``rho = 0`` no noise is drawn (and ``rng`` is not used).
    rng : numpy.random.Generator, int or None
        Random source.

    Returns
    -------
    numpy.ndarray, same shape as ``z``
        The labels :math:`f(z) + \\sqrt{\\rho}\\,\\varepsilon`.

    Raises
    ------
    ValueError
        If the teacher's output has the wrong shape or is not finite.

    Notes
    -----
    Used in: :doc:`testing the equivalence </book/equivalence/verification>`.
    """
    z = check_real("z", z)
    rho = check_rho(rho)
    return _labels(as_link(teacher), z, rho, as_rng(rng))


# ----------------------------------------------------------------------------------------
# contexts and their features
# ----------------------------------------------------------------------------------------


def sample_contexts(
    n: int,
    d: int,
    ell: int,
    tasks: np.ndarray | None,
    teacher: TeacherLike = None,
    rho: float = 0.0,
    rng: Any = None,
) -> Contexts:
    """Draw ``n`` full contexts: ``ell`` labelled tokens, a query token and its label.

    Each context picks a task ``w`` (a fresh one on the sphere of radius ``sqrt(d)`` when
    ``tasks`` is None, else a row of ``tasks`` chosen uniformly at random), draws
    ``x_1, ..., x_{ell+1} ~ N(0, I_d / d)`` and labels ``y_i = f(x_i^T w) + sqrt(rho) eps_i``.

    Parameters
    ----------
    n, d, ell : int
        Number of contexts, dimension, context length (all >= 1).
    tasks : numpy.ndarray of shape (k, d), or None
        The task set (in the book its rows have norm ``sqrt(d)``); ``None`` for a fresh
        task per context (``kappa = inf``).
    teacher : None, str or callable
        The link ``f`` (see :func:`sample_labels`).
    rho : float
        Label-noise variance (>= 0).
    rng : numpy.random.Generator, int or None
        Random source.

    Returns
    -------
    Contexts
        ``X (n, ell, d)``, ``y (n, ell)``, ``x_query (n, d)``, ``y_query (n,)``, ``w (n, d)``.

    Notes
    -----
    Memory ``O(n ell d)``: meant for small ``n`` (tests, baselines, pictures). Use
    :func:`sample_features` for pretraining sets.

    Used in: :doc:`the model </book/linear/model>`,
    :doc:`the equivalence theorem </book/equivalence/theorem>`,
    :doc:`beyond linear attention </book/beyond/spectral>`.

    Examples
    --------
    >>> c = sample_contexts(n=5, d=10, ell=20, tasks=None, teacher="relu", rho=0.1, rng=0)
    >>> c.X.shape, c.y.shape, c.x_query.shape, c.y_query.shape
    ((5, 20, 10), (5, 20), (5, 10), (5,))
    """
    n = check_int("n", n, low=1)
    d = check_int("d", d, low=1)
    ell = check_int("ell", ell, low=1)
    tasks = check_tasks(tasks, d)
    rho = check_rho(rho)
    check_memory(
        f"sample_contexts(n={n}, d={d}, ell={ell})",
        contexts_peak_bytes(n, d, ell),
        "n, ell and d (the n x ell x d context tokens; use sample_features for large n)",
    )
    return sample_contexts_trusted(n, d, ell, tasks, as_link(teacher), rho, as_rng(rng))


def sample_contexts_trusted(
    n: int, d: int, ell: int, tasks: np.ndarray | None, f: Link, rho: float, rng: np.random.Generator
) -> Contexts:
    """The worker of :func:`sample_contexts`, for callers that validated every argument.

    It checks nothing (the baselines' Monte Carlo loops call it once per batch with the
    values they validated once); the arguments are those of :func:`sample_contexts`, with
    the teacher resolved (:func:`lib.teachers.as_link`) and ``rng`` a Generator.
    """
    w = _pick_tasks(n, d, tasks, rng)
    X = rng.standard_normal((n, ell, d))
    X *= 1.0 / np.sqrt(d)
    y = _labels(f, np.einsum("nld,nd->nl", X, w), rho, rng)
    x_query = sample_tokens(n, d, rng)
    y_query = _labels(f, np.einsum("nd,nd->n", x_query, w), rho, rng)
    return Contexts(X, y, x_query, y_query, w)


def context_features(X: Any, y: Any) -> np.ndarray:
    """The features ``f = [(d/ell) sum_i y_i x_i, (1/ell) sum_i y_i^2]`` of each context.

    Parameters
    ----------
    X : array_like, shape (n, ell, d)
        Context tokens.
    y : array_like, shape (n, ell)
        Their labels.

    Returns
    -------
    numpy.ndarray, shape (n, d + 1)
        The first ``d`` entries ``h = (d/ell) sum_i y_i x_i`` estimate the task (for the
        linear teacher ``E[h | w] = w``); the last one is ``q = (1/ell) sum_i y_i^2``.

    Notes
    -----
    Used in: :doc:`the model </book/linear/model>`,
    :doc:`the equivalence theorem </book/equivalence/theorem>`.
    """
    X = check_real("X", X)
    y = check_real("y", y)
    if X.ndim != 3:
        raise ValueError(f"X must have shape (n, ell, d); got shape {X.shape}")
    n, ell, d = X.shape
    if y.shape != (n, ell):
        raise ValueError(f"y must have shape (n, ell) = {(n, ell)} to match X; got shape {y.shape}")
    if ell < 1 or d < 1:
        raise ValueError(f"X must have ell >= 1 and d >= 1; got shape {X.shape}")
    out = np.empty((n, d + 1))
    out[:, :d] = (d / ell) * np.einsum("nl,nld->nd", y, X)
    out[:, d] = np.einsum("nl,nl->n", y, y) / ell
    return out


def _sufficient_batch(
    b: int, d: int, ell: int, tasks: np.ndarray | None, f: Callable, rho: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One batch of the exact sufficient-statistic sampler (book section 2.1).

    See the Notes of :func:`sample_features` for why the law is exact. For a task of any
    norm ``r2 = ||w||^2`` the same argument gives ``z_i ~ N(0, r2/d)`` and
    ``sum_i y_i x_i = (S/r2) w + sqrt(Q/d) (I - w w^T/r2) g``, which is what is coded.
    """
    w = _pick_tasks(b, d, tasks, rng)
    r2 = np.einsum("nd,nd->n", w, w)
    z = rng.standard_normal((b, ell))
    if tasks is not None:  # fresh tasks have r2 = d exactly and need no rescaling
        z *= np.sqrt(r2 / d)[:, None]
    y = _labels(f, z, rho, rng)
    S = np.einsum("nl,nl->n", y, z)
    Q = np.einsum("nl,nl->n", y, y)
    del z, y
    g = rng.standard_normal((b, d))
    g -= (np.einsum("nd,nd->n", w, g) / r2)[:, None] * w  # P g
    feats = np.empty((b, d + 1))
    # h = (d / ell) * [ (S / r2) w + sqrt(Q / d) P g ]
    feats[:, :d] = (d / ell) * ((S / r2)[:, None] * w + np.sqrt(Q / d)[:, None] * g)
    feats[:, d] = Q / ell
    x_query = rng.standard_normal((b, d))
    x_query *= 1.0 / np.sqrt(d)
    y_query = _labels(f, np.einsum("nd,nd->n", x_query, w), rho, rng)
    return x_query, feats, y_query


def sample_features(
    n: int,
    d: int,
    ell: int,
    tasks: np.ndarray | None,
    teacher: TeacherLike = None,
    rho: float = 0.0,
    rng: Any = None,
    method: str = "sufficient",
    batch_size: int | None = None,
) -> FeatureBatch:
    """Draw what linear attention sees of ``n`` contexts: query, features and target.

    For each context: a task ``w`` (fresh on the sphere of radius ``sqrt(d)`` if ``tasks``
    is None, else a uniformly chosen row of ``tasks``), ``ell`` labelled tokens
    summarised by ``f = [(d/ell) sum_i y_i x_i, (1/ell) sum_i y_i^2]``, a query token
    ``x_query ~ N(0, I_d / d)`` and its label ``y_query = f(x_query^T w) + sqrt(rho) eps``.

    Parameters
    ----------
    n, d, ell : int
        Number of contexts, dimension, context length (all >= 1).
    tasks : numpy.ndarray of shape (k, d), or None
        Task set, or None for a fresh task per context.
    teacher : None, str or callable
        The link ``f`` (see :func:`sample_labels`).
    rho : float
        Label-noise variance (>= 0).
    rng : numpy.random.Generator, int or None
        Random source.
    method : {"sufficient", "direct"}
        ``"sufficient"`` (default): the exact sufficient-statistic sampler (its law is derived in
        section 2.1). Given ``w``, draw ``z_i ~ N(0, 1)``, ``y_i``, ``S = sum_i y_i z_i``,
        ``Q = sum_i y_i^2`` and ``g ~ N(0, I_d)``; then
        ``sum_i y_i x_i = (S/d) w + sqrt(Q/d) (I - w w^T/d) g`` in law, *exactly* (the
        proof is in the Notes below). Cost ``O(ell + d)`` per context.
        ``"direct"``: draw every token (:func:`sample_contexts`) and call
        :func:`context_features`; cost ``O(ell d)`` per context, for checks.
        The two methods give the same distribution but different draws for the same seed.
    batch_size : int or None
        Contexts per batch (>= 1). The default keeps one batch's temporary arrays below
        about 50 MB; total memory is ``O(n d)`` (the outputs).

    Returns
    -------
    FeatureBatch
        ``queries (n, d)``, ``features (n, d + 1)``, ``targets (n,)``.

    Notes
    -----
    Why the sufficient sampler is exact. Fix a task ``w`` with ``||w||^2 = d`` and let
    ``P = I - w w^T / d``. Split each context token as ``x_i = (z_i / d) w + x_i_perp``
    with ``z_i = x_i^T w`` and ``x_i_perp = P x_i``. As ``x_i ~ N(0, I/d)`` is Gaussian, the
    pair ``(z_i, x_i_perp)`` is jointly Gaussian with ``Cov(x_i_perp, z_i) = P w / d = 0``,
    hence *independent*: ``z_i ~ N(0, 1)`` and ``x_i_perp ~ N(0, P/d)``, i.i.d. over
    ``i``. The label ``y_i = f(z_i) + sqrt(rho) eps_i`` depends only on ``(z_i, eps_i)``.
    So, conditional on all ``z_i`` and ``y_i``,

        sum_i y_i x_i = (S/d) w + sum_i y_i x_i_perp,   S = sum_i y_i z_i,

    and the last sum is a fixed combination of independent ``N(0, P/d)`` vectors, that is
    ``N(0, (Q/d) P)`` with ``Q = sum_i y_i^2``: the law of ``sqrt(Q/d) P g`` with
    ``g ~ N(0, I_d)``, because ``P`` is a symmetric projection (``P P^T = P``). Drawing
    ``(z, y)`` (``ell`` numbers) and ``g`` (``d`` numbers) therefore reproduces the joint
    law of ``(w, sum_i y_i x_i, Q)`` exactly, for every ``d`` and every teacher, not just
    as ``d -> infinity``. Tasks of another norm are handled by the same argument with
    ``d`` replaced by ``||w||^2`` in ``P`` and in ``S/d``.

    The draws depend on ``batch_size`` (the order in which random numbers are used), the
    distribution does not. At ``d = 200``, ``ell = 400``, ``n = 80,000`` the sufficient
    sampler takes about 2 s of CPU time (see bench/).

    Used in: :doc:`the model </book/linear/model>`,
    :doc:`the equivalence theorem </book/equivalence/theorem>`.
    Through other functions of ``lib``: every chapter.
    """
    n = check_int("n", n, low=1)
    d = check_int("d", d, low=1)
    ell = check_int("ell", ell, low=1)
    tasks = check_tasks(tasks, d)
    rho = check_rho(rho)
    method = check_choice("method", method, _METHODS)
    if batch_size is None:
        batch_size = _default_batch_size(d, ell, method)
    else:
        batch_size = check_int("batch_size", batch_size, low=1)
    check_memory(
        f"sample_features(n={n}, d={d}, ell={ell})",
        features_peak_bytes(n, d, ell, method, batch_size),
        "n and d (outputs of n x (2d + 2) numbers)",
    )
    return sample_features_trusted(n, d, ell, tasks, as_link(teacher), rho, as_rng(rng), method, batch_size)


def sample_features_trusted(
    n: int,
    d: int,
    ell: int,
    tasks: np.ndarray | None,
    link: Link,
    rho: float,
    rng: np.random.Generator,
    method: str = "sufficient",
    batch_size: int | None = None,
) -> FeatureBatch:
    """The worker of :func:`sample_features`, for callers that validated every argument.

    It checks nothing: :func:`sample_features` and :func:`lib.simulation.simulate` validate
    their arguments once, resolve the teacher once (:func:`lib.teachers.as_link`, which
    also probes a user's callable) and call this with the results, however many batches
    they draw.

    Parameters
    ----------
    n, d, ell : int
        Number of contexts, dimension, context length (all >= 1).
    tasks : numpy.ndarray of shape (k, d), or None
        A validated task set.
    link : Link
        The resolved teacher.
    rho : float
        The validated label-noise variance.
    rng : numpy.random.Generator
        Random source.
    method : {"sufficient", "direct"}
        As in :func:`sample_features`.
    batch_size : int or None
        As in :func:`sample_features`.

    Returns
    -------
    FeatureBatch
        As :func:`sample_features`.
    """
    if batch_size is None:
        batch_size = _default_batch_size(d, ell, method)
    f = link
    queries = np.empty((n, d))
    features = np.empty((n, d + 1))
    targets = np.empty(n)
    for start in range(0, n, batch_size):
        stop = min(n, start + batch_size)
        b = stop - start
        if method == "sufficient":
            xq, fe, yq = _sufficient_batch(b, d, ell, tasks, f, rho, rng)
        else:
            ctx = sample_contexts_trusted(b, d, ell, tasks, f, rho, rng)
            xq, fe, yq = ctx.x_query, context_features(ctx.X, ctx.y), ctx.y_query
        queries[start:stop] = xq
        features[start:stop] = fe
        targets[start:stop] = yq
    return FeatureBatch(queries, features, targets)


def feature_matrix(queries: Any, features: Any) -> np.ndarray:
    """The matrix features ``H_Z = x_query f^T`` of ``n`` contexts.

    Parameters
    ----------
    queries : array_like, shape (n, d)
    features : array_like, shape (n, d + 1)

    Returns
    -------
    numpy.ndarray, shape (n, d, d + 1)
        ``H[mu] = outer(queries[mu], features[mu])``, so that linear attention predicts
        ``<Gamma, H[mu]> = queries[mu]^T Gamma features[mu]``.

    Raises
    ------
    ValueError
        If the shapes do not match, or if the result would exceed about 1 GB (use
        ``x_q^T Gamma f`` directly, as :mod:`lib.attention` does, for large ``n``).

    Notes
    -----
    Used in: :doc:`the model </book/linear/model>`.
    """
    queries = check_real("queries", queries)
    features = check_real("features", features)
    if queries.ndim != 2:
        raise ValueError(f"queries must have shape (n, d); got shape {queries.shape}")
    n, d = queries.shape
    if features.shape != (n, d + 1):
        raise ValueError(
            f"features must have shape (n, d + 1) = {(n, d + 1)} to match queries; got shape {features.shape}"
        )
    nbytes = 8 * n * d * (d + 1)
    if nbytes > MAX_FEATURE_MATRIX_BYTES:
        raise ValueError(
            f"feature_matrix would need {nbytes / 1e9:.2f} GB for n = {n}, d = {d} (limit "
            f"{MAX_FEATURE_MATRIX_BYTES / 1e9:.0f} GB); use fewer contexts, or compute "
            "x_query^T Gamma f without forming H_Z"
        )
    return np.einsum("nd,ne->nde", queries, features)
