"""Interactive explorers (ipywidgets) for the chapters of the book.

Each explorer is one function returning a widget. A chapter first draws the static
figure with default values (so that a reader of the HTML without a kernel sees it) and
then, in a separate cell, calls the explorer, which redraws the same figure function from
:mod:`lib.teaching.plotting` as the controls move. The explorers need a running Jupyter kernel.

Used in: :doc:`Hermite basics </book/hermite/basics>`,
:doc:`the equivalence theorem </book/equivalence/theorem>`,
:doc:`finite pretraining data </book/regimes/finite_data>`,
:doc:`task diversity </book/regimes/task_diversity>`,
:doc:`beyond linear attention </book/beyond/spectral>`.
"""

from __future__ import annotations

import ast
import math
from typing import Any

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
from scipy import special

from lib import teachers, theory
from lib._checks import check_choice, check_int, check_param, check_range, check_rho, check_scalar
from lib.hermite import LINKS, MAX_DEGREE, Link, get_link
from lib.teachers import effective_noise, teacher_moments
from lib.teaching import plotting
from lib.teaching.plotting import (
    equivalence_figure,
    finite_data_figure,
    hermite_expansion_figure,
    task_diversity_figure,
)
from lib.theory import spectral_limits
from lib.theory.spectral_limits import SPECTRAL_PREPROCESSINGS

__all__ = [
    "hermite_explorer",
    "task_diversity_explorer",
    "finite_data_explorer",
    "equivalence_explorer",
    "link_from_expression",
    "EXPRESSION_NAMES",
    "spectral_figure",
    "spectral_explorer",
]

#: What a reader without a kernel (the HTML book, a saved notebook) sees instead of the
#: controls: the static figure above the explorer is drawn by the same function.
LIVE_NOTE = (
    "Interactive explorer: it needs a running Python kernel. Run this notebook in "
    "Jupyter to move the controls (the pages 'Running the book' and 'Working as a "
    "student' say how); the figure above shows the default values."
)


class _Explorer(widgets.interactive):
    """An ``ipywidgets.interactive`` that also offers a text fallback for its output.

    A live Jupyter front end renders the widget view as usual (it ranks the widget mime
    type first); the book's HTML build drops the widget mime type and shows the
    ``text/html`` note :data:`LIVE_NOTE` instead of dead sliders.
    """

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        bundle["text/plain"] = LIVE_NOTE
        bundle["text/html"] = f'<p class="live-explorer-note">{LIVE_NOTE}</p>'
        return bundle


#: The ranges of the explorers' sliders; an initial value outside them is refused (a
#: slider would silently clamp it).
LOG_SLIDER_RANGE = (0.1, 100.0)
LINEAR_SLIDER_RANGE = (0.0, 2.0)


def _on_slider(name: str, value: Any, low: float, high: float, *, allow_inf: bool = False) -> float:
    """An explorer's initial value, checked against its slider's range (``inf`` if allowed)."""
    value = check_scalar(name, value, allow_inf=allow_inf)
    if allow_inf and value == np.inf:
        return value
    if not low <= value <= high:
        extra = " or inf" if allow_inf else ""
        raise ValueError(f"{name} must lie in the slider's range [{low:g}, {high:g}]{extra}; got {value!r}")
    return value


def _model_sliders(teacher: Any, alpha: Any, kappa: Any, rho: Any, lam: Any) -> tuple[str, float, float, float, float]:
    """The initial values of an explorer of the model's parameters, checked against its sliders
    (``alpha``, ``kappa`` on log sliders, ``kappa = inf`` allowed; ``rho``, ``lam`` linear)."""
    teacher = _teacher_name(teacher)
    alpha = _on_slider("alpha", alpha, *LOG_SLIDER_RANGE)
    kappa = _on_slider("kappa", kappa, *LOG_SLIDER_RANGE, allow_inf=True)
    rho, lam = (_on_slider(k, v, *LINEAR_SLIDER_RANGE) for k, v in (("rho", rho), ("lam", lam)))
    return teacher, alpha, kappa, rho, lam


def _teacher_name(teacher: Any, argument: str = "teacher") -> str:
    """A catalogue name for a drop-down (validated, lower case)."""
    if not isinstance(teacher, str):
        raise TypeError(f"{argument} must be a name in lib.hermite.LINKS; got {teacher!r}")
    return get_link(teacher, argument=argument).name  # the one name look-up


