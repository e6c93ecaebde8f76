"""Stored training sweeps and probes of trained predictions (numpy only, no JAX).

- :func:`load_runs` and :func:`summarize_runs`: the training sweeps
  ``lib/data/training_*.csv`` made by ``scripts/make_training.py`` (chapter 7 reads
  them; loading them does not import JAX);
- :func:`probe_features` and :func:`probe`: what a trained model's predictions are a
  function of (linear-attention features and the quadratic feature ``x_q^T M x_q``).

The training itself is :mod:`lib.training` and :mod:`lib.transformers`; the stored loss
curves are read by :mod:`lib.loss_curves`.

Used in: :doc:`chapter 7 </book/trained/networks>`.
"""

from __future__ import annotations

import importlib.resources
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from lib._checks import as_float_array, check_context_arrays

from . import _csvfile
from ._checks import check_real, check_scalar

__all__ = [
    "DATA_DIR", "RUN_COLUMNS", "load_runs", "probe", "probe_features", "summarize_runs", "select_runs", "sweep_arrays",
    "welch_interval",
]  # fmt: skip

#: Folder of the stored training sweeps (``training_<experiment>.csv/.json``).
DATA_DIR: Path = Path(str(importlib.resources.files("lib").joinpath("data")))


# ----------------------------------------------------------------------------------------
# input checks shared with lib.training
# ----------------------------------------------------------------------------------------


# 3. probes: what the predictions are a function of
# ----------------------------------------------------------------------------------------


def probe_features(X: Any, y: Any, x_query: Any, tasks: Any = None) -> dict[str, np.ndarray]:
    """Candidate features of a context that a trained model's prediction may use.

    - ``"linear"``: ``x_q^T u`` with ``u = (d/ell) sum_i y_i x_i`` (what linear attention
      with ``Gamma_1 = I`` computes; its signal is the linear Hermite part ``a_1``);
    - ``"quadratic"``: ``x_q^T M x_q`` with ``M = (1/ell) sum_i y_i (d x_i x_i^T - I)``,
      the one-step spectral estimator that sees the ``h_2`` part of the teacher
      (``E[M | w] = sqrt(2) a_2 (w w^T - I)/d`` up to normalization);
    - ``"q"``: ``(1/ell) sum_i y_i^2``; ``"mean"``: ``(1/ell) sum_i y_i``;
    - context-free: ``"norm2"``: ``|x_q|^2`` and ``"norm"``: ``|x_q|`` (for h2,
      ``E[y | x_q] = (|x_q|^2 - 1)/sqrt(2)``);
    - oracle, when the contexts' tasks ``w`` are given: ``"h1"`` ... ``"h4"``: the
      normalized Hermite polynomials ``h_k(x_q^T w) = He_k(x_q^T w)/sqrt(k!)`` of the
      query's projection on its task (what the Bayes predictor of a known task uses).

    Parameters
    ----------
    X : array_like, shape (n, ell, d)
    y : array_like, shape (n, ell)
    x_query : array_like, shape (n, d)
    tasks : array_like, shape (n, d), optional
        The task ``w`` of each context (for the oracle features).

    Returns
    -------
    dict of numpy.ndarray
        The features above, keyed ``"linear"``, ``"quadratic"``, ``"q"``, ``"mean"``,
        ``"norm2"``, ``"norm"`` (and ``"h1"`` ... ``"h4"`` with ``tasks``), each of shape (n,).
    """
    X, y, x_query = check_context_arrays(X, y, x_query)
    _, ell, d = X.shape
    proj = np.einsum("nld,nd->nl", X, x_query)  # x_i^T x_q
    quad = d * np.einsum("nl,nl->n", y, proj**2) / ell - np.einsum("nl->n", y) / ell * np.einsum(
        "nd,nd->n", x_query, x_query
    )
    return {
        "linear": d * np.einsum("nl,nl->n", y, proj) / ell,
        "quadratic": quad,
        "q": np.einsum("nl,nl->n", y, y) / ell,
        "mean": y.mean(axis=1),
        **_query_features(x_query, tasks),
    }


