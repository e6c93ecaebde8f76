"""Large-d simulation data and finite-size extrapolation.

The asymptotic formulas of the book hold as ``d -> infinity``. At the dimensions a
laptop can simulate (``d <= 200``) the measured errors still sit above their limits,
by a gap that shrinks with ``d``. This module reads the simulation tables made by
``scripts/make_finite_size.py`` (one CSV per experiment in the package's ``lib/data/``
folder) and fits the finite-size law

.. math::

    e(d) = e_\\infty + c / d^{b}

(``b = 1`` by default) by weighted least squares, so that a chapter can compare the
extrapolated ``e_inf`` with the theory and test whether the ``1/d`` law describes the
data.

The CSV columns are :data:`COLUMNS`: ``experiment, label, teacher, variant, d, draw,
seed, alpha, kappa, tau, rho, lam, icl, icl_se, idg, idg_se, n_test, method, seconds``.
``variant`` is ``"teacher"`` (the nonlinear teacher itself), ``"gaussian"`` (its
Gaussian-equivalent linear teacher ``g(z) = a_0 + a_1 z`` with noise ``rho_eq``),
``"noise"`` (pure label noise of variance ``rho_nl``, teacher ``f = 0``) or ``"linear"``
(the linear teacher ``f(z) = z``). The ``rho`` column is always the label-noise variance
of the experiment's nominal teacher; the noise actually used by the ``gaussian`` and
``noise`` variants is derived from it (see ``data/README.md``). Rows with exact errors
(linear teacher) have ``n_test = 0`` and ``icl_se = idg_se = 0``.

Used in: chapters 2, 3 and the Performance appendix.
"""

from __future__ import annotations

import csv
import importlib.resources
import math
import re
from pathlib import Path
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

import numpy as np
from scipy import optimize, stats

from lib._checks import check_int, check_real

__all__ = [
    "COLUMNS",
    "DATA_DIR",
    "FiniteSizeFit",
    "available_experiments",
    "load",
    "table",
    "summarize",
    "gap",
    "extrapolate",
    "fit",
    "OriginFit",
    "VariantFits",
    "GapFits",
    "floored_se",
    "slope_through_origin",
    "extrapolate_summary",
    "fits_for",
    "gap_for",
    "QuadraticFit",
    "extrapolate_quadratic",
    "point_label",
    "POWER_BOUNDS",
    "MAX_CONDITION",
]

#: The package's data folder ``lib/data``, found through :mod:`importlib.resources`, so it
#: is the same for an editable install, a regular ``pip install`` and a source checkout.
#: (Its value is an absolute path on the machine that imports the package.)
#:
#: :meta hide-value:
DATA_DIR: Path = Path(str(importlib.resources.files("lib").joinpath("data")))

#: Columns of every ``lib/data/finite_size_<experiment>.csv``, in order.
COLUMNS: tuple[str, ...] = (
    "experiment", "label", "teacher", "variant", "d", "draw", "seed",
    "alpha", "kappa", "tau", "rho", "lam",
    "icl", "icl_se", "idg", "idg_se", "n_test", "method", "seconds",
)
_STR_COLUMNS = frozenset({"experiment", "label", "teacher", "variant", "method"})
_INT_COLUMNS = frozenset({"d", "draw", "seed", "n_test"})
#: Columns that must be constant within the rows handed to :func:`summarize`.
_CONFIG_COLUMNS = ("experiment", "label", "teacher", "variant", "alpha", "kappa", "tau", "rho", "lam")
_PREFIX = "finite_size_"
#: Range of the exponent b in the free-power fit of :func:`extrapolate`.
B_BOUNDS: tuple[float, float] = (0.2, 5.0)
#: Allowed range of a fixed exponent ``power`` of :func:`extrapolate` (outside it ``d**-power``
#: is constant or underflows on any sensible set of dimensions).
POWER_BOUNDS: tuple[float, float] = (0.01, 10.0)
#: Largest condition number of the (column-scaled, weighted) design matrix of a fit;
#: beyond it the fitted parameters are not determined in double precision.
MAX_CONDITION = 1e12
_TINY = float(np.finfo(float).tiny)


class FiniteSizeFit(NamedTuple):
    """Result of :func:`extrapolate`: the fit ``e(d) = e_inf + c / d**b``.

    Attributes
    ----------
    e_inf, e_inf_se : float
        The extrapolated ``d -> infinity`` value and its standard error.
    c, c_se : float
        The finite-size amplitude and its standard error.
    b, b_se : float
        The exponent. When it was fixed (``power`` a number) ``b = power`` and
        ``b_se = 0``.
    chi2 : float
        Weighted residual sum of squares ``sum ((e - fit) / se)**2``.
    dof : int
        Degrees of freedom: number of points minus number of fitted parameters.
    p_value : float
        ``P(chi2_dof >= chi2)``: small values (say < 0.01) mean the law does not describe
        the data within their error bars. NaN when ``se`` was not given (the scale of the
        errors is then estimated from the residuals, so ``chi2`` carries no test).
    """

    e_inf: float
    e_inf_se: float
    c: float
    c_se: float
    b: float
    b_se: float
    chi2: float
    dof: int
    p_value: float


# ----------------------------------------------------------------------------------------
# reading the tables
# ----------------------------------------------------------------------------------------


def _dir(data_dir: str | Path | None) -> Path:
    return DATA_DIR if data_dir is None else Path(data_dir)


def available_experiments(data_dir: str | Path | None = None) -> list[str]:
    """Names of the experiments that have a ``finite_size_<name>.csv`` in ``data_dir``.

    Parameters
    ----------
    data_dir : str, pathlib.Path or None
        Folder to look in; None (default) is the package's ``lib/data/`` folder.

    Returns
    -------
    list of str
        Sorted experiment names, for instance ``["h2_study", "linear_points", ...]``.
    """
    folder = _dir(data_dir)
    return sorted(p.stem[len(_PREFIX):] for p in folder.glob(f"{_PREFIX}*.csv"))


def _path(experiment: Any, data_dir: str | Path | None) -> Path:
    available = available_experiments(data_dir)
    if not isinstance(experiment, str) or experiment not in available:
        raise ValueError(
            f"experiment must be one of {available} (the files {_PREFIX}<experiment>.csv in "
            f"{_dir(data_dir)}; `make data` regenerates them); got {experiment!r}"
        )
    return _dir(data_dir) / f"{_PREFIX}{experiment}.csv"


