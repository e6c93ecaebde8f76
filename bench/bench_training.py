"""Benchmark of lib.training: trained linear attention against fit_gamma, and transformer throughput.

Two tables (with ``--markdown``, Markdown for the book's Performance appendix), with the
date, the machine and its load:

1. Full linear attention (``train_linear_attention``, full-batch Adam, ``lr = 0.05``) on
   the ReLU teacher at ``n = 4 d^2`` contexts, ``ell = 2 d``, ``rho = 0.1``, against
   ``fit_gamma`` on the same pretraining set in the same run: wall time of each, and the
   number of Adam steps after which the training loss is within 1 % of the least-squares
   loss (and the relative distance of the final Gamma to ``fit_gamma``'s).
2. Small transformers (``train_transformer``) at the sizes of chapter 7: training contexts
   per second (after compilation) and the peak resident memory of a fresh process.

Usage::

    .venv/bin/python bench/bench_training.py [--markdown] [--out FILE] [--dims 8,12,16,24]
    .venv/bin/python bench/bench_training.py --markdown --out lib/data/bench_training.md  # make bench
"""

from __future__ import annotations

import argparse
import datetime
import multiprocessing as mp
import os
import platform
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import lib  # noqa: E402
import lib.training as T  # noqa: E402
import lib.transformers as TF  # noqa: E402

STEPS = 3000
TF_SIZES = (  # (d, alpha, width): the chapter's sweep sizes
    (8, 16.0, 32),
    (16, 4.0, 36),
    (32, 4.0, 36),
    (64, 4.0, 72),
)
TF_STEPS, TF_BATCH = 60, 128


def linear_attention_row(d: int, seed: int = 0) -> dict:
    """Time fit_gamma and train_linear_attention on one pretraining set of size 4 d^2."""
    ctx = lib.samplers.sample_contexts(4 * d * d, d, 2 * d, None, "relu", 0.1, np.random.default_rng(seed))
    t0 = time.perf_counter()
    g_ls = T.least_squares_gamma(ctx)
    t_fit = time.perf_counter() - t0
    loss_ls = float(np.mean((ctx.y_query - T.reduced_predict(g_ls, ctx.X, ctx.y, ctx.x_query)) ** 2))
    t0 = time.perf_counter()
    model = T.train_linear_attention(ctx, steps=STEPS, lr=0.05, rng=seed + 1)
    t_train = time.perf_counter() - t0
    within = np.flatnonzero(model.history <= 1.01 * loss_ls)
    return {
        "d": d,
        "n": 4 * d * d,
        "p": d * (d + 1),
        "fit_s": t_fit,
        "train_s": t_train,
        "steps_1pc": int(within[0]) + 1 if within.size else -1,
        "rel_gamma": float(np.linalg.norm(model.gamma - g_ls) / np.linalg.norm(g_ls)),
    }


def _transformer_worker(d: int, alpha: float, width: int, queue) -> None:
    TF.train_transformer("h2", d, alpha, 0.1, steps=5, batch=TF_BATCH, lr=1e-3, width=width, rng=0)  # compile
    t0 = time.perf_counter()
    TF.train_transformer("h2", d, alpha, 0.1, steps=TF_STEPS, batch=TF_BATCH, lr=1e-3, width=width, rng=1)
    dt = time.perf_counter() - t0
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    queue.put(
        {
            "d": d,
            "alpha": alpha,
            "width": width,
            "ell": round(alpha * d),
            "ctx_per_s": TF_STEPS * TF_BATCH / dt,
            "peak_mib": peak_kib / 1024,
        }
    )


def transformer_row(d: int, alpha: float, width: int) -> dict:
    """Contexts per second and peak memory of one transformer size, in a fresh process."""
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_transformer_worker, args=(d, alpha, width, q))
    p.start()
    out = q.get()
    p.join()
    return out


def _header() -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    import jax

    return (
        f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, "
        f"{platform.platform()}, {os.cpu_count()} cores, load {load:.1f}, "
        f"jax {jax.__version__} ({jax.default_backend()})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--dims", default="8,12,16,24")
    args = parser.parse_args(argv)
    dims = [int(x) for x in args.dims.split(",")]
    lines = [f"Measured {_header()}.", ""]
    lines += [
        (
            f"Full linear attention, ReLU teacher, n = 4 d^2, ell = 2 d, Adam {STEPS} steps "
            "(lr 0.05) against fit_gamma on the same data:"
        ),
        "",
    ]
    lines += [
        "| d | n | p | fit_gamma (s) | training (s) | steps to LS loss + 1 % | final rel. diff. of Gamma |",
        "|---|---|---|---|---|---|---|",
    ]
    for d in dims:
        r = linear_attention_row(d)
        lines.append(
            f"| {r['d']} | {r['n']} | {r['p']} | {r['fit_s']:.3f} | {r['train_s']:.2f} | "
            f"{r['steps_1pc']} | {r['rel_gamma']:.1e} |"
        )
    lines += [
        "",
        f"Small transformers (softmax, 1 layer), {TF_BATCH} contexts a step, after compilation:",
        "",
        "| d | alpha | ell | width | contexts / s | peak memory (MiB) |",
        "|---|---|---|---|---|---|",
    ]
    for d, a, w in TF_SIZES:
        r = transformer_row(d, a, w)
        lines.append(
            f"| {r['d']} | {r['alpha']:g} | {r['ell']} | {r['width']} | {r['ctx_per_s']:.0f} | {r['peak_mib']:.0f} |"
        )
    text = "\n".join(lines) + "\n"
    if not args.markdown:
        text = text.replace("| ", "").replace(" |", "")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