def probe(predictions: Any, features: dict[str, np.ndarray], names: tuple[str, ...]) -> dict[str, Any]:
    """Least-squares fit of ``predictions`` on an intercept and the named features.

    Parameters
    ----------
    predictions : array_like, shape (n,)
        A model's predictions on ``n`` contexts; finite.
    features : dict
        :func:`probe_features` of the same contexts; each named feature a finite array
        of shape (n,).
    names : tuple of str
        Which features to regress on.

    Returns
    -------
    dict
        ``"coef"`` (intercept first), ``"r2"`` (fraction of the predictions' variance
        explained, ``1 - Var(residual) / Var(predictions)``), ``"names"`` and
        ``"r2_note"``. When the predictions are constant (their variance is zero up to
        rounding) the fraction is 0/0: ``"r2"`` is then NaN and ``"r2_note"`` says why
        (the intercept alone fits them exactly); otherwise ``"r2_note"`` is ``""``.

    Raises
    ------
    ValueError
        If ``predictions`` or a named feature has a NaN or infinite entry (the message
        names the feature and the first such entry), a feature's shape differs from the
        predictions', ``names`` is empty or names an unknown feature.
    """
    p = as_float_array("predictions", predictions, 1)
    if not names:
        raise ValueError("names must list at least one feature")
    unknown = [k for k in names if k not in features]
    if unknown:
        raise ValueError(f"names must be keys of features {sorted(features)}; got {unknown}")
    columns = [np.ones_like(p)]
    for k in names:
        try:
            col = np.asarray(features[k], dtype=float)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"features[{k!r}] must be an array of real numbers; got {type(features[k]).__name__}"
            ) from exc
        if col.shape != p.shape:
            raise ValueError(f"features[{k!r}] must have shape {p.shape} like predictions; got {col.shape}")
        bad = ~np.isfinite(col)
        if np.any(bad):
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"features[{k!r}] must be finite; entry {i} is {float(col[i])!r} ({int(bad.sum())} non-finite entries)"
            )
        columns.append(col)
    A = np.column_stack(columns)
    coef, *_ = np.linalg.lstsq(A, p, rcond=None)
    resid = p - A @ coef
    var = float(p.var())
    if var <= (1e-14 * float(np.max(np.abs(p)))) ** 2:  # constant, up to rounding
        r2, note = math.nan, "the predictions are constant: R^2 is 0/0, undefined (the intercept fits them exactly)"
    else:
        r2, note = float(1.0 - resid.var() / var), ""
    return {"coef": coef, "r2": r2, "names": ("intercept",) + tuple(names), "r2_note": note}


# ----------------------------------------------------------------------------------------
# 4. stored sweeps
# ----------------------------------------------------------------------------------------


#: Columns of ``lib/data/training_<experiment>.csv`` (``COLUMNS`` of ``scripts/make_training.py``).
RUN_COLUMNS: tuple[str, ...] = (
    "experiment", "experiment_index", "config_index", "label", "kind", "teacher", "d", "alpha", "kappa", "tau",
    "rho", "width", "layers", "steps", "batch", "lr", "init_scale", "optimizer", "draw", "seed", "n_test", "ell",
    "n", "icl", "icl_se", "icl_ls", "icl_ls_se", "gamma_rel_diff", "gamma_norm", "gamma_norm_ls", "icl_wmn",
    "icl_wmn_se", "gamma_rel_diff_wmn", "final_loss", "seconds",
)  # fmt: skip
_RUN_STR = frozenset({"experiment", "label", "kind", "teacher", "optimizer"})
#: Integer columns and their smallest allowed value.
_RUN_INT_LOW = {
    "experiment_index": 0, "config_index": 0, "d": 1, "width": 0, "layers": 1, "steps": 1, "batch": 0,
    "draw": 0, "seed": 0, "n_test": 2, "ell": 1, "n": 1,
}  # fmt: skip
#: The model's and the optimizer's parameters, which are never negative.
_PARAMETERS = frozenset({"alpha", "kappa", "tau", "rho", "lr", "init_scale", "tune_alpha"})
_RUN_NONNEGATIVE = _PARAMETERS | {"icl", "icl_se", "icl_ls", "icl_ls_se", "icl_wmn", "icl_wmn_se", "seconds"}
#: Columns measured only for ``kind == "linear_attention"`` rows (empty in the others).
_RUN_LA_ONLY = (
    "icl_ls", "icl_ls_se", "gamma_rel_diff", "gamma_norm", "gamma_norm_ls", "icl_wmn", "icl_wmn_se",
    "gamma_rel_diff_wmn",
)  # fmt: skip
#: The columns that define a configuration (everything the script trains with but the draw and seed).
_RUN_CONFIG = RUN_COLUMNS[: RUN_COLUMNS.index("draw")] + ("n_test",)
#: Two rows with equal keys are one row written twice.
_RUN_KEYS = (
    (lambda r: tuple(r[k] for k in _RUN_CONFIG) + (r["seed"],), "same configuration and seed"),
    (lambda r: tuple(r[k] for k in _RUN_CONFIG) + (r["draw"],), "same configuration and draw"),
    (
        lambda r: tuple(r[k] for k in ("experiment", "label", "kind", "d", "alpha", "draw")),
        "same label, kind, d, alpha and draw: the key make_training.py resumes by",
    ),
)


