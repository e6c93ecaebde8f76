"""Trained networks: full linear attention and small transformers, trained with JAX.

The rest of the book fits the reduced parameter ``Gamma`` of linear attention by ridge
regression (:func:`lib.attention.fit_gamma`). This module trains networks instead:

1. :func:`train_linear_attention`: the full one-layer linear self-attention of
   :func:`lib.attention.linear_attention` (weights ``W_kq`` and ``W_pv``), trained by
   full-batch gradient descent or Adam on the squared error of the query label over a
   fixed pretraining set. Its ``.gamma`` is the reduced ``Gamma`` the weights imply
   (:func:`lib.attention.gamma_from_weights`), to compare with ``fit_gamma``'s.
2. :func:`train_transformer`: a small transformer on the same tokens ``[x_i; y_i]``
   (learned query and key maps, an MLP value map, residual connections, an MLP readout
   at the query token; softmax or linear attention), trained by Adam on mini-batches of
   fresh contexts (``kappa = inf``) or of contexts from a fixed task set.
3. re-exported from :mod:`lib.training_runs` (numpy only):
   :func:`~lib.training_runs.probe_features` and :func:`~lib.training_runs.probe` (what a
   trained model's predictions are a function of) and
   :func:`~lib.training_runs.load_runs` (the stored training sweeps ``lib/data/training_*.csv`` made by
   ``scripts/make_training.py``).

Float64 is switched on in JAX (``jax_enable_x64``) so that :func:`train_linear_attention`
can be compared with ``lib``'s solvers to 1e-4 and better; the transformers are trained in
float32. The same code runs on a GPU when ``jax[cuda12]`` is installed instead of the CPU
wheels (never required: every run in the book is CPU-sized).

Used in: :doc:`chapter 7 </book/trained/networks>`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

try:  # JAX and optax are the optional extra `training` of the package (chapter 7 only)
    import jax
    import jax.numpy as jnp
    import optax
except ImportError as err:  # pragma: no cover - exercised by tests/test_optional_jax.py
    raise ImportError(
        "lib.training (chapter 7) needs JAX and optax, which are not installed "
        f"({err}); install the package's extra: pip install 'icl-nonlinear-book[training]' "
        "(or pip install jax jaxlib optax). Chapters 1-6 and the rest of lib run without them."
    ) from err

import lib.attention
import lib.samplers
from lib._checks import as_rng, check_int, check_param, check_scalar
from lib._limits import check_memory
from lib.theory.context_free import context_free_error as context_free_error  # noqa: F401
from lib.training_runs import (
    DATA_DIR,
    _as_float_array,
    _check_contexts_arrays,
    load_runs,
    probe,
    probe_features,
    summarize_runs,
)

__all__ = [
    "ATTENTIONS",
    "DATA_DIR",
    "OPTIMIZERS",
    "TrainedAttention",
    "TrainedTransformer",
    "TrainingDivergedError",
    "context_moments",
    "context_vectors",
    "least_squares_gamma",
    "load_runs",
    "probe",
    "probe_features",
    "reduced_predict",
    "summarize_runs",
    "train_linear_attention",
    "train_transformer",
    "train_transformer_grid",
    "transformer_peak_bytes",
    "LA_INITS",
    "SAMPLERS",
    "V21_MODES",
]

#: Attention types of :func:`train_transformer` (``"none"``: the context-free control).
ATTENTIONS = ("softmax", "linear", "none")
#: Optimizers of :func:`train_linear_attention`.
OPTIMIZERS = ("adam", "gd")

# A loss above this multiple of the initial loss (or not finite) stops the run: the step
# size is too large for the problem (gradient descent on a quadratic diverges geometrically).
_DIVERGENCE_FACTOR = 1e4
# Steps run inside one compiled lax.scan between two divergence checks.
_CHUNK = 200
# Test contexts per compiled call of a transformer's predict (memory: chunk x ell x width).
_PREDICT_CHUNK = 1024
# Numbers in one block of training contexts of train_transformer (8 MB in float64).
_BLOCK_FLOATS = 1_000_000


class TrainingDivergedError(ValueError):
    """The training loss became NaN or grew without bound: the step size ``lr`` is too large."""


# ----------------------------------------------------------------------------------------
# validation (the messages name the argument, its value and what is allowed)
# ----------------------------------------------------------------------------------------


def _check_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}; got {value!r}")
    return value


def _unpack_contexts(contexts: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(X, y, x_query, y_query)`` of a :func:`lib.samplers.sample_contexts` result or a tuple."""
    try:
        if hasattr(contexts, "X"):
            X, y, xq, yq = contexts.X, contexts.y, contexts.x_query, contexts.y_query
        else:
            X, y, xq, yq = tuple(contexts)[:4]
    except (TypeError, ValueError, AttributeError) as exc:
        raise TypeError(
            "contexts must be a sample_contexts result (fields X, y, x_query, y_query) or a "
            f"tuple (X, y, x_query, y_query); got {type(contexts).__name__}"
        ) from exc
    X, y, xq = _check_contexts_arrays(X, y, xq)
    yq = _as_float_array("contexts.y_query", yq, 1)
    if yq.shape != (X.shape[0],):
        raise ValueError(f"contexts.y_query must have shape ({X.shape[0]},) to match X; got shape {yq.shape}")
    return X, y, xq, yq


def _diverged(name_lr: float, step: int, loss: float, first: float) -> TrainingDivergedError:
    return TrainingDivergedError(
        f"lr = {name_lr:g} is too large: the training loss reached {loss:.3g} at step {step} "
        f"(initial loss {first:.3g}); use a smaller lr"
    )


def _check_history(losses: np.ndarray, offset: int, first: float, lr: float) -> None:
    bad = ~np.isfinite(losses) | (losses > _DIVERGENCE_FACTOR * max(first, 1e-12))
    if np.any(bad):
        i = int(np.argmax(bad))
        raise _diverged(lr, offset + i + 1, float(losses[i]), first)


# ----------------------------------------------------------------------------------------
# 1. full linear attention
# ----------------------------------------------------------------------------------------


def context_vectors(X: Any, y: Any) -> np.ndarray:
    """The label row of the context second-moment matrix, ``c = (1/ell) sum_i y_i [x_i; y_i]``.

    With the projection-value row ``W_pv[d] = (0, ..., 0, v22)`` (the block ``v21`` zero,
    as in the reduced model) the linear-attention prediction is
    ``y_hat = v22 * c^T W_kq[:, :d] x_q``, so ``c`` is all a context contributes.
    ``c = [u / d, q]`` with the book's features ``u = (d/ell) sum_i y_i x_i`` and
    ``q = (1/ell) sum_i y_i^2``.

    Parameters
    ----------
    X : array_like, shape (n, ell, d)
    y : array_like, shape (n, ell)

    Returns
    -------
    numpy.ndarray, shape (n, d + 1)
    """
    X = _as_float_array("X", X, 3)
    y = _as_float_array("y", y, 2)
    if y.shape != X.shape[:2]:
        raise ValueError(f"y must have shape (n, ell) = {X.shape[:2]} to match X; got shape {y.shape}")
    ell = X.shape[1]
    out = np.empty((X.shape[0], X.shape[2] + 1))
    out[:, :-1] = np.einsum("nl,nld->nd", y, X) / ell
    out[:, -1] = np.einsum("nl,nl->n", y, y) / ell
    return out


