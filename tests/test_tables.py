"""Tests of lib.teaching.tables."""

import pytest

from lib.teaching.tables import changed_params, markdown_table, plus_minus


def test_markdown_table_formats_and_aligns():
    text = markdown_table(
        {"d": [50, 100], "e": [0.51234, 0.5], "law": ["1/d", "a|b"]},
        formats={"e": ".3f"},
        align={"law": "left"},
    )
    assert text.splitlines() == [
        "| d | e | law |",
        "| ---: | ---: | :--- |",
        "| 50 | 0.512 | 1/d |",
        r"| 100 | 0.500 | a\|b |",
    ]


def test_markdown_table_callable_format_and_default_float():
    text = markdown_table({"x": [0.1, 2.0]}, formats={"x": lambda v: f"{v:.0%}"}, align="center")
    assert text.splitlines()[1:] == ["| :---: |", "| 10% |", "| 200% |"]
    assert markdown_table({"x": [1e-7]}).splitlines()[-1] == "| 1e-07 |"


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        (dict(columns={}), ValueError, "at least one column"),
        (dict(columns=["a", [1]]), TypeError, "mapping"),
        (dict(columns="ab"), TypeError, "sequence of"),
        (dict(columns={"a": [1], "b": [1, 2]}), ValueError, "same length"),
        (dict(columns={"a": [1]}, formats={"b": ".2f"}), ValueError, "do not exist"),
        (dict(columns={"a": [1]}, align="middle"), ValueError, "align must be one of"),
    ],
)
def test_markdown_table_bad_input(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        markdown_table(**kwargs)


def test_plus_minus_signs_only_the_value():
    assert plus_minus([0.5, -0.25], [0.01, 0.125]) == ["0.5000 ± 0.0100", "-0.2500 ± 0.1250"]
    assert plus_minus([1.234], [0.05], fmt="+.1f", unit="%") == ["+1.2 ± 0.1 %"]
    # one column of a table: the cells go in as they are
    table = markdown_table({"e": plus_minus([0.5], [0.01], fmt=".2f")})
    assert table.splitlines()[-1] == "| 0.50 ± 0.01 |"


def test_markdown_table_pairs_allow_a_repeated_header():
    text = markdown_table([("x", [1.0]), ("p", [0.123]), ("y", [2.0]), ("p", [0.5])], formats={"p": ".2f"})
    assert text.splitlines()[0] == "| x | p | y | p |"
    assert text.splitlines()[-1] == "| 1 | 0.12 | 2 | 0.50 |"


def test_plus_minus_one_number_and_nowrap():
    assert plus_minus(1.5, 0.25, fmt=".2f") == "1.50 ± 0.25"
    assert plus_minus(-0.5, 0.125, fmt="+.3f", nowrap=True) == "-0.500\u00a0±\u00a00.125"
    assert plus_minus([1.0], [0.5], fmt=".1f", unit="%", nowrap=True) == ["1.0\u00a0±\u00a00.5\u00a0%"]


def test_plus_minus_bad_input():
    with pytest.raises(ValueError, match="same length; got 2 values and 1 errors"):
        plus_minus([1.0, 2.0], [0.1])
    with pytest.raises(ValueError, match="both be numbers or both sequences"):
        plus_minus(1.0, [0.1])


def test_changed_params_latex_and_plain():
    ref = dict(alpha=2.0, kappa=1.5, tau=3.0, lam=0.0)
    par = dict(alpha=2.0, kappa=float("inf"), tau=0.5, lam=0.0, rho=0.1)
    assert changed_params(par, ref) == r"$\kappa = \infty$, $\tau = 0.5$"
    assert changed_params(par, ref, latex=False) == "κ = ∞, τ = 0.5"
    star = dict(ref, lam=0.1234)
    assert changed_params(star, ref, starred=("lam",)) == r"$\lambda = \lambda^\ast = 0.123$"
    assert changed_params(ref, ref) == ""


@pytest.mark.parametrize(
    "params, reference, kwargs, error",
    [
        ([1.0], dict(alpha=1.0), {}, TypeError),
        (dict(alpha=1.0), dict(beta=1.0), {}, ValueError),
        (dict(tau=1.0), dict(alpha=1.0), {}, ValueError),
        (dict(alpha=1.0), dict(alpha=1.0), dict(starred=("lam",)), ValueError),
    ],
)
def test_changed_params_rejects_bad_input(params, reference, kwargs, error):
    with pytest.raises(error):
        changed_params(params, reference, **kwargs)
