"""Two reference predictors for in-context learning: Bayes ridge and dMMSE.

Both look at one context (tokens ``X``, labels ``y``) and a query token ``x_query``
and predict its label (book chapter 2.2 and chapter 5):

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

from lib._checks import as_rng, check_int, check_real
from lib.samplers import (
    BATCH_BYTES,
    TeacherLike,
    _apply_teacher,
    _check_rho,
    _check_tasks,
    _resolve,
    sample_contexts,
)

__all__ = [
    "bayes_ridge_predict",
    "dmmse_predict",
    "baseline_errors",
    "gaussian_equivalent_predict",
    "context_ridge_errors",
    "dmmse_task_set_errors",
    "spectral_preprocess",
    "spectral_direction",
    "spectral_fit",
    "spectral_predict",
    "spectral_test_error",
]

_BASELINES = ("bayes", "dmmse")
_SETTINGS = ("idg", "icl")



def _context_size(d: Any, alpha: Any) -> tuple[int, float, int]:
    """Validate ``d`` and ``alpha`` and return ``(d, alpha, ell)``, ``ell = round(alpha d) >= 1``."""
    d = check_int("d", d, low=1)
    alpha = float(check_real("alpha", alpha, low=0.0, low_open=True))
    ell = int(round(alpha * d))
    if ell < 1:
        raise ValueError(
            f"alpha = {alpha!r} gives ell = round(alpha * d) = 0 context tokens at d = {d}; "
            f"alpha must be at least 1/d = {1.0 / d:g} here"
        )
    return d, alpha, ell

def _check_contexts(X: Any, y: Any, x_query: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate ``X (n, ell, d)``, ``y (n, ell)``, ``x_query (n, d)`` and return float arrays."""
    X = check_real("X", X)
    y = check_real("y", y)
    x_query = check_real("x_query", x_query)
    if X.ndim != 3 or min(X.shape) < 1:
        raise ValueError(f"X must have shape (n, ell, d) with n, ell, d >= 1; got shape {X.shape}")
    n, ell, d = X.shape
    if y.shape != (n, ell):
        raise ValueError(f"y must have shape (n, ell) = {(n, ell)} to match X; got shape {y.shape}")
    if x_query.shape != (n, d):
        raise ValueError(f"x_query must have shape (n, d) = {(n, d)} to match X; got shape {x_query.shape}")
    return X, y, x_query


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
    each context costs ``O(min(ell, d)^3 + ell d min(ell, d))``.

    For a nonlinear teacher this is ridge regression of the raw labels on the tokens (no
    intercept), *not* the Bayes predictor: it estimates the linear part ``a_1 z`` of ``f``
    (``E[y x] = a_1 w / d``), while the mean ``a_0`` and the higher Hermite modes act on it
    like extra label noise. It is the linear benchmark linear attention is compared with in
    chapter 5; pass another ``rho`` (e.g. an effective noise level) to change its ridge.

    Used in: chapter 3 (task diversity: the generalizing baseline), chapter 5 (nonlinear
    teachers).
    """
    X, y, x_query = _check_contexts(X, y, x_query)
    rho = _check_rho(rho)
    n, ell, d = X.shape
    if rho == 0.0:
        w_hat = np.einsum("ndl,nl->nd", np.linalg.pinv(X), y)
        return np.einsum("nd,nd->n", x_query, w_hat)
    if ell >= d:
        A = np.einsum("nli,nlj->nij", X, X)
        A[:, np.arange(d), np.arange(d)] += rho
        w_hat = np.linalg.solve(A, np.einsum("nld,nl->nd", X, y)[..., None])[..., 0]
        return np.einsum("nd,nd->n", x_query, w_hat)
    K = np.einsum("nid,njd->nij", X, X)
    K[:, np.arange(ell), np.arange(ell)] += rho
    c = np.linalg.solve(K, y[..., None])[..., 0]
    return np.einsum("nl,nl->n", np.einsum("nld,nd->nl", X, x_query), c)


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
    X, y, x_query = _check_contexts(X, y, x_query)
    n, ell, d = X.shape
    tasks = _check_tasks(tasks, d)
    if tasks is None:
        raise ValueError("tasks must be a (k, d) array for dMMSE (the finite prior); got None")
    rho = _check_rho(rho)
    f = _resolve(teacher)
    k = tasks.shape[0]
    batch = max(1, BATCH_BYTES // (8 * 3 * (ell + 1) * k))
    out = np.empty(n)
    for start in range(0, n, batch):
        sl = slice(start, min(n, start + batch))
        fX = _apply_teacher(f, X[sl] @ tasks.T)  # (b, ell, k)
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
        fq = _apply_teacher(f, x_query[sl] @ tasks.T)  # (b, k)
        out[sl] = np.einsum("bk,bk->b", pi, fq)
    return out


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
    prior_tasks = _check_tasks(prior_tasks, d)
    rho = _check_rho(rho)
    if not isinstance(setting, str) or setting not in _SETTINGS:
        raise ValueError(f"setting must be one of {_SETTINGS}; got {setting!r}")
    n_test = check_int("n_test", n_test, low=2)
    if which is None:
        which = _BASELINES if prior_tasks is not None else ("bayes",)
    if isinstance(which, str):
        which = (which,)
    which = tuple(which)
    for name in which:
        if name not in _BASELINES:
            raise ValueError(f"which must contain only names from {_BASELINES}; got {name!r}")
    if not which:
        raise ValueError("which must name at least one predictor; got an empty collection")
    if "dmmse" in which and prior_tasks is None:
        raise ValueError("which includes 'dmmse' but prior_tasks is None: dMMSE needs a finite task set")
    f = _resolve(teacher)
    rng = as_rng(rng)

    test_tasks = prior_tasks if setting == "idg" else None
    batch = max(1, BATCH_BYTES // (8 * 3 * ell * (d + 1)))
    sq = {name: np.empty(n_test) for name in which}
    for start in range(0, n_test, batch):
        sl = slice(start, min(n_test, start + batch))
        ctx = sample_contexts(sl.stop - sl.start, d, ell, test_tasks, f, rho, rng)
        for name in which:
            if name == "bayes":
                pred = bayes_ridge_predict(ctx.X, ctx.y, ctx.x_query, rho)
            else:
                pred = dmmse_predict(ctx.X, ctx.y, ctx.x_query, prior_tasks, f, rho)
            sq[name][sl] = (ctx.y_query - pred) ** 2
    return {
        name: (float(err.mean()), float(err.std(ddof=1) / np.sqrt(n_test))) for name, err in sq.items()
    }


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
    \\rho_{nl}/a_1^2`), from :func:`lib.theory.gaussian_equivalent_ridge`. It is the exact
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

    Used in: chapter 5 (task diversity: the generalizing baseline).
    """
    from lib.theory import gaussian_equivalent_ridge

    X, y, x_query = _check_contexts(X, y, x_query)
    c, ridge = gaussian_equivalent_ridge(teacher, _check_rho(rho), intercept=intercept)
    if not np.isfinite(ridge):
        return np.full(X.shape[0], c)
    return c + bayes_ridge_predict(X, y - c, x_query, ridge)