def least_squares_gamma(contexts: Any, lam: float = 0.0, norm: str = "frobenius") -> np.ndarray:
    """``fit_gamma``'s Gamma on the same pretraining set that :func:`train_linear_attention` sees.

    Parameters
    ----------
    contexts : Contexts
        A :func:`lib.samplers.sample_contexts` result.
    lam : float
        Ridge strength of :func:`lib.attention.fit_gamma` (0: least squares / minimum norm).
    norm : {"frobenius", "weights"}
        Which norm the ridge penalty (and, at ``lam = 0`` with fewer contexts than
        parameters, the choice among interpolants) uses: ``"frobenius"`` is
        ``||Gamma||_F^2`` (the book's model); ``"weights"`` is
        ``d^2 ||Gamma_1||_F^2 + ||gamma_2||^2``, the squared norm of the attention
        weights ``W_kq[:, :d]`` that realize ``Gamma`` with ``v22 = 1``. Computed by
        fitting ``Gamma' = Gamma S^{-1}`` (``S = diag(1/d, ..., 1/d, 1)``) on the features
        ``S f``, so that ``||Gamma'||_F`` is the weighted norm.

    Returns
    -------
    numpy.ndarray, shape (d, d + 1)
    """
    X, y, xq, yq = _unpack_contexts(contexts)
    _check_choice("norm", norm, ("frobenius", "weights"))
    d = X.shape[2]
    c = context_vectors(X, y)
    features = np.concatenate([d * c[:, :-1], c[:, -1:]], axis=1)
    if norm == "frobenius":
        return lib.attention.fit_gamma(xq, features, yq, lam=lam)
    scale = np.ones(d + 1)
    scale[:d] = 1.0 / d
    return lib.attention.fit_gamma(xq, features * scale, yq, lam=lam) * scale


def reduced_predict(gamma: Any, X: Any, y: Any, x_query: Any) -> np.ndarray:
    """The reduced model's prediction ``x_q^T Gamma f`` on raw contexts.

    ``f = [(d/ell) sum_i y_i x_i, (1/ell) sum_i y_i^2]`` are the book's context features;
    this is :func:`lib.attention.predict` on them.

    Parameters
    ----------
    gamma : array_like, shape (d, d + 1)
    X : array_like, shape (n, ell, d)
    y : array_like, shape (n, ell)
    x_query : array_like, shape (n, d)

    Returns
    -------
    numpy.ndarray, shape (n,)
    """
    X, y, x_query = _check_contexts_arrays(X, y, x_query)
    d = X.shape[2]
    c = context_vectors(X, y)
    features = np.concatenate([d * c[:, :-1], c[:, -1:]], axis=1)
    return lib.attention.predict(gamma, x_query, features)


def context_moments(X: Any, y: Any) -> np.ndarray:
    """The context second-moment matrices ``C = (1/ell) sum_i z_i z_i^T``, ``z_i = [x_i; y_i]``.

    All that a context contributes to the prediction of the full linear attention
    (every block of ``W_pv``'s last row trained, ``v21`` included):
    ``y_hat = [v21; v22]^T C W_kq[:, :d] x_q``. Its last column is
    :func:`context_vectors`' ``c``.

    Parameters
    ----------
    X : array_like, shape (n, ell, d)
    y : array_like, shape (n, ell)

    Returns
    -------
    numpy.ndarray, shape (n, d + 1, d + 1)
    """
    X = _as_float_array("X", X, 3)
    y = _as_float_array("y", y, 2)
    if y.shape != X.shape[:2]:
        raise ValueError(f"y must have shape (n, ell) = {X.shape[:2]} to match X; got shape {y.shape}")
    Z = np.concatenate([X, y[..., None]], axis=2)
    return np.einsum("nla,nlb->nab", Z, Z) / X.shape[1]


def _la_split(W_kq: np.ndarray, W_pv: np.ndarray) -> dict:
    """The trainable leaves: ``W_kq``, the rows of ``W_pv`` that never reach the prediction, ``v21``, ``v22``."""
    return {"W_kq": W_kq, "pv_rest": W_pv[:-1], "v21": W_pv[-1, :-1], "v22": W_pv[-1, -1]}


def _la_join(params: dict) -> tuple[np.ndarray, np.ndarray]:
    W_pv = np.concatenate([np.asarray(params["pv_rest"]), np.append(np.asarray(params["v21"]), params["v22"])[None]])
    return np.asarray(params["W_kq"]), W_pv


def _la_predict_stats(params: dict, stats: jnp.ndarray, xq: jnp.ndarray, v21: str) -> jnp.ndarray:
    """Predictions from ``c`` (``v21 = "zero"``, stats ``(n, D)``) or ``C`` (``"train"``, ``(n, D, D)``)."""
    d = xq.shape[1]
    kx = jnp.einsum("ab,nb->na", params["W_kq"][:, :d], xq)
    if v21 == "zero":
        return params["v22"] * jnp.einsum("na,na->n", stats, kx)
    v = jnp.concatenate([params["v21"], params["v22"][None]])
    return jnp.einsum("b,nba,na->n", v, stats, kx)


def _la_loss(params: dict, stats: jnp.ndarray, xq: jnp.ndarray, yq: jnp.ndarray, wd: Any, v21: str) -> jnp.ndarray:
    """Mean squared error of the query label plus ``wd (||W_kq||_F^2 + ||W_pv||_F^2)``."""
    r = yq - _la_predict_stats(params, stats, xq, v21)
    penalty = sum(jnp.sum(a**2) for a in jax.tree_util.tree_leaves(params))
    return jnp.mean(r**2) + wd * penalty


class _Optimizer:
    """An optax transformation built once, equal and hashable by its settings.

    A static argument of the module-level jitted scans: a second call with the same
    settings hits the compilation cache (equal keys) and its trace, if any, uses the
    transformation already built (``optax.adam`` is called once per training call).
    """

    def __init__(self, key: tuple, tx: optax.GradientTransformation) -> None:
        self.key, self.tx = key, tx

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Optimizer) and self.key == other.key


def _la_optimizer(optimizer: str, lr: float, steps: int, v21: str) -> _Optimizer:
    """Adam (step size decaying from ``lr`` to ``lr/1000``) or SGD; ``v21`` frozen by ``optax.multi_transform`` when ``"zero"``."""
    if optimizer == "adam":
        tx = optax.adam(optax.exponential_decay(lr, transition_steps=steps, decay_rate=1e-3))
    else:
        tx = optax.sgd(lr)
    labels = {"W_kq": "train", "pv_rest": "train", "v21": "train" if v21 == "train" else "frozen", "v22": "train"}
    tx = optax.multi_transform({"train": tx, "frozen": optax.set_to_zero()}, labels)
    return _Optimizer(("linear_attention", optimizer, float(lr), steps, v21), tx)


