"""Benchmark of the large-d data pipeline: Dask throughput and single-fit scaling.

Run by hand on a quiet machine (about 20 minutes on 2 cores; other jobs distort both
tables, so the header records the load average):

    .venv/bin/python bench/bench_scaleout.py --markdown --out lib/data/bench_scaleout.md  # make bench
    .venv/bin/python bench/bench_scaleout.py --quick          # small grid, d <= 200

Tables:

1. Throughput of ``scripts/make_finite_size.py`` on a fixed small grid (experiment
   ``teachers``: seven teachers and their Gaussian equivalents, d = 80 and 100, two
   draws, 20,000 test contexts; 56 rows of 1-4 s each, so that the fixed costs of a
   run (the workers' first imports, the last row finishing alone) are small next to
   the work, as in the real studies, whose rows take minutes), run on a local Dask
   cluster with 1 and then 2 single-threaded workers (one BLAS thread each), into
   temporary folders: rows per
   minute and the ratio. The two runs must produce the same rows (checked here: every
   number equal to 1e-12 relative), because each row's seed is fixed by its grid position.
2. One pretraining fit (matrix-free preconditioned CG, ridgeless) at alpha = 2,
   kappa = inf, tau = 3, rho = 0.1 for d = 100 ... 400, each in a fresh child process:
   sampling and fit time, CG iterations, peak resident memory of the child
   (``ru_maxrss`` from ``os.wait4``), and the cost model: one CG iteration costs two
   passes over the n x d tokens and n x (d + 1) features, O(n d^2) each, so the fit time
   should follow t = c * iterations * n * d^2 with one constant c (fitted on the largest
   d; the column "model" shows the prediction for every d).

Used in: the Performance appendix (which reads the report through lib.teaching.benchmarks), and lib/data/README.md (how long the h2 study takes).
"""

from __future__ import annotations

import argparse
import csv
import datetime
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

ALPHA, KAPPA, TAU, RHO = 2.0, float("inf"), 3.0, 0.1
GRID = dict(name="teachers", dims=(80, 100), draws=2, n_test=20_000)


def _script():
    spec = importlib.util.spec_from_file_location("make_finite_size", ROOT / "scripts" / "make_finite_size.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def child(d: int) -> None:
    """Sample and fit once at dimension d; print one JSON line."""
    from lib.attention import fit_gamma
    from lib.samplers import sample_features, sample_task_set

    rng = np.random.default_rng(d)
    t0 = time.perf_counter()
    tasks = sample_task_set(d, KAPPA, rng)
    batch = sample_features(round(TAU * d * d), d, round(ALPHA * d), tasks, None, RHO, rng)
    t1 = time.perf_counter()
    _, info = fit_gamma(*batch, lam=0.0, method="matfree", return_info=True)
    print(json.dumps({"sample_seconds": t1 - t0, "fit_seconds": info["seconds"], "iterations": info.get("iterations")}))


def run_child(d: int) -> tuple[dict, float]:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, __file__, "--child", str(d)], stdout=subprocess.PIPE, cwd=ROOT, env=env)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"child at d = {d} failed")
    return json.loads(out.decode().strip().splitlines()[-1]), usage.ru_maxrss / 2**20


def render(title: str, cols: list[str], rows: list[list[str]], markdown: bool) -> str:
    if markdown:
        lines = [f"### {title}", "", "| " + " | ".join(cols) + " |", "|" + "|".join("---:" for _ in cols) + "|"]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows]) + "\n"
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(cols)]
    fmt = "  ".join(f"{{:>{w}}}" for w in widths)
    lines = [title, "", fmt.format(*cols), fmt.format(*("-" * w for w in widths))]
    return "\n".join(lines + [fmt.format(*r) for r in rows]) + "\n"


def _rows(path: Path) -> dict:
    with path.open() as fh:
        return {(r["label"], r["variant"], r["d"], r["draw"]): r for r in csv.DictReader(fh)}


