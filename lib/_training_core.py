"""The machinery shared by :mod:`lib.training` and :mod:`lib.transformers` (internal).

JAX and optax (the package's optional extra ``training``), the divergence check of a
training run, the hashable optimizer that the module-level jitted steps take as a static
argument, and the chunk sizes both trainers use.
"""

from __future__ import annotations

import numpy as np

try:  # JAX and optax are the optional extra `training` of the package (chapter 7 only)
    import jax
    import jax.numpy as jnp
    import optax
except ImportError as err:  # pragma: no cover - exercised by tests/test_optional_jax.py
    # the package is not on PyPI: the commands install from its folder (the one with
    # pyproject.toml: a clone, or the package/ a student is handed), or pin JAX and optax
    # as constraints.txt does (tests/test_optional_jax.py checks the pins)
    raise ImportError(
        "lib.training and lib.transformers (chapter 7) need JAX and optax, which are not installed "
        f"({err}). Install the package's extra 'training': in the package's folder (the one with "
        'pyproject.toml and constraints.txt), pip install -c constraints.txt ".[training]" '
        "(students: \".[lab,training]\", as the page 'Working as a student' says), "
        "or pip install jax==0.10.2 jaxlib==0.10.2 optax==0.2.8. "
        "Chapters 1-6 and the rest of lib run without them."
    ) from err


__all__ = ["TrainingDivergedError", "jax", "jnp", "optax"]

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
