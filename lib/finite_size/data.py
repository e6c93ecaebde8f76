"""The large-d simulation tables in ``lib/data/``: reading, filtering, averaging over draws.

The asymptotic formulas of the book hold as ``d -> infinity``. At the dimensions a
laptop can simulate (``d <= 200``) the measured errors still sit above their limits,
by a gap that shrinks with ``d``. This module reads the simulation tables made by
``scripts/make_finite_size.py`` (one CSV per experiment in the package's ``lib/data/``
folder) and fits the finite-size law

.. math::

    e(d) = e_\\infty + c / d^{b}

(``b = 1`` by default) by weighted least squares, so that a chapter can compare the
extrapolated ``e_inf`` (:mod:`lib.finite_size.fits`) with the theory and test whether the ``1/d`` law describes the
data.

The CSV columns are :data:`COLUMNS`: ``experiment, label, teacher, variant, d, draw,
seed, alpha, kappa, tau, rho, lam, icl, icl_se, idg, idg_se, n_test, method, seconds``.
``variant`` is ``"teacher"`` (the nonlinear teacher itself), ``"gaussian"`` (its
Gaussian-equivalent linear teacher ``g(z) = a_0 + a_1 z`` with noise ``rho_eq``),
``"noise"`` (pure label noise of variance ``rho_nl``, teacher ``f = 0``) or ``"linear"``
(the linear teacher ``f(z) = z``). The ``rho`` column is always the label-noise variance
of the experiment's nominal teacher; the noise actually used by the ``gaussian`` and
``noise`` variants is derived from it (see ``data/README.md``). Rows with exact errors
(linear teacher) have ``n_test = 0`` and ``icl_se = idg_se = 0``. ``teacher`` is a link
name of :mod:`lib.hermite`, ``"linear"``, or a name the script gives to Hermite
coefficients (``"0.3h1+h2"``: ``a = (0, 0.3, 1)``). ``method`` is the solver of
:func:`lib.attention.fit_gamma`, followed by its CG iteration count when it is iterative
(``"matfree (158 CG iterations)"``; rows made before that was recorded say ``"matfree"``).

Used in: chapters 2, 3 and the Performance appendix.
"""

from __future__ import annotations

import importlib.resources
import math
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .. import _csvfile
from .._checks import check_choice

__all__ = ["COLUMNS", "DATA_DIR", "available_experiments", "load", "table", "summarize", "gap", "cg_iterations"]

#: The package's data folder ``lib/data``, found through :mod:`importlib.resources`, so it
#: is the same for an editable install, a regular ``pip install`` and a source checkout.
#: (Its value is an absolute path on the machine that imports the package.)
#:
#: :meta hide-value:
DATA_DIR: Path = Path(str(importlib.resources.files("lib").joinpath("data")))

#: Columns of every ``lib/data/finite_size_<experiment>.csv``, in order.
COLUMNS: tuple[str, ...] = (
    "experiment",
    "label",
    "teacher",
    "variant",
    "d",
    "draw",
    "seed",
    "alpha",
    "kappa",
    "tau",
    "rho",
    "lam",
    "icl",
    "icl_se",
    "idg",
    "idg_se",
    "n_test",
    "method",
    "seconds",
)
_STR_COLUMNS = frozenset({"experiment", "label", "teacher", "variant", "method"})
_INT_COLUMNS = frozenset({"d", "draw", "seed", "n_test"})
#: Columns that must be constant within the rows handed to :func:`summarize`.
_CONFIG_COLUMNS = ("experiment", "label", "teacher", "variant", "alpha", "kappa", "tau", "rho", "lam")
_PREFIX = "finite_size_"
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
    return sorted(p.stem[len(_PREFIX) :] for p in folder.glob(f"{_PREFIX}*.csv"))


def _path(experiment: Any, data_dir: str | Path | None) -> Path:
    available = available_experiments(data_dir)
    hint = f" (the files {_PREFIX}<experiment>.csv in {_dir(data_dir)}; `make data` regenerates them)"
    check_choice("experiment", experiment, available, hint=hint)
    return _dir(data_dir) / f"{_PREFIX}{experiment}.csv"


#: Smallest allowed value of each integer column.
_INT_LOW = {"d": 1, "draw": 0, "seed": 0, "n_test": 0}
#: Float columns that must be ``>= 0``: the model's parameters, standard errors and timings.
_NONNEGATIVE = frozenset({"alpha", "kappa", "tau", "rho", "lam", "icl_se", "idg_se", "seconds"})


def _convert(name: str, text: str, where: str) -> Any:
    """One CSV field as its Python value; ``ValueError("<where>: <name>: ...")`` if invalid."""
    if name in _STR_COLUMNS:
        return _csvfile.to_text(name, text, where)
    if name in _INT_COLUMNS:
        return _csvfile.to_int(name, text, where, low=_INT_LOW[name])
    return _csvfile.to_float(name, text, where, allow_inf=name == "kappa", nonnegative=name in _NONNEGATIVE)


#: A configuration and a dimension with a draw, or with a seed: one row, never two.
_ROW_KEYS = (
    (lambda r: tuple(r[k] for k in _CONFIG_COLUMNS) + (r["d"], r["draw"]), "same configuration, d and draw"),
    (lambda r: tuple(r[k] for k in _CONFIG_COLUMNS) + (r["d"], r["seed"]), "same configuration, d and seed"),
)


