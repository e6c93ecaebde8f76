"""Benchmark of lib.theory: time to evaluate 400-point theory curves.

Prints a table (or, with ``--markdown``, a Markdown table for the book's Performance
appendix) of the median wall-clock time over repeats (``time.perf_counter``) of one
vectorized call per curve, with the date and the machine. Target: a 400-point ridge
ICL curve in at most 20 ms.

Usage::

    .venv/bin/python bench/bench_theory.py [--markdown] [--repeats 30]
    .venv/bin/python bench/bench_theory.py --markdown > lib/data/bench_theory.md  # make bench
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import time
from typing import Callable

import numpy as np
import scipy

from lib import theory

N_POINTS = 400
TARGET_MS = 20.0


def _curves() -> list[tuple[str, Callable[[], object], bool]]:
    """(label, zero-argument call, is a ridge curve) for each benchmarked curve."""
    n = N_POINTS
    tau = np.linspace(0.05, 10.0, n)
    lam = np.logspace(-4, 2, n)
    kappa = np.logspace(np.log10(0.05), np.log10(50.0), n)
    tau_odd = tau[np.abs(tau - 1.0) > 1e-12]
    return [
        ("ridge ICL, 400 tau (lam = 0.1)", lambda: theory.icl_error(2.0, 1.5, tau, 0.1, 0.1), True),
        ("ridge ICL, 400 lam (tau = 3)", lambda: theory.icl_error(2.0, 1.5, 3.0, 0.1, lam), True),
        ("ridge ICL, 400 kappa (tau = 3, lam = 0.1)", lambda: theory.icl_error(2.0, kappa, 3.0, 0.1, 0.1), True),
        ("ridgeless ICL, 400 tau", lambda: theory.icl_error(2.0, 1.5, tau_odd, 0.1), False),
        ("ridgeless IDG, 400 tau", lambda: theory.idg_error(2.0, 1.5, tau_odd, 0.1), False),
        (
            "nonlinear ICL (relu), ridge, 400 tau",
            lambda: theory.nonlinear_icl_error("relu", 2.0, 1.5, tau, 0.1, 0.1),
            True,
        ),
        (
            "nonlinear ICL (h2, a1 = 0), ridge, 400 tau",
            lambda: theory.nonlinear_icl_error("h2", 2.0, 1.5, tau, 0.1, 0.1),
            False,
        ),
        ("optimal lambda, 20 tau", lambda: theory.optimal_lambda(2.0, 1.5, tau[::20], 0.1), False),
    ]


def _median_ms(call: Callable[[], object], repeats: int) -> float:
    call()  # warm-up (imports, caches)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def _machine() -> list[tuple[str, str]]:
    return [
        ("date", datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")),
        ("machine", f"{platform.platform()} ({platform.machine()}), {os.cpu_count()} cores"),
        ("processor", platform.processor() or "unknown"),
        ("python / numpy / scipy", f"{platform.python_version()} / {np.__version__} / {scipy.__version__}"),
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--repeats", type=int, default=30, help="timed repeats per curve (default 30)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be >= 1; got {args.repeats}")

    rows = []
    for label, call, is_ridge in _curves():
        ms = _median_ms(call, args.repeats)
        verdict = ("ok" if ms <= TARGET_MS else "SLOW") if is_ridge else ""
        rows.append((label, f"{ms:.2f}", verdict))

    head = ("curve", "median time (ms)", f"target <= {TARGET_MS:g} ms")
    if args.markdown:
        for key, value in _machine():
            print(f"- **{key}**: {value}")
        print(f"- **repeats**: {args.repeats} (median of `time.perf_counter` intervals)\n")
        print("| " + " | ".join(head) + " |")
        print("|:---|---:|:---:|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        for key, value in _machine():
            print(f"{key:>24}: {value}")
        print(f"{'repeats':>24}: {args.repeats} (median of time.perf_counter intervals)\n")
        w = max(len(r[0]) for r in rows + [head])
        print(f"{head[0]:<{w}}  {head[1]:>16}  {head[2]}")
        print("-" * (w + 36))
        for label, ms, verdict in rows:
            print(f"{label:<{w}}  {ms:>16}  {verdict}")


if __name__ == "__main__":
    main()