@partial(jax.jit, static_argnames=("opt", "v21", "length"))
def _la_scan(params, opt_state, stats, xq, yq, wd, *, opt: _Optimizer, v21: str, length: int):
    """``length`` optimization steps of :func:`train_linear_attention` in one compiled ``lax.scan``.

    Module level, the data as arguments: one compilation per (shapes, optimizer
    settings, v21, length), shared by every call.
    """

    def one_step(carry, _):
        p, s = carry
        loss, g = jax.value_and_grad(_la_loss)(p, stats, xq, yq, wd, v21)
        upd, s = opt.tx.update(g, s, p)
        return (optax.apply_updates(p, upd), s), loss

    (params, opt_state), losses = jax.lax.scan(one_step, (params, opt_state), None, length=length)
    return params, opt_state, losses


def _la_init(gen: np.random.Generator, D: int, init: str, init_scale: float) -> tuple[np.ndarray, np.ndarray]:
    if init == "random":
        W_kq = init_scale * gen.standard_normal((D, D))
        W_pv = init_scale * gen.standard_normal((D, D))
        W_pv[-1, :-1] = 0.0
        W_pv[-1, -1] = 1.0
        return W_kq, W_pv
    # Zhang, Frei and Bartlett's initialization: W_pv = s e_D e_D^T, W_kq = s [T T^T / ||T T^T||_F, 0; 0, 0]
    d = D - 1
    T = gen.standard_normal((d, d))
    TT = T @ T.T
    W_kq = np.zeros((D, D))
    W_kq[:d, :d] = init_scale * TT / np.linalg.norm(TT)
    W_pv = np.zeros((D, D))
    W_pv[-1, -1] = init_scale
    return W_kq, W_pv


@dataclass(frozen=True)
class TrainedAttention:
    """A trained one-layer linear attention (result of :func:`train_linear_attention`).

    Attributes
    ----------
    W_kq, W_pv : numpy.ndarray, shape (d + 1, d + 1)
        The trained key-query and projection-value matrices (``W_pv[d, :d] = 0`` when
        trained with ``v21="zero"``).
    history : numpy.ndarray, shape (steps,)
        Training loss at each step, before its update (mean squared error plus the
        weight-decay term).
    settings : dict
        ``steps, lr, weight_decay, optimizer, init, init_scale, v21, n, d, ell,
        final_loss, seconds``.
    """

    W_kq: np.ndarray
    W_pv: np.ndarray
    history: np.ndarray
    settings: dict = field(default_factory=dict)

    @property
    def gamma(self) -> np.ndarray:
        """The reduced ``Gamma = v22 [K11^T / d, k21]`` (:func:`lib.attention.gamma_from_weights`; ``v21`` must be 0)."""
        return lib.attention.gamma_from_weights(self.W_kq, self.W_pv)

    def predict(self, X: Any, y: Any, x_query: Any) -> np.ndarray:
        """Predicted query labels, shape (n,), for contexts ``X (n, ell, d)``, ``y (n, ell)``, ``x_query (n, d)``.

        Equal to :func:`lib.attention.linear_attention` on the embedded contexts:
        ``(1/ell) sum_i (v21^T x_i + v22 y_i) z_i^T W_kq[:, :d] x_q``.
        """
        X, y, x_query = _check_contexts_arrays(X, y, x_query)
        d = self.W_kq.shape[0] - 1
        if X.shape[2] != d:
            raise ValueError(f"X must have d = {d} columns (the trained dimension); got shape {X.shape}")
        kx = np.einsum("ab,nb->na", self.W_kq[:, :d], x_query)  # W_kq z_q, shape (n, d + 1)
        scores = np.einsum("nld,nd->nl", X, kx[:, :d]) + y * kx[:, d:]  # z_i^T W_kq z_q
        values = np.einsum("nld,d->nl", X, self.W_pv[-1, :d]) + self.W_pv[-1, -1] * y
        return np.einsum("nl,nl->n", values, scores) / X.shape[1]


#: Blocks of ``W_pv``'s last row trained by :func:`train_linear_attention` (``"zero"``: v21 held at 0).
V21_MODES = ("zero", "train")
#: Initializations of :func:`train_linear_attention`.
LA_INITS = ("random", "zfb")