def throughput_table(markdown: bool, quick: bool) -> str:
    mfs = _script()
    grid = dict(GRID, dims=(16, 24), draws=1) if quick else GRID
    results, tables = [], []
    for workers in (1, 2):
        out = Path(tempfile.mkdtemp(prefix=f"bench_scaleout_w{workers}_"))
        client = mfs.start_client(workers)
        try:
            load = os.getloadavg()[0]
            t0 = time.perf_counter()
            mfs.run_experiment(
                grid["name"],
                out,
                dims=grid["dims"],
                draws=grid["draws"],
                n_test=grid["n_test"],
                log=lambda m: None,
                client=client,
            )
            wall = time.perf_counter() - t0
        finally:
            cluster = client.cluster
            client.close()
            cluster.close()
        rows = _rows(out / f"finite_size_{grid['name']}.csv")
        tables.append(rows)
        results.append((workers, len(rows), wall, load))
        print(f"  {workers} worker(s): {len(rows)} rows in {wall:.1f} s", file=sys.stderr)
    same = tables[0].keys() == tables[1].keys() and all(
        np.allclose(
            [float(tables[1][k][c]) for c in ("icl", "idg", "icl_se", "idg_se")],
            [float(r[c]) for c in ("icl", "idg", "icl_se", "idg_se")],
            rtol=1e-12,
            atol=0,
        )
        for k, r in tables[0].items()
    )
    base = results[0][1] / results[0][2] * 60
    rows = [
        [str(w), str(n), f"{wall:.1f}", f"{n / wall * 60:.1f}", f"{(n / wall * 60) / base:.2f}", f"{load:.1f}"]
        for w, n, wall, load in results
    ]
    title = (
        f"Data script throughput: experiment {grid['name']}, d = {grid['dims']}, "
        f"{grid['draws']} draws, n_test = {grid['n_test']:,}; rows identical for "
        f"1 and 2 workers: {'yes' if same else 'NO'}"
    )
    if not same:
        print("rows differ between 1 and 2 workers", file=sys.stderr)
    return render(title, ["workers", "rows", "wall s", "rows/min", "ratio", "load"], rows, markdown)


def scaling_table(markdown: bool, quick: bool) -> str:
    ds = (100, 150, 200) if quick else (100, 150, 200, 300, 400)
    res = []
    for d in ds:
        load = os.getloadavg()[0]
        out, mem = run_child(d)
        res.append((d, out, mem, load))
        print(f"  d = {d}: fit {out['fit_seconds']:.1f} s, {mem:.2f} GiB", file=sys.stderr)
    n_of = {d: round(TAU * d * d) for d in ds}
    d_ref, out_ref, _, _ = res[-1]
    c = out_ref["fit_seconds"] / (out_ref["iterations"] * n_of[d_ref] * d_ref**2)
    rows = []
    for d, out, mem, load in res:
        model = c * out["iterations"] * n_of[d] * d**2
        rows.append(
            [
                str(d),
                f"{n_of[d]:,}",
                f"{d * (d + 1):,}",
                f"{out['sample_seconds']:.1f}",
                f"{out['fit_seconds']:.1f}",
                str(out["iterations"]),
                f"{model:.1f}",
                f"{mem:.2f}",
                f"{load:.1f}",
            ]
        )
    title = (
        f"One ridgeless fit, matrix-free CG, alpha = {ALPHA:g}, kappa = inf, "
        f"tau = {TAU:g}, one BLAS thread; model t = c * its * n * d^2 with "
        f"c = {c:.2e} s fitted at d = {d_ref}"
    )
    cols = ["d", "n", "p", "sample s", "fit s", "CG its", "model s", "peak GiB", "load"]
    return render(title, cols, rows, markdown)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="small grid and d <= 200")
    parser.add_argument("--markdown", action="store_true", help="markdown tables")
    parser.add_argument("--out", type=Path, help="write the tables to this file")
    parser.add_argument("--only", choices=("throughput", "scaling"), help="one table only")
    args = parser.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    head = [
        f"date: {datetime.datetime.now().isoformat(timespec='seconds')}",
        f"machine: {platform.platform()}, {os.cpu_count()} cores, load average at start "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}",
    ]
    parts = ["\n".join(f"- {h}" if args.markdown else h for h in head) + "\n"]
    if args.only in (None, "throughput"):
        parts.append(throughput_table(args.markdown, args.quick))
    if args.only in (None, "scaling"):
        parts.append(scaling_table(args.markdown, args.quick))
    text = "\n".join(parts)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
