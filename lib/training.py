"""Trained linear attention, with JAX; the small transformers of :mod:`lib.transformers`.

The rest of the book fits the reduced parameter ``Gamma`` of linear attention by ridge
regression (:func:`lib.attention.fit_gamma`). This module trains the network instead:
:func:`train_linear_attention` trains the one-layer linear self-attention of
:func:`lib.attention.linear_attention` (weights ``W_kq`` and ``W_pv``) by full-batch
gradient descent or Adam on the squared error of the query label over a fixed
pretraining set. With ``v21="zero"`` (the default) the block ``v21`` is held at zero, so
the network is the reduced model in factored form; with ``v21="train"`` every block is
trained and ``v21`` reaches the prediction. Its ``.gamma`` is the reduced ``Gamma`` the
weights imply (:func:`lib.attention.gamma_from_weights`).

The small transformers (:func:`~lib.transformers.train_transformer`,
:func:`~lib.transformers.train_transformer_grid`, with the context-free control
``attention="none"``) have their own module, :mod:`lib.transformers`, and only that
address.

The stored sweeps and the probes of a trained model's predictions are in
:mod:`lib.training_runs` (numpy only: :func:`~lib.training_runs.load_runs`,
:func:`~lib.training_runs.summarize_runs`, :func:`~lib.training_runs.probe_features`,
:func:`~lib.training_runs.probe`), the context-free error in :mod:`lib.theory`
(:func:`~lib.theory.context_free.context_free_error`): each name has one address. Asking
this module for one of them, or for a transformer name, raises an ``AttributeError``
that names its address.

Linear attention runs in float64 inside a scoped ``jax.enable_x64`` (importing this module
changes no global JAX setting), so it can be compared with ``lib``'s solvers to 1e-4 and
better. The same code runs on a GPU when ``jax[cuda12]`` is installed instead of the CPU
wheels (never required: every run in the book is CPU-sized).

Used in: :doc:`chapter 7 </book/trained/networks>`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

import lib.attention
import lib.samplers
import lib.training_runs
import lib.transformers
from lib._checks import as_float_array, as_rng, check_choice, check_context_arrays, check_int, check_scalar
from lib._training_core import (
    _CHUNK,
    TrainingDivergedError,
    _check_history,
    _Optimizer,
    jax,
    jnp,
    optax,
)

__all__ = [
    "OPTIMIZERS",
    "TrainedAttention",
    "TrainingDivergedError",
    "context_moments",
    "context_vectors",
    "least_squares_gamma",
    "reduced_predict",
    "train_linear_attention",
    "LA_INITS",
    "V21_MODES",
]

#: Optimizers of :func:`train_linear_attention`.
OPTIMIZERS = ("adam", "gd")

# ----------------------------------------------------------------------------------------
# validation (the messages name the argument, its value and what is allowed)
# ----------------------------------------------------------------------------------------


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
    X, y, xq = check_context_arrays(X, y, xq)
    yq = as_float_array("contexts.y_query", yq, 1)
    if yq.shape != (X.shape[0],):
        raise ValueError(f"contexts.y_query must have shape ({X.shape[0]},) to match X; got shape {yq.shape}")
    return X, y, xq, yq


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
    X = as_float_array("X", X, 3)
    y = as_float_array("y", y, 2)
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
    check_choice("norm", norm, ("frobenius", "weights"))
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
    X, y, x_query = check_context_arrays(X, y, x_query)
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
    X = as_float_array("X", X, 3)
    y = as_float_array("y", y, 2)
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
        record_every, final_loss, seconds``.
    snapshots : dict
        The weights along the path when trained with ``record_every = r``: step ``s``
        (``0, r, 2r, ...`` up to ``steps``; 0 is the initialization) maps to the pair
        ``(W_kq, W_pv)`` after ``s`` steps. Empty otherwise.
    """

    W_kq: np.ndarray
    W_pv: np.ndarray
    history: np.ndarray
    settings: dict = field(default_factory=dict)
    snapshots: dict = field(default_factory=dict)

    @property
    def gamma(self) -> np.ndarray:
        """The reduced ``Gamma = v22 [K11^T / d, k21]`` (:func:`lib.attention.gamma_from_weights`; ``v21`` must be 0)."""
        return lib.attention.gamma_from_weights(self.W_kq, self.W_pv)

    def predict(self, X: Any, y: Any, x_query: Any) -> np.ndarray:
        """Predicted query labels, shape (n,), for contexts ``X (n, ell, d)``, ``y (n, ell)``, ``x_query (n, d)``.

        Equal to :func:`lib.attention.linear_attention` on the embedded contexts:
        ``(1/ell) sum_i (v21^T x_i + v22 y_i) z_i^T W_kq[:, :d] x_q``.
        """
        X, y, x_query = check_context_arrays(X, y, x_query)
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
    record_every: int | None = None,
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
              + \\lambda_{\\mathrm{wd}} \\big(\\|W_{kq}\\|_F^2 + \\|W_{pv}\\|_F^2\\big) .

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
        The strength ``lambda_wd >= 0`` of the squared-norm penalty on both weight
        matrices in ``L`` above.
    rng : numpy.random.Generator, int or None
        Random source of the initialization.
    optimizer : {"adam", "gd"}
    init_scale : float
        Scale of the initial weights (> 0), see ``init``.
    v21 : {"zero", "train"}
        Whether ``v21 = W_pv[d, :d]`` is held at zero (the reduced model) or trained.
    init : {"random", "zfb"}
        The initialization, see above.
    record_every : int or None
        If an integer ``r >= 1``, keep the weights after every ``r``-th step (and the
        initial ones) in ``.snapshots``, to follow the training path (e.g. its test
        error); the run itself is unchanged. Memory: ``2 (d + 1)^2`` floats per
        snapshot.

    Returns
    -------
    TrainedAttention
        ``.gamma`` (``v21="zero"`` only), ``.predict(X, y, x_query)``, ``.history``,
        ``.settings``, ``.snapshots``.

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
    optimizer = check_choice("optimizer", optimizer, OPTIMIZERS)
    init_scale = check_scalar("init_scale", init_scale, low=0, low_open=True)
    v21 = check_choice("v21", v21, V21_MODES)
    init = check_choice("init", init, LA_INITS)
    if record_every is not None:
        record_every = check_int("record_every", record_every, low=1)
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
        snapshots = {}
        # a chunk never crosses a recorded step: at most three chunk lengths, so at most
        # three compilations of the scan
        every = steps + 1 if record_every is None else record_every
        done = 0
        while done < steps:
            if record_every is not None and done % every == 0:
                snapshots[done] = _la_join(jax.tree_util.tree_map(np.array, params))
            k = min(_CHUNK, steps - done, every - done % every)
            params, opt_state, losses = _la_scan(params, opt_state, stats, xq_j, yq_j, wd_j, opt=opt, v21=v21, length=k)
            history[done : done + k] = np.asarray(losses)
            _check_history(history[done : done + k], done, first, lr)
            done += k
        final = float(_la_loss(params, stats, xq_j, yq_j, wd_j, v21))
        params = jax.tree_util.tree_map(np.asarray, params)
    _check_history(np.array([final]), steps, first, lr)
    if record_every is not None and steps % every == 0:
        snapshots[steps] = _la_join(params)
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
        "record_every": record_every,
        "final_loss": final,
        "seconds": time.perf_counter() - t0,
    }
    W_kq, W_pv = _la_join(params)
    return TrainedAttention(W_kq, W_pv, history, settings, snapshots)


#: Names that left this module (issue 33: one address per name), and where they are now:
#: an old call gets an AttributeError that says so.
_MOVED = {
    **dict.fromkeys(("DATA_DIR", "load_runs", "probe", "probe_features", "summarize_runs"), "lib.training_runs"),
    "context_free_error": "lib.theory",
    **dict.fromkeys(lib.transformers.__all__, "lib.transformers"),
}
#: Old addresses still served, silently and undocumented, while a caller outside ``lib``
#: uses them (chapter 7 and ``scripts/make_training.py``, moved in their own commits): a
#: test (``tests/test_training_runs.py``) fails once a name here has no caller left.
_STILL_SERVED: frozenset[str] = frozenset()


def __getattr__(name: str) -> Any:
    """Say where a name that left ``lib.training`` went (see ``_MOVED``)."""
    if name in _STILL_SERVED:
        return getattr(lib.training_runs, name)
    if name in _MOVED:
        raise AttributeError(f"lib.training.{name} has moved to {_MOVED[name]}.{name}")
    raise AttributeError(f"module 'lib.training' has no attribute {name!r}")