def train_linear_attention(
    contexts: Any,
    *,
    steps: int,
    lr: float,
    weight_decay: float = 0.0,
    rng: Any = None,
    optimizer: str = "adam",
    init_scale: float = 1e-3,
    v21: str = "zero",
    init: str = "random",
) -> TrainedAttention:
    """Train the linear-attention weights ``(W_kq, W_pv)`` on a pretraining set.

    The model is :func:`lib.attention.linear_attention` on tokens ``z_i = [x_i; y_i]``
    with the query's label zeroed, ``z_q = [x_q; 0]``:

    .. math:: \\hat y = \\frac1\\ell \\sum_{i=1}^\\ell (v_{21}^\\top x_i + v_{22} y_i)\\,
              z_i^\\top W_{kq} z_q ,

    with ``[v21^T, v22]`` the last row of ``W_pv``. Two versions:

    - ``v21="zero"`` (default): ``v21`` is held at zero, the reduced model in factored
      form (without it no ``Gamma`` reproduces the prediction; see
      :func:`lib.attention.gamma_from_weights`); the prediction is
      ``v22 c^T W_kq[:, :d] x_q`` with ``c`` of :func:`context_vectors`.
    - ``v21="train"``: every block is trained, ``v21`` included; the prediction is
      ``[v21; v22]^T C W_kq[:, :d] x_q`` with ``C`` of :func:`context_moments`. The term
      ``v21^T C_xx K11 x_q`` reads the context tokens' second moments; ``.gamma`` is then
      undefined.

    The frozen block gets no update (``optax.multi_transform`` with ``set_to_zero``).
    Training is full-batch Adam (``optimizer="adam"``, step size decaying exponentially
    from ``lr`` to ``lr / 1000``) or plain gradient descent (``"gd"``, constant ``lr``), on

    .. math:: L = \\frac1n \\sum_{\\mu=1}^n \\big(y^\\mu_{\\ell+1} - \\hat y^\\mu\\big)^2
              + \\omega \\big(\\|W_{kq}\\|_F^2 + \\|W_{pv}\\|_F^2\\big) .

    Initialization (``init``):

    - ``"random"``: ``W_kq`` and the rows of ``W_pv`` that do not reach the prediction
      have i.i.d. ``N(0, init_scale^2)`` entries, ``v21 = 0``, ``v22 = 1``. The prediction
      (at ``v21 = 0``) is ``v22 x_q^T K^T c`` with ``K = W_kq[:, :d]``, so gradient
      descent moves ``K`` only within the span of the data directions: from a small
      ``init_scale`` it finds (at ``tau < 1``) the minimum-norm interpolant plus ``v22``
      times the part of the initialization the data never see.
    - ``"zfb"``: the initialization of Zhang, Frei and Bartlett (2024; ``zhang2024trained`` in the bibliography): ``W_pv = s e e^T``
      (only ``v22 = s`` nonzero), ``W_kq`` zero except its top-left block
      ``s Theta Theta^T / ||Theta Theta^T||_F`` with ``Theta`` a ``d x d`` Gaussian matrix,
      ``s = init_scale``.

    Weight decay on the factors is not ridge on ``Gamma``: at a minimum of ``L`` (with
    ``v21 = 0``) the factors are balanced and
    ``min {v22^2 + ||K11||_F^2 + ||k21||^2 : Gamma fixed} = 2 sqrt(d^2 ||Gamma_1||_F^2 +
    ||gamma_2||^2)``, a norm (not its square) of a rescaled ``Gamma``; the entries that
    do not reach the prediction decay to zero.

    Parameters
    ----------
    contexts : Contexts
        The pretraining set, a :func:`lib.samplers.sample_contexts` result (or a tuple
        ``(X, y, x_query, y_query)``).
    steps : int
        Optimization steps (>= 1).
    lr : float
        Step size (> 0).
    weight_decay : float
        ``omega >= 0``, the squared-norm penalty on both weight matrices.
    rng : numpy.random.Generator, int or None
        Random source of the initialization.
    optimizer : {"adam", "gd"}
    init_scale : float
        Scale of the initial weights (> 0), see ``init``.
    v21 : {"zero", "train"}
        Whether ``v21 = W_pv[d, :d]`` is held at zero (the reduced model) or trained.
    init : {"random", "zfb"}
        The initialization, see above.

    Returns
    -------
    TrainedAttention
        ``.gamma`` (``v21="zero"`` only), ``.predict(X, y, x_query)``, ``.history``,
        ``.settings``.

    Raises
    ------
    TrainingDivergedError
        (a ``ValueError``) if the loss becomes NaN or exceeds 1e4 times its initial
        value; the message names ``lr``.

    See Also
    --------
    lib.attention.fit_gamma : the least-squares / ridge ``Gamma`` this training reaches at ``tau > 1`` (``v21 = 0``).
    least_squares_gamma : ``fit_gamma`` on exactly the same pretraining set.

    Notes
    -----
    Float64, inside the scoped ``jax.enable_x64(True)`` context (the process-wide JAX
    setting is left alone). Cost per step ``O(n d^2)``. Used in:
    :doc:`chapter 7 </book/trained/networks>`.
    """
    X, y, xq, yq = _unpack_contexts(contexts)
    steps = check_int("steps", steps, low=1)
    lr = check_scalar("lr", lr, low=0, low_open=True)
    wd = check_scalar("weight_decay", weight_decay, low=0)
    optimizer = _check_choice("optimizer", optimizer, OPTIMIZERS)
    init_scale = check_scalar("init_scale", init_scale, low=0, low_open=True)
    v21 = _check_choice("v21", v21, V21_MODES)
    init = _check_choice("init", init, LA_INITS)
    gen = as_rng(rng)
    n, ell, d = X.shape
    D = d + 1
    t0 = time.perf_counter()
    W_kq, W_pv = _la_init(gen, D, init, init_scale)
    stats_np = context_vectors(X, y) if v21 == "zero" else context_moments(X, y)
    with jax.enable_x64(True):
        f64 = jnp.float64
        params = jax.tree_util.tree_map(lambda a: jnp.asarray(a, f64), _la_split(W_kq, W_pv))
        stats, xq_j, yq_j = jnp.asarray(stats_np, f64), jnp.asarray(xq, f64), jnp.asarray(yq, f64)
        wd_j = jnp.asarray(wd, f64)
        opt = _la_optimizer(optimizer, lr, steps, v21)
        opt_state = opt.tx.init(params)
        first = float(_la_loss(params, stats, xq_j, yq_j, wd_j, v21))
        history = np.empty(steps)
        done = 0
        while done < steps:
            k = min(_CHUNK, steps - done)
            params, opt_state, losses = _la_scan(params, opt_state, stats, xq_j, yq_j, wd_j, opt=opt, v21=v21, length=k)
            history[done : done + k] = np.asarray(losses)
            _check_history(history[done : done + k], done, first, lr)
            done += k
        final = float(_la_loss(params, stats, xq_j, yq_j, wd_j, v21))
        params = jax.tree_util.tree_map(np.asarray, params)
    _check_history(np.array([final]), steps, first, lr)
    settings = {
        "steps": steps,
        "lr": lr,
        "weight_decay": wd,
        "optimizer": optimizer,
        "init": init,
        "init_scale": init_scale,
        "v21": v21,
        "n": n,
        "d": d,
        "ell": ell,
        "final_loss": final,
        "seconds": time.perf_counter() - t0,
    }
    W_kq, W_pv = _la_join(params)
    return TrainedAttention(W_kq, W_pv, history, settings)


# ----------------------------------------------------------------------------------------
# 2. small transformers
# ----------------------------------------------------------------------------------------


def _dense(gen: np.random.Generator, fan_in: int, fan_out: int, scale: float = 1.0) -> np.ndarray:
    return (scale / math.sqrt(fan_in)) * gen.standard_normal((fan_in, fan_out))


def _init_transformer(gen: np.random.Generator, D: int, width: int, layers: int) -> dict:
    m = width
    params: dict[str, Any] = {
        "embed": _dense(gen, D, m),
        "embed_b": np.zeros(m),
        "layers": [],
        "out1": _dense(gen, m, m),
        "out1_b": np.zeros(m),
        "out2": _dense(gen, m, 1, scale=0.1)[:, 0],
        "out2_b": np.zeros(()),
    }
    for _ in range(layers):
        params["layers"].append(
            {
                "Wq": _dense(gen, m, m),
                "Wk": _dense(gen, m, m),
                "V1": _dense(gen, m, m),
                "V1_b": np.zeros(m),
                "V2": _dense(gen, m, m, scale=0.5),
                "V2_b": np.zeros(m),
            }
        )
    return jax.tree_util.tree_map(lambda a: jnp.asarray(a, dtype=jnp.float32), params)


def _attend(layer: dict, h_query: jnp.ndarray, h_keys: jnp.ndarray, attention: str) -> jnp.ndarray:
    """Attention of query rows ``h_query (B, Q, m)`` to the context tokens ``h_keys (B, L, m)``."""
    m = h_keys.shape[-1]
    q = h_query @ layer["Wq"]
    k = h_keys @ layer["Wk"]
    v = _value(layer, h_keys)
    s = jnp.einsum("bqm,blm->bql", q, k) / math.sqrt(m)
    if attention == "softmax":
        a = jax.nn.softmax(s, axis=-1)
    else:
        a = s / h_keys.shape[1]
    return jnp.einsum("bql,blm->bqm", a, v)


