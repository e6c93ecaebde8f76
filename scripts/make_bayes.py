"""Regenerate lib/data/bayes_error.csv/.json: the Bayes error of chapter 7's points, by Monte Carlo.

Usage (from the repository root; one command, about three minutes of CPU time (--jobs 4: under a minute on four idle cores))::

    python scripts/make_bayes.py [--jobs 3]

The Bayes error is the error of the posterior mean of the query's label given the
context, the smallest error any predictor can reach. :func:`lib.bayes.bayes_error`
estimates it by replica-exchange Metropolis sampling of the task's posterior on the
sphere (its docstring says how). Chapter 7 draws it beside the trained networks. It costs
minutes per point, too much for the book's build, so this script computes it once and the
chapter reads it (:func:`lib.bayes.load_bayes`).

The points: h2 and ReLU at d = 8, alpha = 2, 4, 8, 16, and at d = 16, alpha = 4, 16;
rho = 0.1. The seed of a point is ``SEED + 1000 * d + round(10 * alpha)`` (plus 100000
for ReLU); the sampler's settings are the constants below. The JSON sidecar records them,
the command, the date, the machine, the library and numpy versions; the ``seconds`` of a
row is the CPU time of its point (the machine is shared, so wall time says little). ``--points`` recomputes a subset (labels such as ``h2:8:2``), keeping the
other stored rows.
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import json
import platform
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lib import __version__ as LIB_VERSION  # noqa: E402
from lib.bayes import BAYES_COLUMNS, bayes_error, load_bayes  # noqa: E402
from lib.theory import context_free_error  # noqa: E402

SEED = 20261206
RHO = 0.1
SETTINGS = {"n_chains": 4, "n_temps": 8, "beta_min": 1e-3, "n_burn": 2000, "n_keep": 6000, "n_query": 32}
#: (teacher, d, alpha, n_contexts): fewer contexts where a context costs more (long
#: contexts) or where the per-context values scatter less (large alpha)
POINTS = [
    ("h2", 8, 2.0, 120),
    ("h2", 8, 4.0, 100),
    ("h2", 8, 8.0, 60),
    ("h2", 8, 16.0, 50),
    *[("relu", 8, a, 40) for a in (2.0, 4.0, 8.0, 16.0)],
    ("h2", 16, 4.0, 50),
    ("h2", 16, 16.0, 24),
    *[("relu", 16, a, 40) for a in (4.0, 16.0)],
]


def seed_of(teacher: str, d: int, alpha: float) -> int:
    """The seed of a point: ``SEED + 1000 d + round(10 alpha)``, plus 100000 for ReLU."""
    return SEED + 1000 * d + round(10 * alpha) + (100_000 if teacher == "relu" else 0)


def one_point(point: tuple) -> dict:
    """The row of one point: the estimate, its diagnostics, e_cf and the CPU time."""
    teacher, d, alpha, n_ctx = point
    seed = seed_of(teacher, d, alpha)
    t0 = time.process_time()
    est = bayes_error(teacher, d, alpha, RHO, n_contexts=n_ctx, rng=np.random.default_rng(seed), **SETTINGS)
    sec = time.process_time() - t0
    row = {"teacher": teacher, "d": d, "alpha": alpha, "ell": round(alpha * d), "rho": RHO, "seed": seed}
    row |= {"n_contexts": n_ctx, **SETTINGS, "error": est.error, "se": est.se, "rhat_max": est.rhat_max}
    row |= {"rhat_q99": est.rhat_q99, "acceptance": est.acceptance}
    return row | {"e_cf": context_free_error(teacher, d, RHO), "seconds": sec}


def label(p: tuple) -> str:
    return f"{p[0]}:{p[1]}:{p[2]:g}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", nargs="*", help="labels teacher:d:alpha to (re)compute (default: all)")
    ap.add_argument("--out", default=str(ROOT / "lib" / "data"), help="output directory")
    ap.add_argument("--jobs", type=int, default=1, help="points computed at once (processes)")
    args = ap.parse_args()
    out = Path(args.out)
    csv_path, json_path = out / "bayes_error.csv", out / "bayes_error.json"
    todo = [p for p in POINTS if not args.points or label(p) in args.points]
    unknown = set(args.points or ()) - {label(p) for p in POINTS}
    if unknown:
        ap.error(f"unknown points {sorted(unknown)}; known: {[label(p) for p in POINTS]}")
    rows = {}
    if csv_path.exists() and args.points:
        rows = {k: {c: v[c] for c in BAYES_COLUMNS} for k, v in load_bayes(csv_path).items()}
    with ProcessPoolExecutor(max_workers=max(args.jobs, 1)) as pool:
        for row in pool.map(one_point, todo):
            rows[(row["teacher"], row["d"], row["alpha"])] = row
            print(
                f"{label((row['teacher'], row['d'], row['alpha']))}: {row['error']:.4f} ± "
                f"{row['se']:.4f}  R-hat max {row['rhat_max']:.3f}  q99 {row['rhat_q99']:.3f}  "
                f"acc {row['acceptance']:.2f}  {row['seconds']:.0f} s",
                flush=True,
            )
    order = [(p[0], p[1], p[2]) for p in POINTS]
    tmp = csv_path.with_suffix(".csv.tmp")
    with tmp.open("w", newline="") as fh:
        w = csv.DictWriter(fh, BAYES_COLUMNS, lineterminator="\n")
        w.writeheader()
        for k in sorted(rows, key=order.index):
            w.writerow({c: repr(v) if isinstance(v, float) else v for c, v in rows[k].items()})
    tmp.replace(csv_path)
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    except OSError:
        commit = ""
    meta = {
        "file": csv_path.name,
        "rows": len(rows),
        "command": "python scripts/make_bayes.py" + (" --points " + " ".join(args.points) if args.points else ""),
        "rho": RHO,
        "settings": SETTINGS,
        "points": [{"label": label(p), "n_contexts": p[3], "seed": seed_of(*p[:3])} for p in POINTS],
        "seed_scheme": "SEED + 1000 * d + round(10 * alpha) (+ 100000 for relu), SEED = %d" % SEED,
        "lib_version": LIB_VERSION,
        "git_commit": commit,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "total_cpu_seconds": sum(r["seconds"] for r in rows.values()),
    }
    json_path.write_text(json.dumps(meta, indent=2) + "\n")


if __name__ == "__main__":
    main()
