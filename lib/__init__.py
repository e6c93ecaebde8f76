"""``lib``: the small library behind the book *Linear attention and nonlinear teachers*.

One module per concept:

- :mod:`lib.hermite`   Hermite expansions of link functions (chapter 1).
- :mod:`lib.samplers`  tokens, tasks, teachers, contexts and the feature H_Z (chapter 2).
- :mod:`lib.attention` linear attention, the reduced parameter Gamma, its ridge
  pretraining (dense, dual and matrix-free solvers) and ``simulate`` (chapters 2-5).
- :mod:`lib.baselines` Bayes-optimal ridge and dMMSE predictors (chapters 2 and 5).
- :mod:`lib.theory`    the asymptotic error formulas, linear and nonlinear (chapters 2-5).
- :mod:`lib.plotting`  the book's plotting helpers.
"""

__version__ = "0.1.0"