def load(experiment: str, data_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """Read the rows of ``lib/data/finite_size_<experiment>.csv``, checking every one.

    The file is read as UTF-8 (a leading byte-order mark is allowed). Every row must have
    exactly the fields of :data:`COLUMNS`: ``d, draw, seed, n_test`` integers (``d >= 1``,
    the others ``>= 0``, all ``<= 2**63 - 1``, an int64; seeds are exact Python ints),
    the text columns non-empty, the other columns numbers, finite except ``kappa``
    (which may be ``inf``), with the parameters ``alpha, kappa, tau, rho, lam`` and
    ``icl_se, idg_se, seconds >= 0``. Blank lines are skipped.

    Each (configuration, ``d``, ``draw``) has at most one row: a repeated row, even an
    exact copy, is refused rather than counted as another draw. The script that writes
    the tables never leaves one: when it resumes an interrupted run it drops a cut last
    line and repeated rows from the file (``_read_existing`` in
    ``scripts/make_finite_size.py``) before appending, so a repeated row in a stored
    table is a corruption (for instance two files concatenated by hand).

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
        fields (for instance a truncated last line) or too many, a last line without a
        line break (a file cut, possibly inside its last number), fewer or more rows
        than the ``rows`` of the JSON sidecar ``finite_size_<experiment>.json`` when
        there is one, a non-integer in an integer column, a field that is not a
        number, a non-finite value where a finite one is required, a negative
        parameter, standard error or time, two rows of the same configuration and ``d`` with the same draw
        or the same seed (the message gives both lines), a text with a control
        character, a row whose ``experiment`` is not the file's.
    """
    path = _path(experiment, data_dir)

    def check_row(row: dict[str, Any], where: str) -> None:
        if row["experiment"] != experiment:
            raise ValueError(f"{where}: experiment: {row['experiment']!r} in the file of experiment {experiment!r}")

    return _csvfile.read_rows(path, COLUMNS, _convert, check_row=check_row, keys=_ROW_KEYS)


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
    TypeError
        If a filter's value is not a str, a real number (not a bool), or a list, tuple
        or set of them.

    Examples
    --------
    >>> t = table("teachers", teacher="relu", variant="teacher")   # doctest: +SKIP
    >>> t["d"], t["icl"]                                            # doctest: +SKIP
    """
    unknown = sorted(set(filters) - set(COLUMNS))
    if unknown:
        raise ValueError(f"filters must be column names among {COLUMNS}; got unknown {unknown}")
    for name, wanted in filters.items():
        for value in wanted if isinstance(wanted, (list, tuple, set, frozenset)) else (wanted,):
            number = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
                value, (bool, np.bool_)
            )
            if not (isinstance(value, str) or number):
                raise TypeError(
                    f"filter {name} must be a str, a real number, or a list, tuple or set of them; got {wanted!r}"
                )
    rows = load(experiment, data_dir)
    kept = [r for r in rows if all(_matches(r[k], v) for k, v in filters.items())]
    if not kept:
        present = {k: sorted({r[k] for r in rows}, key=str) for k in filters}
        raise ValueError(f"no row of experiment {experiment!r} matches {filters}; values present: {present}")
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

    Notes
    -----
    Used in: :doc:`testing the equivalence </book/equivalence/verification>`.
    """
    check_choice("quantity", quantity, ("icl", "idg"))
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


def cg_iterations(rows_or_table: Any) -> np.ndarray:
    """The conjugate-gradient iteration count of each row's fit, read from ``method``.

    Parameters
    ----------
    rows_or_table : list of dict or dict of arrays
        Rows from :func:`load`, or a :func:`table`.

    Returns
    -------
    numpy.ndarray
        One float per row: the count recorded in ``"matfree (158 CG iterations)"``, or
        ``nan`` for a direct solver (``dense``, ``dual``) and for older ``matfree`` rows
        that did not record it.

    Raises
    ------
    ValueError
        If a ``method`` entry is none of these forms.

    Examples
    --------
    >>> cg_iterations({"method": np.array(["dual", "matfree (34 CG iterations)"])})
    array([nan, 34.])
    """
    if isinstance(rows_or_table, Mapping):
        if "method" not in rows_or_table:
            raise ValueError("rows_or_table has no column 'method'")
        methods = list(rows_or_table["method"])
    elif isinstance(rows_or_table, Iterable) and not isinstance(rows_or_table, (str, bytes)):
        rows = list(rows_or_table)
        if not all(isinstance(r, Mapping) and "method" in r for r in rows):
            raise ValueError("rows_or_table must be rows (dicts) that each have a 'method'")
        methods = [r["method"] for r in rows]
    else:
        raise TypeError(
            f"rows_or_table must be a list of row dicts or a dict of columns; got {type(rows_or_table).__name__}"
        )
    out = np.full(len(methods), np.nan)
    for i, m in enumerate(methods):
        m = str(m)
        if m in ("dense", "dual", "matfree"):
            continue
        head, _, rest = m.partition(" (")
        count = rest.removesuffix(" CG iterations)")
        if head != "matfree" or not count.isdigit() or count == rest:
            raise ValueError(
                f"method of row {i} must be 'dense', 'dual', 'matfree' or 'matfree (N CG iterations)'; got {m!r}"
            )
        out[i] = int(count)
    return out