def _convert_run(name: str, text: str, where: str) -> Any:
    """One field of a training sweep as its Python value; ValueError naming where and the column."""
    if name in _RUN_STR:
        return _csvfile.to_text(name, text, where)
    if name in _RUN_INT_LOW:
        return _csvfile.to_int(name, text, where, low=_RUN_INT_LOW[name])
    if name in _RUN_LA_ONLY and text == "":
        return None  # not measured for this kind (checked by _check_run)
    return _csvfile.to_float(name, text, where, allow_inf=name == "kappa", nonnegative=name in _RUN_NONNEGATIVE)


def _check_run(row: dict[str, Any], where: str) -> None:
    """The columns measured only for linear attention are present exactly in its rows."""
    la = row["kind"] == "linear_attention"
    for name in _RUN_LA_ONLY:
        if la and row[name] is None:
            raise ValueError(f"{where}: {name}: empty; a linear_attention row must have a number")
        if not la and row[name] is not None:
            raise ValueError(
                f"{where}: {name}: {row[name]!r} in a {row['kind']!r} row; only linear_attention rows have it "
                "(a shifted field?)"
            )


def _run_file(experiment: Any, data_dir: Any, example: str) -> Path:
    """The CSV file ``training_<experiment>.csv`` of a stored sweep, checked to exist."""
    if not isinstance(experiment, str) or not experiment:
        raise ValueError(f"experiment must be a non-empty str such as {example!r}; got {experiment!r}")
    path = Path(DATA_DIR if data_dir is None else data_dir) / f"training_{experiment}.csv"
    if not path.exists():
        raise ValueError(f"experiment {experiment!r}: no file {path}; run scripts/make_training.py {experiment}")
    return path


def load_runs(experiment: str, data_dir: Any = None) -> list[dict[str, Any]]:
    """Rows of the stored training sweep ``training_<experiment>.csv``, every field checked.

    The file must have the columns :data:`RUN_COLUMNS` (written by
    ``scripts/make_training.py``). Integer columns (``experiment_index, config_index, d,
    width, layers, steps, batch, draw, seed, n_test, ell, n``) are read as exact Python
    ints (at most ``2**63 - 1``, an int64), so a 63-bit ``seed`` reruns the same
    network; ``kappa`` may be ``inf``; every
    other number must be finite (the parameters ``alpha, kappa, tau, rho, lr,
    init_scale``, errors, standard errors and times ``>= 0``). The
    columns ``icl_ls, icl_ls_se, gamma_rel_diff, gamma_norm, gamma_norm_ls, icl_wmn,
    icl_wmn_se, gamma_rel_diff_wmn`` are measured for ``kind == "linear_attention"`` only:
    they are numbers in those rows and empty (read as None) in the others.

    A configuration (every column before ``draw``, and ``n_test``) has at most one row
    per seed and per draw: a repeated row, even an exact copy, is refused, never counted
    as another seed. ``scripts/make_training.py`` never writes one (a resumed run skips
    the rows the file has, and ``--merge-from`` appends only the missing ones), so a
    repeated row is a corruption.

    Parameters
    ----------
    experiment : str
        Name of the experiment in ``scripts/make_training.py`` (``"transformers"``,
        ``"linear_attention"``).
    data_dir : path-like, optional
        Folder of the CSV files (default ``DATA_DIR``, this module's).

    Returns
    -------
    list of dict
        One dict per row, keyed by :data:`RUN_COLUMNS`: text columns as str, integer
        columns as int, the others as float (or None, see above).

    Raises
    ------
    ValueError
        If there is no such file, or the file is not valid: the message is
        ``"<path>:<line>: <column>: <problem>"`` (the header is line 1). Invalid are: a
        header other than :data:`RUN_COLUMNS` or repeated, a row with a missing or an
        extra field, a last line without a line break (a file cut, possibly inside its
        last number), fewer or more rows than the JSON sidecar records (or a sidecar whose
        row count is not a non-negative integer), a non-integer in an integer column
        (``12.0``, ``1e3``) or one beyond int64, an unparsable number, NaN or an infinity where a finite
        number is required, a negative parameter, error or time, a linear-attention
        column filled in the wrong kind of row or left empty, and a repeated row (both
        lines are named), a text with a control character, a row of another experiment.
    """
    path = _run_file(experiment, data_dir, "transformers")

    def check_row(row: dict[str, Any], where: str) -> None:
        if row["experiment"] != experiment:
            raise ValueError(f"{where}: experiment: {row['experiment']!r} in the file of experiment {experiment!r}")
        _check_run(row, where)

    return _csvfile.read_rows(path, RUN_COLUMNS, _convert_run, check_row=check_row, keys=_RUN_KEYS)


