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

import csv
import importlib.resources
from pathlib import Path

import numpy as np

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
        If the header is not :data:`SOURCE_COLUMNS`, a quantity is unknown, a field is
        not a finite number, or a quantity has no row; the message names the file, the
        line and the field.

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
    path = Path(path)
    out: dict[str, dict[str, list[float]]] = {q: {k: [] for k in SOURCE_COLUMNS[1:]} for q in _SOURCE_QUANTITIES}
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None or tuple(header) != SOURCE_COLUMNS:
            raise ValueError(f"{path}:1: header: must be {SOURCE_COLUMNS}; it is {header}")
        for line, fields in enumerate(reader, start=2):
            if not fields:
                continue
            if len(fields) != len(SOURCE_COLUMNS):
                raise ValueError(f"{path}:{line}: the row has {len(fields)} fields, not {len(SOURCE_COLUMNS)}")
            if fields[0] not in out:
                raise ValueError(f"{path}:{line}: quantity: {fields[0]!r} is not one of {_SOURCE_QUANTITIES}")
            for name, text in zip(SOURCE_COLUMNS[1:], fields[1:]):
                try:
                    value = float(text)
                except ValueError:
                    raise ValueError(f"{path}:{line}: {name}: {text!r} is not a number") from None
                if not np.isfinite(value):
                    raise ValueError(f"{path}:{line}: {name}: {text!r} is not finite")
                out[fields[0]][name].append(value)
    for q, cols in out.items():
        if not cols["value"]:
            raise ValueError(f"{path}: quantity {q!r} has no row")
    return {q: {k: np.array(v, dtype=float) for k, v in cols.items()} for q, cols in out.items()}
