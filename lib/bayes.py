r"""The Bayes error of in-context learning at finite dimension, by Monte Carlo.

In the model of the book the task :math:`w` is uniform on the sphere of radius
:math:`\sqrt d`, the tokens are :math:`x \sim N(0, I_d/d)` and the labels are
:math:`y = f(x^\top w) + \varepsilon` with :math:`\varepsilon \sim N(0, \rho)`. Given a
context :math:`(x_i, y_i)_{i \le \ell}` the posterior of :math:`w` has the density

.. math::

    p(w \mid \text{context}) \propto
    \exp\Big(-\frac{1}{2\rho} \sum_{i=1}^{\ell} \big(y_i - f(x_i^\top w)\big)^2\Big)

with respect to the uniform law on the sphere. No predictor of the query's label does
better than the posterior mean of :math:`f(x_{\ell+1}^\top w)`, and its error, the
*Bayes error*, is

.. math::

    e_{\mathrm{Bayes}} = \rho + E\big[\operatorname{Var}\big(f(x_{\ell+1}^\top w)
    \mid \text{context}, x_{\ell+1}\big)\big].

It lies between :math:`\rho` and the context-free error
(:func:`lib.theory.context_free_error`), the error of the best predictor that ignores
the context.

:func:`bayes_error` estimates it. For each of ``n_contexts`` sampled contexts it runs
``n_chains`` independent replica-exchange (parallel tempering) samplers on the sphere.
Each has ``n_temps`` replicas whose likelihood is raised to the powers
:math:`\beta_{\min} = \beta_1 < \dots < \beta_K = 1`. A replica moves by random-walk
Metropolis: the proposal adds an isotropic Gaussian step to :math:`w` and projects back
onto the sphere, which makes it symmetric, so a move is accepted with the tempered
likelihood ratio. After every move, neighbouring replicas propose to swap their states.
The hot replicas cross between the modes of the posterior (an even teacher such as
:math:`h_2` has many at short contexts) and pass them down to the replica at
:math:`\beta = 1`, the only one whose states are used. Every replica starts at a draw of
the prior; its step size is adapted in the burn-in only (towards an acceptance of 1/4)
and then held fixed. After the burn-in every state of the :math:`\beta = 1` replicas
enters the estimate of the posterior variance of :math:`f(x^\top w)` at ``n_query``
fresh queries of that context. The runs' agreement is checked by the split
:math:`\hat R` of those predictions (Gelman et al., *Bayesian Data Analysis*, 3rd ed.,
section 11.4), reported with the estimate. For an even teacher :math:`w` and :math:`-w`
have the same likelihood and the same predictions, so a run need not visit both.

:func:`gap_share` turns a network's in-context gain into the share of the gap between the
context-free error and the Bayes error that it closes, with the Bayes error's Monte Carlo
standard error carried into its interval.

Used in: :doc:`trained networks </book/trained/networks>` (through the stored values of
``scripts/make_bayes.py``, and :func:`gap_share`).
"""

from __future__ import annotations

import importlib.resources
import json
import math
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from scipy import stats

from lib import _csvfile
from lib._checks import (
    Progress,
    as_float_array,
    as_rng,
    check_callable,
    check_int,
    check_memory,
    check_real,
    check_scalar,
)
from lib.hermite import LINKS
from lib.quadrature import call_f
from lib.teachers import TeacherLike, as_link

__all__ = ["BayesEstimate", "bayes_error", "posterior_variances", "BAYES_COLUMNS", "load_bayes", "gap_share"]

#: The columns of ``lib/data/bayes_error.csv`` (``scripts/make_bayes.py``): the point
#: (teacher, d, alpha, ell, rho), the seed and the sampler's settings, the estimate with
#: its standard error and diagnostics, the context-free error of the point, and the wall
#: time in seconds.
BAYES_COLUMNS = (
    "teacher", "d", "alpha", "ell", "rho", "seed", "n_contexts", "n_chains", "n_temps", "beta_min",
    "n_burn", "n_keep", "n_query", "error", "se", "rhat_max", "rhat_q99", "acceptance", "e_cf", "seconds",
)  # fmt: skip
_INT_COLUMNS = {"d", "ell", "seed", "n_contexts", "n_chains", "n_temps", "n_burn", "n_keep", "n_query"}

#: Acceptance rate the step size is adapted towards during the burn-in.
TARGET_ACCEPTANCE = 0.25

