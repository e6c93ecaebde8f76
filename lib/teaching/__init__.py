"""The teaching layer: what the chapters use to show, check and explore the science of ``lib``.

- :mod:`lib.teaching.claims`            the assertions of the hidden check cells, which hold
  the book's sentences to its numbers;
- :mod:`lib.teaching.tables`            Markdown tables built from columns of numbers;
- :mod:`lib.teaching.benchmarks`        the stored benchmark reports of ``make bench``, read
  back as numbers (the Performance appendix);
- :mod:`lib.teaching.labs`              the checks of the coding labs (instructor and
  student editions);
- :mod:`lib.teaching.plotting`          the book's figure style and figure helpers
  (imports matplotlib);
- :mod:`lib.teaching.widgets`           the interactive explorers of chapters 1-6
  (imports ipywidgets);
- :mod:`lib.teaching.training_widgets`  the figure and explorer of chapter 7's stored
  training sweeps (imports JAX, through :mod:`lib.training`).

These modules import the science modules of ``lib``; no science module imports them.
Each is loaded on first use (``from lib.teaching import plotting``, or
``lib.teaching.plotting`` after ``import lib``), so ``import lib`` imports neither
matplotlib, ipywidgets nor JAX.
"""

import importlib

#: The modules of the package, each imported on first access.
_MODULES = ("claims", "tables", "benchmarks", "labs", "plotting", "widgets", "training_widgets")

__all__ = list(_MODULES)


def __getattr__(name: str):
    """Import a module of the teaching layer on first use (``lib.teaching.plotting``)."""
    if name in _MODULES:
        return importlib.import_module(f"lib.teaching.{name}")
    raise AttributeError(f"module 'lib.teaching' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULES))