def summarize_runs(rows: list[dict[str, Any]], by: tuple[str, ...], value: str = "icl") -> list[dict[str, Any]]:
    """Mean, standard error and count of ``value`` over the seeds of each group of rows.

    Parameters
    ----------
    rows : list of dict
        :func:`load_runs` rows (possibly filtered).
    by : tuple of str
        Columns that define a group (e.g. ``("kind", "teacher", "d", "alpha")``).
    value : str
        The column to average.

    Returns
    -------
    list of dict
        One dict per group, sorted by ``by``: the ``by`` columns, ``"mean"``, ``"se"``
        (standard deviation over the rows of the group divided by the square root of
        their number; NaN for one row) and ``"count"``.
    """
    groups: dict[tuple, list[float]] = {}
    for r in rows:
        try:
            key = tuple(r[k] for k in by)
        except KeyError as exc:
            raise ValueError(f"by must name columns of the rows; {exc.args[0]!r} is not one") from exc
        groups.setdefault(key, []).append(float(r[value]))
    out = []
    for key in sorted(groups):
        v = np.asarray(groups[key])
        se = float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else math.nan
        out.append({**dict(zip(by, key)), "mean": float(v.mean()), "se": se, "count": int(v.size)})
    return out


# ----------------------------------------------------------------------------------------
# 5. selections of the sweeps and their uncertainties (chapter 7)
# ----------------------------------------------------------------------------------------


def select_runs(rows: list[dict[str, Any]], **equal: Any) -> list[dict[str, Any]]:
    """The rows whose columns equal the given values.

    Parameters
    ----------
    rows : list of dict
        :func:`load_runs` rows.
    **equal
        Column names and the value each must have (``teacher="h2", alpha=4.0``); two
        integers are compared exactly (a seed), other numbers as floats.

    Returns
    -------
    list of dict
        The matching rows, in their order.

    Raises
    ------
    ValueError
        If a column is not in the rows.
    """
    if not isinstance(rows, list):
        raise TypeError(f"rows must be a list of dict (load_runs rows); got {type(rows).__name__}")
    known = set().union(*(r.keys() for r in rows)) if rows else set()
    unknown = sorted(set(equal) - known)
    if rows and unknown:
        raise ValueError(f"the columns {unknown} are not in the rows; columns: {sorted(known)}")

    def same(a: Any, b: Any) -> bool:
        ints = (int, np.integer)
        if isinstance(a, ints) and isinstance(b, ints) and not isinstance(a, bool) and not isinstance(b, bool):
            return int(a) == int(b)  # exact: 63-bit seeds differ below float precision
        if isinstance(b, (int, float, np.integer, np.floating)) and not isinstance(b, bool):
            try:
                return float(a) == float(b)
            except (TypeError, ValueError):
                return False
        return a == b

    return [r for r in rows if all(same(r.get(k), v) for k, v in equal.items())]


def sweep_arrays(
    rows: list[dict[str, Any]], by: str, value: str = "icl", level: float = 0.95, **equal: Any
) -> dict[str, np.ndarray]:
    r"""Per-group mean, standard error and Student-t interval over the seeds, as arrays.

    The rows matching ``equal`` (:func:`select_runs`) are grouped by the column ``by``
    (:func:`summarize_runs`). For a group of :math:`m` seeds with mean :math:`\bar e` and
    standard error :math:`s`, the interval is :math:`\bar e \pm t_{m-1}\, s` with
    :math:`t_{m-1}` the two-sided ``level`` quantile of Student's t with :math:`m - 1`
    degrees of freedom.

    Parameters
    ----------
    rows : list of dict
        :func:`load_runs` rows.
    by : str
        The column that indexes the result (e.g. ``"alpha"`` or ``"d"``).
    value : str
        The column to average (default ``"icl"``).
    level : float
        Confidence level of the interval, in (0, 1).
    **equal
        The selection, as in :func:`select_runs`.

    Returns
    -------
    dict of numpy.ndarray
        ``by`` (sorted), ``"mean"``, ``"se"``, ``"count"`` and ``"half"`` (the half-width
        of the t-interval; NaN for a group of one seed).

    Raises
    ------
    ValueError
        If nothing matches, or ``level`` is not in (0, 1).

    Notes
    -----
    Used in: :doc:`trained networks </book/trained/networks>`.
    """
    level = check_scalar("level", level, low=0.0, high=1.0, low_open=True, high_open=True)
    chosen = select_runs(rows, **equal)
    if not chosen:
        raise ValueError(f"no rows match {equal!r}")
    groups = summarize_runs(chosen, (by,), value)
    out = {k: np.array([g[k] for g in groups], dtype=float) for k in (by, "mean", "se")}
    out["count"] = np.array([g["count"] for g in groups], dtype=int)
    with np.errstate(invalid="ignore"):
        tq = np.where(out["count"] > 1, stats.t.ppf(0.5 + level / 2, np.maximum(out["count"] - 1, 1)), np.nan)
    out["half"] = tq * out["se"]
    return out


