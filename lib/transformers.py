"""Small transformers trained in context with JAX (chapter 7).

:func:`train_transformer` trains a small transformer on the tokens ``[x_i; y_i]`` of
:func:`lib.samplers.sample_contexts` (learned query and key maps, an MLP value map,
residual connections, an MLP readout at the query token; softmax or linear attention,
or ``attention="none"``, the context-free control that sees the query token only) by
Adam on mini-batches of fresh contexts (``kappa = inf``) or of contexts from a fixed
task set, drawn on the host or on the device (``sampler="device"``: inside the compiled
loop, from a JAX key). :func:`train_transformer_grid` trains several seeds and learning
rates at once (``vmap``). The transformers train in float32; the same code runs on a GPU
when ``jax[cuda12]`` is installed. These names have this one address
(:mod:`lib.training` does not re-export them).

Used in: :doc:`chapter 7 </book/trained/networks>`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

import lib.samplers
from lib._checks import as_rng, check_choice, check_context_arrays, check_int, check_param, check_scalar
from lib._limits import check_memory
from lib._training_core import (
    _BLOCK_FLOATS,
    _CHUNK,
    _DIVERGENCE_FACTOR,
    _PREDICT_CHUNK,
    _check_history,
    _Optimizer,
    jax,
    jnp,
    optax,
)
from lib.loss_curves import LR_FLOOR

__all__ = [
    "ATTENTIONS",
    "SAMPLERS",
    "TrainedTransformer",
    "train_transformer",
    "train_transformer_grid",
    "transformer_peak_bytes",
]

#: Attention types of :func:`train_transformer` (``"none"``: the context-free control).
ATTENTIONS = ("softmax", "linear", "none")


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
        X, y, x_query = check_context_arrays(X, y, x_query)
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
    attention = check_choice("attention", attention, ATTENTIONS)
    steps = check_int("steps", steps, low=1)
    batch = check_int("batch", batch, low=1)
    sampler = check_choice("sampler", sampler, SAMPLERS)
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
    """Adam with a cosine decay from ``lr`` to ``LR_FLOOR * lr`` (``lr / 10``) over ``steps``."""
    return _Optimizer(
        ("transformer", float(lr), steps), optax.adam(optax.cosine_decay_schedule(lr, steps, alpha=LR_FLOOR))
    )


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
    readout: an architecture related to Oko et al.'s (2024) in this model.

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
