r"""The source's formulas for the linear teacher, as its authors' public code evaluates them.

Chapter 2 quotes the asymptotic ICL and IDG errors of linear attention from Lu, Letey,
Zavatone-Veth, Maiti and Pehlevan (PNAS 2025). Their authors publish the code that made
the paper's figures; its file ``theory_runs/common.py`` evaluates the formulas
(``ridgeless_icl``, ``ridgeless_idg``, ``ridge_icl``). ``scripts/make_source_values.py``
runs those functions on a parameter grid from a local clone of that repository, at a
recorded commit, and stores the values in ``lib/data/source_formulas.csv`` (nothing of
the authors' code is in this package). :func:`source_values` reads them, so that the
book can compare :func:`lib.theory.icl_error` and :func:`lib.theory.idg_error` with an
implementation that is not its own.

Used in chapter 2 (:doc:`learning curves </book/linear/learning_curves>`).
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path

import numpy as np

from .. import _csvfile

__all__ = ["SOURCE_COLUMNS", "source_values"]

#: Columns of ``lib/data/source_formulas.csv`` (see :func:`source_values`).
SOURCE_COLUMNS = ("quantity", "alpha", "kappa", "tau", "rho", "lam", "value")
_SOURCE_QUANTITIES = ("icl_ridgeless", "idg_ridgeless", "icl_ridge")


def source_values(path: str | Path | None = None) -> dict[str, dict[str, np.ndarray]]:
    r"""The source's formulas as evaluated by its authors' public code, on a parameter grid.

    Reads ``lib/data/source_formulas.csv``, written by ``scripts/make_source_values.py``
    from the authors' code (repository ``Pehlevan-Group/incontext-asymptotics-experiments``,
    file ``theory_runs/common.py``, functions ``ridgeless_icl``, ``ridgeless_idg`` and
    ``ridge_icl``, at the commit recorded in ``source_formulas.json``). Comparing
    :func:`lib.theory.icl_error` and :func:`lib.theory.idg_error` with these values checks the book's printed
    formulas against an implementation that is not the book's.

    Parameters
    ----------
    path : str, pathlib.Path or None
        The CSV file; None (default) is the package's ``lib/data/source_formulas.csv``.

    Returns
    -------
    dict of str to dict of str to numpy.ndarray
        One entry per quantity, ``"icl_ridgeless"``, ``"idg_ridgeless"`` and
        ``"icl_ridge"``, each a dict of float arrays of shape ``(m,)`` keyed by
        ``"alpha", "kappa", "tau", "rho", "lam", "value"`` (``lam = 0`` for the
        ridgeless quantities).

    Raises
    ------
    ValueError
        If the file is not valid; the message is ``"<path>:<line>: <column>:
        <problem>"``. Invalid are: a header other than :data:`SOURCE_COLUMNS` or
        repeated, a row with a missing or an extra field, a last line without a line
        break (a file cut, possibly inside its last number), fewer or more rows than
        the ``rows`` of ``source_formulas.json`` (when the file has that sidecar), an
        unknown quantity, a field that is not a number, NaN or an infinity, a negative
        parameter, two rows of the same quantity at the same parameters (both lines
        are named), and a quantity without any row.

    See Also
    --------
    lib.theory.icl_error, lib.theory.idg_error : the book's forms of the same formulas.

    Notes
    -----
    The authors' ``ridge_icl`` rounds the root of its self-consistent equation to six
    decimals, so the ridge values carry a relative error of order :math:`10^{-6}`; the
    ridgeless ones are exact to rounding.

    Used in: :doc:`learning curves </book/linear/learning_curves>` (the status of the
    ridgeless theorem and of the ridge and IDG statement).
    """
    if path is None:
        path = Path(str(importlib.resources.files("lib") / "data" / "source_formulas.csv"))
    elif not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str, a pathlib.Path or None; got {type(path).__name__} {path!r}")
    rows = _csvfile.read_rows(Path(path), SOURCE_COLUMNS, _convert, keys=_KEYS)
    out: dict[str, dict[str, list[float]]] = {q: {k: [] for k in SOURCE_COLUMNS[1:]} for q in _SOURCE_QUANTITIES}
    for row in rows:
        for name in SOURCE_COLUMNS[1:]:
            out[row["quantity"]][name].append(row[name])
    for q, cols in out.items():
        if not cols["value"]:
            raise ValueError(f"{path}:1: quantity: {q!r} has no row; every one of {_SOURCE_QUANTITIES} needs one")
    return {q: {k: np.array(v, dtype=float) for k, v in cols.items()} for q, cols in out.items()}


def _convert(name: str, text: str, where: str) -> str | float:
    """One field of ``source_formulas.csv``; ValueError naming where and the column."""
    if name == "quantity":
        if text not in _SOURCE_QUANTITIES:
            raise ValueError(f"{where}: quantity: {text!r} is not one of {_SOURCE_QUANTITIES}")
        return text
    return _csvfile.to_float(name, text, where, nonnegative=name in _NONNEGATIVE)


#: Two rows of the same quantity at the same parameters are one value written twice.
_KEYS = ((lambda r: tuple(r[k] for k in SOURCE_COLUMNS[:-1]), "same quantity and parameters"),)
_NONNEGATIVE = frozenset({"alpha", "kappa", "tau", "rho", "lam"})
