"""Regenerate lib/data/source_formulas.csv/.json: the source's formulas, evaluated by its authors' code.

Usage (from the repository root)::

    git clone https://github.com/Pehlevan-Group/incontext-asymptotics-experiments AUTHORS
    python scripts/make_source_values.py --authors AUTHORS [--commit 9f9b5626...]

Chapter 2 states the asymptotic ICL and IDG errors of linear attention on linear
regression. Their source (Lu, Letey, Zavatone-Veth, Maiti and Pehlevan, PNAS 2025) could
not be read in full here, but its authors publish the code that made the paper's figures,
and that code evaluates the formulas: ``theory_runs/common.py`` has ``ridgeless_icl``,
``ridgeless_idg`` and ``ridge_icl``. This script reads that file at a fixed commit of a
local clone (``git show COMMIT:theory_runs/common.py``, nothing is downloaded and nothing
of it is copied into this repository), evaluates the three functions on a grid of
parameter points, and writes the values with the commit they came from. Chapter 2 compares
``lib.theory.linear`` with them when the book builds (:func:`lib.theory.linear.source_values`).

The grid: alpha in (0.5, 1, 2, 4), kappa in (0.3, 0.8, 1.5, 4), tau in (0.3, 0.7, 1.5, 3,
10), rho in (0.01, 0.1, 0.5), skipping tau = kappa (the second interpolation threshold of
the IDG error); the ridge formula also at lambda in (0.05, 0.5, 2): 1080 values. The
authors' code is deterministic (no seeds).
Note: the authors' ``ridge_icl`` rounds the root of its self-consistent equation to six
decimals, so its values carry a relative error of order 1e-6.
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import importlib.util
import itertools
import json
import platform
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import scipy

REPO = "https://github.com/Pehlevan-Group/incontext-asymptotics-experiments"
COMMIT = "9f9b5626befd5ff58239f4a074657c6d9589fb85"
FILE = "theory_runs/common.py"
ALPHAS = (0.5, 1.0, 2.0, 4.0)
KAPPAS = (0.3, 0.8, 1.5, 4.0)
TAUS = (0.3, 0.7, 1.5, 3.0, 10.0)
RHOS = (0.01, 0.1, 0.5)
LAMS = (0.05, 0.5, 2.0)
COLUMNS = ("quantity", "alpha", "kappa", "tau", "rho", "lam", "value")
OUT = Path(__file__).resolve().parents[1] / "lib" / "data" / "source_formulas.csv"


def _load_authors(clone: Path, commit: str):
    """The authors' theory module at ``commit`` of the clone, imported from a temporary file."""
    text = subprocess.run(
        ["git", "-C", str(clone), "show", f"{commit}:{FILE}"], check=True, capture_output=True, text=True
    ).stdout
    tmp = Path(tempfile.mkdtemp()) / "authors_theory.py"
    tmp.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("authors_theory", tmp)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rows(module) -> list[tuple]:
    """(quantity, alpha, kappa, tau, rho, lam, value) for every grid point."""
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the authors' root search probes invalid guesses
        for alpha, kappa, tau, rho in itertools.product(ALPHAS, KAPPAS, TAUS, RHOS):
            if abs(tau - kappa) < 0.05:
                continue
            out.append(
                ("icl_ridgeless", alpha, kappa, tau, rho, 0.0, float(module.ridgeless_icl(alpha, kappa, tau, rho)))
            )
            out.append(
                ("idg_ridgeless", alpha, kappa, tau, rho, 0.0, float(module.ridgeless_idg(alpha, kappa, tau, rho)))
            )
            for lam in LAMS:
                out.append(
                    ("icl_ridge", alpha, kappa, tau, rho, lam, float(module.ridge_icl(alpha, kappa, tau, rho, lam)))
                )
    if not all(np.isfinite(r[-1]) for r in out):
        raise RuntimeError("a value of the authors' formulas is not finite; nothing written")
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--authors", required=True, type=Path, help="a local git clone of " + REPO)
    parser.add_argument("--commit", default=COMMIT, help="the commit to read (default: %(default)s)")
    parser.add_argument(
        "--out", type=Path, default=OUT, help="the CSV to write (default: lib/data/source_formulas.csv)"
    )
    args = parser.parse_args(argv)
    values = rows(_load_authors(args.authors, args.commit))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(COLUMNS)
        for q, *nums in values:
            writer.writerow([q, *(repr(float(x)) for x in nums)])
    meta = {
        "file": args.out.name,
        "columns": list(COLUMNS),
        "what": "the source's ICL (ridgeless and ridge) and IDG (ridgeless) formulas as evaluated by its authors' public code",
        "source_paper": "Lu, Letey, Zavatone-Veth, Maiti, Pehlevan, Asymptotic theory of in-context learning by linear attention, PNAS 122(28) e2502599122 (2025)",
        "authors_code": {
            "repository": REPO,
            "commit": args.commit,
            "file": FILE,
            "functions": ["ridgeless_icl", "ridgeless_idg", "ridge_icl"],
        },
        "grid": {"alpha": ALPHAS, "kappa": KAPPAS, "tau": TAUS, "rho": RHOS, "lam": LAMS},
        "command": "python scripts/make_source_values.py --authors AUTHORS_CLONE --commit " + args.commit,
        "rows": len(values),
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
    }
    args.out.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {len(values)} rows to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
