"""Regenerate the training sweeps lib/data/training_<experiment>.csv/.json (chapter 7).

Usage (from the repository root)::

    python scripts/make_training.py [EXPERIMENT ...] [--out DIR] [--fresh] [--groups G,...]
                                    [--workers N | --scheduler ADDRESS] [--estimate]
                                    [--sampler numpy|device] [--edge-pilots]

The same pipeline as ``scripts/make_finite_size.py``, whose machinery this script imports
(seeds, the Dask client, file locking, provenance): one row is one Dask task (one trained
network and its test error); rows are appended to the CSV and flushed one by one as they
finish, and the JSON next to it (versions, machine, seconds per row, the runs that made
the file) is rewritten after each row, so an interrupted run resumes where it stopped
when the same command is run again. ``--fresh`` discards the existing file first.

Experiments (default: ``linear_attention`` and ``transformers``, in this order; the
others only when named):

- ``linear_attention``: the full linear attention of ``lib.training.train_linear_attention``
  (Adam, full batch) against ``fit_gamma``'s least-squares / minimum-norm Gamma on the
  same pretraining set, for ReLU, tanh and h2 at d = 40, kappa = inf, tau = 3 and four
  alpha; and at tau = 0.5 (interpolation) from three initialization scales.
- ``transformers``: ``lib.transformers.train_transformer`` with softmax attention and with
  linear attention (MLP values and readout kept: an architecture related to Oko et al.'s), on h2 and
  ReLU at d = 8 against alpha, and on h2 at alpha = 4 against d = 8, 16, 32 (a d = 64
  group is configured, but the stored data have no rows for it).
- ``controls``: the context-free control. ``train_transformer`` with softmax, linear or
  no attention (``attention="none"``: the query token alone), h2 and ReLU, width
  ``2d + 16``, five seeds: series ``alpha`` (4000 steps of 128 contexts at d = 8, 16,
  alpha = 4 and 16, and d = 32, alpha = 4; alpha = 16 in the last group) and series
  ``tau`` (``tau d^2`` training contexts, tau = 4000, at alpha = 4: 2000, 8000, 32000
  steps at d = 8, 16, 32). The learning rate is tuned once per (kind, d) among 1e-3,
  3e-3, 1e-2 on a validation stream (cached in ``training_controls_lr_<kind>_d<d>.json``
  next to the CSV; each row records its ``lr`` and ``val_errors``; ``--edge-pilots`` adds one
  pilot a factor 3 beyond the grid where the choice is at its edge); the loss curve is
  stored per row (``loss_every``, ``loss_curve``; ``flat_change``: relative decrease of
  the loss from the ninth to the last tenth of the steps). Every row is tested on ONE
  common test set per (teacher, d, alpha): 1e5 contexts from ``test_seed``, a function of
  (teacher, d, alpha) only. On the same test set each row stores the errors of the
  context-free predictor ``E[y | x_q]`` (``icl_cf``), of a hand-made in-context estimator
  (``icl_hand``: an affine least-squares readout, fitted on 20000 other contexts, of the
  one-step quadratic and linear statistics and ``|x_q|^2``) and of ``fit_gamma``'s
  least-squares Gamma on as many fresh contexts as the network saw (``icl_gamma``), and
  the paired differences ``diff_cf``, ``diff_hand``, ``diff_gamma`` (network minus
  baseline, mean over the test set) with their test-set standard errors.
  Groups: 0 d = 8; 1 d = 16; 2 d = 32, alpha = 4; 3 the tau series at d = 8, 16; 4 the
  tau series at d = 32; 5 d = 32, alpha = 16.
- ``full_la``: linear attention trained by full-batch Adam with ``v21`` trained
  (``la_full``) or held at 0 (``la_reduced``), from the random and Zhang-Frei-Bartlett
  initializations; h2 and ReLU, d = 12, alpha = 2, tau = 4 and 16, kappa = inf (group 0)
  and 2 (group 1); lr chosen per row on a validation stream; the paired error of the
  least-squares Gamma on the same pretraining set (``icl_ls``, ``diff_ls``), the norm of
  ``v21`` and the final training losses of both.
- ``smoke``: a tiny grid of both (well under a minute of CPU; for the tests).

Read them with ``lib.training_runs.load_control_runs``, ``paired_gain`` and
``paired_difference``. ``--estimate`` times one small row of each type (d = 8 and
d = 12) and prints the CPU time of the named experiments, per group. ``--sampler device``
draws the transformers' training contexts with ``jax.random`` inside the compiled scan
and tunes the learning rates of a (kind, d) in one vmapped run
(``lib.transformers.train_transformer_grid``): for a GPU; recorded in the rows' ``sampler``
column (a file holds one sampler: rows of the other are "made with other settings").
The long run (resumable: rerun the same command after an interruption)::

    nice -n 5 python scripts/make_training.py full_la controls --groups 0,1,2,3 --workers 2
    nice -n 5 python scripts/make_training.py controls --groups 4,5 --workers 2   # d = 32 extras

Seeds: the seed of a row is ``make_finite_size.row_seed(experiment_index, config_index,
d, draw)`` (the first word of ``SeedSequence([BASE_SEED, e, c, d, draw])``, shifted right
by one bit), with experiment indices 10 and 11, which the finite-size tables do not use.
Training and test draw from ``numpy.random.default_rng(seed)`` and
``default_rng(SeedSequence([seed, 1]))``. The experiments ``controls``, ``full_la`` and
``smoke`` (indices 12, 13, 14) use the scheme of :func:`_control_seeds` (recorded in
their JSON): the seed does not depend on the kind, so the rows of one draw pair, and the
test set depends only on (teacher, d, alpha).

Used in: chapter 7 (through ``lib.training_runs.load_runs`` and
``lib.training_runs.load_control_runs``).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import scipy
import scipy.linalg
import scipy.special

ROOT = Path(__file__).resolve().parent.parent
for _p in (str(ROOT), str(ROOT / "scripts")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import jax  # noqa: E402
import make_finite_size as mfs  # noqa: E402
import optax  # noqa: E402

import lib  # noqa: E402
import lib.training  # noqa: E402
import lib.training_runs  # noqa: E402
import lib.transformers  # noqa: E402

INF = math.inf


@dataclass(frozen=True)
class Row:
    """Everything needed to compute one row (and to recompute it)."""

    experiment: str
    experiment_index: int
    config_index: int
    label: str
    kind: str  # "linear_attention" or "softmax" / "linear" (transformer attention)
    teacher: str
    d: int
    alpha: float
    kappa: float
    tau: float  # linear_attention: n = round(tau d^2); transformers: 0 (fresh contexts)
    rho: float
    width: int
    layers: int
    steps: int
    batch: int
    lr: float
    init_scale: float
    optimizer: str
    draw: int
    seed: int
    n_test: int


COLUMNS = tuple(Row.__dataclass_fields__) + (
    "ell",
    "n",
    "icl",
    "icl_se",
    "icl_ls",
    "icl_ls_se",
    "gamma_rel_diff",
    "gamma_norm",
    "gamma_norm_ls",
    "icl_wmn",
    "icl_wmn_se",
    "gamma_rel_diff_wmn",
    "final_loss",
    "seconds",
)
_KEY = ("label", "kind", "d", "alpha", "draw")


@dataclass(frozen=True)
class Config:
    label: str
    kind: str
    teacher: str
    d: int
    alpha: float
    kappa: float = INF
    tau: float = 0.0
    rho: float = 0.1
    width: int = 0
    layers: int = 1
    steps: int = 1000
    batch: int = 0
    lr: float = 3e-3
    init_scale: float = 1e-3
    optimizer: str = "adam"


def _linear_attention_configs() -> list[tuple[int, Config]]:
    """(group, config) pairs."""
    out = []
    for t in ("relu", "tanh", "h2"):
        for a in (0.5, 1.0, 2.0, 4.0):
            out.append((0, Config(f"{t} tau=3", "linear_attention", t, 40, a, tau=3.0, steps=3000, lr=0.05)))
    # tau < 1: plain gradient descent (Adam's coordinate-wise steps have another implicit bias)
    for s in (1e-3, 0.1, 0.3):
        out.append(
            (
                1,
                Config(
                    f"relu tau=0.5 init={s:g}",
                    "linear_attention",
                    "relu",
                    40,
                    2.0,
                    tau=0.5,
                    steps=20_000,
                    lr=1.0,
                    init_scale=s,
                    optimizer="gd",
                ),
            )
        )
    return out


# Transformers: one batch size and schedule for every row. Against alpha (d = 8): width 32.
# Against d at alpha = 4: width 36, so that the embedding is at least as wide as the tokens
# [x; y] (d + 1 = 33 at d = 32); d = 64 with width 72. Groups run one after another (all
# draws of a group before the next group), the most important first, so that a partial
# file is useful; --groups runs some of them (in separate processes, for instance).
TF = {"layers": 1, "steps": 1000, "batch": 128, "lr": 3e-3}
TF_ALPHAS = (2.0, 4.0, 8.0, 16.0)
TF_DIMS = (8, 16, 32)
TF_ALPHA_D = 4.0
TF_WIDTH_D = 36


def _transformer_configs() -> list[tuple[int, Config]]:
    """(group, config) pairs."""
    out = []
    for a in TF_ALPHAS:
        out.append((0, Config(f"h2 d=8 alpha={a:g}", "softmax", "h2", 8, a, width=32, **TF)))
    for d in TF_DIMS:
        out.append(
            (1, Config(f"h2 alpha={TF_ALPHA_D:g} d={d}", "softmax", "h2", d, TF_ALPHA_D, width=TF_WIDTH_D, **TF))
        )
    for a in TF_ALPHAS:
        out.append((2, Config(f"h2 d=8 alpha={a:g}", "linear", "h2", 8, a, width=32, **TF)))
    for d in TF_DIMS:
        out.append((3, Config(f"h2 alpha={TF_ALPHA_D:g} d={d}", "linear", "h2", d, TF_ALPHA_D, width=TF_WIDTH_D, **TF)))
    for a in TF_ALPHAS:
        out.append((4, Config(f"relu d=8 alpha={a:g}", "softmax", "relu", 8, a, width=32, **TF)))
    out.append((5, Config(f"h2 alpha={TF_ALPHA_D:g} d=64", "softmax", "h2", 64, TF_ALPHA_D, width=72, **TF)))
    return out


EXPERIMENTS: dict[str, dict[str, Any]] = {
    "linear_attention": {
        "index": 10,
        "description": (
            "Full linear attention (W_kq, W_pv) trained by full-batch Adam "
            "(lib.training.train_linear_attention) against fit_gamma on the same pretraining set; "
            "relu, tanh, h2 at d = 40, kappa = inf, rho = 0.1, tau = 3, alpha = 0.5-4; and relu at "
            "tau = 0.5 from three initialization scales. Monte Carlo ICL test errors."
        ),
        "configs": _linear_attention_configs(),
        "draws": 2,
        "n_test": 20_000,
    },
    "transformers": {
        "index": 11,
        "description": (
            "Small transformers (lib.transformers.train_transformer: 1 layer, MLP values and readout, "
            "Adam, 1000 steps of 128 fresh contexts) with softmax or linear attention, kappa = inf, "
            "rho = 0.1: h2 and relu at d = 8 against alpha (width 32), h2 at alpha = 4 against "
            "d = 8, 16, 32 (width 36) and d = 64 (width 72). "
            "Monte Carlo ICL test errors."
        ),
        "configs": _transformer_configs(),
        "draws": 3,
        "n_test": 4000,
    },
}


def row_specs(name: str, groups: tuple[int, ...] | None = None, sampler: str | None = None) -> list[Any]:
    """All rows of an experiment, in run order: group, then draw, then configuration.

    ``groups``: only these groups of configurations, in this order (default: all).
    ``sampler``: the transformers' sampler of the experiments controls, full_la and smoke
    (``"numpy"`` or ``"device"``; default: the configurations', ``"numpy"``).
    """
    if name not in EXPERIMENTS:
        raise ValueError(f"experiment must be one of {list(EXPERIMENTS)}; got {name!r}")
    e = EXPERIMENTS[name]
    if e.get("row_type") is not None:
        return _control_row_specs(name, groups, sampler)
    rows = []
    if groups is None:
        groups = tuple(sorted({g for g, _ in e["configs"]}))
    for g in groups:
        for draw in range(e["draws"]):
            for ci, (gc, c) in enumerate(e["configs"]):
                if gc == g:
                    seed = mfs.row_seed(e["index"], ci, c.d, draw)
                    rows.append(
                        Row(
                            experiment=name,
                            experiment_index=e["index"],
                            config_index=ci,
                            draw=draw,
                            seed=seed,
                            n_test=e["n_test"],
                            **asdict(c),
                        )
                    )
    return rows


def _test_error(predict: Callable, ctx: Any) -> tuple[float, float]:
    r2 = (ctx.y_query - predict(ctx.X, ctx.y, ctx.x_query)) ** 2
    return float(r2.mean()), float(r2.std(ddof=1) / math.sqrt(len(r2)))


def run_row(spec: Row) -> dict[str, Any]:
    """Train the row's network with the row's seed and measure its ICL test error."""
    t0 = time.perf_counter()
    rng = np.random.default_rng(spec.seed)
    test_rng = np.random.default_rng(np.random.SeedSequence([spec.seed, 1]))
    out = dict.fromkeys(COLUMNS, "")
    out.update(asdict(spec))
    if spec.kind == "linear_attention":
        d = spec.d
        ell, n = max(1, round(spec.alpha * d)), max(1, round(spec.tau * d * d))
        ctx = lib.samplers.sample_contexts(n, d, ell, None, spec.teacher, spec.rho, rng)
        g_ls = lib.training.least_squares_gamma(ctx)
        g_w = lib.training.least_squares_gamma(ctx, norm="weights")
        model = lib.training.train_linear_attention(
            ctx, steps=spec.steps, lr=spec.lr, rng=rng, init_scale=spec.init_scale, optimizer=spec.optimizer
        )
        test = lib.samplers.sample_contexts(spec.n_test, d, ell, None, spec.teacher, spec.rho, test_rng)
        icl, se = _test_error(model.predict, test)
        c = lib.training.context_vectors(test.X, test.y)
        F = np.concatenate([d * c[:, :-1], c[:, -1:]], axis=1)
        r2 = (test.y_query - np.einsum("nd,de,ne->n", test.x_query, g_ls, F)) ** 2
        w2 = (test.y_query - np.einsum("nd,de,ne->n", test.x_query, g_w, F)) ** 2
        g = model.gamma
        out.update(
            ell=ell,
            n=n,
            icl=icl,
            icl_se=se,
            icl_ls=float(r2.mean()),
            icl_ls_se=float(r2.std(ddof=1) / math.sqrt(len(r2))),
            gamma_rel_diff=float(np.linalg.norm(g - g_ls) / np.linalg.norm(g_ls)),
            gamma_norm=float(np.linalg.norm(g)),
            gamma_norm_ls=float(np.linalg.norm(g_ls)),
            icl_wmn=float(w2.mean()),
            icl_wmn_se=float(w2.std(ddof=1) / math.sqrt(len(w2))),
            gamma_rel_diff_wmn=float(np.linalg.norm(g - g_w) / np.linalg.norm(g_w)),
            final_loss=float(model.settings["final_loss"]),
        )
    else:
        model = lib.transformers.train_transformer(
            spec.teacher,
            spec.d,
            spec.alpha,
            spec.rho,
            kappa=spec.kappa,
            layers=spec.layers,
            width=spec.width,
            attention=spec.kind,
            steps=spec.steps,
            batch=spec.batch,
            lr=spec.lr,
            rng=rng,
        )
        icl, se = model.test_error(spec.n_test, test_rng)
        tail = max(1, spec.steps // 20)
        out.update(
            ell=model.settings["ell"],
            n=spec.steps * spec.batch,
            icl=icl,
            icl_se=se,
            final_loss=float(np.mean(model.history[-tail:])),
        )
    out["seconds"] = round(time.perf_counter() - t0, 2)
    return out


# ----------------------------------------------------------------------------------------
# controls and full_la: the context-free control, tuned learning rates, one common test
# set per (teacher, d, alpha) and the paired baselines on it
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ControlRow:
    """One row of the experiments ``controls``, ``full_la`` and ``smoke``.

    ``kind`` is a transformer attention (``"softmax"``, ``"linear"``, ``"none"``: the
    context-free control) or a linear attention (``"la_full"``: every block of
    ``(W_kq, W_pv)`` trained, ``v21`` included; ``"la_reduced"``: ``v21 = 0``).
    ``series``: ``"alpha"`` (a fixed number of steps at every d) or ``"tau"`` (training
    contexts ``tau d^2``). ``lrs``: the candidate learning rates, comma-separated. A
    transformer's learning rate is tuned once per (kind, d) (pilot runs of
    ``tune_steps`` steps on ``tune_teacher`` at ``tune_alpha``, scored on a validation
    stream; cached next to the CSV); a linear attention's per row (every candidate
    trained on the row's pretraining set, scored on the row's validation stream).
    ``seed`` depends on (experiment, teacher, series, d, alpha, kappa, tau, draw), not on
    ``kind`` or ``init``; ``test_seed`` on (teacher, d, alpha) only.
    """

    experiment: str
    experiment_index: int
    config_index: int
    label: str
    series: str
    kind: str
    init: str
    teacher: str
    d: int
    alpha: float
    kappa: float
    tau: float
    rho: float
    width: int
    layers: int
    steps: int
    batch: int
    lrs: str
    tune_steps: int
    tune_teacher: str
    tune_alpha: float
    init_scale: float
    sampler: str
    draw: int
    seed: int
    test_seed: int
    n_test: int
    n_val: int


CONTROL_COLUMNS = tuple(ControlRow.__dataclass_fields__) + (
    "ell",
    "n",
    "lr",
    "val_errors",
    "val",
    "icl",
    "icl_se",
    "icl_cf",
    "icl_hand",
    "icl_gamma",
    "diff_cf",
    "diff_cf_se",
    "diff_hand",
    "diff_hand_se",
    "diff_gamma",
    "diff_gamma_se",
    "icl_ls",
    "diff_ls",
    "diff_ls_se",
    "v21_norm",
    "final_loss",
    "final_loss_ls",
    "flat_change",
    "loss_every",
    "loss_curve",
    "seconds",
)

# Contexts of the common test set and of the validation stream are drawn in chunks of at
# most this many numbers (X of a chunk: chunk x ell x d floats, 80 MB)
_TEST_CHUNK_FLOATS = 10_000_000
# Contexts on which the hand-made estimator's affine readout is fitted (one set per
# (teacher, d, alpha), drawn from the test seed's stream 7)
N_HAND_FIT = 20_000
# Contexts per chunk of the streaming least-squares fit of Gamma (design 10000 x d(d+1))
_GAMMA_CHUNK = 10_000


#: Linear-attention kinds of ControlRow and the v21 mode of lib.training.train_linear_attention each uses
LA_KINDS = {"la_full": "train", "la_reduced": "zero"}


def _stable_int(text: str) -> int:
    """A 31-bit integer that depends only on ``text`` (for seeds; not Python's salted hash)."""
    return zlib.crc32(text.encode()) & 0x7FFFFFFF


def _control_seeds(index: int, teacher: str, series: str, d: int, alpha: float, kappa: float, tau: float, draw: int):
    """``(seed, test_seed)``: the training seed of a draw and the common test-set seed."""
    seed = mfs.row_seed(index, _stable_int(f"{teacher}|{series}|{alpha!r}|{kappa!r}|{tau!r}"), d, draw)
    test_seed = mfs.row_seed(99, _stable_int(f"test|{teacher}|{alpha!r}"), d, 0)
    return seed, test_seed


def _chunk_size(d: int, ell: int) -> int:
    return max(1, _TEST_CHUNK_FLOATS // (ell * (d + 1)))


def _context_chunks(n: int, d: int, ell: int, teacher: str, rho: float, seed: int, stream: int):
    """``n`` contexts (fresh task each) in chunks; chunk ``j`` from ``SeedSequence([seed, stream, j])``.

    The chunk size depends only on ``(d, ell)``, so the set is a function of
    ``(n, d, ell, teacher, rho, seed, stream)``.
    """
    size = _chunk_size(d, ell)
    for j, start in enumerate(range(0, n, size)):
        rng = np.random.default_rng(np.random.SeedSequence([seed, stream, j]))
        yield lib.samplers.sample_contexts(min(size, n - start), d, ell, None, teacher, rho, rng)


def _context_free_mean(teacher: str, x_query: np.ndarray) -> np.ndarray:
    """``E[y | x_q]`` for a task uniform on the sphere of radius ``sqrt(d)`` (the context-free predictor).

    ``x_q^T w = |x_q| sqrt(d) t`` with ``t`` the first coordinate of a uniform unit
    vector, of density proportional to ``(1 - t^2)^((d-3)/2)`` on ``[-1, 1]``: Gauss-Jacobi
    quadrature (400 nodes; exact for polynomial teachers such as h2, where the mean is
    ``(|x_q|^2 - 1)/sqrt(2)``). Private to this script until ``lib.theory.context_free``
    provides it.
    """
    n, d = x_query.shape
    f = lib.teachers.resolve_teacher(teacher)
    a = (d - 3) / 2.0
    t, w = scipy.special.roots_jacobi(400, a, a)
    w = w / w.sum()
    r = np.linalg.norm(x_query, axis=1) * math.sqrt(d)
    out = np.empty(n)
    for s in range(0, n, 2000):
        out[s : s + 2000] = np.asarray(f(r[s : s + 2000, None] * t[None, :]), float) @ w
    return out


def _hand_features(X: np.ndarray, y: np.ndarray, xq: np.ndarray) -> np.ndarray:
    """Design of the hand-made estimator: intercept, the one-step quadratic and linear statistics, ``|x_q|^2``."""
    p = lib.training_runs.probe_features(X, y, xq)
    return np.column_stack([np.ones(len(xq)), p["quadratic"], p["linear"], np.einsum("nd,nd->n", xq, xq)])


def _fit_hand(d: int, ell: int, teacher: str, rho: float, test_seed: int, n_fit: int = N_HAND_FIT) -> np.ndarray:
    """Least-squares coefficients of the hand-made estimator on ``n_fit`` contexts (stream 7 of the test seed)."""
    A, b = [], []
    for ctx in _context_chunks(n_fit, d, ell, teacher, rho, test_seed, 7):
        A.append(_hand_features(ctx.X, ctx.y, ctx.x_query))
        b.append(ctx.y_query)
    coef, *_ = np.linalg.lstsq(np.concatenate(A), np.concatenate(b), rcond=None)
    return coef


def _streaming_gamma(n: int, d: int, ell: int, teacher: str, rho: float, seed: int) -> np.ndarray:
    """Least-squares ``Gamma`` (``lib.attention.fit_gamma`` at ``lam = 0``, ``n >= d(d+1)``) on ``n``
    fresh contexts, by normal equations accumulated over chunks of sufficient-statistic samples
    (``lib.samplers.sample_features``; chunk ``j`` from ``SeedSequence([seed, 3, j])``)."""
    p = d * (d + 1)
    G, h = np.zeros((p, p)), np.zeros(p)
    for j, s in enumerate(range(0, n, _GAMMA_CHUNK)):
        rng = np.random.default_rng(np.random.SeedSequence([seed, 3, j]))
        fb = lib.samplers.sample_features(min(_GAMMA_CHUNK, n - s), d, ell, None, teacher, rho, rng)
        Phi = (fb.features[:, :, None] * fb.queries[:, None, :]).reshape(len(fb.targets), p)
        G += Phi.T @ Phi
        h += Phi.T @ fb.targets
    theta = scipy.linalg.solve(G, h, assume_a="pos")
    return theta.reshape(d + 1, d).T


def _loss_curve(history: np.ndarray, points: int = 100) -> tuple[int, list[float], float]:
    """``(k, curve, flat_change)``: the loss averaged over windows of ``k`` steps (at most
    ``points`` windows), and the relative change of the mean loss from the second-to-last
    tenth of the steps to the last tenth (near 0 when the curve is flat)."""
    k = max(1, len(history) // points)
    m = len(history) // k
    curve = history[: m * k].reshape(m, k).mean(axis=1)
    tenth = max(1, len(history) // 10)
    last, before = history[-tenth:].mean(), history[-2 * tenth : -tenth].mean() if len(history) >= 2 * tenth else np.nan
    return k, [float(f"{v:.6g}") for v in curve], float((before - last) / last)


def _mean_se(v: np.ndarray) -> tuple[float, float]:
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(len(v)))


def _train_tf(spec: ControlRow, lr: float, steps: int, rng: Any) -> Any:
    return lib.transformers.train_transformer(
        spec.teacher,
        spec.d,
        spec.alpha,
        spec.rho,
        kappa=spec.kappa,
        layers=spec.layers,
        width=spec.width,
        attention=spec.kind,
        steps=steps,
        batch=spec.batch,
        lr=lr,
        rng=rng,
        sampler=spec.sampler,
    )


def _lr_cache_path(cache_dir: Path, spec: ControlRow) -> Path:
    """The file of the tuned learning rates of one (experiment, kind, d)."""
    return cache_dir / f"training_{spec.experiment}_lr_{spec.kind}_d{spec.d}.json"


def _tuning_key(spec: ControlRow) -> str:
    """The key of a (kind, d)'s tuning in its cache file."""
    return (
        f"{spec.kind} d={spec.d} lrs={spec.lrs} steps={spec.tune_steps} {spec.tune_teacher} "
        f"alpha={spec.tune_alpha:g} sampler={spec.sampler}"
    )


def _validation_stream(spec: ControlRow) -> tuple[int, list[Any]]:
    """The validation seed and contexts of a (kind, d)'s pilot runs (shared by the kinds of a d)."""
    d, ell = spec.d, max(1, round(spec.tune_alpha * spec.d))
    val_seed = int(
        np.random.SeedSequence([mfs.BASE_SEED, spec.experiment_index, _stable_int("val"), d]).generate_state(1)[0]
    )
    return val_seed, list(_context_chunks(spec.n_val, d, ell, spec.tune_teacher, spec.rho, val_seed, 2))


def _pilot(spec: ControlRow, lr: float, index: int) -> Any:
    """Pilot run ``index`` of a (kind, d) at step size ``lr`` (numpy sampler; seed index ``10 + index``)."""
    rng = np.random.default_rng(
        np.random.SeedSequence([mfs.BASE_SEED, spec.experiment_index, _stable_int(spec.kind), spec.d, 10 + index])
    )
    tune = replace(spec, teacher=spec.tune_teacher, alpha=spec.tune_alpha)
    try:
        return _train_tf(tune, lr, spec.tune_steps, rng)
    except lib.training.TrainingDivergedError:
        return SimpleNamespace(settings={"diverged": True})


def _val_error(pilot: Any, val: list[Any]) -> float:
    """Mean squared error of a pilot on the validation contexts (inf if it diverged)."""
    if pilot.settings.get("diverged"):
        return math.inf
    r2 = np.concatenate([(c.y_query - pilot.predict(c.X, c.y, c.x_query)) ** 2 for c in val])
    return float(r2.mean())


def edge_pilots(name: str, cache_dir: Path, groups: tuple[int, ...] | None, log: Callable[[str], None]) -> int:
    """One more pilot beyond the grid's edge for every (kind, d) whose tuned step size is at an edge.

    For each (kind, d) of the experiment's transformer rows (in ``groups``) whose cached
    tuning chose the smallest (largest) value of its grid, this trains one pilot at the
    smallest value divided by (largest value times) :data:`EDGE_FACTOR`, with the pilot
    seed index ``10 + len(lrs)`` and the same validation stream, and stores
    ``{"lr", "val_error", "seed_index", "date"}`` under ``"beyond_edge"`` in the cached
    entry. The rows are not retrained: this only tells whether the grid's edge was
    binding. Returns the number of pilots run (0 when every entry already has one).
    """
    done = 0
    seen = set()
    for spec in row_specs(name, groups):
        if spec.kind not in CTL_KINDS or (spec.kind, spec.d) in seen or spec.sampler == "device":
            continue
        seen.add((spec.kind, spec.d))
        path = _lr_cache_path(cache_dir, spec)
        cache = json.loads(path.read_text()) if path.exists() and path.read_text().strip() else {}
        entry = cache.get(_tuning_key(spec))
        if entry is None:
            log(f"{spec.kind} d={spec.d}: not tuned yet (no entry in {path.name}); skipped")
            continue
        lrs = [float(v) for v in entry["lrs"]]
        if entry["lr"] not in (min(lrs), max(lrs)) or "beyond_edge" in entry:
            continue
        lr = min(lrs) / EDGE_FACTOR if entry["lr"] == min(lrs) else max(lrs) * EDGE_FACTOR
        _, val = _validation_stream(spec)
        err = _val_error(_pilot(spec, lr, len(lrs)), val)
        entry["beyond_edge"] = {"lr": lr, "val_error": err, "seed_index": 10 + len(lrs), "date": mfs._now()}
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(cache, indent=2) + "\n")
        tmp.replace(path)
        log(
            f"{spec.kind} d={spec.d}: chosen {entry['lr']:g} ({min(entry['val_errors']):.4f}); beyond the edge {lr:g}: {err:.4f}"
        )
        done += 1
    return done


def _tuned_lr(spec: ControlRow, cache_dir: Path | None) -> tuple[float, list[float]]:
    """The learning rate of a transformer row, tuned once per (kind, d) and cached.

    Each candidate of ``spec.lrs`` trains ``spec.tune_steps`` steps on
    ``spec.tune_teacher`` at ``spec.tune_alpha`` (pilot ``i`` from
    ``SeedSequence([BASE_SEED, experiment_index, crc32(kind), d, 10 + i])``) and is scored
    on a validation stream of ``n_val`` contexts (``SeedSequence([BASE_SEED,
    experiment_index, crc32('val'), d])``, stream 2); the smallest validation error wins.
    With ``sampler="device"`` the candidates train together
    (``lib.transformers.train_transformer_grid``) from the one seed of pilot ``i = 0``; a
    diverged candidate scores inf.
    The result depends only on (experiment, kind, d, lrs, tune_steps, tune_teacher,
    tune_alpha) and is stored in ``training_<experiment>_lr_<kind>_d<d>.json`` in
    ``cache_dir`` (computed again when absent; a file lock keeps two workers from tuning
    the same (kind, d) at once).
    """
    key = _tuning_key(spec)
    lrs = [float(v) for v in spec.lrs.split(",")]
    if len(lrs) == 1:
        return lrs[0], []
    lock = None
    if cache_dir is not None:
        cache_dir.mkdir(parents=True, exist_ok=True)
        path = _lr_cache_path(cache_dir, spec)
        lock = path.open("a")  # created empty if absent; locked while this (kind, d) is tuned
        try:
            import fcntl

            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        except ImportError:  # pragma: no cover - Windows
            pass
    try:
        text = path.read_text() if cache_dir is not None else ""
        if text.strip():
            cache = json.loads(text)
            if key in cache:
                return float(cache[key]["lr"]), list(cache[key]["val_errors"])
        d = spec.d
        val_seed, val = _validation_stream(spec)
        errors = []
        if spec.sampler == "device":  # every candidate at once (vmap), from one seed
            seed = int(
                np.random.SeedSequence(
                    [mfs.BASE_SEED, spec.experiment_index, _stable_int(spec.kind), d, 10]
                ).generate_state(1)[0]
            )
            pilots = lib.transformers.train_transformer_grid(
                spec.tune_teacher, d, spec.tune_alpha, spec.rho, seeds=[seed], lrs=lrs, kappa=spec.kappa,
                layers=spec.layers, width=spec.width, attention=spec.kind, steps=spec.tune_steps, batch=spec.batch,
            )[0]  # fmt: skip
        else:
            pilots = [_pilot(spec, lr, i) for i, lr in enumerate(lrs)]
        errors = [_val_error(pilot, val) for pilot in pilots]
        lr = lrs[int(np.argmin(errors))]
        if cache_dir is not None:
            text = path.read_text()
            cache = json.loads(text) if text.strip() else {}
            cache[key] = {"lr": lr, "val_errors": errors, "lrs": lrs, "val_seed": val_seed, "date": mfs._now()}
            tmp = path.with_suffix(".json.tmp")
            tmp.write_text(json.dumps(cache, indent=2) + "\n")
            tmp.replace(path)
        return lr, errors
    finally:
        if lock is not None:
            lock.close()


def _run_la(spec: ControlRow, ell: int, lrs: list[float], val_error: Callable, out: dict[str, Any]):
    """Train a linear attention on the row's pretraining set at each candidate lr; keep the best on validation."""
    d = spec.d
    n = max(1, round(spec.tau * d * d))
    rng = np.random.default_rng(spec.seed)  # the same pretraining set for every kind and init of a draw
    tasks = None if math.isinf(spec.kappa) else lib.sample_task_set(d, spec.kappa, rng)
    ctx = lib.samplers.sample_contexts(n, d, ell, tasks, spec.teacher, spec.rho, rng)
    ls = lib.training.least_squares_gamma(ctx)
    best, errors = None, []
    for lr in lrs:
        init_rng = np.random.default_rng(np.random.SeedSequence([spec.seed, 20]))  # the same init for every lr
        try:
            model = lib.training.train_linear_attention(
                ctx,
                steps=spec.steps,
                lr=lr,
                rng=init_rng,
                init_scale=spec.init_scale,
                v21=LA_KINDS[spec.kind],
                init=spec.init,
            )
        except lib.training.TrainingDivergedError:
            errors.append(math.inf)
            continue
        errors.append(val_error(model.predict))
        if errors[-1] == min(errors):
            best = model
    if best is None:
        raise lib.training.TrainingDivergedError(f"every lr of {lrs} diverged for {spec.label} {spec.kind}")
    k, curve, flat = _loss_curve(best.history)
    r_ls = ctx.y_query - lib.training.reduced_predict(ls, ctx.X, ctx.y, ctx.x_query)
    out.update(
        final_loss=float(best.settings["final_loss"]),
        final_loss_ls=float(np.mean(r_ls**2)),
        flat_change=flat,
        loss_every=k,
        loss_curve=json.dumps(curve),
    )
    return best, lrs[int(np.argmin(errors))], errors, n, ls


def run_control_row(spec: ControlRow, cache_dir: Path | None = None) -> dict[str, Any]:
    """Train (learning rate tuned), and evaluate on the common test set with the paired baselines.

    ``cache_dir``: where the tuned learning rates of the transformers are cached (None:
    tuned again for every row).
    """
    t0 = time.perf_counter()
    out = dict.fromkeys(CONTROL_COLUMNS, "")
    out.update(asdict(spec))
    d, ell = spec.d, max(1, round(spec.alpha * spec.d))
    lrs = [float(v) for v in spec.lrs.split(",")]
    val = list(_context_chunks(spec.n_val, d, ell, spec.teacher, spec.rho, spec.seed, 2))

    def val_error(predict: Callable) -> float:
        r2 = np.concatenate([(c.y_query - predict(c.X, c.y, c.x_query)) ** 2 for c in val])
        return float(r2.mean())

    ls = None  # the least-squares Gamma on the same pretraining set (linear attention rows)
    if spec.kind in LA_KINDS:
        model, lr, val_errors, n, ls = _run_la(spec, ell, lrs, val_error, out)
    else:
        lr, val_errors = _tuned_lr(spec, cache_dir)
        model = _train_tf(spec, lr, spec.steps, np.random.default_rng(spec.seed))
        n = spec.steps * spec.batch
        k, curve, flat = _loss_curve(model.history)
        tail = max(1, spec.steps // 20)
        out.update(
            final_loss=float(np.mean(model.history[-tail:])),
            flat_change=flat,
            loss_every=k,
            loss_curve=json.dumps(curve),
        )
    out.update(ell=ell, n=n, lr=lr, val_errors=json.dumps(val_errors), val=val_error(model.predict))

    # the common test set and the baselines on it
    hand = _fit_hand(d, ell, spec.teacher, spec.rho, spec.test_seed)
    gamma = _streaming_gamma(n, d, ell, spec.teacher, spec.rho, spec.seed) if n >= d * (d + 1) else None
    e = {k: [] for k in ("model", "cf", "hand", "gamma", "ls")}
    for ctx in _context_chunks(spec.n_test, d, ell, spec.teacher, spec.rho, spec.test_seed, 1):
        yq = ctx.y_query
        e["model"].append((yq - model.predict(ctx.X, ctx.y, ctx.x_query)) ** 2)
        e["cf"].append((yq - _context_free_mean(spec.teacher, ctx.x_query)) ** 2)
        e["hand"].append((yq - _hand_features(ctx.X, ctx.y, ctx.x_query) @ hand) ** 2)
        if gamma is not None:
            e["gamma"].append((yq - lib.training.reduced_predict(gamma, ctx.X, ctx.y, ctx.x_query)) ** 2)
        if ls is not None:
            e["ls"].append((yq - lib.training.reduced_predict(ls, ctx.X, ctx.y, ctx.x_query)) ** 2)
    e = {k: np.concatenate(v) for k, v in e.items() if v}
    out["icl"], out["icl_se"] = _mean_se(e["model"])
    for k in ("cf", "hand", "gamma", "ls"):
        if k in e:
            out[f"icl_{k}"] = float(e[k].mean())
            out[f"diff_{k}"], out[f"diff_{k}_se"] = _mean_se(e["model"] - e[k])
    if spec.kind in LA_KINDS:
        out.update(v21_norm=float(np.linalg.norm(model.W_pv[-1, :-1])))
    out["seconds"] = round(time.perf_counter() - t0, 2)
    return out


@dataclass(frozen=True)
class ControlConfig:
    label: str
    series: str
    kind: str
    teacher: str
    d: int
    alpha: float
    steps: int
    batch: int
    lrs: str
    tune_steps: int
    width: int = 0
    layers: int = 1
    init: str = ""
    init_scale: float = 0.0
    tune_teacher: str = "h2"
    tune_alpha: float = 4.0
    sampler: str = "numpy"
    kappa: float = INF
    tau: float = 0.0
    rho: float = 0.1


# controls: one batch size; the "alpha" series trains CTL_STEPS steps at every d; the "tau"
# series trains on tau d^2 contexts (steps = tau d^2 / batch) with tau = CTL_TAU, twice the
# tau of the stored "transformers" sweep at d = 8 (1000 steps of 128): 2000, 8000 and 32000
# steps at d = 8, 16, 32 (at d = 8 the alpha series' 4000 steps leave the loss flat, at
# d = 16 not quite); the width grows with d.
# The learning rate is tuned once per (kind, d) among CTL_LRS by pilot runs of
# CTL_TUNE_STEPS steps (h2, alpha = 4), scored on a validation stream.
CTL_BATCH = 128
CTL_STEPS = 4000
CTL_TUNE_STEPS = 2000
CTL_TAU = 2 * 1000 * CTL_BATCH / 8**2  # 4000
CTL_LRS = "0.001,0.003,0.01"
CTL_KINDS = ("softmax", "linear", "none")
EDGE_FACTOR = 3.0  # the step beyond the grid's edge of --edge-pilots


def ctl_width(d: int) -> int:
    """Hidden width of the controls at dimension d: 2 d + 16 (32, 48, 80 at d = 8, 16, 32)."""
    return 2 * d + 16


def _controls_configs() -> list[tuple[int, ControlConfig]]:
    """(group, config) pairs; groups run in order, the cheapest and most important first."""
    out = []

    def add(group: int, series: str, teacher: str, d: int, alpha: float, steps: int) -> None:
        for kind in CTL_KINDS:
            tag = f"{teacher} d={d} alpha={alpha:g} {series}"
            out.append(
                (
                    group,
                    ControlConfig(
                        tag,
                        series,
                        kind,
                        teacher,
                        d,
                        alpha,
                        steps=steps,
                        batch=CTL_BATCH,
                        lrs=CTL_LRS,
                        tune_steps=CTL_TUNE_STEPS,
                        width=ctl_width(d),
                        tau=steps * CTL_BATCH / d**2,
                    ),
                )
            )

    for t in ("h2", "relu"):
        for a in (4.0, 16.0):
            add(0, "alpha", t, 8, a, CTL_STEPS)
    for t in ("h2", "relu"):
        for a in (4.0, 16.0):
            add(1, "alpha", t, 16, a, CTL_STEPS)
    for t in ("h2", "relu"):
        add(2, "alpha", t, 32, 4.0, CTL_STEPS)
    for t in ("h2", "relu"):
        add(3, "tau", t, 8, 4.0, round(CTL_TAU * 8**2 / CTL_BATCH))
    for t in ("h2", "relu"):
        add(3, "tau", t, 16, 4.0, round(CTL_TAU * 16**2 / CTL_BATCH))
    for t in ("h2", "relu"):
        add(4, "tau", t, 32, 4.0, round(CTL_TAU * 32**2 / CTL_BATCH))
    for t in ("h2", "relu"):
        add(5, "alpha", t, 32, 16.0, CTL_STEPS)
    return out


# full_la: linear attention with v21 trained ("la_full") or held at 0 ("la_reduced"), from
# the random and Zhang-Frei-Bartlett initializations, full-batch Adam on tau d^2 contexts
FLA = {"d": 12, "alpha": 2.0, "steps": 5000, "batch": 0, "lrs": "0.01,0.03,0.1", "tune_steps": 0}
FLA_INIT_SCALE = {"random": 1e-3, "zfb": 0.1}


def _full_la_configs() -> list[tuple[int, ControlConfig]]:
    out = []
    for g, kappa in enumerate((INF, 2.0)):
        for teacher in ("h2", "relu"):
            for tau in (4.0, 16.0):
                for init in ("random", "zfb"):
                    for kind in LA_KINDS:
                        label = f"{teacher} d={FLA['d']} tau={tau:g} kappa={kappa:g} {init}"
                        out.append(
                            (
                                g,
                                ControlConfig(
                                    label,
                                    "tau",
                                    kind,
                                    teacher,
                                    init=init,
                                    init_scale=FLA_INIT_SCALE[init],
                                    kappa=kappa,
                                    tau=tau,
                                    **FLA,
                                ),
                            )
                        )
    return out


def _smoke_configs() -> list[tuple[int, ControlConfig]]:
    """A tiny grid that runs in well under a minute (for the tests)."""
    out = []
    for kind in CTL_KINDS:
        cfg = ControlConfig(
            "h2 d=4 alpha=2 smoke", "alpha", kind, "h2", 4, 2.0, steps=30, batch=16, lrs="0.003,0.01",
            tune_steps=10, width=8, tune_alpha=2.0,
        )  # fmt: skip
        out.append((0, cfg))
    for kind in LA_KINDS:
        cfg = ControlConfig(
            "h2 d=4 tau=4 smoke zfb", "tau", kind, "h2", 4, 2.0, steps=200, batch=0, lrs="0.03,0.1",
            tune_steps=0, init="zfb", init_scale=0.1, tau=4.0,
        )  # fmt: skip
        out.append((1, cfg))
    return out


EXPERIMENTS.update(
    {
        "controls": {
            "index": 12,
            "row_type": ControlRow,
            "default": False,
            "description": (
                "Context-free control and tuned transformers: lib.transformers.train_transformer with softmax, "
                "linear or no attention (attention='none': the query token only), h2 and relu, rho = 0.1, "
                f"kappa = inf, batch {CTL_BATCH}, width 2d + 16; series 'alpha': {CTL_STEPS} steps at d = 8, 16 "
                f"(alpha = 4, 16) and d = 32 (alpha = 4; 16 last); series 'tau': tau = {CTL_TAU:g} training "
                "contexts per d^2 at alpha = 4 (d = 16, 32; d = 8 is the alpha series). The learning rate of "
                f"each row is chosen among {CTL_LRS} by pilot runs of a quarter of the steps, scored on a "
                "validation stream. Every row is tested on the common test set of its (teacher, d, alpha), "
                "with the paired errors of the context-free predictor E[y | x_q], of a hand-made estimator "
                "(affine readout of the one-step quadratic and linear statistics and |x_q|^2) and of "
                "fit_gamma's least-squares Gamma on as many fresh contexts as the network saw."
            ),
            "configs": _controls_configs(),
            "draws": 5,
            "n_test": 100_000,
            "n_val": 4000,
        },
        "full_la": {
            "index": 13,
            "row_type": ControlRow,
            "default": False,
            "description": (
                "Linear attention trained by full-batch Adam (lib.training.train_linear_attention) with the "
                "block v21 of W_pv trained (v21='train', kind la_full) or held at 0 (v21='zero', la_reduced: the "
                f"reduced model in factored form), from the random (scale {FLA_INIT_SCALE['random']:g}, v22 = 1) "
                f"and Zhang-Frei-Bartlett (scale {FLA_INIT_SCALE['zfb']:g}) initializations; h2 and relu, "
                f"d = {FLA['d']}, alpha = {FLA['alpha']:g}, rho = 0.1, tau = 4 and 16, kappa = inf and 2; "
                f"{FLA['steps']} steps, lr chosen per row among {FLA['lrs']} on a validation stream. The kinds "
                "and inits of a draw share the pretraining set; every row is tested on the common test set of "
                "its (teacher, d, alpha) with the paired errors of the least-squares Gamma on the same "
                "pretraining set (icl_ls) and of the baselines of 'controls'."
            ),
            "configs": _full_la_configs(),
            "draws": 5,
            "n_test": 100_000,
            "n_val": 4000,
        },
        "smoke": {
            "index": 14,
            "row_type": ControlRow,
            "default": False,
            "description": "A tiny version of 'controls' and 'full_la' (d = 4) for the tests of this script.",
            "configs": _smoke_configs(),
            "draws": 1,
            "n_test": 2000,
            "n_val": 500,
        },
    }
)


def _control_row_specs(name: str, groups: tuple[int, ...] | None, sampler: str | None = None) -> list[ControlRow]:
    e = EXPERIMENTS[name]
    if groups is None:
        groups = tuple(sorted({g for g, _ in e["configs"]}))
    rows = []
    for g in groups:
        for draw in range(e["draws"]):
            for ci, (gc, c) in enumerate(e["configs"]):
                if gc != g:
                    continue
                seed, test_seed = _control_seeds(e["index"], c.teacher, c.series, c.d, c.alpha, c.kappa, c.tau, draw)
                rows.append(
                    ControlRow(
                        experiment=name,
                        experiment_index=e["index"],
                        config_index=ci,
                        draw=draw,
                        seed=seed,
                        test_seed=test_seed,
                        n_test=e["n_test"],
                        n_val=e["n_val"],
                        **{**asdict(c), **({"sampler": sampler} if sampler else {})},
                    )
                )
    return rows


def _cost_units(spec: Any) -> float:
    """A rough cost model of a row (proportional to its floating-point work)."""
    ell = max(1, round(spec.alpha * spec.d))
    if getattr(spec, "kind", "") in LA_KINDS or getattr(spec, "kind", "") == "linear_attention":
        n = max(1, round(spec.tau * spec.d**2))
        return 3.0 * spec.steps * n * (spec.d + 1) ** 2 + getattr(spec, "n_test", 0) * ell * spec.d * 20
    w = spec.width
    per_context = (
        ell * (w * w * 3 + w * (spec.d + 1) + 20 * spec.d) if spec.kind != "none" else w * w * 3 + ell * 20 * spec.d
    )
    return 3.0 * spec.steps * spec.batch * per_context + getattr(spec, "n_test", 0) * ell * spec.d * 40


def estimate(names: list[str], log: Callable[[str], None] = print) -> dict[str, float]:
    """Time one small row of each type and extrapolate to the grids of the experiments ``names``.

    The reference rows are ``controls``' h2, d = 8, alpha = 4 softmax row (one learning
    rate, no tuning) and, if a linear attention is in the grids, ``full_la``'s first row
    (tau = 4). Each row of the grids is estimated by a cost model proportional to its
    floating-point work, tuning runs included. Returns the estimated CPU seconds (process
    CPU time of the reference rows, all threads) per experiment; a rough guide
    (compilation and sampling overheads differ; on a loaded machine the wall time is
    longer).
    """
    tf_ref = next(r for r in row_specs("controls", (0,)) if r.kind == "softmax" and r.alpha == 4.0)
    tf_ref = replace(tf_ref, lrs=tf_ref.lrs.split(",")[1])
    refs = {"tf": tf_ref}
    if any(s.kind in LA_KINDS for n in names for s in row_specs(n)):
        refs["la"] = replace(row_specs("full_la", (0,))[0], lrs=FLA["lrs"].split(",")[0])
    unit = {}
    for k, ref in refs.items():
        t, c = time.perf_counter(), time.process_time()
        run_control_row(ref)
        wall, secs = time.perf_counter() - t, time.process_time() - c
        unit[k] = secs / _cost_units(ref)
        log(
            f"reference row {ref.experiment}: {ref.label} {ref.kind} ({ref.steps} steps, one lr): "
            f"{secs:.1f} s CPU ({wall:.1f} s wall)"
        )
    totals = {}
    for name in names:
        e = EXPERIMENTS[name]
        tuning: set = set()
        per_group: dict[int, float] = {}
        for g in sorted({g for g, _ in e["configs"]}):
            tot = 0.0
            for spec in row_specs(name, (g,)):
                la = getattr(spec, "kind", "") in LA_KINDS
                n_lr = spec.lrs.count(",") + 1 if hasattr(spec, "lrs") else 1
                tot += unit["la" if la else "tf"] * _cost_units(spec) * (n_lr if la else 1)
                if not la and n_lr > 1 and (spec.kind, spec.d) not in tuning:
                    tuning.add((spec.kind, spec.d))
                    tune = replace(spec, steps=spec.tune_steps, alpha=spec.tune_alpha, n_test=0)
                    tot += n_lr * unit["tf"] * _cost_units(tune)
            per_group[g] = tot
        totals[name] = sum(per_group.values())
        log(f"[{name}] {len(row_specs(name))} rows: about {totals[name] / 3600:.1f} CPU hours")
        for g, tot in per_group.items():
            log(f"  group {g}: {len(row_specs(name, (g,)))} rows, about {tot / 3600:.1f} CPU hours")
    return totals


# ----------------------------------------------------------------------------------------
# files (the machinery of make_finite_size, with this script's columns)
# ----------------------------------------------------------------------------------------


def _key(r: dict[str, Any]) -> tuple[str, ...]:
    return tuple(str(r[k]) if k not in ("d", "alpha", "draw") else repr(float(r[k])) for k in _KEY)


def _columns(name: str) -> tuple[str, ...]:
    """The CSV columns of an experiment."""
    return CONTROL_COLUMNS if EXPERIMENTS[name].get("row_type") is not None else COLUMNS


def _run_function(name: str, out: Path) -> Callable[[Any], dict[str, Any]]:
    return partial(run_control_row, cache_dir=out) if EXPERIMENTS[name].get("row_type") is not None else run_row


def _read_existing(path: Path, columns: tuple[str, ...] = COLUMNS) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        if tuple(reader.fieldnames or ()) != columns:
            raise SystemExit(f"{path} does not have the columns {columns}; rerun with --fresh")
        rows = [r for r in reader if None not in r.values() and None not in r]
    seen, good = set(), []
    for r in rows:
        if _key(r) not in seen:
            seen.add(_key(r))
            good.append(r)
    return good


def _write_header(path: Path, columns: tuple[str, ...] = COLUMNS) -> None:
    with path.open("w", newline="") as fh:
        csv.DictWriter(fh, fieldnames=columns).writeheader()


def _same_int(text: str, value: int) -> bool:
    """Whether a CSV field holds the integer ``value`` exactly (not merely as a float)."""
    try:
        return int(text) == value
    except ValueError:
        return False


def _same_spec(row: dict[str, str], spec: Any) -> bool:
    for k, v in asdict(spec).items():
        if isinstance(v, str):
            if row[k] != v:
                return False
        elif isinstance(v, int):  # exact: a 63-bit seed has more digits than a float
            if not _same_int(row[k], v):
                return False
        elif float(row[k]) != float(v):
            return False
    return True


def _write_meta(
    name: str,
    csv_path: Path,
    json_path: Path,
    command: str,
    started: str,
    previous: list,
    computed: int,
    wall: float,
    client: Any,
    finished: bool,
) -> None:
    e = EXPERIMENTS[name]
    rows = _read_existing(csv_path, _columns(name))
    params = {"configs": [asdict(c) for _, c in e["configs"]], "draws": e["draws"], "n_test": e["n_test"]}
    if "n_val" in e:
        params["n_val"] = e["n_val"]
    meta = {
        "experiment": name,
        "description": e["description"],
        "file": csv_path.name,
        "columns": list(_columns(name)),
        "command": command,
        "parameters": params,
        "seeds": {
            "base_seed": mfs.BASE_SEED,
            "scheme": (
                "seed = SeedSequence([base_seed, experiment_index, config_index, d, draw])"
                ".generate_state(1, uint64)[0] >> 1; training rng = numpy.random.default_rng(seed), "
                "test rng = default_rng(SeedSequence([seed, 1]))"
            ),
            "experiment_index": e["index"],
            **(
                {
                    "controls_scheme": (
                        "seed = row_seed(experiment_index, crc32('teacher|series|alpha|kappa|tau') & 0x7fffffff, d, "
                        "draw) (the same for every kind and init, so rows of one draw pair); test_seed = "
                        "row_seed(99, crc32('test|teacher|alpha') & 0x7fffffff, d, 0), one test set per "
                        "(teacher, d, alpha) shared by every row; chunk j of a stream s of contexts from "
                        "default_rng(SeedSequence([seed or test_seed, s, j])): s = 1 test set (test_seed), 2 "
                        "validation (seed), 3 fit_gamma's contexts (seed), 7 the hand-made estimator's fit "
                        "(test_seed); final training rng default_rng(seed), pilot run i "
                        "default_rng(SeedSequence([seed, 10 + i]))"
                    )
                }
                if e.get("row_type") is not None
                else {}
            ),
        },
        "rows": len(rows),
        "lib_version": lib.__version__,
        "git_commit": mfs._git_commit(),
        "date": mfs._now(),
        "machine": mfs._machine(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "jax": jax.__version__,
        "optax": optax.__version__,
        "seconds_per_row": {
            r["label"] + " " + r["kind"] + (" " + r["init"] if r.get("init") else "") + f" draw={r['draw']}": float(
                r["seconds"]
            )
            for r in rows
        },
        "total_seconds": round(sum(float(r["seconds"]) for r in rows), 1),
        "runs": previous
        + [
            {
                "command": command,
                "started": started,
                "finished": mfs._now() if finished else None,
                "rows_computed": computed,
                "wall_seconds": round(wall, 1),
                "workers": mfs._describe_workers(client),
                "machine": mfs._machine(),
            }
        ],
    }
    tmp = json_path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(mfs._jsonable(meta), indent=2) + "\n")
    tmp.replace(json_path)


def _task_key(spec: Any) -> str:
    """The Dask task name of a row."""
    return f"train-{spec.experiment}-{spec.config_index}-{spec.kind}-{spec.draw}-{spec.seed}"


def run_experiment(
    name: str,
    out: Path,
    fresh: bool = False,
    command: str = "",
    log: Callable[[str], None] = print,
    client: Any = None,
    groups: tuple[int, ...] | None = None,
    sampler: str | None = None,
    labels: tuple[str, ...] | None = None,
) -> Path:
    """Compute the missing rows of one experiment, appending and flushing them one by one.

    ``labels``: compute only the configurations with these labels (the other rows keep what
    the file has); an unknown label is a ``ValueError`` that lists the known ones.
    """
    specs = row_specs(name, groups, sampler)
    if labels:
        known = sorted({s.label for s in specs})
        bad = [lab for lab in labels if lab not in known]
        if bad:
            raise ValueError(f"labels {bad} are not configurations of {name!r} (groups {groups}); known: {known}")
        specs = [s for s in specs if s.label in labels]
    out.mkdir(parents=True, exist_ok=True)
    csv_path, json_path = out / f"training_{name}.csv", out / f"training_{name}.json"
    columns = _columns(name)
    if fresh or not csv_path.exists():
        _write_header(csv_path, columns)
        if fresh:
            json_path.unlink(missing_ok=True)
    started, t0 = mfs._now(), time.perf_counter()
    with csv_path.open("a", newline="") as fh:
        mfs._lock(fh, csv_path)
        if mfs._drop_cut_line(csv_path):
            log(f"[{name}] dropped the cut last line of {csv_path} (an interrupted write)")
        existing = {_key(r): r for r in _read_existing(csv_path, columns)}
        previous = mfs._previous_runs(json_path)
        todo = []
        for s in specs:
            r = existing.get(_key(asdict(s)))
            if r is None:
                todo.append(s)
            elif not _same_spec(r, s):
                raise SystemExit(
                    f"{csv_path}: the row {_key(asdict(s))} was made with other settings; rerun with --fresh"
                )
        log(f"[{name}] {len(specs)} rows, {len(specs) - len(todo)} present, {len(todo)} to compute")
        writer = csv.DictWriter(fh, fieldnames=columns)
        done = [0]

        def on_row(spec: Row, row: dict[str, Any]) -> None:
            writer.writerow(row)
            fh.flush()
            os.fsync(fh.fileno())
            done[0] += 1
            el = time.perf_counter() - t0
            log(
                f"[{name}] {done[0]}/{len(todo)} {spec.label} {spec.kind} draw={spec.draw} "
                f"icl={float(row['icl']):.4f}±{float(row['icl_se']):.4f} ({row['seconds']} s; "
                f"elapsed {el / 60:.1f} min)"
            )
            _write_meta(name, csv_path, json_path, command, started, previous, done[0], el, client, False)

        mfs._compute_rows(todo, client, on_row, run=_run_function(name, out), key=_task_key)  # one Dask task per row
    if todo or not json_path.exists():
        _write_meta(
            name, csv_path, json_path, command, started, previous, len(todo), time.perf_counter() - t0, client, True
        )
    log(f"[{name}] done -> {csv_path}")
    return csv_path


def merge_from(
    name: str, out: Path, other: Path, log: Callable[[str], None] = print, sampler: str | None = None
) -> int:
    """Append the rows of ``other/training_<name>.csv`` that ``out``'s file lacks; merge the runs.

    For rows computed by a separate process (``--groups ... --out OTHER``): every row is
    checked against the spec this script derives for it (same seed and settings), so a
    merged file is the same as one computed in a single run.
    """
    src_csv = other / f"training_{name}.csv"
    csv_path, json_path = out / f"training_{name}.csv", out / f"training_{name}.json"
    columns = _columns(name)
    if not csv_path.exists():
        _write_header(csv_path, columns)
    specs = {_key(asdict(s)): s for s in row_specs(name, None, sampler)}
    with csv_path.open("a", newline="") as fh:
        mfs._lock(fh, csv_path)
        mfs._drop_cut_line(csv_path)
        have = {_key(r) for r in _read_existing(csv_path, columns)}
        new = []
        for r in _read_existing(src_csv, columns):
            spec = specs.get(_key(r))
            if spec is None or not _same_spec(r, spec):
                log(f"[{name}] skipped a row of {src_csv} that is not in the grid: {_key(r)}")
                continue
            if _key(r) not in have:
                new.append(r)
                have.add(_key(r))
        csv.DictWriter(fh, fieldnames=columns).writerows(new)
        fh.flush()
    runs = mfs._previous_runs(json_path) + [
        {**run, "merged_from": str(src_csv)} for run in mfs._previous_runs(other / f"training_{name}.json")
    ]
    _write_meta(
        name,
        csv_path,
        json_path,
        f"merge of {src_csv}",
        mfs._now(),
        runs[:-1] if runs else [],
        len(new),
        0.0,
        None,
        True,
    )
    if runs:  # keep the last run's own record instead of the merge's
        meta = json.loads(json_path.read_text())
        meta["runs"] = runs
        json_path.write_text(json.dumps(mfs._jsonable(meta), indent=2) + "\n")
    log(f"[{name}] merged {len(new)} rows from {src_csv}")
    return len(new)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "experiments",
        nargs="*",
        metavar="EXPERIMENT",
        help=f"experiments to run (default: all): {', '.join(EXPERIMENTS)}",
    )
    parser.add_argument("--out", type=Path, help=f"output folder (default {lib.training_runs.DATA_DIR})")
    parser.add_argument("--fresh", action="store_true", help="discard existing rows instead of resuming")
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--workers",
        type=int,
        help="local Dask workers (default: the number of cores); 0 runs the rows in this process, without Dask",
    )
    where.add_argument("--scheduler", metavar="ADDRESS", help="address of a running Dask scheduler")
    parser.add_argument(
        "--groups", help="comma-separated groups of configurations to compute, in this order (default: all); e.g. 0,2"
    )
    parser.add_argument(
        "--labels",
        help="comma-separated configuration labels to compute (default: all of the groups), "
        "e.g. 'h2 d=16 alpha=4 alpha'",
    )
    parser.add_argument(
        "--merge",
        type=Path,
        metavar="DIR",
        help="append the rows of DIR/training_<experiment>.csv (made with --out DIR) "
        "that the output file lacks, then exit",
    )
    parser.add_argument("--no-progress", action="store_true", help="accepted for symmetry with make_finite_size")
    parser.add_argument(
        "--sampler",
        choices=("numpy", "device"),
        help="how the transformers of controls/full_la/smoke draw their training contexts: numpy (default) or "
        "device (jax.random inside the compiled scan; for a GPU). Recorded in each row",
    )
    parser.add_argument(
        "--estimate",
        action="store_true",
        help="time one small row at d = 8 and print the estimated CPU time of each experiment; compute nothing else",
    )
    parser.add_argument(
        "--edge-pilots",
        action="store_true",
        help="for every (kind, d) whose tuned step size is at the edge of its grid, one pilot a factor "
        f"{EDGE_FACTOR:g} beyond it, recorded in the tuning file (the rows are not retrained); compute nothing else",
    )
    args = parser.parse_args(argv)
    names = args.experiments or [n for n in EXPERIMENTS if EXPERIMENTS[n].get("default", True)]
    bad = [n for n in names if n not in EXPERIMENTS]
    if bad:
        parser.error(f"unknown experiment(s) {bad}; available: {list(EXPERIMENTS)}")
    if args.workers is not None and args.workers < 0:
        parser.error(f"--workers must be >= 0; got {args.workers}")
    out = args.out or lib.training_runs.DATA_DIR
    groups = tuple(int(g) for g in args.groups.split(",")) if args.groups else None
    labels = tuple(t.strip() for t in args.labels.split(",") if t.strip()) if args.labels else None
    command = "python scripts/make_training.py" + (
        "" if not (argv or sys.argv[1:]) else " " + " ".join(argv or sys.argv[1:])
    )

    def log(msg: str) -> None:
        print(msg, flush=True)

    if args.estimate:
        estimate(names, log)
        return 0
    if args.edge_pilots:
        for name in names:
            edge_pilots(name, out, groups, log)
        return 0
    if args.merge:
        for name in names:
            merge_from(name, out, args.merge, log, args.sampler)
        return 0
    client = None if args.workers == 0 else mfs.start_client(args.workers, args.scheduler)
    try:
        for name in names:
            run_experiment(name, out, args.fresh, command, log, client, groups, args.sampler, labels)
    finally:
        mfs.stop_client(client, args.scheduler)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