_INT_TEXT = re.compile(r"[+-]?[0-9]+")
#: Smallest allowed value of each integer column.
_INT_LOW = {"d": 1, "draw": 0, "seed": 0, "n_test": 0}
#: Float columns that must be ``>= 0`` (standard errors and timings).
_NONNEGATIVE = frozenset({"icl_se", "idg_se", "seconds"})


def _convert(name: str, text: str, where: str) -> Any:
    """One CSV field as its Python value; ``ValueError("<where>: <name>: ...")`` if invalid."""
    if name in _STR_COLUMNS:
        if not text:
            raise ValueError(f"{where}: {name}: empty; a non-empty text is required")
        return text
    if name in _INT_COLUMNS:
        if not _INT_TEXT.fullmatch(text):
            raise ValueError(f"{where}: {name}: {text!r} is not an integer (digits only, e.g. '12')")
        value = int(text)
        if value < _INT_LOW[name]:
            raise ValueError(f"{where}: {name}: {value} is not allowed; it must be >= {_INT_LOW[name]}")
        return value
    try:
        if text != text.strip() or "_" in text:
            raise ValueError
        value = float(text)
    except ValueError:
        raise ValueError(f"{where}: {name}: {text!r} is not a number") from None
    if math.isnan(value) or value == -math.inf or (value == math.inf and name != "kappa"):
        allowed = "finite or inf" if name == "kappa" else "finite"
        raise ValueError(f"{where}: {name}: {text!r} is not allowed; the value must be {allowed}")
    if name in _NONNEGATIVE and value < 0:
        raise ValueError(f"{where}: {name}: {text!r} is negative; it must be >= 0")
    return value


def load(experiment: str, data_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """Read the rows of ``lib/data/finite_size_<experiment>.csv``, checking every one.

    The file is read as UTF-8 (a leading byte-order mark is allowed). Every row must have
    exactly the fields of :data:`COLUMNS`: ``d, draw, seed, n_test`` integers (``d >= 1``,
    the others ``>= 0``), the text columns non-empty, the other columns numbers, finite
    except ``kappa`` (which may be ``inf``), with ``icl_se, idg_se, seconds >= 0``. Blank
    lines are skipped.

    Parameters
    ----------
    experiment : str
        Experiment name, one of :func:`available_experiments` (``"linear_points"``,
        ``"teachers"``, ``"h2_study"``, ``"smoke"``).
    data_dir : str, pathlib.Path or None
        Folder holding the CSV files; None (default) is the package's ``lib/data/``.

    Returns
    -------
    list of dict
        One dict per row, keyed by :data:`COLUMNS`; ``d, draw, seed, n_test`` as int,
        ``experiment, label, teacher, variant, method`` as str, the rest as float
        (``kappa`` may be ``inf``).

    Raises
    ------
    ValueError
        If ``experiment`` is not an available experiment (the message lists them), or
        the file is not valid: the message is ``"<path>:<line>: <column>: <problem>"``,
        with the physical line number in the file (the header is line 1). Invalid are:
        a header other than :data:`COLUMNS`, a repeated header line, a row with too few
        fields (for instance a truncated last line) or too many, a non-integer in an
        integer column, a field that is not a number, a non-finite value where a finite
        one is required, a negative standard error or time.
    """
    path = _path(experiment, data_dir)
    with path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh)
        try:
            header = next(reader, None)
            if header is None or tuple(header) != COLUMNS:
                raise ValueError(f"{path}:1: header: must be the columns {COLUMNS}; it has {header}")
            rows = []
            line = reader.line_num + 1  # physical line on which the next record starts
            for fields in reader:
                where, line = f"{path}:{line}", reader.line_num + 1
                if not fields:  # a blank line
                    continue
                if tuple(fields) == COLUMNS:
                    raise ValueError(f"{where}: header: a repeated header line (two files concatenated?)")
                if len(fields) < len(COLUMNS):
                    missing = COLUMNS[len(fields)]
                    raise ValueError(
                        f"{where}: {missing}: missing; the row has {len(fields)} of the "
                        f"{len(COLUMNS)} fields (a truncated line?)"
                    )
                if len(fields) > len(COLUMNS):
                    raise ValueError(
                        f"{where}: field {len(COLUMNS) + 1}: extra field {fields[len(COLUMNS)]!r}; "
                        f"the row has {len(fields)} fields, the header {len(COLUMNS)}"
                    )
                rows.append({k: _convert(k, v, where) for k, v in zip(COLUMNS, fields)})
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path}:{reader.line_num + 1}: (encoding): not UTF-8 text: {exc}") from None
        except csv.Error as exc:
            raise ValueError(f"{path}:{reader.line_num}: (csv): {exc}") from None
    return rows


def _matches(value: Any, wanted: Any) -> bool:
    if isinstance(wanted, (list, tuple, set, frozenset)):
        return any(_matches(value, w) for w in wanted)
    if isinstance(value, str) or isinstance(wanted, str):
        return value == wanted
    return bool(value == wanted or np.isclose(value, wanted, rtol=1e-12, atol=0.0))