def _value(layer: dict, h: jnp.ndarray) -> jnp.ndarray:
    """The value MLP ``V(h) = W_2 gelu(W_1 h + b_1) + b_2`` of a layer."""
    return jax.nn.gelu(h @ layer["V1"] + layer["V1_b"]) @ layer["V2"] + layer["V2_b"]


def _readout(params: dict, hq: jnp.ndarray) -> jnp.ndarray:
    return jax.nn.gelu(hq @ params["out1"] + params["out1_b"]) @ params["out2"] + params["out2_b"]


def _tf_forward(params: dict, X: jnp.ndarray, y: jnp.ndarray, xq: jnp.ndarray, attention: str) -> jnp.ndarray:
    """Predictions ``(B,)`` for contexts ``X (B, ell, d)``, ``y (B, ell)``, queries ``xq (B, d)``."""
    d = X.shape[-1]
    scale = math.sqrt(d)  # tokens enter as [sqrt(d) x; y]: entries of order one
    if attention == "none":
        # the context-free control: the query token alone, through the same embedding,
        # the value MLP of each layer (as a residual block) and the readout
        hq = jnp.concatenate([scale * xq, jnp.zeros_like(xq[:, :1])], axis=-1) @ params["embed"] + params["embed_b"]
        for layer in params["layers"]:
            hq = hq + _value(layer, hq)
        return _readout(params, hq)
    tokens = jnp.concatenate([scale * X, y[..., None]], axis=-1)
    query = jnp.concatenate([scale * xq, jnp.zeros_like(xq[:, :1])], axis=-1)[:, None, :]
    h = tokens @ params["embed"] + params["embed_b"]
    hq = query @ params["embed"] + params["embed_b"]
    n_layers = len(params["layers"])
    for i, layer in enumerate(params["layers"]):
        if i < n_layers - 1:  # earlier layers update the context tokens too
            h_new = h + _attend(layer, h, h, attention)
            hq = hq + _attend(layer, hq, h, attention)
            h = h_new
        else:
            hq = hq + _attend(layer, hq, h, attention)
    return _readout(params, hq[:, 0, :])