def welch_interval(
    mean_a: Any, se_a: Any, n_a: Any, mean_b: Any, se_b: Any, n_b: Any, level: float = 0.95
) -> dict[str, np.ndarray]:
    r"""Difference of two means with its Welch standard error, degrees of freedom and t-interval.

    For means :math:`\bar a, \bar b` with standard errors :math:`s_a, s_b` over
    :math:`n_a, n_b` independent draws, the difference :math:`\bar a - \bar b` has standard
    error :math:`s = \sqrt{s_a^2 + s_b^2}` and Welch–Satterthwaite degrees of freedom
    :math:`\nu = s^4 / (s_a^4/(n_a - 1) + s_b^4/(n_b - 1))`; the interval is
    :math:`\bar a - \bar b \pm t_\nu s`. Pass ``n = inf`` for a mean whose standard error
    rests on very many draws (a Monte Carlo average): its term then drops out of
    :math:`\nu`.

    Parameters
    ----------
    mean_a, se_a, n_a : float or array_like
        First mean, its standard error (>= 0) and its number of draws (> 1, or inf).
    mean_b, se_b, n_b : float or array_like
        The same for the second mean (broadcast against the first).
    level : float
        Confidence level, in (0, 1).

    Returns
    -------
    dict of numpy.ndarray
        ``"diff"``, ``"se"``, ``"dof"``, ``"half"`` (half-width of the interval),
        ``"t"`` (``diff / se``) and ``"p"`` (two-sided p-value of ``diff = 0``).

    Raises
    ------
    ValueError
        If a standard error is negative, a count is not > 1, both standard errors are
        zero, or ``level`` is not in (0, 1).

    Notes
    -----
    Used in: :doc:`trained networks </book/trained/networks>`.
    """
    level = check_scalar("level", level, low=0.0, high=1.0, low_open=True, high_open=True)
    ma, mb = check_real("mean_a", mean_a), check_real("mean_b", mean_b)
    sa, sb = check_real("se_a", se_a, low=0.0), check_real("se_b", se_b, low=0.0)
    na = check_real("n_a", n_a, low=1.0, low_open=True, allow_inf=True)
    nb = check_real("n_b", n_b, low=1.0, low_open=True, allow_inf=True)
    ma, mb, sa, sb, na, nb = np.broadcast_arrays(ma, mb, sa, sb, na, nb)
    se = np.hypot(sa, sb)
    if np.any(se == 0):
        raise ValueError(f"se_a and se_b must not both be 0; got {se_a!r} and {se_b!r}")
    denom = sa**4 / (na - 1.0) + sb**4 / (nb - 1.0)
    with np.errstate(divide="ignore"):
        dof = np.where(denom > 0, se**4 / np.where(denom > 0, denom, 1.0), np.inf)
    diff = ma - mb
    t = diff / se
    return {
        "diff": diff,
        "se": se,
        "dof": dof,
        "half": stats.t.ppf(0.5 + level / 2, dof) * se,
        "t": t,
        "p": 2.0 * stats.t.sf(np.abs(t), dof),
    }


# ----------------------------------------------------------------------------------------
# 6. the controls and full_la sweeps: paired differences on a common test set
# ----------------------------------------------------------------------------------------

__all__ += ["paired_gain", "paired_difference"]


def _t_summary(v: np.ndarray, level: float) -> dict[str, Any]:
    m = int(v.size)
    se = float(v.std(ddof=1) / math.sqrt(m)) if m > 1 else math.nan
    dof = m - 1
    half = float(stats.t.ppf(0.5 + level / 2, dof) * se) if m > 1 else math.nan
    t = float(v.mean() / se) if m > 1 and se > 0 else math.nan
    p = float(2.0 * stats.t.sf(abs(t), dof)) if m > 1 and se > 0 else math.nan
    return {"mean": float(v.mean()), "se": se, "dof": dof, "half": half, "t": t, "p": p, "count": m}