def _columns(rows: Sequence[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    out = {}
    for name in COLUMNS:
        values = [r[name] for r in rows]
        if name in _STR_COLUMNS:
            out[name] = np.array(values, dtype=str)
        elif name in _INT_COLUMNS:
            out[name] = np.array(values, dtype=np.int64)
        else:
            out[name] = np.array(values, dtype=float)
    return out


def table(experiment: str, data_dir: str | Path | None = None, **filters: Any) -> dict[str, np.ndarray]:
    """The rows of an experiment that match ``filters``, as a dict of column arrays.

    Parameters
    ----------
    experiment : str
        Experiment name (see :func:`load`).
    data_dir : str, pathlib.Path or None
        Folder holding the CSV files; None is the package's ``lib/data/``.
    **filters
        ``column=value`` pairs, for instance ``teacher="relu", variant="teacher"``. A
        list, tuple or set of values matches any of them (``d=[100, 200]``). Numbers
        match exactly (up to 1e-12 relative), ``kappa=np.inf`` included.

    Returns
    -------
    dict of str to numpy.ndarray
        One array of shape ``(m,)`` per column of :data:`COLUMNS` (m matching rows, in
        file order): ``str`` arrays for text columns, ``int64`` for ``d, draw, seed,
        n_test``, ``float`` for the rest.

    Raises
    ------
    ValueError
        If a filter names an unknown column, or no row matches (the message lists the
        values present in the filtered columns).

    Examples
    --------
    >>> t = table("teachers", teacher="relu", variant="teacher")   # doctest: +SKIP
    >>> t["d"], t["icl"]                                            # doctest: +SKIP
    """
    unknown = sorted(set(filters) - set(COLUMNS))
    if unknown:
        raise ValueError(f"filters must be column names among {COLUMNS}; got unknown {unknown}")
    rows = load(experiment, data_dir)
    kept = [r for r in rows if all(_matches(r[k], v) for k, v in filters.items())]
    if not kept:
        present = {k: sorted({r[k] for r in rows}, key=str) for k in filters}
        raise ValueError(
            f"no row of experiment {experiment!r} matches {filters}; values present: {present}"
        )
    return _columns(kept)


# ----------------------------------------------------------------------------------------
# averages over draws
# ----------------------------------------------------------------------------------------


def _as_columns(rows_or_table: Any) -> dict[str, np.ndarray]:
    if isinstance(rows_or_table, Mapping):
        missing = [c for c in ("d", "icl", "icl_se", "idg", "idg_se") if c not in rows_or_table]
        if missing:
            raise ValueError(f"rows_or_table is missing the columns {missing}")
        cols = {k: np.asarray(v) for k, v in rows_or_table.items()}
    elif isinstance(rows_or_table, Iterable) and not isinstance(rows_or_table, (str, bytes)):
        rows = list(rows_or_table)
        if not rows or not all(isinstance(r, Mapping) for r in rows):
            raise ValueError("rows_or_table must be a non-empty list of row dicts or a table dict")
        missing = sorted(set(COLUMNS) - set(rows[0]))
        if missing:
            raise ValueError(f"rows_or_table rows are missing the columns {missing}")
        cols = _columns(rows)
    else:
        raise TypeError(
            "rows_or_table must be a list of row dicts (from load) or a dict of column arrays "
            f"(from table); got {type(rows_or_table).__name__}"
        )
    if cols["d"].size == 0:
        raise ValueError("rows_or_table has no rows")
    return cols


def summarize(rows_or_table: Any) -> dict[str, np.ndarray]:
    """Per-d means and standard errors over the draws of one configuration.

    For each dimension ``d`` with ``m_d`` draws ``e_1, ..., e_{m_d}`` (each a finite-d
    error, exact or a Monte Carlo estimate):

    .. math::

        \\bar e_d = \\frac{1}{m_d} \\sum_j e_j, \\qquad
        \\mathrm{se}_d = \\sqrt{\\frac{\\max(s_d^2,\\ \\overline{\\mathrm{se}_j^2})}{m_d}}, \\quad
        s_d^2 = \\frac{1}{m_d - 1} \\sum_j (e_j - \\bar e_d)^2 .

    The spread over draws already contains the Monte Carlo noise of each draw, whose
    variance ``se_j^2`` (the rows' ``icl_se``/``idg_se``) is therefore a lower bound for the
    variance of a draw. With few draws the sample variance ``s_d^2`` is itself very noisy
    (with 2 draws it can come out far below the Monte Carlo variance), so it is floored:
    ``se_d = sqrt(max(s_d^2, mean_j se_j^2) / m_d)``. With a single draw this is that row's
    own Monte Carlo error (an underestimate of the draw-to-draw spread; 0 for exact errors).
    Exact errors (``se_j = 0``) are unaffected by the floor.

    Parameters
    ----------
    rows_or_table : list of dict or dict of arrays
        Rows from :func:`load` or a table from :func:`table`, all of one configuration
        (same experiment, label, teacher, variant, alpha, kappa, tau, rho, lam): filter
        first.

    Returns
    -------
    dict of str to numpy.ndarray
        ``d`` (m,) sorted increasing, ``icl``, ``icl_se``, ``idg``, ``idg_se`` (m,) float,
        ``draws`` (m,) int.

    Raises
    ------
    ValueError
        If the rows mix several configurations (the message names the column), are
        empty, or a value of ``icl, idg`` is not finite or of ``icl_se, idg_se`` not
        finite and ``>= 0`` (the message names the column and the first such row).
    TypeError
        If ``rows_or_table`` is neither rows nor a table.
    """
    cols = _as_columns(rows_or_table)
    for name in _CONFIG_COLUMNS:
        if name in cols:
            vals = np.unique(cols[name].astype(str))
            if vals.size > 1:
                raise ValueError(
                    f"summarize needs the rows of one configuration, but column {name!r} takes "
                    f"the values {list(vals)}; filter with table(..., {name}=...) first"
                )
    for name in ("icl", "icl_se", "idg", "idg_se"):
        values = np.asarray(cols[name], dtype=float)
        bad = ~np.isfinite(values) | ((values < 0) if name.endswith("_se") else False)
        if np.any(bad):
            i = int(np.flatnonzero(bad)[0])
            allowed = "finite and >= 0" if name.endswith("_se") else "finite"
            raise ValueError(
                f"summarize needs {allowed} values in column {name!r}; row {i} (d = {cols['d'][i]}) "
                f"has {values[i]!r} ({int(bad.sum())} such rows)"
            )
    d = cols["d"].astype(np.int64)
    dims = np.unique(d)
    out: dict[str, list] = {k: [] for k in ("icl", "icl_se", "idg", "idg_se", "draws")}
    for dd in dims:
        sel = d == dd
        m = int(sel.sum())
        out["draws"].append(m)
        for q in ("icl", "idg"):
            e = cols[q][sel].astype(float)
            mc_var = float(np.mean(cols[f"{q}_se"][sel].astype(float) ** 2))
            var = max(float(e.var(ddof=1)) if m > 1 else 0.0, mc_var)
            out[q].append(float(e.mean()))
            out[f"{q}_se"].append(math.sqrt(var / m))
    result = {"d": dims}
    result.update({k: np.array(v, dtype=np.int64 if k == "draws" else float) for k, v in out.items()})
    return result


def gap(
    experiment: str,
    variants: tuple[str, str] = ("teacher", "gaussian"),
    quantity: str = "icl",
    data_dir: str | Path | None = None,
    **filters: Any,
) -> dict[str, np.ndarray]:
    """Per-d mean and standard error of the paired difference between two variants.

    The variants of one configuration share the seed of each draw (common random
    numbers: same task set, tokens, noise draws and test contexts), so the difference
    ``e_a - e_b`` is computed draw by draw and averaged,

    .. math::

        \\bar g_d = \\frac{1}{m_d}\\sum_j (e^{a}_j - e^{b}_j), \\qquad
        \\mathrm{se}_d = \\frac{\\operatorname{std}_j(e^{a}_j - e^{b}_j)}{\\sqrt{m_d}},

    which is much more precise than the difference of the two separate means. With a
    single draw the standard error is ``sqrt(se_a**2 + se_b**2)`` from the Monte Carlo
    errors of the two rows (conservative: it ignores their positive correlation).

    Parameters
    ----------
    experiment : str
        Experiment name (see :func:`load`).
    variants : tuple of two str
        ``(a, b)``, for instance ``("teacher", "gaussian")`` or ``("teacher", "noise")``.
    quantity : {"icl", "idg"}
        Which error.
    data_dir : str, pathlib.Path or None
        Folder holding the CSV files; None is the package's ``lib/data/``.
    **filters
        Select one configuration (without ``variant``), as in :func:`table`.

    Returns
    -------
    dict of str to numpy.ndarray
        ``d`` (m,), ``gap`` (m,), ``gap_se`` (m,), ``draws`` (m,) (draws present in both).

    Raises
    ------
    ValueError
        If ``quantity`` or ``variants`` is invalid, a filter is ``variant``, or the two
        variants have no draw in common.

    Used in: :doc:`testing the equivalence </book/equivalence/verification>`.
    """
    if quantity not in ("icl", "idg"):
        raise ValueError(f"quantity must be 'icl' or 'idg'; got {quantity!r}")
    if not (isinstance(variants, (tuple, list)) and len(variants) == 2 and all(isinstance(v, str) for v in variants)):
        raise ValueError(f"variants must be a pair of variant names such as ('teacher', 'gaussian'); got {variants!r}")
    if "variant" in filters:
        raise ValueError("gap takes the variants through `variants`, not through a `variant` filter")
    ta, tb = (table(experiment, data_dir=data_dir, variant=v, **filters) for v in variants)
    for t in (ta, tb):
        summarize(t)  # checks that each side is a single configuration
    index_b = {(int(d), int(j)): i for i, (d, j) in enumerate(zip(tb["d"], tb["draw"]))}
    pairs: dict[int, list[tuple[float, float]]] = {}
    for i, (d, j) in enumerate(zip(ta["d"], ta["draw"])):
        k = index_b.get((int(d), int(j)))
        if k is not None:
            diff = float(ta[quantity][i] - tb[quantity][k])
            mc = math.hypot(float(ta[f"{quantity}_se"][i]), float(tb[f"{quantity}_se"][k]))
            pairs.setdefault(int(d), []).append((diff, mc))
    if not pairs:
        raise ValueError(f"variants {variants} of experiment {experiment!r} share no (d, draw) for {filters}")
    dims = np.array(sorted(pairs), dtype=np.int64)
    mean, se, draws = [], [], []
    for d in dims:
        diffs = np.array([p[0] for p in pairs[int(d)]])
        mean.append(diffs.mean())
        se.append(diffs.std(ddof=1) / math.sqrt(diffs.size) if diffs.size > 1 else pairs[int(d)][0][1])
        draws.append(diffs.size)
    return {"d": dims, "gap": np.array(mean), "gap_se": np.array(se), "draws": np.array(draws, dtype=np.int64)}


# ----------------------------------------------------------------------------------------
# finite-size extrapolation
# ----------------------------------------------------------------------------------------


def _check_dims(d: Any) -> np.ndarray:
    d = check_real("d", d, low=0.0, low_open=True)
    if np.any(d < _TINY):
        raise ValueError(
            f"d must be positive normal floats (>= {_TINY:.4g}; subnormal values have lost "
            f"precision); got d = {d.tolist()}"
        )
    return d


def _unscale(name: str, value: float, log_factor: float, inputs: str) -> float:
    """``value * exp(log_factor)``, or a ValueError if that is not a normal float."""
    if value == 0.0:
        return 0.0
    log_abs = math.log(abs(value)) + log_factor
    if not math.log(_TINY) <= log_abs <= math.log(np.finfo(float).max):
        sign = "-" if value < 0 else ""
        raise ValueError(
            f"the fitted {name} = {sign}10**{log_abs / math.log(10.0):.6g} is not representable as a "
            f"normal float (magnitude {_TINY:.4g} to {np.finfo(float).max:.4g}); rescale the data ({inputs})"
        )
    return math.copysign(math.exp(log_abs), value)


def _wls(
    d: np.ndarray, e: np.ndarray, se: np.ndarray | None, powers: Sequence[float], names: Sequence[str], inputs: str
) -> tuple[list[float], list[float], float, dict[str, Any]]:
    """Weighted least squares of ``e = sum_j p_j d**-powers[j]``, computed on rescaled data.

    The columns ``d**-p`` are divided by their largest value (computed as
    ``exp(-p (log d - log min d))``, so they neither overflow nor underflow), the errors
    and ``e`` by ``max(se)``; the parameters and their standard errors are scaled back in
    log space. Returns ``(params, errors, chi2, scaled)``: the errors are those of
    absolute ``se`` (rescale them by ``sqrt(chi2 / dof)`` when ``se`` is None); ``scaled``
    holds the rescaled problem (for a nonlinear fit that starts from it).

    Raises ValueError if the design matrix is numerically singular (condition number
    above :data:`MAX_CONDITION`) or a result is not a normal float.
    """
    sigma = np.ones_like(e) if se is None else se
    scale = float(sigma.max())
    sigma_s = sigma / scale
    y = e / scale / sigma_s
    if not np.all(np.isfinite(y)):
        raise ValueError(f"e / se overflows; rescale the data ({inputs})")
    log_d = np.log(d)
    log_ref = float(log_d.min())
    with np.errstate(under="ignore"):  # a column entry below 1e-308 is 0 for the fit
        basis = np.column_stack([np.exp(-p * (log_d - log_ref)) for p in powers])
    design = basis / sigma_s[:, None]
    cond = float(np.linalg.cond(design))
    if not cond <= MAX_CONDITION:
        raise ValueError(
            f"the fit is numerically singular: its basis functions "
            f"{', '.join('1' if p == 0 else f'd**-{p:g}' for p in powers)} cannot be told apart on "
            f"these points (condition number {cond:.3g} > {MAX_CONDITION:g}); the d must be "
            f"distinct and span a moderate range (max(d)/min(d) = {math.exp(float(log_d.max()) - log_ref):.6g}) "
            f"and the se comparable ({inputs})"
        )
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    r = np.linalg.qr(design, mode="r")
    r_inv = np.linalg.inv(r)
    errs_s = np.sqrt(np.sum(r_inv**2, axis=1))  # sqrt(diag((A^T A)^-1)) = row norms of R^-1
    resid = y - design @ coef
    with np.errstate(over="ignore"):  # an absurdly bad fit has chi2 = inf (p-value 0)
        chi2 = float(resid @ resid)
    log_scale = math.log(scale)
    params = [_unscale(n, float(c), log_scale + p * log_ref, inputs) for n, p, c in zip(names, powers, coef)]
    errs = [_unscale(f"{n}_se", float(v), log_scale + p * log_ref, inputs) for n, p, v in zip(names, powers, errs_s)]
    scaled = {"coef": coef, "sigma": sigma_s, "e": e / scale, "t": np.exp(log_d - log_ref), "log_ref": log_ref, "log_scale": log_scale}
    return params, errs, chi2, scaled


def _check_fit_input(d: Any, e: Any, se: Any, n_params: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    d = _check_dims(d)
    e = check_real("e", e)
    if d.ndim != 1 or e.shape != d.shape:
        raise ValueError(f"d and e must be 1-D arrays of the same length; got shapes {d.shape} and {e.shape}")
    if se is not None:
        se = check_real("se", se, low=0.0, low_open=True)
        if se.shape != d.shape:
            raise ValueError(f"se must have the shape of d, {d.shape}; got {se.shape}")
    if np.unique(d).size < n_params or d.size < n_params + 1:
        raise ValueError(
            f"d must hold at least {n_params} distinct values and {n_params + 1} points for "
            f"this fit ({n_params} parameters, at least 1 degree of freedom); got d = {d.tolist()}"
        )
    return d, e, se


def extrapolate(d: Any, e: Any, se: Any = None, power: float | None = 1.0) -> FiniteSizeFit:
    """Fit ``e(d) = e_inf + c / d**b`` by weighted least squares.

    With ``power`` a number ``b`` is fixed and the model is linear in ``(e_inf, c)``:
    the fit minimises

    .. math::

        \\chi^2 = \\sum_i \\Big( \\frac{e_i - e_\\infty - c\\, d_i^{-b}}{\\mathrm{se}_i} \\Big)^2 ,

    and the standard errors are the square roots of the diagonal of ``(J^T W J)^{-1}``
    (``J`` the design matrix ``[1, d^{-b}]``, ``W = diag(se^{-2})``), that is, the
    ``se`` are taken as absolute errors. The fit runs on rescaled data (``d / min(d)``,
    ``e / max(se)``), so that tiny or huge scales give the same relative accuracy. With ``power=None`` the exponent ``b`` is fitted
    too (:func:`scipy.optimize.curve_fit`, starting from the ``b = 1`` fit), which tests
    whether ``1/d`` describes the data: ``b`` within a few ``b_se`` of 1 and an acceptable
    ``p_value`` say it does. ``b`` is kept in ``B_BOUNDS``; a fit that ends on a bound
    (or with ``b_se`` of order 1) means the data cannot pin the exponent down, and its
    ``e_inf`` should not be used.

    Parameters
    ----------
    d : array_like, shape (m,)
        Dimensions (> 0). Repeated values are allowed (for instance one point per draw).
    e : array_like, shape (m,)
        Measured errors.
    se : array_like, shape (m,), optional
        Their standard errors (> 0), for instance from :func:`summarize`. If None all
        points get equal weight and the error scale is estimated from the residuals
        (then ``p_value`` is NaN).
    power : float or None
        Fixed exponent ``b`` in :data:`POWER_BOUNDS` = ``[0.01, 10]`` (default 1: the ``1/d``
        law), or None to fit it within :data:`B_BOUNDS`.

    Returns
    -------
    FiniteSizeFit
        ``e_inf, e_inf_se, c, c_se, b, b_se, chi2, dof, p_value``.

    Raises
    ------
    ValueError
        If the arrays do not match, contain non-finite values, ``d`` are not positive
        normal floats or ``se`` not positive, ``power`` is outside :data:`POWER_BOUNDS`, or
        there are too few points (fixed power: at least 2 distinct d and 3 points; free
        power: 3 distinct d and 4 points), the fit is numerically singular (the d too close
        together or spread over too many orders of magnitude: condition number of the
        design above :data:`MAX_CONDITION`), a fitted value is not representable as a
        normal float, or the free-power fit does not converge.

    Examples
    --------
    >>> d = np.array([50, 100, 150, 200])
    >>> fit = extrapolate(d, 1.0 + 5.0 / d, se=np.full(4, 1e-3))
    >>> round(fit.e_inf, 6), round(fit.c, 6)
    (1.0, 5.0)

    Used in: :doc:`learning curves </book/linear/learning_curves>`.
    """
    if power is not None:
        power = float(check_real("power", power, low=0.0, low_open=True))
        if not POWER_BOUNDS[0] <= power <= POWER_BOUNDS[1]:
            raise ValueError(
                f"power must be a fixed exponent in POWER_BOUNDS = {list(POWER_BOUNDS)} (or None to fit "
                f"it within B_BOUNDS = {list(B_BOUNDS)}); got power = {power!r}"
            )
    n_params = 2 if power is not None else 3
    d, e, se = _check_fit_input(d, e, se, n_params)
    b0 = 1.0 if power is None else power
    inputs = f"d = {d.tolist()}, power = {power}"

    # Linear weighted least squares for a fixed exponent (also the start of the free fit).
    params, errs, chi2, sc = _wls(d, e, se, (0.0, b0), ("e_inf", "c"), inputs)
    dof = int(d.size - n_params)
    if power is not None:
        b, b_se = power, 0.0
    else:
        # The free fit runs on the rescaled problem: t = d / min(d), e / max(se); then
        # c = max(se) * c' * min(d)**b and its error follows from the Jacobian of that map.
        def model(x, e_inf, c, b):
            return e_inf + c * x ** -b

        try:
            p_s, cov_s = optimize.curve_fit(
                model, sc["t"], sc["e"], p0=[sc["coef"][0], sc["coef"][1], 1.0], sigma=sc["sigma"],
                absolute_sigma=True, bounds=([-np.inf, -np.inf, B_BOUNDS[0]], [np.inf, np.inf, B_BOUNDS[1]]),
                max_nfev=10_000, ftol=1e-12, xtol=1e-12, gtol=1e-12,
            )
        except RuntimeError as exc:
            raise ValueError(f"the free-power fit e_inf + c/d**b did not converge: {exc}") from exc
        if not np.all(np.isfinite(cov_s)):
            raise ValueError(f"the free-power fit e_inf + c/d**b is degenerate (infinite covariance; {inputs})")
        resid = (sc["e"] - model(sc["t"], *p_s)) / sc["sigma"]
        with np.errstate(over="ignore"):
            chi2 = float(resid @ resid)
        b = float(p_s[2])
        log_k = sc["log_scale"] + b * sc["log_ref"]
        dc = np.array([0.0, 1.0, float(p_s[1]) * sc["log_ref"]])  # d(c / (scale k)) / d(e_inf', c', b)
        params = [
            _unscale("e_inf", float(p_s[0]), sc["log_scale"], inputs),
            _unscale("c", float(p_s[1]), log_k, inputs),
        ]
        errs = [
            _unscale("e_inf_se", math.sqrt(max(float(cov_s[0, 0]), 0.0)), sc["log_scale"], inputs),
            _unscale("c_se", math.sqrt(max(float(dc @ cov_s @ dc), 0.0)), log_k, inputs),
        ]
        b_se = math.sqrt(max(float(cov_s[2, 2]), 0.0))
    if se is None:
        factor = math.sqrt(chi2 / dof)  # scale from the residuals
        errs = [v * factor for v in errs]
        if power is None:
            b_se *= factor
        p_value = float("nan")
    else:
        p_value = float(stats.chi2.sf(chi2, dof))
    return FiniteSizeFit(
        e_inf=float(params[0]), e_inf_se=float(errs[0]), c=float(params[1]), c_se=float(errs[1]),
        b=float(b), b_se=float(b_se), chi2=chi2, dof=dof, p_value=p_value,
    )


def fit(
    experiment: str,
    quantity: str = "icl",
    power: float | None = 1.0,
    data_dir: str | Path | None = None,
    **filters: Any,
) -> tuple[dict[str, np.ndarray], FiniteSizeFit]:
    """Summarize one configuration of an experiment and extrapolate it to ``d = infinity``.

    Shorthand for ``s = summarize(table(experiment, **filters))`` followed by
    ``extrapolate(s["d"], s[quantity], s[quantity + "_se"], power)``.

    Parameters
    ----------
    experiment : str
        Experiment name (see :func:`load`).
    quantity : {"icl", "idg"}
        Which error to extrapolate.
    power : float or None
        As in :func:`extrapolate`.
    data_dir : str, pathlib.Path or None
        Folder holding the CSV files; None is the package's ``lib/data/``.
    **filters
        Select one configuration, as in :func:`table`.

    Returns
    -------
    summary : dict of numpy.ndarray
        The output of :func:`summarize`.
    fit : FiniteSizeFit
        The output of :func:`extrapolate`.
    """
    if quantity not in ("icl", "idg"):
        raise ValueError(f"quantity must be 'icl' or 'idg'; got {quantity!r}")
    summary = summarize(table(experiment, data_dir=data_dir, **filters))
    return summary, extrapolate(summary["d"], summary[quantity], summary[f"{quantity}_se"], power)


class QuadraticFit(NamedTuple):
    """Result of :func:`extrapolate_quadratic`: ``e(d) = e_inf + c/d + c2/d**2``.

    Attributes
    ----------
    e_inf, e_inf_se : float
        Intercept (the extrapolation to ``d = infinity``) and its standard error.
    c, c_se : float
        Coefficient of ``1/d`` and its standard error.
    c2, c2_se : float
        Coefficient of ``1/d**2`` and its standard error.
    chi2 : float
        Weighted sum of squared residuals.
    dof : int
        Degrees of freedom (points minus 3).
    p_value : float
        Probability of a chi-square at least ``chi2`` with ``dof`` degrees of freedom
        (NaN when no standard errors were given).
    """

    e_inf: float
    e_inf_se: float
    c: float
    c_se: float
    c2: float
    c2_se: float
    chi2: float
    dof: int
    p_value: float


def extrapolate_quadratic(d: Any, e: Any, se: Any = None) -> QuadraticFit:
    r"""Fit ``e(d) = e_inf + c / d + c2 / d**2`` by weighted least squares.

    The next order after :func:`extrapolate`: when the ``1/d`` law misses the smallest
    dimensions, a ``1/d^2`` term tests whether the misfit is a higher-order finite-size
    correction. The fit minimises

    .. math::

        \chi^2 = \sum_i \Big( \frac{e_i - e_\infty - c\, d_i^{-1} - c_2\, d_i^{-2}}
        {\mathrm{se}_i} \Big)^2 ,

    with standard errors from the diagonal of ``(J^T W J)^{-1}`` (``J = [1, 1/d, 1/d^2]``,
    ``W = diag(se^{-2})``; the ``se`` are taken as absolute errors).

    Parameters
    ----------
    d : array_like, shape (m,)
        Dimensions (> 0), at least 3 distinct values and 4 points.
    e : array_like, shape (m,)
        Measured errors.
    se : array_like, shape (m,), optional
        Their standard errors (> 0). If None all points get equal weight, the error scale
        is estimated from the residuals and ``p_value`` is NaN.

    Returns
    -------
    QuadraticFit
        ``e_inf, e_inf_se, c, c_se, c2, c2_se, chi2, dof, p_value``.

    Raises
    ------
    ValueError
        If the arrays do not match, contain non-finite values, ``d`` are not positive
        normal floats or ``se`` not positive, there are too few points, the fit is
        numerically singular (condition number above :data:`MAX_CONDITION`, for instance
        d spread over many orders of magnitude) or a result is not a normal float.

    Examples
    --------
    >>> d = np.array([20.0, 40.0, 60.0, 100.0])
    >>> q = extrapolate_quadratic(d, 1.0 + 2.0 / d + 30.0 / d**2, se=np.full(4, 1e-3))
    >>> round(q.e_inf, 6), round(q.c, 6), round(q.c2, 6)
    (1.0, 2.0, 30.0)

    Used in: :doc:`learning curves </book/linear/learning_curves>`.
    """
    d, e, se = _check_fit_input(d, e, se, 3)
    coef, errs, chi2, _ = _wls(d, e, se, (0.0, 1.0, 2.0), ("e_inf", "c", "c2"), f"d = {d.tolist()}")
    dof = int(d.size - 3)
    if se is None:
        errs = [v * math.sqrt(chi2 / dof) for v in errs]
        p_value = float("nan")
    else:
        p_value = float(stats.chi2.sf(chi2, dof))
    return QuadraticFit(
        e_inf=float(coef[0]),
        e_inf_se=float(errs[0]),
        c=float(coef[1]),
        c_se=float(errs[1]),
        c2=float(coef[2]),
        c2_se=float(errs[2]),
        chi2=chi2,
        dof=dof,
        p_value=p_value,
    )


def point_label(params: Mapping[str, Any]) -> str:
    r"""LaTeX label ``$(\alpha, \kappa, \tau, \rho, \lambda)$`` of a parameter point.

    Parameters
    ----------
    params : mapping
        With the keys ``"alpha", "kappa", "tau", "rho", "lam"`` (numbers; ``kappa`` may be
        ``inf``, printed as ``\infty``).

    Returns
    -------
    str
        For instance ``"$(1, 0.5, 2, 0.01, 0)$"``; numbers in ``%g`` format.

    Raises
    ------
    ValueError
        If a key is missing or a value is not a real number.

    Examples
    --------
    >>> point_label(dict(alpha=2.0, kappa=float("inf"), tau=0.5, rho=0.1, lam=0.0))
    '$(2, \\infty, 0.5, 0.1, 0)$'

    Used in: :doc:`learning curves </book/linear/learning_curves>`.
    """
    keys = ("alpha", "kappa", "tau", "rho", "lam")
    missing = [k for k in keys if k not in params]
    if missing:
        raise ValueError(f"params must have the keys {keys}; missing {missing}")
    parts = []
    for k in keys:
        value = float(check_real(k, params[k], allow_inf=(k == "kappa")))
        parts.append(r"\infty" if np.isinf(value) else f"{value:g}")
    return "$(" + ", ".join(parts) + ")$"


# ----------------------------------------------------------------------------------------
# analysis helpers of chapter 3: fits per variant, paired gaps, fits through the origin
# ----------------------------------------------------------------------------------------


class OriginFit(NamedTuple):
    """Result of :func:`slope_through_origin`: the fit ``g(d) = c / d``.

    Attributes
    ----------
    c, c_se : float
        The slope and its standard error.
    chi2 : float
        Weighted residual sum of squares.
    dof : int
        Number of points minus 1.
    p_value : float
        ``P(chi2_dof >= chi2)``; small values reject a gap that vanishes like ``c/d``.
    """

    c: float
    c_se: float
    chi2: float
    dof: int
    p_value: float


class VariantFits(NamedTuple):
    """Result of :func:`fits_for` for one variant.

    Attributes
    ----------
    summary : dict of str to numpy.ndarray
        Per-d means and standard errors (:func:`summarize`), only the d with enough draws.
    fit : FiniteSizeFit
        The ``e_inf + c/d`` fit.
    free_fit : FiniteSizeFit or None
        The ``e_inf + c/d**b`` fit, or None when there are too few d or it did not converge.
    """

    summary: dict
    fit: FiniteSizeFit
    free_fit: FiniteSizeFit | None


class GapFits(NamedTuple):
    """Result of :func:`gap_for`.

    Attributes
    ----------
    gap : dict of str to numpy.ndarray
        ``d``, ``gap``, ``gap_se`` (floored, see :func:`gap_for`), ``draws``.
    fit : FiniteSizeFit
        The fit ``gap_inf + c/d`` (does the gap vanish?).
    origin : OriginFit
        The fit ``c_Delta/d`` through the origin.
    """

    gap: dict
    fit: FiniteSizeFit
    origin: OriginFit


def floored_se(se: Any, draws: Any, floor: Any) -> np.ndarray:
    """Standard errors of a mean over draws, never below the Monte Carlo error.

    .. math::

        \\mathrm{se}' = \\sqrt{\\max(m\\,\\mathrm{se}^2,\\ v_{\\mathrm{MC}}) / m}

    for ``m`` draws, where ``m se^2`` is the draw-to-draw variance and ``v_MC`` the
    Monte Carlo variance of one draw (the ``floor``). With two or three draws the
    sample variance can come out small by accident; the floor stops a point from
    getting an absurd weight in a fit.

    Parameters
    ----------
    se : array_like, shape (m_d,)
        Standard errors of the per-d means (``>= 0``).
    draws : array_like, shape (m_d,)
        Number of draws behind each mean (``>= 1``).
    floor : float or array_like, shape (m_d,)
        Monte Carlo variance of a single draw at each d (``>= 0``).

    Returns
    -------
    numpy.ndarray, shape (m_d,)

    Raises
    ------
    ValueError
        If an argument is negative, not finite, or the shapes do not broadcast.

    Used in: chapter 3 (standard errors of the paired gaps, :func:`gap_for`).
    """
    se = check_real("se", se, low=0.0)
    m = check_real("draws", draws, low=1.0)
    floor = check_real("floor", floor, low=0.0)
    try:
        se, m, floor = np.broadcast_arrays(se, m, floor)
    except ValueError as exc:
        raise ValueError(f"se, draws and floor must broadcast; got shapes {se.shape}, {m.shape}, {floor.shape}") from exc
    return np.sqrt(np.maximum(se**2 * m, floor) / m)


def slope_through_origin(d: Any, gap: Any, se: Any) -> OriginFit:
    """Weighted least-squares fit of ``gap(d) = c / d`` (a gap that vanishes at infinity).

    .. math::

        \\hat c = \\frac{\\sum_i g_i / (d_i \\mathrm{se}_i^2)}{\\sum_i 1/(d_i^2 \\mathrm{se}_i^2)},
        \\qquad \\mathrm{se}(\\hat c) = \\Big(\\sum_i \\frac{1}{d_i^2\\,\\mathrm{se}_i^2}\\Big)^{-1/2},

    with the ``se`` taken as absolute errors; the p-value is that of
    :math:`\\chi^2 = \\sum_i ((g_i - \\hat c/d_i)/\\mathrm{se}_i)^2` with ``m - 1``
    degrees of freedom.

    Parameters
    ----------
    d : array_like, shape (m,)
        Dimensions (``> 0``), at least two points.
    gap : array_like, shape (m,)
        Measured gaps.
    se : array_like, shape (m,)
        Their standard errors (``> 0``).

    Returns
    -------
    OriginFit
        ``(c, c_se, chi2, dof, p_value)``.

    Raises
    ------
    ValueError
        If the shapes differ, there are fewer than 2 points, ``d`` are not positive normal
        floats, ``se`` not positive, or ``c`` or ``c_se`` is not representable as a normal
        float (the fit runs on rescaled data, so only a result outside the float range fails).

    Examples
    --------
    >>> d = np.array([50.0, 100.0, 200.0])
    >>> round(slope_through_origin(d, 1.5 / d, np.full(3, 1e-3)).c, 6)
    1.5

    Used in: :doc:`testing the equivalence </book/equivalence/verification>`.
    """
    d = _check_dims(d)
    g = check_real("gap", gap)
    se = check_real("se", se, low=0.0, low_open=True)
    if d.ndim != 1 or g.shape != d.shape or se.shape != d.shape:
        raise ValueError(f"d, gap and se must be 1-D of one length; got {d.shape}, {g.shape}, {se.shape}")
    if d.size < 2:
        raise ValueError(f"slope_through_origin needs at least 2 points; got d = {d.tolist()}")
    (c,), (c_se,), chi2, _ = _wls(d, g, se, (1.0,), ("c",), f"d = {d.tolist()}, se = {se.tolist()}")
    dof = int(d.size - 1)
    return OriginFit(c, c_se, chi2, dof, float(stats.chi2.sf(chi2, dof)))


def extrapolate_summary(
    summary: Mapping[str, Any], quantity: str = "icl", power: float | None = 1.0, d_min: float | None = None
) -> FiniteSizeFit:
    """:func:`extrapolate` applied to a summary, optionally without its smallest d.

    Parameters
    ----------
    summary : dict
        From :func:`summarize` (keys ``d``, ``icl``, ``icl_se``, ``idg``, ``idg_se``).
    quantity : {"icl", "idg"}
        Which error.
    power : float or None
        As in :func:`extrapolate`.
    d_min : float, optional
        Keep only the points with ``d >= d_min``.

    Returns
    -------
    FiniteSizeFit

    Raises
    ------
    ValueError
        If ``quantity`` is invalid or too few points remain.

    Used in: :doc:`testing the equivalence </book/equivalence/verification>`.
    """
    if quantity not in ("icl", "idg"):
        raise ValueError(f"quantity must be 'icl' or 'idg'; got {quantity!r}")
    d = np.asarray(summary["d"], dtype=float)
    keep = np.ones(d.shape, bool) if d_min is None else d >= float(check_real("d_min", d_min))
    e = np.asarray(summary[quantity], dtype=float)[keep]
    se = np.asarray(summary[quantity + "_se"], dtype=float)[keep]
    return extrapolate(d[keep], e, se, power=power)


def _enough_draws(columns: dict[str, np.ndarray], min_draws: int) -> dict[str, np.ndarray]:
    keep = columns["draws"] >= min_draws
    return {k: np.asarray(v)[keep] for k, v in columns.items()}


def fits_for(
    experiment: str,
    variants: Sequence[str],
    quantity: str = "icl",
    min_draws: int = 2,
    data_dir: str | Path | None = None,
    **filters: Any,
) -> dict[str, VariantFits]:
    """Summaries and finite-size fits of several variants of one configuration.

    For each variant: ``summarize`` its rows (per-d means; standard errors from the
    spread of the draws, floored by the Monte Carlo error, see :func:`summarize`), drop
    the d with fewer than ``min_draws`` draws (a study that is still being extended may
    hold a single draw at its largest d), and fit ``e_inf + c/d`` and, when at least
    four d remain, ``e_inf + c/d**b``.

    Parameters
    ----------
    experiment : str
        Experiment name (see :func:`load`).
    variants : sequence of str
        Variant names, e.g. ``("teacher", "gaussian")``.
    quantity : {"icl", "idg"}
        Which error.
    min_draws : int, default 2
        Smallest number of draws for a d to enter the fits.
    data_dir : str, pathlib.Path or None
        Folder holding the CSV files; None is the package's ``lib/data/``.
    **filters
        Select one configuration (without ``variant``), as in :func:`table`.

    Returns
    -------
    dict of str to VariantFits
        ``{variant: (summary, fit, free_fit)}``.

    Raises
    ------
    ValueError
        If ``quantity`` or ``min_draws`` is invalid, a filter is ``variant``, or too few
        d remain for a fit.

    Used in: :doc:`testing the equivalence </book/equivalence/verification>`.
    """
    if quantity not in ("icl", "idg"):
        raise ValueError(f"quantity must be 'icl' or 'idg'; got {quantity!r}")
    min_draws = int(check_int("min_draws", min_draws, low=1))
    if "variant" in filters:
        raise ValueError("fits_for takes the variants through `variants`, not a `variant` filter")
    out = {}
    for v in variants:
        s = _enough_draws(summarize(table(experiment, data_dir=data_dir, variant=v, **filters)), min_draws)
        fit1 = extrapolate_summary(s, quantity)
        free = None
        if s["d"].size >= 4:
            try:
                free = extrapolate_summary(s, quantity, power=None)
            except ValueError:  # the free-exponent fit may not converge
                free = None
        out[v] = VariantFits(s, fit1, free)
    return out


def gap_for(
    experiment: str,
    variants: tuple[str, str],
    quantity: str = "icl",
    min_draws: int = 2,
    data_dir: str | Path | None = None,
    **filters: Any,
) -> GapFits:
    """Paired gap between two variants per d, with its two fits.

    The gap ``e_a - e_b`` is averaged draw by draw (:func:`gap`); its standard error is
    floored (:func:`floored_se`) by the sum of the two variants' Monte Carlo variances
    at that d, :math:`\\overline{\\mathrm{se}_a^2} + \\overline{\\mathrm{se}_b^2}`
    (conservative: the common random numbers make the true Monte Carlo error of the
    difference smaller). The d with fewer than ``min_draws`` paired draws are dropped.
    Two fits follow: ``gap_inf + c/d`` (:func:`extrapolate`: does the gap vanish?) and
    ``c_Delta/d`` through the origin (:func:`slope_through_origin`).

    Parameters
    ----------
    experiment : str
        Experiment name.
    variants : tuple of two str
        ``(a, b)``.
    quantity : {"icl", "idg"}
        Which error.
    min_draws : int, default 2
        Smallest number of paired draws for a d to enter.
    data_dir : str, pathlib.Path or None
        Folder holding the CSV files.
    **filters
        Select one configuration (without ``variant``).

    Returns
    -------
    GapFits
        ``(gap, fit, origin)``.

    Raises
    ------
    ValueError
        As :func:`gap`, or if too few d remain.

    Used in: :doc:`testing the equivalence </book/equivalence/verification>`.
    """
    min_draws = int(check_int("min_draws", min_draws, low=1))
    g = gap(experiment, variants, quantity, data_dir=data_dir, **filters)
    mc = np.zeros(g["d"].shape)
    for v in variants:
        t = table(experiment, data_dir=data_dir, variant=v, **filters)
        mc += np.array([np.mean(t[quantity + "_se"][t["d"] == d] ** 2) for d in g["d"]])
    g = dict(g, gap_se=floored_se(g["gap_se"], g["draws"], mc))
    g = _enough_draws(g, min_draws)
    fit1 = extrapolate(g["d"], g["gap"], g["gap_se"])
    return GapFits(g, fit1, slope_through_origin(g["d"], g["gap"], g["gap_se"]))