@dataclass(frozen=True)
class TrainedTransformer:
    """A trained small transformer (result of :func:`train_transformer`).

    Attributes
    ----------
    params : dict
        The weights (a pytree of float32 arrays).
    history : numpy.ndarray, shape (steps,)
        Mini-batch training loss (mean squared error) at each step.
    settings : dict
        ``teacher, d, alpha, ell, rho, kappa, layers, width, attention, steps, batch, lr,
        seconds`` (``teacher`` as given when it is a name).
    """

    params: Any
    history: np.ndarray
    settings: dict = field(default_factory=dict)
    teacher: Any = None
    tasks: Any = None

    def predict(self, X: Any, y: Any, x_query: Any) -> np.ndarray:
        """Predicted query labels, shape (n,), for contexts ``X (n, ell, d)``, ``y (n, ell)``, ``x_query (n, d)``.

        Any context length ``ell`` is accepted (the network has no positional encoding).
        """
        X, y, x_query = _check_contexts_arrays(X, y, x_query)
        d = self.settings["d"]
        if X.shape[2] != d:
            raise ValueError(f"X must have d = {d} columns (the trained dimension); got shape {X.shape}")
        fwd = _forward_jit(self.settings["attention"])
        out = np.empty(X.shape[0])
        chunk = max(1, min(_PREDICT_CHUNK, _BLOCK_FLOATS * 8 // (X.shape[1] * self.settings["width"])))
        for s in range(0, X.shape[0], chunk):
            sl = slice(s, s + chunk)
            out[sl] = np.asarray(
                fwd(
                    self.params,
                    jnp.asarray(X[sl], jnp.float32),
                    jnp.asarray(y[sl], jnp.float32),
                    jnp.asarray(x_query[sl], jnp.float32),
                )
            )
        return out

    def test_error(self, n_test: int = 4000, rng: Any = None, *, fresh_tasks: bool = True) -> tuple[float, float]:
        """Mean squared error on ``n_test`` new contexts and its standard error.

        ``fresh_tasks=True`` draws a fresh task per context (the ICL error); ``False``
        uses the training task set (the IDG error; the same as ICL when ``kappa = inf``).
        """
        n_test = check_int("n_test", n_test, low=2)
        s = self.settings
        tasks = None if fresh_tasks else self.tasks
        ctx = lib.samplers.sample_contexts(n_test, s["d"], s["ell"], tasks, self.teacher, s["rho"], as_rng(rng))
        r2 = (ctx.y_query - self.predict(ctx.X, ctx.y, ctx.x_query)) ** 2
        return float(r2.mean()), float(r2.std(ddof=1) / math.sqrt(n_test))


# ---- training machinery of the transformers (module level: compiled once per settings)

#: Samplers of the training contexts of :func:`train_transformer`.
SAMPLERS = ("numpy", "device")
# Bytes per float32 number, and a margin on the activations kept for the backward pass
_F32 = 4
_ACT_COPIES = 12


def _check_transformer_args(teacher, d, alpha, rho, kappa, layers, width, attention, steps, batch, sampler):
    """The shared checks of :func:`train_transformer` and :func:`train_transformer_grid`."""
    d = check_int("d", d, low=1)
    alpha = check_param("alpha", alpha, scalar=True)
    rho = check_param("rho", rho, scalar=True)
    kappa = check_param("kappa", kappa, scalar=True)
    layers = check_int("layers", layers, low=1)
    if layers > 2:
        raise ValueError(f"layers must be 1 or 2; got {layers!r}")
    width = check_int("width", width, low=2)
    attention = _check_choice("attention", attention, ATTENTIONS)
    steps = check_int("steps", steps, low=1)
    batch = check_int("batch", batch, low=1)
    sampler = _check_choice("sampler", sampler, SAMPLERS)
    if sampler == "device":
        _device_teacher(teacher)
    else:
        # fails early, with sample_contexts' own message, on a teacher it does not accept
        lib.samplers.sample_contexts(1, d, 1, None, teacher, rho, np.random.default_rng(0))
    return d, alpha, rho, kappa, layers, width, attention, steps, batch


def transformer_peak_bytes(
    d: int, ell: int, batch: int, width: int, layers: int = 1, sampler: str = "numpy", members: int = 1
) -> float:
    """Estimated peak memory (bytes) of training ``members`` transformers in parallel.

    The activations kept for the backward pass of one step (about a dozen arrays of
    ``batch x ell x width`` float32 numbers per layer, plus the ``ell x ell`` scores of a
    second layer) and, with ``sampler="numpy"``, one block of training contexts in float64
    and float32; with ``"device"`` one step's contexts.

    Parameters
    ----------
    d, ell, batch, width, layers : int
        Dimension, context length, contexts per step, hidden width, layers.
    sampler : {"numpy", "device"}
    members : int
        Networks trained together (:func:`train_transformer_grid`).

    Returns
    -------
    float
    """
    tokens = float(batch) * (ell + 1)
    act = _ACT_COPIES * tokens * width * layers * _F32
    if layers > 1:
        act += 4.0 * batch * ell * ell * _F32
    step_data = tokens * (d + 1) * _F32
    if sampler == "numpy":
        block = max(1, min(_CHUNK // 4, _BLOCK_FLOATS // max(1, batch * ell * (d + 1))))
        data = block * tokens * (d + 1) * (2 * 8 + _F32)
    else:
        data = 3 * step_data
    return members * (act + step_data) + data


def _check_transformer_memory(where, d, alpha, ell, batch, width, layers, sampler, members):
    nbytes = transformer_peak_bytes(d, ell, batch, width, layers, sampler, members)
    check_memory(
        f"{where}(d={d}, alpha={alpha:g}, batch={batch}, width={width})",
        nbytes,
        f"alpha, batch and width (ell = {ell} tokens per context, {batch} contexts per step, {members} network(s))",
    )


def _tf_optimizer(lr: float, steps: int) -> _Optimizer:
    """Adam with a cosine decay from ``lr`` to ``lr / 10`` over ``steps``."""
    return _Optimizer(("transformer", float(lr), steps), optax.adam(optax.cosine_decay_schedule(lr, steps, alpha=0.1)))


def _tf_loss(p, X, y, xq, yq, attention):
    return jnp.mean((yq - _tf_forward(p, X, y, xq, attention)) ** 2)


def _tf_step(p, s, batch_data, attention, opt, lr_scale=None):
    """One Adam step; ``lr_scale`` multiplies the update (the grid's per-network step size,
    with ``opt`` built for ``lr = 1``: Adam's update is proportional to its step size)."""
    loss, g = jax.value_and_grad(_tf_loss)(p, *batch_data, attention)
    upd, s = opt.tx.update(g, s, p)
    if lr_scale is not None:
        upd = jax.tree_util.tree_map(lambda u: lr_scale * u, upd)
    return optax.apply_updates(p, upd), s, loss


@partial(jax.jit, static_argnames=("attention", "opt"))
def _tf_scan_data(params, opt_state, data, *, attention: str, opt: _Optimizer):
    """Steps on given mini-batches ``data`` (leading axis: steps) in one compiled scan."""

    def body(carry, batch_data):
        p, s, loss = _tf_step(*carry, batch_data, attention, opt)
        return (p, s), loss

    (params, opt_state), losses = jax.lax.scan(body, (params, opt_state), data)
    return params, opt_state, losses


def _hermite_poly(c: tuple[float, ...]):
    he = np.asarray(c) / np.sqrt([math.factorial(m) for m in range(len(c))])

    def f(z):
        # He_0 = 1, He_1 = z, He_{m+1} = z He_m - m He_{m-1}
        out, prev, cur = he[0] * jnp.ones_like(z), jnp.ones_like(z), z
        for m in range(1, len(he)):
            out = out + he[m] * cur
            prev, cur = cur, z * cur - m * prev
        return out

    return f


#: The teachers that ``sampler="device"`` evaluates in JAX (the catalogue of ``lib.hermite.LINKS``).
_JAX_LINKS: dict[str, Any] = {
    "linear": lambda z: z,
    "relu": lambda z: jnp.maximum(z, 0.0),
    "abs": jnp.abs,
    "sign": jnp.sign,
    "tanh": jnp.tanh,
    "erf": jax.scipy.special.erf,
    "sin": jnp.sin,
    "h2": _hermite_poly((0.0, 0.0, 1.0)),
    "h3": _hermite_poly((0.0, 0.0, 0.0, 1.0)),
    "cubic": _hermite_poly((0.0, 1.0, 0.0, 0.5)),
    "offset": _hermite_poly((0.5, 1.0)),
}


def _device_teacher(teacher: Any) -> str:
    """The catalogue name of a teacher for ``sampler="device"`` (None: linear)."""
    if teacher is None:
        return "linear"
    if isinstance(teacher, str) and teacher.strip().lower() in _JAX_LINKS:
        return teacher.strip().lower()
    raise ValueError(
        f"teacher must be None or one of {sorted(_JAX_LINKS)} with sampler='device' (the links evaluated "
        f"in JAX); got {teacher!r}; use sampler='numpy' for other teachers"
    )


def _device_batch(key, rho, tasks, *, teacher: str, d: int, ell: int, batch: int):
    """One mini-batch of contexts drawn with ``jax.random``, the law of :func:`lib.samplers.sample_contexts`."""
    kw, kx, ke = jax.random.split(key, 3)
    if tasks is None:  # a fresh task per context, uniform on the sphere of radius sqrt(d)
        g = jax.random.normal(kw, (batch, d))
        w = math.sqrt(d) * g / jnp.linalg.norm(g, axis=1, keepdims=True)
    else:
        w = tasks[jax.random.randint(kw, (batch,), 0, tasks.shape[0])]
    X = jax.random.normal(kx, (batch, ell + 1, d)) / math.sqrt(d)
    z = jnp.einsum("bld,bd->bl", X, w)
    y = _JAX_LINKS[teacher](z) + jnp.sqrt(rho) * jax.random.normal(ke, (batch, ell + 1))
    return X[:, :ell], y[:, :ell], X[:, ell], y[:, ell]


def _tf_scan_device_impl(
    params, opt_state, key, lr_scale, rho, tasks, *, attention, opt, teacher, d, ell, batch, length
):
    def body(carry, k):
        bd = _device_batch(k, rho, tasks, teacher=teacher, d=d, ell=ell, batch=batch)
        p, s, loss = _tf_step(*carry, bd, attention, opt, lr_scale)
        return (p, s), loss

    (params, opt_state), losses = jax.lax.scan(body, (params, opt_state), jax.random.split(key, length))
    return params, opt_state, losses


_DEVICE_STATIC = ("attention", "opt", "teacher", "d", "ell", "batch", "length")


@partial(jax.jit, static_argnames=_DEVICE_STATIC)
def _tf_scan_device(params, opt_state, key, rho, tasks, **static):
    """``length`` steps with contexts drawn on the device inside the compiled scan (fresh per step)."""
    return _tf_scan_device_impl(params, opt_state, key, None, rho, tasks, **static)


@partial(jax.jit, static_argnames=_DEVICE_STATIC)
def _tf_scan_device_grid(params, opt_state, key, lr, rho, tasks, **static):
    """:func:`_tf_scan_device` vmapped over networks (leading axis of params, state, key, lr, tasks);
    ``opt`` is built for ``lr = 1`` and each network's update is scaled by its ``lr``."""

    def one(p, s, k, lr_, t):
        return _tf_scan_device_impl(p, s, k, lr_, rho, t, **static)

    return jax.vmap(one, in_axes=(0, 0, 0, 0, None if tasks is None else 0))(params, opt_state, key, lr, tasks)


_FORWARD_CACHE: dict[str, Any] = {}


def _forward_jit(attention: str):
    if attention not in _FORWARD_CACHE:
        _FORWARD_CACHE[attention] = jax.jit(lambda p, X, y, xq: _tf_forward(p, X, y, xq, attention))
    return _FORWARD_CACHE[attention]


def train_transformer(
    teacher: Any,
    d: int,
    alpha: float,
    rho: float,
    *,
    kappa: float = math.inf,
    layers: int = 1,
    width: int = 64,
    attention: str = "softmax",
    steps: int,
    batch: int,
    lr: float,
    rng: Any = None,
    sampler: str = "numpy",
) -> TrainedTransformer:
    """Train a small transformer for in-context regression on the book's data model.

    Tokens are ``[x_i; y_i]`` for the ``ell = round(alpha d)`` context tokens and
    ``[x_q; 0]`` for the query (the ``x`` part scaled by ``sqrt(d)`` so that its entries
    are of order one), embedded linearly in ``R^width``. Each layer adds to a token
    ``h`` the attention output

    .. math:: \\sum_{i=1}^{\\ell} a_i\\, V(h_i), \\qquad
              s_i = \\frac{(W_q h)^\\top W_k h_i}{\\sqrt{m}},

    with ``a = softmax(s)`` (``attention="softmax"``) or ``a = s / ell`` (``"linear"``),
    over the context tokens only (the query is not a key, as in
    :func:`lib.attention.linear_attention`), and an MLP value map
    ``V(h) = W_2 gelu(W_1 h + b_1) + b_2`` (residual connection). With ``layers = 2`` the
    first layer updates the context tokens as well (self-attention among them). The
    prediction is an MLP readout ``w^T gelu(R h_q + r) + b`` of the query token. With
    ``attention="linear"`` this is an MLP on the tokens, then linear attention, then a
    readout: the architecture of Oko et al. (2024) in this model.

    ``attention="none"`` is the context-free control: the same embedding, value MLPs
    (each applied to the query token as a residual block, ``h_q <- h_q + V(h_q)``),
    readout and training, but no attention, so the prediction is a function of ``x_q``
    alone. At finite ``d`` the best such function, ``E[y | x_q]``, is not zero (for
    ``h2`` it is ``(|x_q|^2 - 1)/sqrt(2)``); this network measures how much of a trained
    transformer's error is reached without reading the context.

    Training: Adam with step size ``lr`` (cosine decay to ``lr / 10``) on the squared
    error of the query label, over ``steps`` mini-batches of ``batch`` new contexts drawn
    with :func:`lib.samplers.sample_contexts` (several steps' contexts per call): a fresh task per context when
    ``kappa = inf``, else a task from one fixed set of ``round(kappa d)`` tasks
    (``lib.sample_task_set``). Float32.

    Parameters
    ----------
    teacher : None, str or callable
        The link ``f`` (as :func:`lib.samplers.sample_contexts` accepts it, e.g. ``"h2"``).
    d : int
        Token dimension (>= 1).
    alpha : float
        Context length per dimension (> 0); ``ell = max(1, round(alpha d))``.
    rho : float
        Label-noise variance (>= 0).
    kappa : float
        Tasks per dimension (> 0 or inf).
    layers : {1, 2}
    width : int
        Hidden width ``m`` (>= 2).
    attention : {"softmax", "linear", "none"}
        ``"none"``: no attention (the context-free control, see above).
    steps, batch : int
        Optimization steps and contexts per step (>= 1).
    lr : float
        Adam step size (> 0).
    rng : numpy.random.Generator, int or None
        Random source (initialization, task set and every training context; with
        ``sampler="device"`` the JAX key of the contexts is drawn from it).
    sampler : {"numpy", "device"}
        How the training contexts are drawn. ``"numpy"`` (default, the stored runs):
        :func:`lib.samplers.sample_contexts` on the host, several steps' contexts per
        call. ``"device"``: with ``jax.random`` inside the compiled scan, fresh for every
        step, from a key (the same law; other draws): nothing crosses from the host during
        training, so it runs on a GPU at full speed. The teacher must then be a link of the
        catalogue (``None``, ``"relu"``, ``"h2"``, ...).

    Returns
    -------
    TrainedTransformer
        ``.predict(X, y, x_query)``, ``.test_error(n_test, rng)``, ``.history``,
        ``.settings``.

    Raises
    ------
    TrainingDivergedError
        (a ``ValueError``) if the loss becomes NaN or exceeds 1e4 times its initial
        value; the message names ``lr``.
    lib._limits.MemoryLimitError
        (a ``ValueError``) before anything is allocated, if the activations of one step
        (:func:`transformer_peak_bytes`) exceed the memory limit of
        :func:`lib._limits.memory_limit` (``LIB_MEMORY_LIMIT``).

    See Also
    --------
    train_transformer_grid : several seeds and learning rates at once (``jax.vmap``).

    Notes
    -----
    The steps run in a compiled ``lax.scan`` defined at module level, with the data (or
    the key) as arguments: it is compiled once per shapes and settings and reused by
    later calls. ``alpha``, ``rho`` and ``kappa`` are checked against the book's
    parameter ranges (:data:`lib._checks.PARAMETERS`).
    Cost per step ``O(batch ell width^2)`` for one layer, plus ``O(batch ell^2 width)``
    for the second. Used in: :doc:`chapter 7 </book/trained/networks>`.
    """
    d, alpha, rho, kappa, layers, width, attention, steps, batch = _check_transformer_args(
        teacher, d, alpha, rho, kappa, layers, width, attention, steps, batch, sampler
    )
    lr = check_scalar("lr", lr, low=0, low_open=True)
    gen = as_rng(rng)
    ell = max(1, round(alpha * d))
    _check_transformer_memory("train_transformer", d, alpha, ell, batch, width, layers, sampler, members=1)
    t0 = time.perf_counter()
    tasks = None if math.isinf(kappa) else lib.sample_task_set(d, kappa, gen)
    params = _init_transformer(gen, d + 1, width, layers)
    opt = _tf_optimizer(lr, steps)
    opt_state = opt.tx.init(params)
    history = np.empty(steps)
    done, first = 0, None
    if sampler == "device":
        key = jax.random.PRNGKey(int(gen.integers(2**32)))
        tasks_j = None if tasks is None else jnp.asarray(tasks, jnp.float32)
        static = {"attention": attention, "opt": opt, "teacher": _device_teacher(teacher), "d": d, "ell": ell}
    # steps run in blocks of one compiled lax.scan (module level: compiled once per shapes
    # and settings); "numpy": the contexts of a block drawn in one call (block size by
    # memory: at most ~_BLOCK_FLOATS numbers); "device": drawn inside the scan
    block = _CHUNK if sampler == "device" else max(1, min(_CHUNK // 4, _BLOCK_FLOATS // (batch * ell * (d + 1))))
    while done < steps:
        k = min(block, steps - done)
        if sampler == "device":
            key, sub = jax.random.split(key)
            params, opt_state, losses = _tf_scan_device(
                params, opt_state, sub, jnp.float32(rho), tasks_j, batch=batch, length=k, **static
            )
        else:
            ctx = lib.samplers.sample_contexts(k * batch, d, ell, tasks, teacher, rho, gen)
            data = (
                jnp.asarray(ctx.X.reshape(k, batch, ell, d), jnp.float32),
                jnp.asarray(ctx.y.reshape(k, batch, ell), jnp.float32),
                jnp.asarray(ctx.x_query.reshape(k, batch, d), jnp.float32),
                jnp.asarray(ctx.y_query.reshape(k, batch), jnp.float32),
            )
            params, opt_state, losses = _tf_scan_data(params, opt_state, data, attention=attention, opt=opt)
        history[done : done + k] = np.asarray(losses)
        if first is None:
            first = max(float(history[0]), 1e-12)
        _check_history(history[done : done + k], done, first, lr)
        done += k
    settings = {
        "teacher": teacher if isinstance(teacher, str) or teacher is None else getattr(teacher, "__name__", "callable"),
        "d": d,
        "alpha": alpha,
        "ell": ell,
        "rho": rho,
        "kappa": kappa,
        "layers": layers,
        "width": width,
        "attention": attention,
        "steps": steps,
        "batch": batch,
        "lr": lr,
        "sampler": sampler,
        "seconds": time.perf_counter() - t0,
    }
    return TrainedTransformer(jax.tree_util.tree_map(np.asarray, params), history, settings, teacher, tasks)


def train_transformer_grid(
    teacher: Any,
    d: int,
    alpha: float,
    rho: float,
    *,
    seeds: Any,
    lrs: Any,
    kappa: float = math.inf,
    layers: int = 1,
    width: int = 64,
    attention: str = "softmax",
    steps: int,
    batch: int,
) -> list[list[TrainedTransformer]]:
    """Train one transformer per (seed, learning rate), all together, contexts drawn on the device.

    The networks of :func:`train_transformer` with ``sampler="device"``, vectorized with
    ``jax.vmap`` over the seeds and the learning rates: one compiled ``lax.scan`` runs the
    steps of every network at once, each drawing its own fresh mini-batches inside the
    scan from its own JAX key (on a GPU, one launch trains the whole grid). Network
    ``(i, j)`` is the one ``train_transformer(..., rng=seeds[i], lr=lrs[j],
    sampler="device")`` trains (up to float32 rounding): the networks of one seed share
    their initialization, task set and training contexts, and differ only in the step
    size.

    Parameters
    ----------
    teacher : None or str
        A link of the catalogue (see ``sampler="device"`` in :func:`train_transformer`).
    d, alpha, rho, kappa, layers, width, attention, steps, batch
        As in :func:`train_transformer`.
    seeds : sequence of int
        Seeds (>= 0) of ``numpy.random.default_rng``: initialization, task set and JAX key.
    lrs : sequence of float
        Adam step sizes (> 0).

    Returns
    -------
    list of list of TrainedTransformer
        ``out[i][j]`` for ``seeds[i]`` and ``lrs[j]``. A network whose loss diverged (NaN
        or above 1e4 times its initial value) is returned with
        ``settings["diverged"] = True`` instead of raising, so that a learning-rate grid
        can keep its other members.

    Raises
    ------
    ValueError
        On a bad argument, or (:class:`lib._limits.MemoryLimitError`) if the grid's
        activations exceed the memory limit.

    Notes
    -----
    Used in: ``scripts/make_training.py``.
    """
    d, alpha, rho, kappa, layers, width, attention, steps, batch = _check_transformer_args(
        teacher, d, alpha, rho, kappa, layers, width, attention, steps, batch, "device"
    )
    seeds = [check_int("seeds", s, low=0) for s in np.atleast_1d(np.asarray(seeds, dtype=object))]
    lrs = [check_scalar("lrs", v, low=0, low_open=True) for v in np.atleast_1d(np.asarray(lrs, dtype=float))]
    if not seeds or not lrs:
        raise ValueError(f"seeds and lrs must not be empty; got {seeds!r} and {lrs!r}")
    ell = max(1, round(alpha * d))
    members = len(seeds) * len(lrs)
    _check_transformer_memory("train_transformer_grid", d, alpha, ell, batch, width, layers, "device", members)
    t0 = time.perf_counter()
    inits, keys, task_sets = [], [], []
    for s in seeds:
        gen = np.random.default_rng(s)
        tasks = None if math.isinf(kappa) else lib.sample_task_set(d, kappa, gen)
        params = _init_transformer(gen, d + 1, width, layers)
        key = jax.random.PRNGKey(int(gen.integers(2**32)))
        for _ in lrs:
            inits.append(params)
            keys.append(key)
            task_sets.append(tasks)
    stack = lambda *a: jnp.stack(a)  # noqa: E731
    params = jax.tree_util.tree_map(stack, *inits)
    opt = _tf_optimizer(1.0, steps)  # each network's update scaled by its lr
    opt_state = jax.vmap(opt.tx.init)(params)
    key = jnp.stack(keys)
    lr_j = jnp.asarray([lr for _ in seeds for lr in lrs], jnp.float32)
    tasks_j = None if math.isinf(kappa) else jnp.asarray(np.stack(task_sets), jnp.float32)
    static = {"attention": attention, "opt": opt, "teacher": _device_teacher(teacher), "d": d, "ell": ell}
    history = np.empty((members, steps))
    done = 0
    while done < steps:
        k = min(_CHUNK, steps - done)
        key, sub = jnp.swapaxes(jax.vmap(jax.random.split)(key), 0, 1)
        params, opt_state, losses = _tf_scan_device_grid(
            params, opt_state, sub, lr_j, jnp.float32(rho), tasks_j, batch=batch, length=k, **static
        )
        history[:, done : done + k] = np.asarray(losses).reshape(members, k)
        done += k
    first = np.maximum(history[:, :1], 1e-12)
    diverged = np.any(~np.isfinite(history) | (history > _DIVERGENCE_FACTOR * first), axis=1)
    seconds = time.perf_counter() - t0
    params = jax.tree_util.tree_map(np.asarray, params)
    out = []
    for i, s in enumerate(seeds):
        row = []
        for j, lr in enumerate(lrs):
            m = i * len(lrs) + j
            settings = {
                "teacher": _device_teacher(teacher),
                "d": d,
                "alpha": alpha,
                "ell": ell,
                "rho": rho,
                "kappa": kappa,
                "layers": layers,
                "width": width,
                "attention": attention,
                "steps": steps,
                "batch": batch,
                "lr": lr,
                "seed": s,
                "sampler": "device",
                "diverged": bool(diverged[m]),
                "seconds": seconds / members,
            }
            p = jax.tree_util.tree_map(lambda a, m=m: a[m], params)
            row.append(TrainedTransformer(p, history[m], settings, teacher, task_sets[m]))
        out.append(row)
    return out


# ----------------------------------------------------------------------------------------