def hermite_explorer(name: str = "relu", degree: int = 6, max_degree: int = 40) -> widgets.Widget:
    """Explore the Hermite expansion of a catalogue link.

    A drop-down chooses the link ``f`` from :data:`lib.hermite.LINKS` and a slider the
    truncation degree ``D``; the figure of :func:`lib.teaching.plotting.hermite_expansion_figure`
    (coefficients ``a_0..a_D`` and the partial sum ``S_D f`` with its ``L^2`` error)
    is redrawn.

    Parameters
    ----------
    name : str
        Initial link.
    degree : int
        Initial degree.
    max_degree : int
        Largest degree on the slider.

    Returns
    -------
    ipywidgets.Widget
        Display it (it is the value of the cell).

    Notes
    -----
    Used in: :doc:`Hermite basics </book/hermite/basics>`.
    """

    name = _teacher_name(name, "name")
    max_degree = check_int("max_degree", max_degree, low=0, high=MAX_DEGREE)
    degree = check_int("degree", degree, low=0, high=max_degree)
    names = sorted(LINKS)

    def show(name: str, degree: int) -> None:
        hermite_expansion_figure(name, degree)
        plt.show()

    return _Explorer(
        show,
        name=widgets.Dropdown(options=names, value=name, description="f"),
        degree=widgets.IntSlider(value=degree, min=0, max=max_degree, step=1, description="degree D"),
    )


def task_diversity_explorer(
    teacher: str = "relu",
    alpha: float = 5.0,
    tau: float = 5.0,
    rho: float = 0.1,
    lam: float = 0.0,
    kappa_range: tuple[float, float] = (1e-2, 1e2),
) -> widgets.Widget:
    """Explore the ICL and IDG errors against the task diversity kappa.

    A drop-down chooses the teacher from :data:`lib.hermite.LINKS`; sliders set the
    context length ``alpha``, the pretraining data ``tau``, the label noise ``rho``, the
    ridge ``lam`` (ICL curve only: the IDG formula is ridgeless) and the plotted range of
    ``log10 kappa``. The figure of :func:`lib.teaching.plotting.task_diversity_figure` is redrawn.
    At ``tau = 1`` with ``lam = 0`` the curves are infinite (the interpolation peak) and
    are not drawn.

    Parameters
    ----------
    teacher : str
        Initial teacher.
    alpha, tau, rho, lam : float
        Initial values (``alpha`` and ``tau`` on log sliders from 0.1 to 100).
    kappa_range : (float, float)
        Initial plotted range of ``kappa``, within ``[1e-3, 1e3]``.

    Returns
    -------
    ipywidgets.Widget
        Display it (it is the value of the cell).

    Notes
    -----
    Used in: :doc:`task diversity </book/regimes/task_diversity>`.
    """

    teacher = _teacher_name(teacher)
    alpha, tau = (_on_slider(k, v, *LOG_SLIDER_RANGE) for k, v in (("alpha", alpha), ("tau", tau)))
    rho, lam = (_on_slider(k, v, *LINEAR_SLIDER_RANGE) for k, v in (("rho", rho), ("lam", lam)))
    lo, hi = (float(np.log10(v)) for v in check_range("kappa_range", kappa_range, low=1e-3, high=1e3))

    def show(teacher: str, alpha: float, tau: float, rho: float, lam: float, log10_kappa: tuple) -> None:
        task_diversity_figure(teacher, alpha, tau, rho, lam, (10.0 ** log10_kappa[0], 10.0 ** log10_kappa[1]))
        plt.show()

    log_slider = dict(base=10, min=-1.0, max=2.0, step=0.02, readout_format=".3g")
    return _Explorer(
        show,
        teacher=widgets.Dropdown(options=sorted(LINKS), value=teacher, description="f"),
        alpha=widgets.FloatLogSlider(value=alpha, description="α", **log_slider),
        tau=widgets.FloatLogSlider(value=tau, description="τ", **log_slider),
        rho=widgets.FloatSlider(value=rho, min=0.0, max=2.0, step=0.01, description="ρ"),
        lam=widgets.FloatSlider(value=lam, min=0.0, max=2.0, step=0.01, description="λ"),
        log10_kappa=widgets.FloatRangeSlider(value=(lo, hi), min=-3.0, max=3.0, step=0.1, description="log₁₀ κ"),
    )