#: Bound on the log of a step size. A hot replica accepts nearly every move, so its step
#: grows without end during a long burn-in; beyond ``exp(250)`` (1e108) a move is already
#: a fresh uniform draw on the sphere (``e^{-250}``: no move), and near ``exp(354)`` the
#: squared norm of the step overflows float64 and the state becomes NaN. The book's
#: burn-in of 2000 steps moves a log step by less than 200, so it never meets the bound.
MAX_LOG_STEP = 250.0


class BayesEstimate(NamedTuple):
    """The Monte Carlo estimate of the Bayes error and its diagnostics.

    Attributes
    ----------
    error : float
        The estimate of :math:`e_{\\mathrm{Bayes}}`: the mean over the contexts of
        :math:`\\rho` plus the posterior variance of the prediction, averaged over the
        queries.
    se : float
        Its standard error: the standard deviation of the per-context values over
        :math:`\\sqrt{n_{\\mathrm{contexts}}}` (the contexts are independent, so it
        includes the Monte Carlo noise of the chains).
    rhat_max : float
        The largest split :math:`\\hat R` over every context and query.
    rhat_q99 : float
        Its 99th percentile over the contexts and queries.
    acceptance : float
        The mean acceptance rate after the burn-in.
    per_context : numpy.ndarray
        The per-context values, shape ``(n_contexts,)``.
    """

    error: float
    se: float
    rhat_max: float
    rhat_q99: float
    acceptance: float
    per_context: np.ndarray


def _f_of(f: Any, z: np.ndarray) -> np.ndarray:
    return call_f(f, z.reshape(-1)).reshape(z.shape)