def paired_gain(
    rows: list[dict[str, Any]], column: str = "diff_cf", level: float = 0.95, **equal: Any
) -> dict[str, Any]:
    r"""Mean over seeds of a per-row paired difference on the common test set, with its t-interval.

    The sweeps ``controls`` and ``full_la`` of ``scripts/make_training.py`` test every
    row on one common test set per (teacher, d, alpha) and store, per row, the mean over
    that test set of the paired difference ``e_model - e_baseline`` of squared errors
    (``diff_cf``: the context-free predictor ``E[y | x_q]``; ``diff_hand``: the hand-made
    in-context estimator; ``diff_gamma``: ``fit_gamma``'s Gamma on as many contexts;
    ``diff_ls``: the least-squares Gamma on the same pretraining set) and its test-set
    standard error ``<column>_se``. For the ``m`` matching rows (seeds) with differences
    :math:`\Delta_s` this returns :math:`\bar\Delta \pm t_{m-1}\, s/\sqrt m` (:math:`s` the
    standard deviation over seeds): the uncertainty from training. The test set is shared
    by the seeds, so its own uncertainty does not average out; it is reported apart as
    ``"test_se"``, the root mean square of the rows' ``<column>_se``.

    Parameters
    ----------
    rows : list of dict
        :func:`load_runs` rows.
    column : str
        A paired-difference column (``"diff_cf"``, ``"diff_hand"``, ``"diff_gamma"``,
        ``"diff_ls"``).
    level : float
        Confidence level, in (0, 1).
    **equal
        The selection (:func:`select_runs`), e.g. ``kind="softmax", teacher="h2", d=8,
        alpha=4, series="alpha"``; it should leave one row per seed.

    Returns
    -------
    dict
        ``"mean"``, ``"se"`` (over seeds), ``"dof"`` (``m - 1``), ``"half"`` (half-width of
        the t-interval), ``"t"``, ``"p"`` (two-sided, of a zero mean), ``"count"`` and
        ``"test_se"``. A negative mean: the model's error is below the baseline's.

    Raises
    ------
    ValueError
        If nothing matches, a matching row lacks the column, two rows share a seed
        (``draw``), or ``level`` is not in (0, 1).

    Notes
    -----
    Used in: :doc:`trained networks </book/trained/networks>`.
    """
    level = check_scalar("level", level, low=0.0, high=1.0, low_open=True, high_open=True)
    chosen = select_runs(rows, **equal)
    if not chosen:
        raise ValueError(f"no rows match {equal!r}")
    draws = [r.get("draw") for r in chosen]
    if len(set(draws)) != len(draws):
        raise ValueError(f"the selection {equal!r} has several rows per draw {sorted(draws)}; select further")
    try:
        v = np.array([float(r[column]) for r in chosen])
        se = np.array([float(r.get(column + "_se", math.nan)) for r in chosen])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"column must be a numeric paired-difference column of the rows; got {column!r}") from exc
    out = _t_summary(v, level)
    out["test_se"] = float(np.sqrt(np.mean(se**2)))
    return out


def paired_difference(
    rows: list[dict[str, Any]],
    a: dict[str, Any],
    b: dict[str, Any],
    value: str = "icl",
    pair_by: tuple[str, ...] = ("draw",),
    level: float = 0.95,
    **equal: Any,
) -> dict[str, Any]:
    r"""Difference of ``value`` between two selections, paired by seed, with its t-interval.

    The rows matching ``equal`` and ``a`` and those matching ``equal`` and ``b`` are
    paired by the columns ``pair_by`` (the draw: in ``controls`` and ``full_la`` the rows
    of one draw share the training seed, and every row of a (teacher, d, alpha) the test
    set). For ``m`` pairs with differences :math:`\Delta_s = a_s - b_s` the result is
    :math:`\bar\Delta \pm t_{m-1}\, s/\sqrt m` with :math:`m - 1` degrees of freedom.

    Parameters
    ----------
    rows : list of dict
        :func:`load_runs` rows.
    a, b : dict
        The two selections (e.g. ``{"kind": "softmax"}`` and ``{"kind": "none"}``).
    value : str
        The column compared (default ``"icl"``).
    pair_by : tuple of str
        Columns that identify a pair.
    level : float
        Confidence level, in (0, 1).
    **equal
        The selection common to both (e.g. ``teacher="h2", d=8, alpha=4, series="alpha"``).

    Returns
    -------
    dict
        ``"mean"`` (of ``a - b``), ``"se"``, ``"dof"``, ``"half"``, ``"t"``, ``"p"``,
        ``"count"`` (pairs) and ``"pairs"`` (the ``pair_by`` values used, sorted).

    Raises
    ------
    ValueError
        If a side has two rows with the same ``pair_by`` values, no pair is complete, or
        ``level`` is not in (0, 1).

    Notes
    -----
    Unpaired rows (a seed present on one side only) are left out. Used in:
    :doc:`trained networks </book/trained/networks>`.
    """
    level = check_scalar("level", level, low=0.0, high=1.0, low_open=True, high_open=True)
    if not isinstance(a, dict) or not isinstance(b, dict):
        raise TypeError(f"a and b must be dicts of column values; got {type(a).__name__} and {type(b).__name__}")
    sides = []
    for name, sel in (("a", a), ("b", b)):
        chosen = select_runs(rows, **{**equal, **sel})
        by_key: dict[tuple, float] = {}
        for r in chosen:
            key = tuple(r.get(k) for k in pair_by)
            if key in by_key:
                raise ValueError(f"selection {name} = {sel!r} (with {equal!r}) has two rows with {pair_by} = {key}")
            by_key[key] = float(r[value])
        sides.append(by_key)
    keys = sorted(set(sides[0]) & set(sides[1]))
    if not keys:
        raise ValueError(f"no complete pair: a = {a!r} and b = {b!r} (with {equal!r}) share no {pair_by}")
    out = _t_summary(np.array([sides[0][k] - sides[1][k] for k in keys]), level)
    out["pairs"] = keys
    return out