def finite_data_explorer(
    teacher: str = "relu",
    alpha: float = 2.0,
    kappa: float = float("inf"),
    rho: float = 0.1,
    lam: float = 0.0,
    tau_max: float = 6.0,
) -> widgets.Widget:
    """Explore the ICL error against the pretraining data tau (the double-descent curve).

    A drop-down chooses the teacher from :data:`lib.hermite.LINKS`; sliders set the
    context length ``alpha``, the task diversity ``kappa`` (with a check box for
    ``kappa = inf``, a fresh task for every context), the label noise ``rho``, the ridge
    ``lam`` and the largest ``tau`` shown. The figure of
    :func:`lib.teaching.plotting.finite_data_figure` (the teacher and the linear teacher, their
    ``tau -> inf`` floors and ``rho_nl``) is redrawn. With ``lam = 0`` the curves diverge
    at ``tau = 1``.

    Parameters
    ----------
    teacher : str
        Initial teacher.
    alpha, kappa, rho, lam : float
        Initial values (``alpha`` and ``kappa`` on log sliders from 0.1 to 100;
        ``kappa = inf`` ticks the check box).
    tau_max : float
        Initial largest ``tau`` (slider from 1.5 to 20).

    Returns
    -------
    ipywidgets.Widget
        Display it (it is the value of the cell).

    Notes
    -----
    Used in: :doc:`finite pretraining data </book/regimes/finite_data>`.
    """

    teacher, alpha, kappa, rho, lam = _model_sliders(teacher, alpha, kappa, rho, lam)
    tau_max = _on_slider("tau_max", tau_max, 1.5, 20.0)
    fresh = math.isinf(kappa)

    def show(
        teacher: str, alpha: float, kappa: float, fresh_tasks: bool, rho: float, lam: float, tau_max: float
    ) -> None:
        finite_data_figure(teacher, alpha, math.inf if fresh_tasks else kappa, rho, lam, tau_max)
        plt.show()

    log_slider = dict(base=10, min=-1.0, max=2.0, step=0.02, readout_format=".3g")
    return _Explorer(
        show,
        teacher=widgets.Dropdown(options=sorted(LINKS), value=teacher, description="f"),
        alpha=widgets.FloatLogSlider(value=alpha, description="α", **log_slider),
        kappa=widgets.FloatLogSlider(value=1.5 if fresh else kappa, description="κ", **log_slider),
        fresh_tasks=widgets.Checkbox(value=fresh, description="κ = ∞"),
        rho=widgets.FloatSlider(value=rho, min=0.0, max=2.0, step=0.01, description="ρ"),
        lam=widgets.FloatSlider(value=lam, min=0.0, max=2.0, step=0.01, description="λ"),
        tau_max=widgets.FloatSlider(value=tau_max, min=1.5, max=20.0, step=0.5, description="τ max"),
    )


_ALLOWED_NODES = (
    ast.Expression,
    ast.BinOp,
    ast.UnaryOp,
    ast.Compare,
    ast.Call,
    ast.Name,
    ast.Load,
    ast.Constant,
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.Pow,
    ast.Mod,
    ast.FloorDiv,
    ast.USub,
    ast.UAdd,
    ast.Gt,
    ast.GtE,
    ast.Lt,
    ast.LtE,
    ast.Eq,
    ast.NotEq,
)

#: Names an expression typed into :func:`equivalence_explorer` may use (besides ``z``).
EXPRESSION_NAMES: dict = {}


def _expression_names() -> dict:
    if not EXPRESSION_NAMES:
        EXPRESSION_NAMES.update(
            {
                "abs": np.abs,
                "sign": np.sign,
                "sqrt": np.sqrt,
                "exp": np.exp,
                "log": np.log,
                "sin": np.sin,
                "cos": np.cos,
                "tan": np.tan,
                "tanh": np.tanh,
                "sinh": np.sinh,
                "cosh": np.cosh,
                "arctan": np.arctan,
                "maximum": np.maximum,
                "minimum": np.minimum,
                "where": np.where,
                "clip": np.clip,
                "erf": special.erf,
                "pi": np.pi,
                "e": np.e,
                "relu": lambda x: np.maximum(x, 0.0),
                "heaviside": lambda x: np.heaviside(x, 0.5),
            }
        )
    return EXPRESSION_NAMES