def _sse(f: Any, Xt: np.ndarray, y: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Sum of squared residuals of each replica's task, shape (n, C, K)."""
    r = y[..., None, :] - _f_of(f, W @ Xt)
    return np.einsum("...l,...l->...", r, r)


def _to_sphere(W: np.ndarray, d: int) -> np.ndarray:
    return W * (math.sqrt(d) / np.linalg.norm(W, axis=-1, keepdims=True))


def _split_rhat(s1: np.ndarray, s2: np.ndarray, m: int) -> np.ndarray:
    """Split R-hat from the sums ``s1``, ``s2`` (shape (2, n, C, Q)) of ``m`` draws per half."""
    mean = s1 / m
    var = (s2 - m * mean**2) / (m - 1)  # within each half-chain
    mean = np.concatenate(list(mean), axis=1)  # (n, 2C, Q): the half-chains
    var = np.concatenate(list(var), axis=1)
    within = var.mean(axis=1)
    between = m * mean.var(axis=1, ddof=1)
    pooled = (m - 1) / m * within + between / m
    tiny = np.finfo(float).tiny
    with np.errstate(over="ignore"):
        rhat = np.sqrt(np.maximum(pooled, tiny) / np.maximum(within, tiny))
    # chains that never move within a half (zero within-chain variance) but disagree have no
    # finite R-hat: inf, not 1e150; chains that agree and never move (a constant prediction): 1
    return np.where(within > tiny, rhat, np.where(pooled > tiny, np.inf, 1.0))


def _posterior_variances(
    X: np.ndarray,
    y: np.ndarray,
    x_query: np.ndarray,
    f: Any,
    rho: float,
    rng: np.random.Generator,
    *,
    n_chains: int,
    n_burn: int,
    n_keep: int,
    betas: np.ndarray,
    progress: Progress | None = None,
) -> tuple[np.ndarray, np.ndarray, float]:
    """The sampler of :func:`posterior_variances`, on validated arguments."""
    n, _, d = X.shape
    K = betas.size
    Xt = np.ascontiguousarray(X.transpose(0, 2, 1))[:, None]  # (n, 1, d, ell)
    Qt = np.ascontiguousarray(x_query.transpose(0, 2, 1))  # (n, d, Q)
    W = _to_sphere(rng.standard_normal((n, n_chains, K, d)), d)
    sse = _sse(f, Xt, y[:, None], W)  # (n, C, K)
    log_step = np.full((n, n_chains, K), math.log(0.5))
    half = n_keep // 2
    s1 = np.zeros((2, n, n_chains, Qt.shape[2]))
    s2 = np.zeros_like(s1)
    accepted = 0.0
    for t in range(n_burn + 2 * half):
        # a Metropolis move of every replica
        prop = _to_sphere(W + np.exp(log_step)[..., None] * rng.standard_normal(W.shape), d)
        sse_p = _sse(f, Xt, y[:, None], prop)
        ok = np.log(rng.random(sse.shape)) < -betas * (sse_p - sse) / (2.0 * rho)
        W = np.where(ok[..., None], prop, W)
        sse = np.where(ok, sse_p, sse)
        # a swap of neighbouring temperatures (even pairs, then odd pairs)
        lo = np.arange(t % 2, K - 1, 2)
        if lo.size:
            log_r = (betas[lo] - betas[lo + 1]) * (sse[..., lo] - sse[..., lo + 1]) / (2.0 * rho)
            swap = np.log(rng.random(log_r.shape)) < log_r
            a, b = W[..., lo, :].copy(), W[..., lo + 1, :].copy()
            W[..., lo, :] = np.where(swap[..., None], b, a)
            W[..., lo + 1, :] = np.where(swap[..., None], a, b)
            sa, sb = sse[..., lo].copy(), sse[..., lo + 1].copy()
            sse[..., lo] = np.where(swap, sb, sa)
            sse[..., lo + 1] = np.where(swap, sa, sb)
        if progress is not None:
            progress.update(t + 1)
        if t < n_burn:  # adapt the steps (Robbins-Monro on their logs), burn-in only
            log_step += (ok - TARGET_ACCEPTANCE) / math.sqrt(1.0 + t / 10.0)
            np.clip(log_step, -MAX_LOG_STEP, MAX_LOG_STEP, out=log_step)
            continue
        k = t - n_burn
        accepted += ok[..., -1].mean()
        F = _f_of(f, W[:, :, -1] @ Qt)  # (n, C, Q), the chains at temperature 1
        s1[k // half] += F
        s2[k // half] += F * F
    total = 2 * half * n_chains
    mean = s1.sum(axis=(0, 2)) / total
    var = (s2.sum(axis=(0, 2)) - total * mean**2) / (total - 1)
    return np.maximum(var, 0.0), _split_rhat(s1, s2, half), accepted / (2 * half)


def posterior_variances(
    X: np.ndarray,
    y: np.ndarray,
    x_query: np.ndarray,
    f: Any,
    rho: float,
    rng: np.random.Generator,
    *,
    n_chains: int,
    n_burn: int,
    n_keep: int,
    betas: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, float]:
    """The posterior variance of ``f(x_query^T w)`` for each context and query.

    The sampler of :func:`bayes_error`, on given contexts (the book's tests compare it
    with quadrature on the circle, ``d = 2``). The arguments are checked first (cheap
    checks, before the chains are allocated).

    Parameters
    ----------
    X : numpy.ndarray, shape (n, ell, d)
        The context tokens.
    y : numpy.ndarray, shape (n, ell)
        Their labels.
    x_query : numpy.ndarray, shape (n, Q, d)
        Query tokens, ``Q`` per context.
    f : callable
        The teacher's link, vectorized.
    rho : float
        The label-noise variance, ``> 0``.
    rng : numpy.random.Generator
        The random source of the chains.
    n_chains : int
        Independent tempered runs per context (``>= 2``).
    n_burn : int
        Burn-in steps, in which the step sizes are adapted.
    n_keep : int
        Kept steps (even, ``>= 4``).
    betas : numpy.ndarray, shape (K,)
        Increasing inverse temperatures of the likelihood, the last equal to 1.

    Returns
    -------
    variances : numpy.ndarray, shape (n, Q)
        The posterior variance of the prediction, pooled over the kept states of the
        chains at inverse temperature 1.
    rhat : numpy.ndarray, shape (n, Q)
        The split :math:`\\hat R` of the prediction at each query.
    acceptance : float
        The mean acceptance rate of the moves at inverse temperature 1, kept steps.

    Raises
    ------
    TypeError
        If an array is not real, ``f`` not callable, ``rng`` not a generator or an
        integer argument not an integer.
    ValueError
        If the shapes do not match, a value is not finite, ``rho <= 0``, ``n_chains < 2``,
        ``n_burn < 0``, ``n_keep < 4``, or ``betas`` is not increasing in ``(0, 1]`` with
        its last entry 1.
    """
    X = as_float_array("X", X, 3)
    n, ell, d = X.shape
    if min(n, ell, d) < 1:
        raise ValueError(f"X must have shape (n, ell, d) with n, ell, d >= 1; got shape {X.shape}")
    y = as_float_array("y", y, 2)
    if y.shape != (n, ell):
        raise ValueError(f"y must have shape (n, ell) = {(n, ell)} to match X; got shape {y.shape}")
    x_query = as_float_array("x_query", x_query, 3)
    if x_query.shape[0] != n or x_query.shape[2] != d or x_query.shape[1] < 1:
        raise ValueError(f"x_query must have shape (n, Q, d) = ({n}, Q >= 1, {d}) to match X; got {x_query.shape}")
    f = check_callable("f", f)
    rho = check_scalar("rho", rho, low=0.0, low_open=True)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator; got {rng!r} of type {type(rng).__name__}")
    n_chains = check_int("n_chains", n_chains, low=2)
    n_burn = check_int("n_burn", n_burn, low=0)
    n_keep = check_int("n_keep", n_keep, low=4)
    betas = as_float_array("betas", betas, 1)
    if betas.size < 1 or betas[-1] != 1.0 or betas[0] <= 0 or np.any(np.diff(betas) <= 0):
        raise ValueError(f"betas must increase strictly in (0, 1] and end at 1; got {betas!r}")
    _check_size("posterior_variances", n, n_chains, betas.size, d, ell, x_query.shape[1])
    return _posterior_variances(
        X, y, x_query, f, rho, rng, n_chains=n_chains, n_burn=n_burn, n_keep=n_keep, betas=betas
    )


def _check_size(where: str, n: int, chains: int, temps: int, d: int, ell: int, queries: int) -> None:
    """The memory guard: the chains' states and likelihoods, the query sums, the contexts."""
    states = n * chains * temps
    nbytes = 8 * (3 * states * d + 3 * states * ell + 6 * n * chains * queries + 2 * n * ell * d + 2 * n * queries * d)
    check_memory(where, nbytes, "n_contexts, n_chains, n_temps, n_query, d and alpha")


def bayes_error(
    teacher: TeacherLike,
    d: int,
    alpha: float,
    rho: float,
    *,
    n_contexts: int,
    rng: Any,
    n_chains: int = 4,
    n_burn: int = 2000,
    n_keep: int = 2000,
    n_query: int = 32,
    n_temps: int = 10,
    beta_min: float = 1e-3,
) -> BayesEstimate:
    r"""Estimate the Bayes error :math:`\rho + E\operatorname{Var}(f(x_{\ell+1}^\top w) \mid \text{context}, x_{\ell+1})`.

    Contexts of length :math:`\ell = \mathrm{round}(\alpha d)` are drawn as in
    :func:`lib.sample_contexts`, with a fresh task each; the posterior of each task is
    sampled by random-walk Metropolis on the sphere (see the module docstring).

    Parameters
    ----------
    teacher : None, str, Link, callable or array_like
        Any teacher :func:`lib.teachers.as_link` accepts.
    d : int
        Dimension, ``d >= 2``.
    alpha : float
        Context ratio, ``alpha > 0`` with ``round(alpha * d) >= 1``.
    rho : float
        Label-noise variance, ``rho > 0`` (at ``rho = 0`` the posterior is singular).
    n_contexts : int, keyword-only
        Number of contexts, ``>= 2``.
    rng : numpy.random.Generator or int, keyword-only
        The random source of the contexts, the queries and the chains.
    n_chains : int, keyword-only
        Independent tempered runs per context, ``>= 2``.
    n_burn : int, keyword-only
        Burn-in steps (tempered, step size adapted), ``>= 2``.
    n_keep : int, keyword-only
        Steps kept after the burn-in, ``>= 4``; an odd value loses its last step.
    n_query : int, keyword-only
        Query tokens per context, ``>= 1``.
    n_temps : int, keyword-only
        Replicas per run, ``>= 1``: inverse temperatures ``beta_min ** (j / (n_temps - 1))``
        for ``j = n_temps - 1, ..., 0`` (only ``1`` when ``n_temps = 1``).
    beta_min : float, keyword-only
        The smallest inverse temperature, ``0 < beta_min <= 1``.

    Returns
    -------
    BayesEstimate
        The estimate, its standard error and the convergence diagnostics.

    Raises
    ------
    TypeError
        If an integer argument is not an integer, ``alpha`` or ``rho`` not a real
        number, ``rng`` not a generator or seed, or ``teacher`` not a teacher.
    ValueError
        If an argument is out of its range (the message names it and the value).

    Notes
    -----
    The cost is ``n_contexts * n_chains * n_temps * (n_burn + n_keep)`` evaluations of
    the likelihood, each ``O(alpha d^2)``.
    Convergence: look at ``rhat_max`` (values below about 1.05 mean the chains of every
    context agree) and compare runs with different ``n_burn`` and ``n_keep``.

    Examples
    --------
    >>> est = bayes_error("linear", 4, 2.0, 0.1, n_contexts=8, rng=0, n_burn=200, n_keep=200)
    >>> 0.1 < est.error < 1.1
    True
    """
    link = as_link(teacher)
    d = check_int("d", d, low=2)
    alpha = check_scalar("alpha", alpha, low=0.0, low_open=True)
    rho = check_scalar("rho", rho, low=0.0, low_open=True)
    n_contexts = check_int("n_contexts", n_contexts, low=2)
    n_chains = check_int("n_chains", n_chains, low=2)
    n_burn = check_int("n_burn", n_burn, low=2)
    n_keep = check_int("n_keep", n_keep, low=4)
    n_query = check_int("n_query", n_query, low=1)
    n_temps = check_int("n_temps", n_temps, low=1)
    beta_min = check_scalar("beta_min", beta_min, low=0.0, low_open=True, high=1.0)
    ell = round(alpha * d)
    if ell < 1:
        raise ValueError(f"alpha: round(alpha * d) must be at least 1; got alpha = {alpha!r} at d = {d}")
    gen = as_rng(rng)
    where = f"bayes_error(d={d}, alpha={alpha:g}, n_contexts={n_contexts})"
    _check_size(where, n_contexts, n_chains, n_temps, d, ell, n_query)
    betas = beta_min ** (np.arange(n_temps - 1, -1, -1) / max(n_temps - 1, 1))
    X = gen.standard_normal((n_contexts, ell, d)) / math.sqrt(d)
    w = _to_sphere(gen.standard_normal((n_contexts, d)), d)
    z = np.einsum("nld,nd->nl", X, w)
    y = _f_of(link.f, z) + math.sqrt(rho) * gen.standard_normal(z.shape)
    x_query = gen.standard_normal((n_contexts, n_query, d)) / math.sqrt(d)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, with its cause
        var, rhat, acc = _posterior_variances(
            X, y, x_query, link.f, rho, gen, n_chains=n_chains, n_burn=n_burn, n_keep=n_keep, betas=betas,
            progress=Progress(where, n_burn + n_keep),
        )  # fmt: skip
        per = rho + var.mean(axis=1)
        se = per.std(ddof=1) / math.sqrt(n_contexts)
    if not (np.all(np.isfinite(per)) and math.isfinite(se)):
        raise ValueError(
            f"teacher: its values are too large for float64 (the posterior variance overflows at {where}); "
            "rescale the teacher"
        )
    return BayesEstimate(
        error=float(per.mean()),
        se=float(se),
        rhat_max=float(rhat.max()),
        rhat_q99=float(np.quantile(rhat, 0.99)),
        acceptance=float(acc),
        per_context=per,
    )


def _convert(name: str, text: str, where: str) -> Any:
    if name == "teacher":
        return _csvfile.to_text(name, text, where)
    if name in _INT_COLUMNS:
        return _csvfile.to_int(name, text, where, low=0)
    return _csvfile.to_float(name, text, where, nonnegative=True)


def _check_row(row: dict[str, Any], where: str) -> None:
    """A row's values within the ranges :func:`bayes_error` accepts, and consistent."""
    if row["teacher"] not in LINKS:
        raise ValueError(f"{where}: teacher: {row['teacher']!r} is not one of {sorted(LINKS)}")
    lows = {"d": 2, "n_contexts": 2, "n_chains": 2, "n_temps": 1, "n_burn": 2, "n_keep": 4, "n_query": 1, "ell": 1}
    for name, low in lows.items():
        if row[name] < low:
            raise ValueError(f"{where}: {name}: {row[name]} is not allowed; it must be >= {low}")
    for name in ("alpha", "rho", "beta_min", "e_cf"):
        if not row[name] > 0:
            raise ValueError(f"{where}: {name}: {row[name]!r} is not allowed; it must be > 0")
    for name in ("beta_min", "acceptance"):
        if row[name] > 1:
            raise ValueError(f"{where}: {name}: {row[name]!r} is not allowed; it must be <= 1")
    if row["ell"] != round(row["alpha"] * row["d"]):
        raise ValueError(
            f"{where}: ell: {row['ell']} is not round(alpha * d) = {round(row['alpha'] * row['d'])} "
            f"(alpha = {row['alpha']!r}, d = {row['d']}); a shifted or edited row?"
        )
    if row["error"] < row["rho"]:
        raise ValueError(f"{where}: error: {row['error']!r} is below rho = {row['rho']!r}; the Bayes error is >= rho")


def _point_key(label: Any) -> tuple[str, int, float] | None:
    """``(teacher, d, alpha)`` of a sidecar label ``"h2:8:2"``, or None if it is not one."""
    try:
        teacher, d, alpha = str(label).split(":")
        return teacher, int(d), float(alpha)
    except ValueError:
        return None


def _check_sidecar(path: Path, rows: list[dict[str, Any]], wheres: list[str], required: bool) -> None:
    """Each row's seed, n_contexts, rho and settings as the JSON sidecar records them.

    ``wheres[i]`` is ``"<path>:<line>"`` of ``rows[i]``, for the messages.
    """
    meta_path = path.with_suffix(".json")
    if not meta_path.is_file():
        if required:
            raise ValueError(f"{meta_path}:0: (file): missing; the package's data file needs its record")
        return  # a file of the user's without a record (read_rows checks the sidecar's JSON)
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    if not isinstance(meta, dict) or meta.get("file") != path.name:
        return
    settings, points = meta.get("settings", {}), meta.get("points", [])
    if not isinstance(settings, dict) or not isinstance(points, list) or not all(isinstance(p, dict) for p in points):
        raise ValueError(f"{meta_path}:1: settings/points: not a dict and a list of dicts; the sidecar is corrupt")
    by_key = {_point_key(p.get("label")): p for p in points}
    recorded = {**settings, "rho": meta["rho"]} if "rho" in meta else dict(settings)
    for where, row in zip(wheres, rows):
        key, label = (row["teacher"], row["d"], row["alpha"]), f"{row['teacher']}:{row['d']}:{row['alpha']!r}"
        want = {**recorded, **{k: v for k, v in by_key.get(key, {}).items() if k in row}}
        if points and key not in by_key:
            raise ValueError(f"{where}: teacher, d, alpha: the point {label} is not one {meta_path.name} records")
        for name, value in want.items():
            if name in row and row[name] != value:
                raise ValueError(
                    f"{where}: {name}: {row[name]!r} at the point {label}, but {meta_path.name} records "
                    f"{value!r} (an edited row or an out-of-date sidecar?)"
                )


def load_bayes(path: str | Path | None = None) -> dict[tuple[str, int, float], dict[str, Any]]:
    """The stored Bayes errors of ``scripts/make_bayes.py``, keyed by ``(teacher, d, alpha)``.

    Parameters
    ----------
    path : str or pathlib.Path, optional
        The CSV file; by default ``lib/data/bayes_error.csv`` of the installed package.

    Returns
    -------
    dict
        ``{(teacher, d, alpha): row}``, each row a dict of :data:`BAYES_COLUMNS`.

    Raises
    ------
    TypeError
        If ``path`` is not a str, a ``pathlib.Path`` or None.
    ValueError
        If the file is corrupt (see ``lib._csvfile``), holds a point twice, a value
        is out of the range :func:`bayes_error` accepts (``d >= 2``, ``rho > 0``, ...),
        ``ell`` is not ``round(alpha * d)``, ``error < rho``, or a row's seed,
        ``n_contexts``, ``rho`` or sampler settings differ from those its JSON sidecar
        (``bayes_error.json``) records.
    """
    default = path is None
    if default:
        path = Path(str(importlib.resources.files("lib") / "data" / "bayes_error.csv"))
    elif not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str, a pathlib.Path or None; got {type(path).__name__} {path!r}")
    key = lambda r: (r["teacher"], r["d"], r["alpha"])  # noqa: E731
    path = Path(path)
    wheres: list[str] = []  # "<path>:<line>" of each row, for the sidecar's messages

    def check_row(row: dict[str, Any], where: str) -> None:
        _check_row(row, where)
        wheres.append(where)

    rows = _csvfile.read_rows(path, BAYES_COLUMNS, _convert, check_row=check_row, keys=[(key, "same point")])
    _check_sidecar(path, rows, wheres, required=default)
    return {key(r): r for r in rows}


def gap_share(
    gain: Any, gap: Any, gain_half: Any = 0.0, gap_se: Any = 0.0, level: float = 0.95
) -> dict[str, np.ndarray]:
    r"""Share of the gap between the context-free and the Bayes error that a gain closes, with its interval.

    A network's in-context gain :math:`G = e_{\mathrm{cf}}(d) - e_{\mathrm{ICL}}` is
    compared with the largest gain any predictor can have, the gap
    :math:`D = e_{\mathrm{cf}}(d) - e_{\mathrm{Bayes}}`; the share is :math:`s = G/D`.
    Both carry uncertainty: the gain a 95 % (``level``) half-width :math:`h_G` (e.g.
    ``"half_all"`` of the chapter's paired gains), the gap the Monte Carlo standard error
    :math:`\sigma_D` of the Bayes error (column ``se`` of ``lib/data/bayes_error.csv``; the
    context-free error is exact). The two are independent, and to first order in them

    .. math:: h_s = \sqrt{(h_G/D)^2 + (z\, s\, \sigma_D/D)^2},

    with :math:`z` the normal quantile of ``level`` (the Bayes error averages over many
    contexts). Pass ``gain_half = 0`` for the shares of single seeds, to carry only the
    gap's uncertainty.

    Parameters
    ----------
    gain : float or array_like
        The gain :math:`G` (positive: below the context-free error).
    gap : float or array_like
        The gap :math:`D` (> 0).
    gain_half : float or array_like
        Half-width of the gain's interval at ``level`` (>= 0).
    gap_se : float or array_like
        Standard error of the gap (>= 0): that of the Bayes error.
    level : float
        Confidence level, in (0, 1).

    Returns
    -------
    dict of numpy.ndarray
        ``"share"`` (:math:`s`), ``"half"`` (:math:`h_s`), and its two parts
        ``"half_gain"`` (:math:`h_G/D`) and ``"half_gap"`` (:math:`z |s| \sigma_D/D`),
        broadcast over the inputs.

    Raises
    ------
    ValueError
        If ``gap`` is not positive, a half-width or standard error is negative, the
        inputs do not broadcast together, ``level`` is not in (0, 1), or the share or its
        half-width is beyond float64 (a gap vanishingly small against the gain).
    TypeError
        If an input is not a real number or an array of them.

    Notes
    -----
    The first-order rule holds while :math:`\sigma_D \ll D`; the chapter's gaps are
    10 to 100 times their standard error. Used in:
    :doc:`trained networks </book/trained/networks>`.
    """
    level = check_scalar("level", level, low=0.0, high=1.0, low_open=True, high_open=True)
    g = check_real("gain", gain)
    dd = check_real("gap", gap, low=0.0, low_open=True)
    hg = check_real("gain_half", gain_half, low=0.0)
    sd = check_real("gap_se", gap_se, low=0.0)
    try:
        g, dd, hg, sd = np.broadcast_arrays(g, dd, hg, sd)
    except ValueError as exc:
        shapes = [np.shape(v) for v in (gain, gap, gain_half, gap_se)]
        raise ValueError(f"gain, gap, gain_half and gap_se must broadcast together; got shapes {shapes}") from exc
    z = float(stats.norm.ppf(0.5 + level / 2))
    with np.errstate(over="ignore", invalid="ignore"):  # checked below
        share = g / dd
        half_gain = hg / dd
        half_gap = z * np.abs(share) * sd / dd
        half = np.hypot(half_gain, half_gap)
    if not (np.all(np.isfinite(share)) and np.all(np.isfinite(half))):
        raise ValueError(
            "gap_share: the share or its half-width is beyond float64 at "
            f"gain = {_shown(gain)}, gap = {_shown(gap)}, gain_half = {_shown(gain_half)}, gap_se = {_shown(gap_se)}; "
            "the gap must not be vanishingly small against the gain and the uncertainties"
        )
    return {"share": share, "half": half, "half_gain": half_gain, "half_gap": half_gap}


def _shown(value: Any) -> str:
    """A short text of an argument for a message (its shape when it is large)."""
    return repr(np.asarray(value).tolist()) if np.size(value) <= 8 else f"(an array of shape {np.shape(value)})"