def context_ridge_errors(
    d: int,
    alpha: float,
    rho: float,
    teacher: TeacherLike = None,
    *,
    n_test: int = 10_000,
    rng: Any = None,
) -> dict[str, tuple[float, float]]:
    """Monte Carlo errors on fresh tasks of three ridge predictors, on the same contexts.

    - ``"ridge"``: :func:`bayes_ridge_predict` with ridge :math:`\\rho` and no
      intercept (Bayes-optimal only for the linear teacher);
    - ``"ge"``: :func:`gaussian_equivalent_predict` without intercept (ridge
      :math:`\\rho_{\\mathrm{eff}} = \\rho_{nl}/a_1^2`);
    - ``"ge_intercept"``: :func:`gaussian_equivalent_predict` with the intercept
      :math:`a_0` (ridge :math:`(\\rho_{nl} - a_0^2)/a_1^2`).

    Their asymptotic errors are :func:`lib.theory.context_ridge_error`.

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

    Returns
    -------
    dict
        ``{"ridge" | "ge" | "ge_intercept": (mean, stderr)}``.

    Used in: :doc:`task diversity </book/regimes/task_diversity>`.
    """
    d, alpha, ell = _context_size(d, alpha)
    rho = _check_rho(rho)
    n_test = check_int("n_test", n_test, low=2)
    f = _resolve(teacher)
    rng = as_rng(rng)
    batch = max(1, BATCH_BYTES // (8 * 3 * ell * (d + 1)))
    names = ("ridge", "ge", "ge_intercept")
    sq = {name: np.empty(n_test) for name in names}
    for start in range(0, n_test, batch):
        sl = slice(start, min(n_test, start + batch))
        ctx = sample_contexts(sl.stop - sl.start, d, ell, None, f, rho, rng)
        preds = {
            "ridge": bayes_ridge_predict(ctx.X, ctx.y, ctx.x_query, rho),
            "ge": gaussian_equivalent_predict(ctx.X, ctx.y, ctx.x_query, f, rho, intercept=False),
            "ge_intercept": gaussian_equivalent_predict(ctx.X, ctx.y, ctx.x_query, f, rho),
        }
        for name in names:
            sq[name][sl] = (ctx.y_query - preds[name]) ** 2
    return {name: (float(e.mean()), float(e.std(ddof=1) / np.sqrt(n_test))) for name, e in sq.items()}


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

    Used in: :doc:`task diversity </book/regimes/task_diversity>`.
    """
    from lib.samplers import sample_task_set

    draws = check_int("draws", draws, low=2)
    rng = as_rng(rng)
    errs = [
        baseline_errors(d, alpha, sample_task_set(d, kappa, rng), rho, teacher,
                        setting=setting, n_test=n_test, rng=rng, which=["dmmse"])["dmmse"][0]
        for _ in range(draws)
    ]
    return float(np.mean(errs)), float(np.std(errs, ddof=1) / np.sqrt(draws))


# ----------------------------------------------------------------------------------------
# spectral in-context estimator (chapter 6)
# ----------------------------------------------------------------------------------------

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
                f"preprocess must be None, one of {SPECTRAL_PREPROCESSINGS} or a callable "
                f"T(y); got {preprocess!r}"
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
    preprocessing of :func:`lib.theory.optimal_preprocess`); it must return finite
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

    Used in: chapter 6 (beyond linear attention).
    """
    y = check_real("y", y)
    if y.ndim != 2 or min(y.shape) < 1:
        raise ValueError(f"y must have shape (n, ell) with n, ell >= 1; got shape {y.shape}")
    pre = _check_preprocess(preprocess)
    if callable(pre):
        out = np.asarray(pre(y.copy()))
        if out.shape != y.shape:
            raise ValueError(
                f"preprocess must return an array of the labels' shape {y.shape}; "
                f"it returned shape {out.shape}"
            )
        if not (np.issubdtype(out.dtype, np.floating) or np.issubdtype(out.dtype, np.integer)):
            raise ValueError(f"preprocess must return real numbers; it returned dtype {out.dtype}")
        out = out.astype(float)
        if not np.all(np.isfinite(out)):
            raise ValueError("preprocess returned non-finite values (NaN or inf)")
        return out
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

    Used in: chapter 6.
    """
    from lib.hermite import hermite_functions

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
        :func:`lib.theory.spectral_overlap` requires, and increasing, so that large
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
    from lib.hermite import hermite_functions

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

    Used in: :doc:`beyond linear attention </book/beyond/spectral>`.
    """
    from lib.hermite import coefficients, resolve_teacher, teacher_moments

    rho = _check_rho(rho)
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
    ef2 = teacher_moments(teacher)[2]
    powers = c[:, None] ** np.arange(coef.shape[1])[None, :]
    err = rho + ef2 - 2.0 * np.einsum("nk,k,nk->n", coef, a, powers) + np.sum(coef**2, axis=1)
    return (err, c) if return_cosine else err


def _apply_link(link: Any, s: np.ndarray) -> np.ndarray:
    """Evaluate a user link on an array and check its output."""
    try:
        out = np.asarray(link(s))
    except Exception as exc:
        raise ValueError(f"link raised {type(exc).__name__} when evaluated on an array: {exc}") from exc
    if out.shape != s.shape:
        raise ValueError(
            f"link must be vectorized: given shape {s.shape} it returned shape {out.shape}"
        )
    out = out.astype(float)
    if not np.all(np.isfinite(out)):
        raise ValueError("link returned non-finite values (NaN or inf)")
    return out