#: Bounds on a typed formula: its length in characters and the depth of its syntax tree
#: (``z*z*...*z`` nests one level per operator; Python compiles and evaluates recursively).
MAX_EXPRESSION_LENGTH = 1000
MAX_EXPRESSION_DEPTH = 60


def _depth(tree: ast.AST) -> int:
    """Depth of a syntax tree, computed without recursion."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in ast.iter_child_nodes(node))
    return deepest


def link_from_expression(expression: str):
    """Turn a formula in ``z`` (for instance ``"relu(z) - 0.2 * z**2"``) into a link.

    The expression may use ``z``, numbers, arithmetic operators and the names of
    :data:`EXPRESSION_NAMES` (``abs, sign, sqrt, exp, log, sin, cos, tan, tanh, sinh,
    cosh, arctan, maximum, minimum, where, clip, erf, relu, heaviside, pi, e``); nothing
    else (no attributes, no other names), so typing it cannot run arbitrary code. Its
    Hermite moments are then computed by quadrature (:func:`lib.teachers.teacher_moments`).

    Parameters
    ----------
    expression : str
        The formula, vectorized in ``z``.

    Returns
    -------
    lib.hermite.Link
        A link named ``"custom"`` with label ``$f(z) = <expression>$``.

    Raises
    ------
    TypeError
        If ``expression`` is not a string.
    ValueError
        If it is empty, longer than ``MAX_EXPRESSION_LENGTH`` (1000) characters, nested
        deeper than ``MAX_EXPRESSION_DEPTH`` (60), does not parse, uses a name that is not
        allowed, or does not give finite real values of the shape of ``z`` on ``[-8, 8]``.

    Notes
    -----
    Used in: chapter 3 (:func:`equivalence_explorer`).
    """

    if not isinstance(expression, str):
        raise TypeError(f"expression must be a string formula in z; got {type(expression).__name__}")
    text = expression.strip()
    if not text:
        raise ValueError("expression must be a non-empty formula in z, for instance 'tanh(2*z)'")
    if len(text) > MAX_EXPRESSION_LENGTH:
        raise ValueError(
            f"expression must be at most MAX_EXPRESSION_LENGTH = {MAX_EXPRESSION_LENGTH} characters; "
            f"got {len(text)} ({text[:40]!r}...)"
        )
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"expression {text!r} is not a valid formula: {exc.msg}") from None
    except (RecursionError, MemoryError):  # pragma: no cover - the length bound comes first
        raise ValueError(f"expression {text!r} is nested too deeply to parse") from None
    depth = _depth(tree)
    if depth > MAX_EXPRESSION_DEPTH:
        raise ValueError(
            f"expression {text!r} is nested {depth} levels deep; at most "
            f"MAX_EXPRESSION_DEPTH = {MAX_EXPRESSION_DEPTH} are allowed (Python evaluates it recursively)"
        )
    names = _expression_names()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in names and node.id != "z":
            raise ValueError(f"expression {text!r} uses {node.id!r}; allowed are z and {sorted(names)}")
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float)):
            raise ValueError(f"expression {text!r} may only contain numbers as constants")
        if not isinstance(node, _ALLOWED_NODES):
            raise ValueError(
                f"expression {text!r} uses {type(node).__name__}; only numbers, z, the operators "
                "+ - * / ** % and comparisons, and calls of the allowed functions may appear"
            )
    for node in ast.walk(tree):  # integer constants as floats: no huge exact powers like 9**9**9
        if isinstance(node, ast.Constant):
            node.value = float(node.value)
    code = compile(tree, "<expression>", "eval")

    def f(z):
        z = np.asarray(z, dtype=float)
        return np.broadcast_to(np.asarray(eval(code, {"__builtins__": {}}, {**names, "z": z}), dtype=float), z.shape)

    grid = np.linspace(-8.0, 8.0, 161)
    try:
        with np.errstate(all="ignore"):
            values = f(grid)
    except Exception as exc:  # any failure of the user's formula becomes one clear message
        raise ValueError(f"expression {text!r} cannot be evaluated on z in [-8, 8]: {exc}") from None
    if not np.all(np.isfinite(values)):
        raise ValueError(f"expression {text!r} must be finite for every real z; it is not on [-8, 8]")
    return Link("custom", f, rf"$f(z) = \mathtt{{{text}}}$".replace("_", r"\_"), description=f"typed expression {text}")


def equivalence_explorer(
    teacher: str = "relu",
    alpha: float = 2.0,
    kappa: float = 1.5,
    rho: float = 0.1,
    lam: float = 0.0,
) -> widgets.Widget:
    """Explore the nonlinearity-noise equivalence for any link.

    A drop-down chooses a link from :data:`lib.hermite.LINKS`; alternatively a text box
    takes a formula in ``z`` (:func:`link_from_expression`), which is used when it is not
    empty. Sliders set ``alpha``, ``kappa`` (a box switches to ``kappa = inf``), ``rho``
    and ``lam``. The explorer prints ``a_0``, ``a_1``, ``E[f^2]`` and
    ``rho_nl = rho + E[f^2] - a_1^2`` and redraws :func:`lib.teaching.plotting.equivalence_figure`:
    the predicted ``e_ICL(tau)`` with its effective-noise floor ``rho_nl``. A formula that cannot be used
    prints the reason instead of a traceback.

    Parameters
    ----------
    teacher : str
        Initial link.
    alpha, kappa, rho, lam : float
        Initial values (``kappa = inf`` ticks the box).

    Returns
    -------
    ipywidgets.Widget
        Display it (it is the value of the cell).

    Notes
    -----
    Used in: :doc:`the equivalence theorem </book/equivalence/theorem>`.
    """

    teacher, alpha, kappa, rho, lam = _model_sliders(teacher, alpha, kappa, rho, lam)
    kappa_inf = bool(np.isinf(kappa))

    def show(
        teacher: str, expression: str, alpha: float, kappa: float, kappa_inf: bool, rho: float, lam: float
    ) -> None:
        try:
            link = link_from_expression(expression) if expression.strip() else get_link(teacher)
            a0, a1, ef2 = teacher_moments(link)
        except (ValueError, TypeError, ArithmeticError, RecursionError, MemoryError) as exc:
            print(exc)
            return
        k = np.inf if kappa_inf else kappa
        print(
            f"a_0 = {a0:.4f}   a_1 = {a1:.4f}   E[f^2] = {ef2:.4f}   rho_nl = {float(effective_noise(link, rho)):.4f}"
        )
        equivalence_figure(link, alpha, k, rho, lam)
        plt.show()

    log_slider = dict(base=10, min=-1.0, max=2.0, step=0.02, readout_format=".3g")
    return _Explorer(
        show,
        teacher=widgets.Dropdown(options=sorted(LINKS), value=teacher, description="f"),
        expression=widgets.Text(
            value="", placeholder="or type f(z), e.g. relu(z) - 0.3*z**2", description="f(z) =", continuous_update=False
        ),
        alpha=widgets.FloatLogSlider(value=alpha, description="α", **log_slider),
        kappa=widgets.FloatLogSlider(value=1.5 if kappa_inf else kappa, description="κ", **log_slider),
        kappa_inf=widgets.Checkbox(value=kappa_inf, description="κ = ∞"),
        rho=widgets.FloatSlider(value=rho, min=0.0, max=2.0, step=0.01, description="ρ"),
        lam=widgets.FloatSlider(value=lam, min=0.0, max=2.0, step=0.01, description="λ"),
    )


#: The range of the spectral explorer's alpha slider (10^-0.5 to 10^1.7).
SPECTRAL_SLIDER_RANGE = (10.0**-0.5, 10.0**1.7)


def _preprocess_name(preprocess: Any) -> str:
    """A built-in preprocessing name for the drop-down."""
    if not isinstance(preprocess, str):
        check_choice("preprocess", preprocess, SPECTRAL_PREPROCESSINGS)
    return check_choice("preprocess", preprocess.strip().lower(), SPECTRAL_PREPROCESSINGS)


def spectral_figure(
    teacher: str = "h2",
    preprocess: str = "tanh",
    alpha: float = 4.0,
    rho: float = 0.1,
    alpha_range: tuple[float, float] = (0.2, 50.0),
):
    r"""Theory of the spectral estimator against :math:`\alpha`, with one :math:`\alpha` marked.

    Left: the squared overlap :math:`\cos^2\theta(\alpha)` (:func:`lib.theory.spectral_limits.spectral_overlap`)
    with the threshold :math:`\alpha_c` (dotted). Right: the error with the
    Bayes-optimal link (:func:`lib.theory.spectral_limits.spectral_error`), linear attention's
    :math:`\kappa = \infty`, :math:`\tau \to \infty` error
    (:func:`lib.theory.nonlinear_icl_error` at :math:`\tau = 10^6`) and the effective-noise
    floor :math:`\rho_{\mathrm{nl}}`. The marker is the chosen ``alpha``.

    Parameters
    ----------
    teacher : str
        A name in :data:`lib.hermite.LINKS`.
    preprocess : str
        One of :data:`lib.theory.spectral_limits.SPECTRAL_PREPROCESSINGS`.
    alpha : float
        The marked context length per dimension.
    rho : float
        Label-noise variance.
    alpha_range : tuple of float
        The range of :math:`\alpha` drawn.

    Returns
    -------
    matplotlib.figure.Figure
        The figure.

    Notes
    -----
    Used in: :doc:`beyond linear attention </book/beyond/spectral>`.
    """

    teacher = _teacher_name(teacher)
    preprocess = _preprocess_name(preprocess)
    lo, hi = check_range("alpha_range", alpha_range, low=0.0, low_open=True)
    alpha = check_param("alpha", alpha, scalar=True)
    grid = np.geomspace(lo, hi, 60)
    c2 = spectral_limits.spectral_overlap(grid, teacher, rho, preprocess)
    err = spectral_limits.spectral_error(grid, teacher, rho, preprocess)
    la = theory.nonlinear_icl_error(teacher, grid, np.inf, 1e6, rho)
    a_c = spectral_limits.spectral_threshold(teacher, rho, preprocess)
    fig, (left, right) = plotting.new_figure(ncols=2)
    plotting.theory_line(left, grid, c2, label="spectral, theory")
    left.plot(
        [alpha],
        [spectral_limits.spectral_overlap(alpha, teacher, rho, preprocess)],
        "o",
        color="0.1",
        label=rf"$\alpha = {alpha:.3g}$",
    )
    if np.isfinite(a_c):
        left.axvline(a_c, ls=":", color="0.4", label=rf"$\alpha_c = {a_c:.2f}$")
    left.set_ylabel(r"squared overlap $\cos^2\theta$")
    plotting.theory_line(right, grid, err, label="spectral, theory")
    plotting.theory_line(right, grid, la, label="linear attention", ls="--")
    right.axhline(teachers.effective_noise(teacher, rho), color="0.4", ls=":", label=r"$\rho_{\mathrm{nl}}$")
    right.plot([alpha], [spectral_limits.spectral_error(alpha, teacher, rho, preprocess)], "o", color="0.1")
    right.set_ylabel("ICL error")
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xlabel(r"context length $\alpha = \ell/d$")
        ax.legend()
    return fig


def spectral_explorer(
    teacher: str = "h2", preprocess: str = "tanh", alpha: float = 4.0, rho: float = 0.1
) -> widgets.Widget:
    """Explore the spectral estimator: choose the preprocessing T, the teacher and alpha.

    Redraws :func:`spectral_figure` as the controls move (needs a running kernel).

    Parameters
    ----------
    teacher, preprocess, alpha, rho
        The initial values, as in :func:`spectral_figure`.

    Returns
    -------
    ipywidgets.Widget
        The explorer: controls above the redrawn figure.

    Notes
    -----
    Used in: :doc:`beyond linear attention </book/beyond/spectral>`.
    """

    teacher, preprocess = _teacher_name(teacher), _preprocess_name(preprocess)
    alpha = _on_slider("alpha", alpha, SPECTRAL_SLIDER_RANGE[0], SPECTRAL_SLIDER_RANGE[1])
    rho = check_rho(rho)

    def show(teacher: str, preprocess: str, alpha: float) -> None:
        spectral_figure(teacher, preprocess, alpha, rho)
        plt.show()

    return _Explorer(
        show,
        teacher=widgets.Dropdown(options=sorted(LINKS), value=teacher, description="f"),
        preprocess=widgets.Dropdown(options=list(SPECTRAL_PREPROCESSINGS), value=preprocess, description="T"),
        alpha=widgets.FloatLogSlider(value=alpha, base=10, min=-0.5, max=1.7, step=0.05, description="alpha"),
    )