def _query_features(x_query: np.ndarray, tasks: Any) -> dict[str, np.ndarray]:
    """The context-free and oracle features of :func:`probe_features`."""
    norm2 = np.einsum("nd,nd->n", x_query, x_query)
    out = {"norm2": norm2, "norm": np.sqrt(norm2)}
    if tasks is None:
        return out
    w = as_float_array("tasks", tasks, 2)
    if w.shape != x_query.shape:
        raise ValueError(f"tasks must have shape (n, d) = {x_query.shape} like x_query; got shape {w.shape}")
    z = np.einsum("nd,nd->n", x_query, w)
    he_prev, he = np.ones_like(z), z  # He_0, He_1; He_{k+1} = z He_k - k He_{k-1}
    for k in range(1, 5):
        out[f"h{k}"] = he / math.sqrt(math.factorial(k))
        he_prev, he = he, z * he - k * he_prev
    return out


#: Columns of the sweeps ``controls``, ``full_la`` and ``smoke`` (``CONTROL_COLUMNS`` of
#: ``scripts/make_training.py``).
CONTROL_RUN_COLUMNS: tuple[str, ...] = (
    "experiment", "experiment_index", "config_index", "label", "series", "kind", "init", "teacher", "d", "alpha",
    "kappa", "tau", "rho", "width", "layers", "steps", "batch", "lrs", "tune_steps", "tune_teacher", "tune_alpha",
    "init_scale", "sampler", "draw", "seed", "test_seed", "n_test", "n_val", "ell", "n", "lr", "val_errors", "val",
    "icl", "icl_se", "icl_cf", "icl_hand", "icl_gamma", "diff_cf", "diff_cf_se", "diff_hand", "diff_hand_se",
    "diff_gamma", "diff_gamma_se", "icl_ls", "diff_ls", "diff_ls_se", "v21_norm", "final_loss", "final_loss_ls",
    "flat_change", "loss_every", "loss_curve", "seconds",
)  # fmt: skip
_CTL_STR = frozenset(
    {"experiment", "label", "series", "kind", "teacher", "lrs", "tune_teacher", "sampler", "val_errors", "loss_curve"}
)
_CTL_INT_LOW = {
    "experiment_index": 0, "config_index": 0, "d": 1, "width": 0, "layers": 1, "steps": 1, "batch": 0,
    "tune_steps": 0, "draw": 0, "seed": 0, "test_seed": 0, "n_test": 2, "n_val": 1, "ell": 1, "n": 1,
    "loss_every": 1,
}  # fmt: skip
_CTL_NONNEGATIVE = _PARAMETERS | {
    "val", "icl", "icl_se", "icl_cf", "icl_hand", "icl_gamma", "icl_ls", "v21_norm", "final_loss", "seconds",
}  # fmt: skip
#: Columns that may be empty (read as None): the init of a transformer, the fit_gamma
#: baseline below d(d+1) contexts, and what only linear-attention rows measure.
_CTL_OPTIONAL = frozenset(
    {"init", "icl_gamma", "diff_gamma", "diff_gamma_se", "icl_ls", "diff_ls", "diff_ls_se", "v21_norm",
     "final_loss_ls"}
)  # fmt: skip
_CTL_LA_KINDS = ("la_full", "la_reduced")


def _convert_control(name: str, text: str, where: str) -> Any:
    if name in _CTL_OPTIONAL and text == "":
        return None
    if name in ("val_errors", "loss_curve"):  # JSON lists; a diverged candidate's error is inf
        return _csvfile.to_number_list(name, text, where, allow_inf=name == "val_errors")
    if name == "lrs":
        return _csvfile.to_number_list(name, text, where, sep=",")
    if name in _CTL_STR or name == "init":
        return _csvfile.to_text(name, text, where)
    if name in _CTL_INT_LOW:
        return _csvfile.to_int(name, text, where, low=_CTL_INT_LOW[name])
    return _csvfile.to_float(name, text, where, allow_inf=name == "kappa", nonnegative=name in _CTL_NONNEGATIVE)


