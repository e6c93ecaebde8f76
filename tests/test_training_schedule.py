"""The step-size schedules of lib.training and the standard error of a transformer's test error.

The schedule is built inside ``train_transformer`` / ``train_linear_attention`` and not
returned, so these tests watch the public calls: they record the schedule that the
training hands to ``optax.adam`` (the real Adam still runs) and evaluate it at a few
steps. If the training stops passing its schedule to ``optax.adam``, the spy sees no
call and the test fails, saying so.
"""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

pytest.importorskip("jax")
import lib  # noqa: E402
import lib.training as T  # noqa: E402
import lib.transformers as TF  # noqa: E402


def _spy_adam(monkeypatch):
    calls = []
    real = T.optax.adam

    def adam(learning_rate, *args, **kwargs):
        calls.append(learning_rate)
        return real(learning_rate, *args, **kwargs)

    monkeypatch.setattr(T.optax, "adam", adam)
    return calls


def _values(schedule, steps):
    assert callable(schedule), "the step size must be a schedule (a function of the step)"
    return np.array([float(schedule(t)) for t in steps])


@pytest.fixture(scope="module")
def tiny_transformer():
    return TF.train_transformer("relu", 3, 2.0, 0.1, width=4, steps=8, batch=4, lr=1e-2, rng=0)


def test_transformer_step_size_is_a_cosine_decay_to_a_tenth(monkeypatch):
    calls = _spy_adam(monkeypatch)
    steps, lr = 8, 1e-2
    TF.train_transformer("relu", 3, 2.0, 0.1, width=4, steps=steps, batch=4, lr=lr, rng=0)
    assert len(calls) == 1, "train_transformer must build one Adam optimizer from its schedule"
    t = np.array([0, 2, 4, 6, 8, 20])
    expected = lr * (0.1 + 0.9 * 0.5 * (1 + np.cos(np.pi * np.minimum(t, steps) / steps)))
    assert_allclose(_values(calls[0], t), expected, rtol=1e-6)
    # spelled out: lr at step 0, half-way 0.55 lr, lr / 10 at the end and after it
    assert_allclose(_values(calls[0], [0, 4, 8, 100]), [lr, 0.55 * lr, 0.1 * lr, 0.1 * lr], rtol=1e-6)


def test_linear_attention_step_size_decays_exponentially_to_a_thousandth(monkeypatch):
    calls = _spy_adam(monkeypatch)
    ctx = lib.samplers.sample_contexts(40, 3, 6, None, "relu", 0.1, np.random.default_rng(0))
    steps, lr = 10, 1e-2
    T.train_linear_attention(ctx, steps=steps, lr=lr, rng=0)
    assert len(calls) == 1
    t = np.array([0, 5, 10])
    assert_allclose(_values(calls[0], t), lr * 1e-3 ** (t / steps), rtol=1e-5)


def test_transformer_test_error_standard_error_is_std_over_sqrt_n(tiny_transformer):
    """(mean, se) of the squared errors on n_test fresh contexts: se = std / sqrt(n), not / n."""
    model, n_test = tiny_transformer, 400
    mean, se = model.test_error(n_test, rng=5)
    s = model.settings
    ctx = lib.samplers.sample_contexts(n_test, s["d"], s["ell"], None, "relu", s["rho"], np.random.default_rng(5))
    r2 = (ctx.y_query - model.predict(ctx.X, ctx.y, ctx.x_query)) ** 2
    assert_allclose(mean, r2.mean(), rtol=1e-12)
    assert_allclose(se, r2.std(ddof=1) / math.sqrt(n_test), rtol=1e-12)
    assert se > 2 * r2.std(ddof=1) / n_test  # far from the / n mutant at this n
