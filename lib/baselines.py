"""Two reference predictors for in-context learning: Bayes ridge and dMMSE.

Both look at one context (tokens ``X``, labels ``y``) and a query token ``x_query``
and predict its label (book section 2.2 and chapter 5):

- :func:`bayes_ridge_predict`, ``y_hat = x_query^T (X^T X + rho I)^{-1} X^T y``: the
  Bayes-optimal (posterior-mean) predictor for the linear teacher when the task has the
  Gaussian prior ``w ~ N(0, I_d)``, i.e. the **generalizing** solution;
- :func:`dmmse_predict`, ``y_hat = sum_j pi_j f(x_query^T w_j)`` with posterior weights
  ``pi_j`` over a finite task set: the Bayes-optimal predictor when the task is one of
  ``w_1, ..., w_k``, i.e. the **memorizing** solution.

Linear attention pretrained on ``k = kappa d`` tasks tracks dMMSE at small ``kappa`` and
the ridge predictor at large ``kappa``. :func:`baseline_errors` measures their test
errors by Monte Carlo.
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np
from scipy.special import softmax

from lib._checks import (
    Progress,
    as_rng,
    check_choice,
    check_contexts,
    check_int,
    check_memory,
    check_param,
    check_real,
    check_rho,
    check_tasks,
    check_teacher_values,
)
from lib.samplers import BATCH_BYTES, TeacherLike, sample_contexts_trusted, sample_task_set
from lib.teachers import as_link, gaussian_equivalent, gaussian_equivalent_ridge, teacher_moments

__all__ = [
    "bayes_ridge_predict",
    "dmmse_predict",
    "baseline_errors",
    "gaussian_equivalent_predict",
    "context_ridge_errors",
    "context_ridge_twin_errors",
    "dmmse_task_set_errors",
]

_BASELINES = ("bayes", "dmmse")
_SETTINGS = ("idg", "icl")


def _context_size(d: Any, alpha: Any) -> tuple[int, float, int]:
    """Validate ``d`` and ``alpha`` and return ``(d, alpha, ell)``, ``ell = round(alpha d) >= 1``."""
    d = check_int("d", d, low=1)
    alpha = check_param("alpha", alpha, scalar=True)
    ell = int(round(alpha * d))
    if ell < 1:
        raise ValueError(
            f"alpha = {alpha!r} gives ell = round(alpha * d) = 0 context tokens at d = {d}; "
            f"alpha must be at least 1/d = {1.0 / d:g} here"
        )
    return d, alpha, ell


#: :func:`bayes_ridge_predict` solves with a filtered SVD when ``rho`` is below this
#: fraction of ``tr X^T X`` (the normal equations would lose the small singular values).
RIDGE_SVD_BELOW = 1e-6


def bayes_ridge_predict(X: Any, y: Any, x_query: Any, rho: float) -> np.ndarray:
    """Ridge (Bayes posterior-mean) prediction of the query label of each context.

    .. math::

        \\hat y = x_{\\ell+1}^\\top (X^\\top X + \\rho I_d)^{-1} X^\\top y .

    Why this is Bayes-optimal for the linear teacher: with ``y = X w + eps``,
    ``eps ~ N(0, rho I_ell)`` and the prior ``w ~ N(0, I_d)``, the posterior of ``w`` is
    Gaussian with mean ``(X^T X / rho + I)^{-1} X^T y / rho = (X^T X + rho I)^{-1} X^T y``.
    The ridge strength is exactly ``rho``, whatever the token scale: the tokens'
    ``1/d`` variance only enters through ``X`` itself. The prior ``N(0, I_d)`` has the same
    mean and covariance ``E[w w^T] = I_d`` as the book's uniform prior on the sphere of
    radius ``sqrt(d)``; for the sphere the predictor is the best *linear* estimator and
    Bayes-optimal as ``d -> infinity``.

    Parameters
    ----------
    X : array_like, shape (n, ell, d)
        Context tokens of ``n`` contexts.
    y : array_like, shape (n, ell)
        Context labels.
    x_query : array_like, shape (n, d)
        Query tokens.
    rho : float
        Noise variance (>= 0), used as the ridge strength. ``rho = 0`` is the limit
        ``rho -> 0+``: the minimum-norm least-squares fit ``X^+ y`` (pseudo-inverse), which
        interpolates the context when ``ell <= d``.

    Returns
    -------
    numpy.ndarray, shape (n,)
        Predictions.

    Notes
    -----
    For ``ell < d`` the equivalent dual form ``X^T (X X^T + rho I_ell)^{-1} y`` is used, so
    each context costs ``O(min(ell, d)^3 + ell d min(ell, d))``. When ``rho`` is below
    ``RIDGE_SVD_BELOW`` (1e-6) times ``tr X^T X``, the fit is
    ``V diag(s / (s^2 + rho)) U^T y`` from the SVD ``X = U diag(s) V^T``, with singular
    values below ``max(ell, d) * eps * s_max`` treated as zeros: continuous in ``rho``
    down to ``rho = 0``, where it is the pseudo-inverse.

    For a nonlinear teacher this is ridge regression of the raw labels on the tokens (no
    intercept), *not* the Bayes predictor: it estimates the linear part ``a_1 z`` of ``f``
    (``E[y x] = a_1 w / d``), while the mean ``a_0`` and the higher Hermite modes act on it
    like extra label noise. It is the linear benchmark linear attention is compared with in
    chapter 5; pass another ``rho`` (e.g. an effective noise level) to change its ridge.

    Used in: chapter 3 (task diversity: the generalizing baseline), chapter 5 (nonlinear
    teachers).
    """
    X, y, x_query = check_contexts(X, y, x_query)
    return _ridge_predict(X, y, x_query, check_rho(rho))


def _ridge_predict(X: np.ndarray, y: np.ndarray, x_query: np.ndarray, rho: float) -> np.ndarray:
    """Worker of :func:`bayes_ridge_predict` (arguments validated)."""
    return np.einsum("nd,nd->n", x_query, _ridge_weights(X, y, rho))


def _ridge_weights(X: np.ndarray, y: np.ndarray, rho: float) -> np.ndarray:
    """``(X^T X + rho I)^{-1} X^T y`` of each context, shape ``(n, d)`` (inputs validated)."""
    n, ell, d = X.shape
    scale = np.einsum("nld,nld->n", X, X)  # tr X^T X >= the largest eigenvalue
    if np.any(rho < RIDGE_SVD_BELOW * scale):
        # rho small against X^T X: a filtered SVD, continuous down to rho = 0 (the
        # pseudo-inverse); singular values below the rank tolerance count as exact zeros
        u, sv, vt = np.linalg.svd(X, full_matrices=False)
        tol = sv[:, :1] * max(ell, d) * np.finfo(float).eps
        keep = sv > tol
        filt = np.where(keep, sv, 0.0) / np.where(keep, sv * sv + rho, 1.0)
        return np.einsum("nkd,nk->nd", vt, filt * np.einsum("nlk,nl->nk", u, y))
    if ell >= d:
        A = np.matmul(X.transpose(0, 2, 1), X)
        A[:, np.arange(d), np.arange(d)] += rho
        return np.linalg.solve(A, np.einsum("nld,nl->nd", X, y)[..., None])[..., 0]
    K = np.matmul(X, X.transpose(0, 2, 1))
    K[:, np.arange(ell), np.arange(ell)] += rho
    c = np.linalg.solve(K, y[..., None])[..., 0]
    return np.einsum("nld,nl->nd", X, c)


def dmmse_predict(
    X: Any, y: Any, x_query: Any, tasks: Any, teacher: TeacherLike = None, rho: float = 0.0
) -> np.ndarray:
    """Discrete minimum-mean-squared-error (dMMSE) prediction over a finite task set.

    .. math::

        \\hat y = \\sum_{j=1}^k \\pi_j\\, f(x_{\\ell+1}^\\top w_j), \\qquad
        \\pi_j \\propto \\exp\\Big(-\\frac{1}{2\\rho} \\sum_{i=1}^{\\ell}
        \\big(y_i - f(x_i^\\top w_j)\\big)^2\\Big).

    This is the posterior mean of the query label when the task is uniform on the rows of
    ``tasks`` and ``y_i = f(x_i^T w) + N(0, rho)``, for any teacher ``f``. The weights are
    a softmax (``scipy.special.softmax``, which subtracts the maximum), so they never
    overflow or underflow to 0/0.

    Parameters
    ----------
    X : array_like, shape (n, ell, d)
        Context tokens.
    y : array_like, shape (n, ell)
        Context labels.
    x_query : array_like, shape (n, d)
        Query tokens.
    tasks : array_like, shape (k, d)
        The task set (the prior).
    teacher : None, str or callable
        The link ``f`` (see :func:`lib.samplers.sample_labels`).
    rho : float
        Noise variance (>= 0). ``rho = 0`` is the limit ``rho -> 0+``: all the weight goes
        to the task(s) with the smallest residual sum of squares (equal weights in case of
        an exact tie, e.g. duplicated tasks). With noise-free labels this picks the true
        task.

    Returns
    -------
    numpy.ndarray, shape (n,)
        Predictions. With a single task, ``f(x_query^T w_1)``.

    Notes
    -----
    Cost ``O(n ell k d)``; the contexts are processed in batches so that the temporary
    ``(batch, ell, k)`` arrays stay below about 50 MB.

    Used in: :doc:`task diversity </book/regimes/task_diversity>`.
    """
    X, y, x_query = check_contexts(X, y, x_query)
    n, ell, d = X.shape
    tasks = check_tasks(tasks, d)
    if tasks is None:
        raise ValueError("tasks must be a (k, d) array for dMMSE (the finite prior); got None")
    rho = check_rho(rho)
    return _dmmse(X, y, x_query, tasks, as_link(teacher), rho)


def _dmmse(X: np.ndarray, y: np.ndarray, x_query: np.ndarray, tasks: np.ndarray, f: Any, rho: float) -> np.ndarray:
    """Worker of :func:`dmmse_predict` (arguments validated, teacher resolved)."""
    n, ell, d = X.shape
    k = tasks.shape[0]
    batch = max(1, BATCH_BYTES // (8 * 3 * (ell + 1) * k))
    out = np.empty(n)
    for start in range(0, n, batch):
        sl = slice(start, min(n, start + batch))
        fX = check_teacher_values(f, X[sl] @ tasks.T)  # (b, ell, k)
        fX -= y[sl][..., None]
        rss = np.einsum("blk,blk->bk", fX, fX)  # sum_i (y_i - f(x_i^T w_j))^2
        if rho > 0.0:
            # shift by the smallest RSS before dividing: with a tiny rho (1e-320) the
            # quotient overflows to -inf for the other tasks (weight 0), never to nan
            with np.errstate(over="ignore"):
                pi = softmax(-(rss - rss.min(axis=1, keepdims=True)) / (2.0 * rho), axis=1)
        else:
            pi = (rss == rss.min(axis=1, keepdims=True)).astype(float)
            pi /= pi.sum(axis=1, keepdims=True)
        fq = check_teacher_values(f, x_query[sl] @ tasks.T)  # (b, k)
        out[sl] = np.einsum("bk,bk->b", pi, fq)
    return out


def _scores_peak_bytes(n_test: int, n_scores: int, batch: int, d: int, ell: int) -> float:
    """Peak memory of the baselines' Monte Carlo: the squared errors of every test context
    and predictor, plus one batch of contexts (tokens, labels and a few temporaries)."""
    return 8.0 * n_test * n_scores + 8.0 * 4 * min(batch, n_test) * (ell + 1) * (d + 1)


def baseline_errors(
    d: int,
    alpha: float,
    prior_tasks: Any,
    rho: float,
    teacher: TeacherLike = None,
    *,
    setting: str = "idg",
    n_test: int = 10_000,
    rng: Any = None,
    which: Iterable[str] | None = None,
) -> dict[str, tuple[float, float]]:
    """Monte Carlo test errors of the Bayes-ridge and dMMSE predictors.

    Draws ``n_test`` fresh contexts of length ``ell = round(alpha d)`` and returns, for
    each predictor, the mean squared error ``E (y_query - y_hat)^2`` and its standard
    error. Both predictors are scored on the same contexts.

    Parameters
    ----------
    d : int
        Dimension (>= 1).
    alpha : float
        Context length per dimension (> 0); ``ell = round(alpha d)`` must be >= 1.
    prior_tasks : array_like of shape (k, d), or None
        The pretraining task set: dMMSE's prior, and (in the IDG setting) the source of
        the test tasks. ``None`` means ``kappa = inf`` (no finite task set): then only
        ``"bayes"`` is available and both settings draw fresh tasks.
    rho : float
        Label-noise variance (>= 0), also used by both predictors.
    teacher : None, str or callable
        The link ``f`` generating the labels (and used by dMMSE).
    setting : {"idg", "icl"}
        Where the test tasks come from: ``"idg"`` (in-distribution generalization) draws
        each test context's task uniformly from ``prior_tasks``; ``"icl"`` draws a fresh
        task on the sphere for every test context. dMMSE always uses ``prior_tasks`` as its
        prior, so in the ICL setting it is the memorizing predictor evaluated off its prior.
    n_test : int
        Number of test contexts (>= 2).
    rng : numpy.random.Generator, int or None
        Random source.
    which : iterable of {"bayes", "dmmse"}, optional
        Predictors to score. Default: both, or only ``"bayes"`` when ``prior_tasks`` is None.

    Returns
    -------
    dict
        ``{name: (mean, stderr)}`` for each requested predictor.

    Raises
    ------
    ValueError
        For bad arguments, including ``"dmmse"`` requested with ``prior_tasks=None``.

    Notes
    -----
    Check values: with a single task (or very few) and long contexts dMMSE identifies the
    task and its error tends to ``rho``; the Bayes error of the linear teacher is at most
    the least-squares error.

    Used in: :doc:`learning curves </book/linear/learning_curves>`.
    """
    d, alpha, ell = _context_size(d, alpha)
    prior_tasks = check_tasks(prior_tasks, d, "prior_tasks")
    rho = check_rho(rho)
    check_choice("setting", setting, _SETTINGS)
    n_test = check_int("n_test", n_test, low=2)
    if which is None:
        which = _BASELINES if prior_tasks is not None else ("bayes",)
    if isinstance(which, str):
        which = (which,)
    which = tuple(which)
    for name in which:
        check_choice("which (each name)", name, _BASELINES)
    if not which:
        raise ValueError("which must name at least one predictor; got an empty collection")
    if "dmmse" in which and prior_tasks is None:
        raise ValueError("which includes 'dmmse' but prior_tasks is None: dMMSE needs a finite task set")
    f = as_link(teacher)
    rng = as_rng(rng)

    test_tasks = prior_tasks if setting == "idg" else None
    batch = max(1, BATCH_BYTES // (8 * 3 * ell * (d + 1)))
    where = f"baseline_errors(n_test={n_test}, d={d}, ell={ell})"
    check_memory(where, _scores_peak_bytes(n_test, len(which), batch, d, ell), "n_test, d and alpha (ell = alpha d)")
    sq = {name: np.empty(n_test) for name in which}
    progress = Progress(where, n_test)
    for start in range(0, n_test, batch):
        progress.update(start)
        sl = slice(start, min(n_test, start + batch))
        ctx = sample_contexts_trusted(sl.stop - sl.start, d, ell, test_tasks, f, rho, rng)
        for name in which:
            if name == "bayes":
                pred = _ridge_predict(ctx.X, ctx.y, ctx.x_query, rho)
            else:
                pred = _dmmse(ctx.X, ctx.y, ctx.x_query, prior_tasks, f, rho)
            sq[name][sl] = (ctx.y_query - pred) ** 2
    return {name: (float(err.mean()), float(err.std(ddof=1) / np.sqrt(n_test))) for name, err in sq.items()}


def gaussian_equivalent_predict(
    X: Any, y: Any, x_query: Any, teacher: TeacherLike, rho: float, *, intercept: bool = True
) -> np.ndarray:
    """Bayes prediction for the Gaussian-equivalent twin of a teacher.

    .. math::

        \\hat y = \\hat a_0 + x_{\\ell+1}^\\top
            (X^\\top X + \\lambda_{\\mathrm{ctx}} I_d)^{-1} X^\\top (y - \\hat a_0),

    with :math:`\\hat a_0 = a_0` and
    :math:`\\lambda_{\\mathrm{ctx}} = \\rho_{\\mathrm{eq}}/a_1^2`,
    :math:`\\rho_{\\mathrm{eq}} = \\rho_{nl} - a_0^2`, when ``intercept`` (else
    :math:`\\hat a_0 = 0` and :math:`\\lambda_{\\mathrm{ctx}} = \\rho_{\\mathrm{eff}} =
    \\rho_{nl}/a_1^2`), from :func:`lib.teachers.gaussian_equivalent_ridge`. It is the exact
    posterior mean of the query label for the teacher
    :math:`y = \\hat a_0 + a_1 x^\\top w + N(0, a_1^2 \\lambda_{\\mathrm{ctx}})` with
    :math:`w \\sim N(0, I_d)`, the teacher that keeps :math:`f`'s mean and linear part and
    turns the rest into noise. For the linear teacher it is :func:`bayes_ridge_predict`.
    For a nonlinear teacher it is *not* the Bayes predictor (that would use :math:`f`
    itself); it is the best ridge predictor affine in the query under Gaussian
    equivalence, and it is the baseline that linear attention is compared with on fresh
    tasks in chapter 5. With :math:`a_1 = 0` it predicts the constant :math:`\\hat a_0`.

    Parameters
    ----------
    X : array_like, shape (n, ell, d)
    y : array_like, shape (n, ell)
    x_query : array_like, shape (n, d)
    teacher : None, str or callable
        The link ``f`` (only its moments :math:`a_0, a_1, E f^2` are used).
    rho : float
        Label-noise variance (>= 0).
    intercept : bool, keyword-only

    Returns
    -------
    numpy.ndarray, shape (n,)
        The predictions of the twin's Bayes predictor on the queries.

    Notes
    -----
    Used in: chapter 5 (task diversity: the generalizing baseline).
    """

    X, y, x_query = check_contexts(X, y, x_query)
    return _twin_predict(X, y, x_query, *gaussian_equivalent_ridge(teacher, check_rho(rho), intercept=intercept))


def _twin_predict(X: np.ndarray, y: np.ndarray, x_query: np.ndarray, c: float, ridge: float) -> np.ndarray:
    """Worker of :func:`gaussian_equivalent_predict`: intercept ``c`` and ridge given."""
    if not np.isfinite(ridge):
        return np.full(X.shape[0], c)
    return c + _ridge_predict(X, y - c, x_query, ridge)


def context_ridge_errors(
    d: int,
    alpha: float,
    rho: float,
    teacher: TeacherLike = None,
    *,
    n_test: int = 10_000,
    rng: Any = None,
    exact_query: bool = False,
) -> dict[str, tuple[float, float]]:
    """Monte Carlo errors on fresh tasks of three ridge predictors, on the same contexts.

    - ``"ridge"``: :func:`bayes_ridge_predict` with ridge :math:`\\rho` and no
      intercept (Bayes-optimal only for the linear teacher);
    - ``"ge"``: :func:`gaussian_equivalent_predict` without intercept (ridge
      :math:`\\rho_{\\mathrm{eff}} = \\rho_{nl}/a_1^2`);
    - ``"ge_intercept"``: :func:`gaussian_equivalent_predict` with the intercept
      :math:`a_0` (ridge :math:`(\\rho_{nl} - a_0^2)/a_1^2`).

    Their asymptotic errors are :func:`lib.theory.context_ridge_error`.

    With ``exact_query`` each context's error is averaged exactly over its query
    instead of sampled at one query. Each predictor is
    :math:`\\hat y = \\hat a_0 + x_{\\ell+1}^\\top v`, and for a query
    :math:`x \\sim N(0, I_d/d)` with :math:`z = x^\\top w`, :math:`\\|w\\|^2 = d`,
    :math:`E[f(z)\\, x] = a_1 w/d`, so given the context

    .. math::

        E\\big[(y_{\\ell+1} - \\hat y)^2\\big]
          = \\rho + E[f^2] - 2 a_0 \\hat a_0 + \\hat a_0^2
            - \\frac{2 a_1\\, w^\\top v}{d} + \\frac{\\|v\\|^2}{d} .

    Only the context's labels then come from the nonlinear teacher; the standard error
    is over contexts alone, much smaller than with one sampled query each.

    Parameters
    ----------
    d : int
        Dimension (>= 1).
    alpha : float
        Context length per dimension (> 0); ``ell = round(alpha d) >= 1``.
    rho : float
        Label-noise variance (>= 0).
    teacher : None, str or callable
        The link ``f``.
    n_test : int, keyword-only
        Number of test contexts (>= 2), each with a fresh task on the sphere.
    rng : numpy.random.Generator, int or None, keyword-only
    exact_query : bool, keyword-only
        Average each context's squared error exactly over the query (formula above)
        instead of drawing one query.

    Returns
    -------
    dict
        ``{"ridge" | "ge" | "ge_intercept": (mean, stderr)}``.

    Notes
    -----
    Used in: :doc:`task diversity </book/regimes/task_diversity>`.
    """
    d, alpha, ell = _context_size(d, alpha)
    rho = check_rho(rho)
    n_test = check_int("n_test", n_test, low=2)
    if not isinstance(exact_query, (bool, np.bool_)):
        raise TypeError(f"exact_query must be True or False; got {exact_query!r}")
    f = as_link(teacher)
    a0, a1, ef2 = teacher_moments(f)
    twins = {
        "ridge": (0.0, rho),
        "ge": gaussian_equivalent_ridge(f, rho, intercept=False),
        "ge_intercept": gaussian_equivalent_ridge(f, rho),
    }
    rng = as_rng(rng)
    batch = max(1, BATCH_BYTES // (8 * 3 * ell * (d + 1)))
    names = ("ridge", "ge", "ge_intercept")
    where = f"context_ridge_errors(n_test={n_test}, d={d}, ell={ell})"
    check_memory(where, _scores_peak_bytes(n_test, len(names), batch, d, ell), "n_test, d and alpha (ell = alpha d)")
    sq = {name: np.empty(n_test) for name in names}
    progress = Progress(where, n_test)
    for start in range(0, n_test, batch):
        progress.update(start)
        sl = slice(start, min(n_test, start + batch))
        ctx = sample_contexts_trusted(sl.stop - sl.start, d, ell, None, f, rho, rng)
        if exact_query:
            for name, (c, ridge) in twins.items():
                v = _ridge_weights(ctx.X, ctx.y - c, ridge) if np.isfinite(ridge) else np.zeros_like(ctx.w)
                wv, vv = np.einsum("nd,nd->n", ctx.w, v) / d, np.einsum("nd,nd->n", v, v) / d
                sq[name][sl] = rho + ef2 - 2 * a0 * c + c * c - 2 * a1 * wv + vv
            continue
        preds = {name: _twin_predict(ctx.X, ctx.y, ctx.x_query, c, ridge) for name, (c, ridge) in twins.items()}
        for name in names:
            sq[name][sl] = (ctx.y_query - preds[name]) ** 2
    return {name: (float(e.mean()), float(e.std(ddof=1) / np.sqrt(n_test))) for name, e in sq.items()}


def context_ridge_twin_errors(
    d: int,
    alpha: float,
    rho: float,
    teacher: TeacherLike,
    ridge: float,
    *,
    intercept: bool = False,
    n_test: int = 200,
    rng: Any = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Errors of one context ridge for a teacher and its Gaussian twin, on shared draws.

    Each of ``n_test`` contexts draws a fresh task ``w`` on the sphere of radius
    ``sqrt(d)``, tokens ``x_i ~ N(0, I_d/d)`` (``i <= ell = round(alpha d)``), their
    projections ``z_i = x_i^T w`` and standard normal noises ``eps_i``, once. The two
    label vectors share all of them:

    .. math::

        y_i = f(z_i) + \\sqrt{\\rho}\\, \\varepsilon_i , \\qquad
        y'_i = a_0 + a_1 z_i + \\sqrt{\\rho_{\\mathrm{eq}}}\\, \\varepsilon_i ,

    with the twin's noise :math:`\\rho_{\\mathrm{eq}} = \\rho_{nl} - a_0^2` of
    :func:`lib.teachers.gaussian_equivalent` (same mean, ``E[y z]`` and ``E[y^2]``).
    Both are fitted by the same predictor
    :math:`\\hat y = \\hat a_0 + x^\\top (X^\\top X + \\lambda I)^{-1} X^\\top (y - \\hat a_0)`,
    :math:`\\hat a_0 = a_0` if ``intercept`` else 0, and each context's error is averaged
    exactly over its query (the formula of :func:`context_ridge_errors` with
    ``exact_query``; the constant term is the same for the teacher and its twin). The
    paired differences measure Gaussian equivalence of the context ridge with far less
    noise than two independent runs.

    Parameters
    ----------
    d : int
        Dimension (>= 1).
    alpha : float
        Context length per dimension (> 0); ``ell = round(alpha d) >= 1``.
    rho : float
        Label-noise variance of the teacher (>= 0).
    teacher : None, str, Link, callable or 1-D array_like
        The link ``f``.
    ridge : float
        The ridge :math:`\\lambda > 0`.
    intercept : bool, keyword-only
        Subtract and add back the teacher's mean :math:`a_0`.
    n_test : int, keyword-only
        Number of contexts (>= 2).
    rng : numpy.random.Generator, int or None, keyword-only

    Returns
    -------
    (e_teacher, e_twin) : tuple of numpy.ndarray, each of shape (n_test,)
        The error of each context for the teacher and for its twin.

    Notes
    -----
    Used in: :doc:`task diversity </book/regimes/task_diversity>`.
    """
    d, alpha, ell = _context_size(d, alpha)
    rho = check_rho(rho)
    ridge = check_real("ridge", ridge, low=0.0, low_open=True)
    if np.ndim(ridge) != 0 or not np.isfinite(ridge):
        raise ValueError(f"ridge must be one finite number > 0; got {ridge!r}")
    ridge = float(ridge)
    if not isinstance(intercept, (bool, np.bool_)):
        raise TypeError(f"intercept must be True or False; got {intercept!r}")
    n_test = check_int("n_test", n_test, low=2)
    f = as_link(teacher)
    a0, a1, ef2 = teacher_moments(f)
    _, rho_eq = gaussian_equivalent(f, rho)
    rng = as_rng(rng)
    c = a0 if intercept else 0.0
    const = rho + ef2 - 2 * a0 * c + c * c
    batch = max(1, BATCH_BYTES // (8 * 4 * ell * (d + 1)))
    where = f"context_ridge_twin_errors(n_test={n_test}, d={d}, ell={ell})"
    check_memory(where, _scores_peak_bytes(n_test, 2, batch, d, ell), "n_test, d and alpha (ell = alpha d)")
    out = np.empty((2, n_test))
    for start in range(0, n_test, batch):
        sl = slice(start, min(n_test, start + batch))
        ctx = sample_contexts_trusted(sl.stop - sl.start, d, ell, None, as_link(None), 0.0, rng)
        z, eps = ctx.y, rng.standard_normal(ctx.y.shape)
        labels = (
            check_teacher_values(f, z) + np.sqrt(rho) * eps,
            a0 + a1 * z + np.sqrt(rho_eq) * eps,
        )
        for j, y in enumerate(labels):
            v = _ridge_weights(ctx.X, y - c, ridge)
            wv = np.einsum("nd,nd->n", ctx.w, v) / d
            out[j, sl] = const - 2 * a1 * wv + np.einsum("nd,nd->n", v, v) / d
    return out[0], out[1]


def dmmse_task_set_errors(
    d: int,
    alpha: float,
    kappa: float,
    rho: float,
    teacher: TeacherLike = None,
    *,
    draws: int = 2,
    n_test: int = 1000,
    rng: Any = None,
    setting: str = "idg",
) -> tuple[float, float]:
    """dMMSE test error averaged over independent task sets, with its standard error.

    For each of ``draws`` task sets of ``k = round(kappa d)`` tasks
    (:func:`lib.samplers.sample_task_set`), scores :func:`dmmse_predict` on ``n_test``
    contexts with :func:`baseline_errors`, and returns the mean over the task sets and
    the standard error of that mean (``std(ddof=1) / sqrt(draws)``), the spread that
    matters when the task set itself is random.

    Parameters
    ----------
    d : int
        Dimension (>= 1).
    alpha : float
        Context length per dimension (> 0).
    kappa : float
        Tasks per dimension (> 0, finite); ``round(kappa d) >= 1``.
    rho : float
        Label-noise variance (>= 0).
    teacher : None, str or callable
    draws : int, keyword-only
        Number of task sets (>= 2).
    n_test : int, keyword-only
        Test contexts per task set (>= 2).
    rng : numpy.random.Generator, int or None, keyword-only
    setting : {"idg", "icl"}, keyword-only
        Test tasks from the task set (IDG) or fresh (ICL), as in :func:`baseline_errors`.

    Returns
    -------
    mean, stderr : float
        The Monte Carlo mean of the squared error and its standard error.

    Notes
    -----
    Used in: :doc:`task diversity </book/regimes/task_diversity>`.
    """

    draws = check_int("draws", draws, low=2)
    if check_param("kappa", kappa, scalar=True) == np.inf:
        raise ValueError(
            "kappa must be finite here (dMMSE needs a finite task set of k = round(kappa d) tasks); got inf"
        )
    rng = as_rng(rng)
    errs = []
    progress = Progress(f"dmmse_task_set_errors(draws={draws}, n_test={n_test}, d={d})", draws)
    for j in range(draws):
        progress.update(j)
        tasks = sample_task_set(d, kappa, rng)
        errs.append(
            baseline_errors(d, alpha, tasks, rho, teacher, setting=setting, n_test=n_test, rng=rng, which=["dmmse"])[
                "dmmse"
            ][0]
        )
    return float(np.mean(errs)), float(np.std(errs, ddof=1) / np.sqrt(draws))


#: Names that moved out of ``lib.baselines`` in the split of ``lib`` by concept, and where they
#: are now (an old notebook gets an AttributeError that says where to look).
_MOVED = {
    "SPECTRAL_PREPROCESSINGS": "lib.theory.spectral_limits",
    "SPECTRAL_CLIP": "lib.theory.spectral_limits",
    "SPECTRAL_LINK_DEGREE": "lib.spectral",
    "MAX_SPECTRAL_BYTES": "lib.spectral",
    "spectral_preprocess": "lib.spectral",
    "spectral_direction": "lib.spectral",
    "spectral_fit": "lib.spectral",
    "spectral_predict": "lib.spectral",
    "spectral_test_error": "lib.spectral",
}


def __getattr__(name: str):
    if name in _MOVED:
        raise AttributeError(f"lib.baselines.{name} has moved to {_MOVED[name]}.{name}")
    raise AttributeError(f"module 'lib.baselines' has no attribute {name!r}")
