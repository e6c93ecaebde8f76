r"""Simulations: one point of every simulation figure of the book, and grids of them.

:func:`mc_error` measures the test error of a fitted :math:`\Gamma` by Monte Carlo for
any teacher; :func:`simulate` draws a pretraining set, fits :math:`\Gamma`
(:func:`lib.attention.fit_gamma`) and tests it; :func:`simulate_many` repeats it over a
parameter grid and several seeded draws and averages. The model and its solvers are in
:mod:`lib.attention`.

Used in every chapter with a simulation figure (chapters 2-5).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from lib._checks import (
    Progress,
    as_rng,
    check_choice,
    check_int,
    check_memory,
    check_param,
    check_real,
    check_rho,
    check_tasks,
)
from lib._checks import check_gamma as _check_gamma
from lib._ridge_solvers import _predict
from lib.attention import (
    MC_BATCH,
    METHODS,
    N_TEST_DEFAULT,
    exact_error,
    fit_gamma,
    fit_peak_bytes,
)
from lib.hermite import Link
from lib.samplers import features_peak_bytes, sample_features_trusted, sample_task_set
from lib.teachers import as_link

__all__ = ["SimulationResult", "mc_error", "mc_peak_bytes", "simulate_peak_bytes", "simulate", "simulate_many"]


class SimulationResult(dict):
    """The result of :func:`simulate` or :func:`simulate_many`: a ``dict`` whose keys are
    also attributes (``result["icl"]`` and ``result.icl`` are the same object).

    It stays a plain ``dict`` for everything else (iteration, ``json.dump``, ``**result``),
    so code written for the dictionary keeps working; the keys are listed under Returns
    of the function that made it.

    See Also
    --------
    simulate, simulate_many : the functions that return it.
    """

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"simulation result has no field {name!r}; fields: {sorted(self)}") from None

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self))


def mc_error(
    gamma: Any,
    ell: int,
    tasks: Any,
    teacher: Any,
    rho: float,
    n_test: int,
    rng: Any = None,
) -> tuple[float, float]:
    """Monte Carlo test error ``E(y_q - x_q^T Gamma f)^2`` on fresh test contexts.

    Parameters
    ----------
    gamma : array_like, shape (d, d + 1)
    ell : int
        Context length (>= 1).
    tasks : None or array_like, shape (k, d)
        ``None``: ICL (a fresh task per test context); else IDG (tasks drawn uniformly from
        these rows, normally the pretraining task set).
    teacher : None, str or callable
        The link ``f`` (see :func:`lib.samplers.sample_labels`).
    rho : float
        Label-noise variance (>= 0).
    n_test : int
        Number of test contexts (>= 2), drawn in batches of 20,000 (``MC_BATCH``) with
        the exact sufficient-statistic sampler :func:`lib.samplers.sample_features`; the
        mean and variance are accumulated batch by batch, so memory does not grow with
        ``n_test`` (time does).
    rng : numpy.random.Generator, int or None

    Returns
    -------
    (mean, stderr) : tuple of float
        Sample mean of the squared errors and its standard error ``std / sqrt(n_test)``.

    Notes
    -----
    Used in: :doc:`the model </book/linear/model>`,
    :doc:`the equivalence theorem </book/equivalence/theorem>`.
    """

    gamma = _check_gamma(gamma)
    d = gamma.shape[0]
    ell = check_int("ell", ell, low=1)
    tasks = check_tasks(tasks, d)
    rho = check_rho(rho)
    n_test = check_int("n_test", n_test, low=2)
    check_memory(
        f"mc_error(n_test={n_test}, d={d}, ell={ell})",
        mc_peak_bytes(n_test, d, ell),
        "d and ell (test contexts are drawn in batches of 20,000)",
    )
    return _mc_error(gamma, ell, tasks, as_link(teacher), rho, n_test, as_rng(rng))


def _mc_error(
    gamma: np.ndarray,
    ell: int,
    tasks: np.ndarray | None,
    link: Link,
    rho: float,
    n_test: int,
    rng: np.random.Generator,
) -> tuple[float, float]:
    """Worker of :func:`mc_error`: every argument validated, the teacher resolved."""
    d = gamma.shape[0]
    step = MC_BATCH
    # Running mean and sum of squared deviations over the batches (Chan et al.'s pairwise
    # update), so n_test costs time, not memory.
    count, mean, m2 = 0, 0.0, 0.0
    progress = Progress(f"mc_error(n_test={n_test}, d={d}, ell={ell})", n_test)
    for s in range(0, n_test, step):
        b = min(step, n_test - s)
        batch = sample_features_trusted(b, d, ell, tasks, link, rho, rng)
        err = (batch.targets - _predict(gamma, batch.queries, batch.features)) ** 2
        del batch
        bmean = float(err.mean())
        bm2 = float(np.sum((err - bmean) ** 2))
        total = count + b
        delta = bmean - mean
        mean += delta * (b / total)
        m2 += bm2 + delta * delta * (count * b / total)
        count = total
        progress.update(count)
    return float(mean), float(math.sqrt(m2 / (n_test - 1)) / math.sqrt(n_test))


# ----------------------------------------------------------------------------------------
# 4. one simulation point
# ----------------------------------------------------------------------------------------


def mc_peak_bytes(n_test: int, d: int, ell: int) -> float:
    """Estimated peak memory of :func:`mc_error`: one batch of test contexts and its predictions.

    Parameters
    ----------
    n_test : int
        Number of test contexts.
    d : int
        Dimension.
    ell : int
        Context length.

    Returns
    -------
    float
        Bytes.
    """

    n_test = check_int("n_test", n_test, low=1)
    d, ell = check_int("d", d, low=1), check_int("ell", ell, low=1)
    b = min(n_test, MC_BATCH)
    return features_peak_bytes(b, d, ell) + 8.0 * 3 * b * (d + 1)


#: Largest size (ell, k or n) that :func:`simulate` accepts before the memory guard.
_MAX_SIZE = 2**62


def _size(name: str, value: float, d: int, symbol: str) -> int:
    scale_value = d if symbol != "n" else d * d
    scale = "d" if symbol != "n" else "d^2"
    exact = value * d if symbol != "n" else value * d * d  # the historical rounding order
    if not math.isfinite(exact) or exact > _MAX_SIZE:
        raise ValueError(
            f"{name} = {value!r} gives {symbol} = {name} * {scale} = {exact:.3g} at d = {d}, more than "
            f"any array can hold; {name} must be at most {_MAX_SIZE / scale_value:.3g} here"
            + ("; use kappa = inf for a fresh task per context" if name == "kappa" else "")
        )
    size = int(round(exact))
    if size < 1:
        raise ValueError(
            f"{name} = {value!r} gives {symbol} = round({name} * {scale}) = 0 at d = {d}; "
            f"{name} must be at least 1/{scale} = {1.0 / scale_value:g} here"
        )
    return size


def simulate_peak_bytes(
    d: int,
    ell: int,
    k: int | None,
    n: int,
    lam: float = 0.0,
    method: str = "auto",
    teacher: Any = None,
    n_test: int = 20_000,
) -> float:
    """Estimated peak memory of one :func:`simulate` call, in bytes.

    The task set (``8 k d``, twice while it is normalized), the pretraining features
    (``8 n (2d + 2)``), the larger of the sampler's batch temporaries and the solver's
    extra memory (:func:`fit_peak_bytes`), and for a nonlinear teacher one batch of test
    contexts (:func:`mc_peak_bytes`). Checked against tracemalloc peaks in
    ``tests/test_simulation.py``; at ``d = 400, alpha = 2, tau = 3`` (matfree) it is
    about 4.5 GiB.

    Parameters
    ----------
    d, ell, n : int
        Dimension, context length and number of pretraining contexts.
    k : int or None
        Number of pretraining tasks (None: ``kappa = inf``, no task set).
    lam : float
        Ridge penalty (it decides the solver's memory).
    method : str
        Solver of :func:`lib.attention.fit_gamma`.
    teacher : TeacherLike
        ``None`` (exact errors) needs no test contexts.
    n_test : int
        Number of test contexts of :func:`mc_error`.

    Returns
    -------
    float
        Bytes.
    """

    d, ell, n = (check_int(name, v, low=1) for name, v in (("d", d), ("ell", ell), ("n", n)))
    k = None if k is None else check_int("k", k, low=1)
    tasks = 0.0 if k is None else 16.0 * k * d
    feats = features_peak_bytes(n, d, ell)
    out_only = 8.0 * n * (2 * d + 2)
    train = feats + max(0.0, fit_peak_bytes(n, d, method, lam) - (feats - out_only))
    test = 0.0 if teacher is None else mc_peak_bytes(n_test, d, ell)
    return tasks + max(train, test + 8.0 * d * (d + 1))


def simulate(
    d: int,
    alpha: float,
    kappa: float,
    tau: float,
    rho: float,
    lam: float = 0.0,
    teacher: Any = None,
    rng: Any = None,
    method: str = "auto",
    n_test: int | None = None,
    return_gamma: bool = False,
) -> dict[str, Any]:
    """Pretrain linear attention on one random data set and measure its ICL and IDG errors.

    Draws the pretraining task set (``k = round(kappa d)`` tasks,
    :func:`lib.samplers.sample_task_set`), ``n = round(tau d^2)`` pretraining contexts of
    length ``ell = round(alpha d)`` with the exact sufficient-statistic sampler, fits
    ``Gamma*`` with :func:`fit_gamma` and evaluates it.

    Parameters
    ----------
    d : int
        Token dimension (>= 1).
    alpha, kappa, tau : float
        ``ell / d``, ``k / d`` (``inf`` allowed: a fresh task for every context) and
        ``n / d^2``; each must give a size of at least 1.
    rho : float
        Label-noise variance (>= 0).
    lam : float
        Ridge strength (>= 0; 0 = minimum-norm / ridgeless).
    teacher : None, str or callable
        ``None`` is the linear teacher: the errors are then **exact** given ``Gamma*``
        (:func:`exact_error`, standard errors 0). Any other teacher (including the name
        ``"linear"``) is evaluated by Monte Carlo (:func:`mc_error`) on ``n_test`` fresh test
        contexts for each of ICL and IDG.
    rng : numpy.random.Generator, int or None
        Random source (pass a seed for reproducibility).
    method : str
        Solver of :func:`fit_gamma`.
    n_test : int or None
        Monte Carlo test contexts (default ``N_TEST_DEFAULT = 20,000``); ignored for the
        linear teacher.
    return_gamma : bool
        Also return ``Gamma*`` under ``"gamma"``.

    Returns
    -------
    SimulationResult
        A ``dict`` whose keys are also attributes (``out["icl"]`` or ``out.icl``):
        ``"icl"``, ``"icl_se"``: error on fresh tasks and its standard error;
        ``"idg"``, ``"idg_se"``: error on tasks of the pretraining set. When
        ``kappa = inf`` there is no task set and ``"idg"`` is ``"icl"`` (same number);
        ``"d"``, ``"ell"``, ``"k"`` (``None`` when ``kappa = inf``), ``"n"``,
        ``"p" = d(d+1)``, ``"method"`` (the solver actually used), ``"iterations"`` (CG
        iterations or ``None``), ``"alpha"``, ``"kappa"``, ``"tau"``, ``"rho"``, ``"lam"``,
        ``"n_test"`` (``None`` if exact), ``"seconds"`` (wall time of the whole call), and
        ``"gamma"`` (shape (d, d + 1)) if ``return_gamma``.

    Raises
    ------
    TypeError
        If ``alpha``, ``kappa``, ``tau``, ``rho`` or ``lam`` is an array or list (one
        point per call; use :func:`simulate_many` for grids).
    ValueError
        If ``alpha``, ``kappa`` or ``tau`` gives ``ell``, ``k`` or ``n`` = 0 or a size no
        array can hold (naming the parameter and a value that is accepted), if the
        teacher is refused (not vectorized, non-finite, not square-integrable: the
        checks of :mod:`lib.hermite`), or any argument is out of range.
    lib._checks.MemoryLimitError
        (a ``MemoryError`` and a ``ValueError``) before anything is sampled, if the
        estimated peak memory (:func:`simulate_peak_bytes`) exceeds the limit: 0.8 of the
        memory available at the call, or the environment variable ``LIB_MEMORY_LIMIT``
        (bytes or ``"6GiB"``; ``"none"`` switches the guard off). The message names the
        argument behind the largest part of the estimate. The book's largest job
        (``d = 400, alpha = 2, tau = 3``, matfree, 10^6 test contexts) is estimated at
        4.4 GiB.

    Notes
    -----
    Cost at ``d = 200, tau = 2, alpha = 2`` (matfree, 51 CG iterations): 21 s and 0.5 GiB
    with one BLAS thread (bench/bench_solvers.py). With two BLAS threads on the shared
    2-core machine while other jobs run, the same call took 70-90 s: OpenBLAS threads
    waiting for each other in the many medium-sized products of CG; set
    ``OPENBLAS_NUM_THREADS=1`` on a busy machine.
    Used in: :doc:`learning curves </book/linear/learning_curves>`,
    :doc:`the equivalence theorem </book/equivalence/theorem>`,
    :doc:`testing the equivalence </book/equivalence/verification>`.

    Examples
    --------
    >>> import numpy as np
    >>> from lib.theory import icl_error
    >>> out = simulate(d=20, alpha=2.0, kappa=np.inf, tau=4.0, rho=0.1, rng=0)
    >>> round(out.icl, 3), out["icl_se"], out.method  # exact error of the fitted Gamma
    (0.627, 0.0, 'dense')
    >>> round(icl_error(2.0, np.inf, 4.0, 0.1), 3)  # its d -> infinity limit
    0.606
    """

    t0 = time.perf_counter()
    d = check_int("d", d, low=1)
    alpha = check_param("alpha", alpha, scalar=True)
    kappa = check_param("kappa", kappa, scalar=True)
    tau = check_param("tau", tau, scalar=True)
    rho = check_rho(rho)
    lam = check_param("lam", lam, scalar=True)
    method = check_choice("method", method, METHODS)
    if n_test is None:
        n_test = N_TEST_DEFAULT
    n_test = check_int("n_test", n_test, low=2)
    ell = _size("alpha", alpha, d, "ell")
    k = None if math.isinf(kappa) else _size("kappa", kappa, d, "k")
    n = _size("tau", tau, d, "n")
    # the one resolution of the teacher (a user's callable is probed here, once): a bad
    # teacher (e.g. not square-integrable) is refused before anything is drawn
    link = as_link(teacher)
    exact = teacher is None  # the linear teacher given as None: exact errors, no test contexts
    # name the argument behind the largest part of the estimate
    parts = {
        f"kappa (k = kappa d = {k or 0:,} tasks; kappa = inf needs no task set)": 16.0 * (k or 0) * d,
        f"alpha (context length ell = alpha d = {ell:,})": 40.0 * ell * min(n, max(1, 50_000_000 // (40 * ell))),
        f"d and tau (n = tau d^2 = {n:,} contexts, p = d(d+1) = {d * (d + 1):,} parameters)": 8.0 * n * (2 * d + 2)
        + fit_peak_bytes(n, d, method, lam),
    }
    check_memory(
        f"simulate(d={d}, alpha={alpha:g}, kappa={kappa:g}, tau={tau:g}, method={method!r})",
        simulate_peak_bytes(d, ell, k, n, lam, method, None if exact else link, n_test),
        max(parts, key=parts.get),
    )
    rng = as_rng(rng)

    tasks = sample_task_set(d, kappa, rng)
    batch = sample_features_trusted(n, d, ell, tasks, link, rho, rng)
    gamma, info = fit_gamma(batch.queries, batch.features, batch.targets, lam=lam, method=method, return_info=True)
    del batch
    if exact:
        icl, icl_se = exact_error(gamma, ell, rho), 0.0
        idg, idg_se = (icl, 0.0) if tasks is None else (exact_error(gamma, ell, rho, tasks), 0.0)
    else:
        icl, icl_se = _mc_error(gamma, ell, None, link, rho, n_test, rng)
        idg, idg_se = (icl, icl_se) if tasks is None else _mc_error(gamma, ell, tasks, link, rho, n_test, rng)
    out = SimulationResult(
        {
            "icl": icl,
            "icl_se": icl_se,
            "idg": idg,
            "idg_se": idg_se,
            "d": d,
            "ell": ell,
            "k": k,
            "n": n,
            "p": d * (d + 1),
            "method": info["method"],
            "iterations": info.get("iterations"),
            "alpha": alpha,
            "kappa": kappa,
            "tau": tau,
            "rho": rho,
            "lam": lam,
            "n_test": None if exact else n_test,
        }
    )
    if return_gamma:
        out["gamma"] = gamma
    out["seconds"] = time.perf_counter() - t0
    return out


# ----------------------------------------------------------------------------------------
# 5. many simulation points, several draws each
# ----------------------------------------------------------------------------------------


def _as_grid(name: str, value: Any) -> np.ndarray:
    """A scalar or a 1-D array of parameter values, as a 1-D float array."""
    arr = np.atleast_1d(check_real(name, value, allow_inf=(name == "kappa")))
    if arr.ndim != 1 or arr.size < 1:
        raise ValueError(f"{name} must be a scalar or a non-empty 1-D array; got shape {np.shape(value)}")
    return arr.astype(float)


def simulate_many(
    d: int,
    alpha: Any,
    kappa: Any,
    tau: Any,
    rho: Any,
    lam: Any = 0.0,
    teacher: Any = None,
    *,
    draws: int = 3,
    rng: Any = None,
    method: str = "auto",
    n_test: int | None = None,
) -> dict[str, Any]:
    """Run :func:`simulate` at several parameter points, ``draws`` times each, and average.

    The parameters ``alpha, kappa, tau, rho, lam`` are scalars or 1-D arrays; the arrays
    must all have the same length ``m`` and the scalars are repeated (all scalars: one
    point, ``m = 1``). ``d``, ``teacher``, ``method`` and ``n_test`` are shared by every
    point. Point ``i``, draw ``j`` runs
    ``simulate(d, alpha[i], kappa[i], tau[i], rho[i], lam[i], teacher,
    rng=numpy.random.default_rng(children[i * draws + j]), ...)`` with the independent
    child seeds ``children = SeedSequence.spawn(m * draws)`` of the seed sequence behind
    ``rng`` (for an integer seed ``s``: ``numpy.random.SeedSequence(s).spawn(m * draws)``;
    for a generator: ``rng.bit_generator.seed_seq.spawn(m * draws)``, as
    :meth:`numpy.random.Generator.spawn` does). So every run has its own stream, the
    result does not depend on the order of the runs, and one run can be repeated alone.

    Parameters
    ----------
    d : int
        Token dimension (>= 1), the same at every point.
    alpha, kappa, tau, rho, lam : float or array_like, shape (m,)
        As in :func:`simulate` (``kappa`` may be ``inf``); broadcast together.
    teacher : None, str or callable
        As in :func:`simulate` (``None``: linear teacher, exact errors).
    draws : int, keyword-only
        Independent pretraining runs per point (>= 1).
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, keyword-only
        Source of the child seeds (pass an integer seed for reproducibility).
    method : str, keyword-only
        Solver of :func:`fit_gamma`.
    n_test : int or None, keyword-only
        Monte Carlo test contexts per run (nonlinear teachers; see :func:`simulate`).

    Returns
    -------
    SimulationResult
        A ``dict`` whose keys are also attributes (``out["icl"]`` or ``out.icl``):
        ``"icl"``, ``"idg"`` (shape (m,)): means over the draws;
        ``"icl_se"``, ``"idg_se"`` (shape (m,)): standard errors of these means,
        ``std(ddof=1) / sqrt(draws)``; with ``draws = 1`` the Monte Carlo standard error
        of the single run reported by :func:`simulate` (0 for the linear teacher);
        ``"icl_draws"``, ``"idg_draws"`` (shape (m, draws)): every run;
        ``"alpha"``, ``"kappa"``, ``"tau"``, ``"rho"``, ``"lam"`` (shape (m,)): the
        broadcast parameters; ``"d"``, ``"draws"`` and ``"seconds"`` (wall time).

    Raises
    ------
    ValueError, TypeError
        ``draws`` not an integer >= 1, parameter arrays that are not 1-D or have
        different lengths, and everything :func:`simulate` rejects (naming the argument).

    Notes
    -----
    Cost: ``m * draws`` calls of :func:`simulate`, run one after the other.
    Used in: :doc:`learning curves </book/linear/learning_curves>`,
    :doc:`finite pretraining data </book/regimes/finite_data>`,
    :doc:`task diversity </book/regimes/task_diversity>`.
    """
    t0 = time.perf_counter()
    d = check_int("d", d, low=1)
    draws = check_int("draws", draws, low=1)
    names = ("alpha", "kappa", "tau", "rho", "lam")
    grids = [_as_grid(name, value) for name, value in zip(names, (alpha, kappa, tau, rho, lam))]
    lengths = {g.size for g in grids if g.size > 1}
    if len(lengths) > 1:
        given = ", ".join(f"{n}: {g.size}" for n, g in zip(names, grids) if g.size > 1)
        raise ValueError(
            f"alpha, kappa, tau, rho and lam must be scalars or 1-D arrays of one length; got lengths {given}"
        )
    m = lengths.pop() if lengths else 1
    grids = [np.broadcast_to(g, (m,)).copy() for g in grids]
    # resolved once for every run (a callable probed once); None stays None: exact errors
    teacher = None if teacher is None else as_link(teacher)
    where = f"simulate_many(d={d}, draws={draws}, {m} points)"
    # one child seed sequence (about 1 KiB) and two results per run
    check_memory(where, 1040.0 * m * draws, "draws and the number of points")
    children = as_rng(rng).bit_generator.seed_seq.spawn(m * draws)
    progress = Progress(where, m * draws)
    out = SimulationResult()
    for key in ("icl", "idg"):
        out[key + "_draws"] = np.empty((m, draws))
        out[key + "_se"] = np.empty(m)
    for i in range(m):
        for j in range(draws):
            progress.update(i * draws + j)
            r = simulate(
                d,
                *(g[i] for g in grids),
                teacher=teacher,
                rng=np.random.default_rng(children[i * draws + j]),
                method=method,
                n_test=n_test,
            )
            for key in ("icl", "idg"):
                out[key + "_draws"][i, j] = r[key]
                if draws == 1:
                    out[key + "_se"][i] = r[key + "_se"]
    for key in ("icl", "idg"):
        runs = out[key + "_draws"]
        out[key] = runs.mean(axis=1)
        if draws > 1:
            out[key + "_se"] = runs.std(axis=1, ddof=1) / math.sqrt(draws)
    out.update(zip(names, grids))
    out.update(d=d, draws=draws, seconds=time.perf_counter() - t0)
    return out
