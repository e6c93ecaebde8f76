"""Benchmark of the three solvers of ``lib.attention.fit_gamma`` and of ``simulate``.

Run by hand (a few minutes; the machine's other jobs disturb the timings):

    .venv/bin/python bench/bench_solvers.py              # d = 40 ... 200
    .venv/bin/python bench/bench_solvers.py --quick      # d <= 80
    .venv/bin/python bench/bench_solvers.py --threads 1 --markdown --out lib/data/bench_solvers.md  # make bench
    .venv/bin/python bench/bench_solvers.py --threads 1   # robust on a busy machine

Tables:

1. Solvers at tau = 2, alpha = 2, kappa = 1.5, rho = 0.1, lam = 1e-4 (a tiny ridge, so
   that the dual system is positive definite at n > p; it changes no digit that matters:
   ridgeless CG needs the same iterations). Each (d, method) runs in a fresh child
   process on the same data (same seed); wall time of the fit, peak resident memory of
   the child (``ru_maxrss`` of that child from ``os.wait4``, so other runs do not pollute it; the row
   "sample only" is the same child without a fit: interpreter, numpy and the data),
   speed ratio to dense (wall time), relative Frobenius difference of Gamma* to the direct
   solvers, CG iterations, and the fit's CPU time and the machine's load average (the
   machine is shared: a load above its 2 cores means the wall times are inflated). Dense runs up to d = 100 (its p x p matrix is 0.8 GB there), dual
   while n <= 20,000 (its n x n matrix is 3.2 GB there), matfree everywhere.
2. The end-to-end ``simulate`` at d = 200 (tau = 2, alpha = 2, kappa = 1.5, rho = 0.1,
   ridgeless): sampling + fit + exact ICL and IDG errors, in a fresh child. Targets:
   <= 120 s and <= 4 GiB.
3. The crossovers behind ``method="auto"``: at small sizes, dense vs matfree (n >= p,
   tau = 2) and dual vs matfree (n < p, tau = 0.5), ridgeless, best of 5, wall and CPU
   time, in a child with one BLAS thread (CPU time is then a robust measure of the work).
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import glob
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

ALPHA, KAPPA, TAU, RHO, LAM = 2.0, 1.5, 2.0, 0.1, 1e-4
DENSE_MAX_D = 100
DUAL_MAX_N = 20_000


# ----------------------------------------------------------------------------------------
# child processes
# ----------------------------------------------------------------------------------------


def _data(d: int, seed: int, tau: float = TAU, kappa: float = KAPPA, alpha: float = ALPHA):
    from lib.samplers import sample_features, sample_task_set

    rng = np.random.default_rng(seed)
    tasks = sample_task_set(d, kappa, rng)
    n = round(tau * d * d)
    return sample_features(n, d, round(alpha * d), tasks, None, RHO, rng), tasks


def worker(args: argparse.Namespace) -> None:
    """Run one measurement and print one JSON line (the parent reads ru_maxrss itself)."""
    from lib.attention import exact_error, fit_gamma
    from lib.simulation import simulate

    out: dict = {}
    if args.worker == "crossover":
        out = {"rows": crossover_rows()}
    elif args.worker == "simulate":
        t0 = time.perf_counter()
        res = simulate(args.d, ALPHA, KAPPA, TAU, RHO, lam=0.0, rng=args.seed)
        out = {k: res[k] for k in ("icl", "idg", "method", "iterations", "n", "p")}
        out["seconds"] = time.perf_counter() - t0
    else:
        t0 = time.perf_counter()
        batch, tasks = _data(args.d, args.seed)
        out["sample_seconds"] = time.perf_counter() - t0
        if args.worker != "sample":
            c0 = time.process_time()
            gamma, info = fit_gamma(*batch, lam=LAM, method=args.worker, return_info=True)
            out["cpu_seconds"] = time.process_time() - c0
            out.update(seconds=info["seconds"], iterations=info.get("iterations"), solver=info["solver"])
            ell = round(ALPHA * args.d)
            out["icl"] = exact_error(gamma, ell, RHO)
            out["idg"] = exact_error(gamma, ell, RHO, tasks)
            np.save(args.gamma_file, gamma)
    print(json.dumps(out))


#: Extra environment of the child processes (set by --threads).
CHILD_ENV: dict = {}
CHILD_THREADS = "library default"


def run_child(argv: list[str], env: dict | None = None) -> tuple[dict, float]:
    """Run ``this script argv`` in a fresh interpreter; return its JSON and peak RSS (GiB).

    The JSON gets ``"load"``: the 1-minute load average when the child started."""
    load = os.getloadavg()[0]
    proc = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), *argv],
        stdout=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, **CHILD_ENV, **(env or {})},
    )
    stdout = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"child {argv} failed with exit code {proc.returncode}")
    out = json.loads(stdout.decode().strip().splitlines()[-1])
    out["load"] = load
    return out, usage.ru_maxrss / 2**20  # KiB -> GiB


# ----------------------------------------------------------------------------------------
# tables
# ----------------------------------------------------------------------------------------


def blas_threads() -> str:
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        if os.environ.get(var):
            return f"{os.environ[var]} ({var})"
    libdir = os.path.join(os.path.dirname(np.__file__), "..", "numpy.libs")
    for path in glob.glob(os.path.join(libdir, "*openblas*")):
        lib = ctypes.CDLL(path)
        for name in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_", "openblas_get_num_threads"):
            if hasattr(lib, name):
                return str(getattr(lib, name)())
    return "unknown (library default)"


def header() -> list[str]:
    return [
        f"date: {datetime.datetime.now().isoformat(timespec='seconds')}",
        f"machine: {platform.platform()}, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}",
        f"python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
        f"BLAS threads {blas_threads()} (timed child processes: {CHILD_THREADS})",
    ]


def render(title: str, cols: list[str], rows: list[list[str]], markdown: bool) -> str:
    if markdown:
        lines = [f"### {title}", "", "| " + " | ".join(cols) + " |", "|" + "|".join("---:" for _ in cols) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines) + "\n"
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(cols)]
    fmt = "  ".join(f"{{:>{w}}}" for w in widths)
    lines = [title, "", fmt.format(*cols), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*r) for r in rows]
    return "\n".join(lines) + "\n"


def solver_table(ds: list[int], tmp: str, markdown: bool) -> str:
    cols = [
        "d",
        "n",
        "p",
        "method",
        "fit s (wall)",
        "fit s (cpu)",
        "load",
        "peak GiB",
        "speed-up vs dense (wall/cpu)",
        "rel. diff Gamma",
        "CG its",
        "e_ICL",
        "e_IDG",
    ]
    rows = []
    for d in ds:
        n, p = round(TAU * d * d), d * (d + 1)
        _, mem = run_child(["--worker", "sample", "--d", str(d), "--seed", str(d)])
        rows.append([str(d), str(n), str(p), "sample only", "", "", "", f"{mem:.2f}", "", "", "", "", ""])
        methods = (["dense"] if d <= DENSE_MAX_D else []) + (["dual"] if n <= DUAL_MAX_N else []) + ["matfree"]
        res, gammas = {}, {}
        for m in methods:
            f = os.path.join(tmp, f"gamma_{d}_{m}.npy")
            res[m] = run_child(["--worker", m, "--d", str(d), "--seed", str(d), "--gamma-file", f])
            gammas[m] = np.load(f)
            print(f"  d = {d}, {m}: {res[m][0]['seconds']:.2f} s", file=sys.stderr, flush=True)
        ref = "dense" if "dense" in gammas else ("dual" if "dual" in gammas else None)
        for m in methods:
            out, mem = res[m]
            if "dense" in res:
                dense = res["dense"][0]
                speed = f"{dense['seconds'] / out['seconds']:.1f}x / {dense['cpu_seconds'] / out['cpu_seconds']:.1f}x"
            else:
                speed = "-"
            if ref is not None and m != ref:
                g, r = gammas[m], gammas[ref]
                diff = f"{np.linalg.norm(g - r) / np.linalg.norm(r):.1e} vs {ref}"
            else:
                diff = "-"
            its = str(out["iterations"]) if out["iterations"] is not None else "-"
            rows.append(
                [
                    "",
                    "",
                    "",
                    m,
                    f"{out['seconds']:.2f}",
                    f"{out['cpu_seconds']:.2f}",
                    f"{out['load']:.1f}",
                    f"{mem:.2f}",
                    speed,
                    diff,
                    its,
                    f"{out['icl']:.6f}",
                    f"{out['idg']:.6f}",
                ]
            )
    title = (
        f"Solvers: tau = {TAU:g}, alpha = {ALPHA:g}, kappa = {KAPPA:g}, rho = {RHO:g}, lam = {LAM:g} "
        f"(each run in a fresh process, {CHILD_THREADS} BLAS threads; peak = max resident set size of that process; "
        "load = 1-minute load average of the machine when the run started: with 2 cores, a load "
        "above 2 means other jobs slowed the run down)"
    )
    return render(title, cols, rows, markdown)


def simulate_table(d: int, markdown: bool) -> str:
    out, mem = run_child(["--worker", "simulate", "--d", str(d), "--seed", "1"])
    print(f"  simulate d = {d}: {out['seconds']:.1f} s", file=sys.stderr, flush=True)
    cols = ["d", "n", "p", "method", "CG its", "seconds", "load", "peak GiB", "e_ICL", "e_IDG", "targets"]
    ok = "met" if out["seconds"] <= 120 and mem <= 4 else "MISSED"
    rows = [
        [
            str(d),
            str(out["n"]),
            str(out["p"]),
            out["method"],
            str(out["iterations"]),
            f"{out['seconds']:.1f}",
            f"{out['load']:.1f}",
            f"{mem:.2f}",
            f"{out['icl']:.4f}",
            f"{out['idg']:.4f}",
            f"<= 120 s, <= 4 GiB: {ok}",
        ]
    ]
    title = f"simulate end to end (sample + fit + exact errors): alpha = {ALPHA:g}, kappa = {KAPPA:g}, tau = {TAU:g}, rho = {RHO:g}, ridgeless"
    return render(title, cols, rows, markdown)


def _best_of(fn, repeats: int = 5):
    wall, cpu = np.inf, np.inf
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        wall, cpu = min(wall, time.perf_counter() - w0), min(cpu, time.process_time() - c0)
    return wall, cpu, out


def crossover_rows() -> list[list[str]]:
    """Runs in a child with one BLAS thread (see crossover_table)."""
    from lib.attention import fit_gamma

    rows = []
    for tau, ds, direct in ((2.0, (10, 15, 20, 25, 30, 40, 50), "dense"), (0.5, (20, 30, 40, 50, 60, 80), "dual")):
        for d in ds:
            batch, _ = _data(d, seed=d, tau=tau, kappa=np.inf)
            n, p = batch.targets.size, d * (d + 1)
            w1, c1, _ = _best_of(lambda: fit_gamma(*batch, method=direct))
            w2, c2, (_, info) = _best_of(lambda: fit_gamma(*batch, method="matfree", return_info=True))
            _, auto = fit_gamma(*batch, return_info=True)
            rows.append(
                [
                    f"tau = {tau:g}",
                    str(d),
                    str(n),
                    str(p),
                    direct,
                    f"{1e3 * w1:.1f} / {1e3 * c1:.1f}",
                    f"{1e3 * w2:.1f} / {1e3 * c2:.1f}",
                    f"{c1 / c2:.1f}x",
                    str(info["iterations"]),
                    auto["method"],
                ]
            )
    return rows


def crossover_table(markdown: bool) -> str:
    """Single-thread timings: CPU time then measures the work, little disturbed by other jobs
    (with two BLAS threads on a loaded machine, spinning threads inflate CPU and wall time)."""
    out, _ = run_child(["--worker", "crossover"], env={"OPENBLAS_NUM_THREADS": "1"})
    cols = [
        "regime",
        "d",
        "n",
        "p",
        "direct solver",
        "direct ms (wall/cpu)",
        "matfree ms (wall/cpu)",
        "matfree speed-up (cpu)",
        "CG its",
        "auto picks",
    ]
    title = "Crossovers behind method='auto' (alpha = 2, kappa = inf, rho = 0.1, ridgeless; one BLAS thread, best of 5)"
    return render(title, cols, out["rows"], markdown)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="only d <= 80 (about a minute)")
    parser.add_argument("--markdown", action="store_true", help="Markdown tables")
    parser.add_argument("--out", help="also write the report to this file")
    parser.add_argument(
        "--threads",
        type=int,
        help="BLAS threads of the timed child processes (default: the library's, i.e. "
        "all cores); 1 gives CPU times that other jobs on a shared machine hardly disturb",
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--d", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--gamma-file", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args)
        return
    global CHILD_THREADS
    if args.threads is not None:
        CHILD_ENV.update(OPENBLAS_NUM_THREADS=str(args.threads), OMP_NUM_THREADS=str(args.threads))
        CHILD_THREADS = str(args.threads)
    ds = [40, 60, 80] if args.quick else [40, 60, 80, 100, 140, 200]
    parts = []
    head = header()
    parts.append("\n".join(f"- {h}" for h in head) + "\n" if args.markdown else "\n".join(head) + "\n")
    with tempfile.TemporaryDirectory() as tmp:
        parts.append(solver_table(ds, tmp, args.markdown))
    if not args.quick:
        parts.append(simulate_table(200, args.markdown))
    parts.append(crossover_table(args.markdown))
    report = "\n".join(parts)
    print(report)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(report)


if __name__ == "__main__":
    main()