def load_control_runs(experiment: str, data_dir: Any = None) -> list[dict[str, Any]]:
    """Rows of a ``controls``, ``full_la`` or ``smoke`` sweep, every field checked.

    The file ``training_<experiment>.csv`` must have the columns
    :data:`CONTROL_RUN_COLUMNS` (written by ``scripts/make_training.py``): per row, the
    settings (seed, common test-set seed ``test_seed``, tuned learning rate ``lr`` with
    the candidates' validation errors ``val_errors``), the test error ``icl`` on the
    common test set of its (teacher, d, alpha), the same test set's errors of the
    baselines (``icl_cf``: the context-free predictor ``E[y | x_q]``; ``icl_hand``: the
    hand-made in-context estimator; ``icl_gamma``: ``fit_gamma`` on as many contexts;
    ``icl_ls``: least squares on the same pretraining set, linear attention only), the
    paired differences ``diff_*`` with their test-set standard errors, and the loss curve
    (:func:`lib.loss_curves.loss_curve`). Integers are exact, ``kappa`` may be ``inf``, the parameters
    (``alpha, kappa, tau, rho, lr, init_scale, tune_alpha``) and the errors are ``>= 0``;
    the columns of ``init``, ``icl_gamma``, ``diff_gamma``, ``diff_gamma_se`` and the
    linear-attention columns (``icl_ls``, ``diff_ls``, ``diff_ls_se``, ``v21_norm``,
    ``final_loss_ls``) may be empty (None); the linear-attention columns are numbers
    exactly in the rows of kinds ``la_full`` and ``la_reduced``.

    Parameters
    ----------
    experiment : str
        ``"controls"``, ``"full_la"`` or ``"smoke"``.
    data_dir : path-like, optional
        Folder of the CSV files (default ``DATA_DIR``, this module's).

    Returns
    -------
    list of dict
        One dict per row, keyed by :data:`CONTROL_RUN_COLUMNS`.

    Raises
    ------
    ValueError
        If there is no such file, or a field, a row or the header is not valid (the
        message is ``"<path>:<line>: <column>: <problem>"``), or a row is repeated (same
        label, kind, d, alpha and draw).

    Notes
    -----
    Used in: :doc:`trained networks </book/trained/networks>`.
    """
    path = _run_file(experiment, data_dir, "controls")

    def check_row(row: dict[str, Any], where: str) -> None:
        if row["experiment"] != experiment:
            raise ValueError(f"{where}: experiment: {row['experiment']!r} in the file of experiment {experiment!r}")
        n_lrs, n_val = len(row["lrs"].split(",")), len(json.loads(row["val_errors"]))
        if n_val != n_lrs:
            raise ValueError(f"{where}: val_errors: {n_val} errors for the {n_lrs} learning rates of lrs")
        if not any(math.isclose(row["lr"], float(v), rel_tol=1e-12) for v in row["lrs"].split(",")):
            raise ValueError(f"{where}: lr: {row['lr']!r} is not one of the candidates lrs = {row['lrs']!r}")
        la = row["kind"] in _CTL_LA_KINDS
        for name in ("icl_ls", "diff_ls", "diff_ls_se", "v21_norm", "final_loss_ls"):
            if (row[name] is None) == la:
                state = "empty" if la else f"{row[name]!r}"
                raise ValueError(f"{where}: {name}: {state} in a {row['kind']!r} row (linear attention only)")

    keys = (
        (lambda r: tuple(r[k] for k in ("label", "kind", "d", "alpha", "draw")), "same label, kind, d, alpha, draw"),
    )
    return _csvfile.read_rows(path, CONTROL_RUN_COLUMNS, _convert_control, check_row=check_row, keys=keys)


__all__ += ["CONTROL_RUN_COLUMNS", "load_control_runs"]


#: Names that left this module (issue 33: one address per name), and where they are now:
#: an old call gets an AttributeError that says so.
_MOVED = {"loss_curve": "lib.loss_curves"}


def __getattr__(name: str) -> Any:
    """Say where a name that left ``lib.training_runs`` went (see ``_MOVED``)."""
    if name in _MOVED:
        raise AttributeError(f"lib.training_runs.{name} has moved to {_MOVED[name]}.{name}")
    raise AttributeError(f"module 'lib.training_runs' has no attribute {name!r}")
