"""Tests for lib.teaching.labs: the verdicts PASS / FAIL / NOT ATTEMPTED and strict mode."""

import functools
import types

import numpy as np
import pytest
from numpy.polynomial import hermite_e

import lib
from lib import hermite
from lib.hermite import coefficients as _renamed_coefficients
from lib.teaching import labs
from lib.teaching.labs import LabError, check


@pytest.fixture(autouse=True)
def instructor_mode(monkeypatch):
    monkeypatch.delenv(labs.STUDENT_ENV, raising=False)
    monkeypatch.setattr(labs, "_student_override", None)


def test_pass_on_scalars_arrays_and_tuples(capsys):
    check(lambda x: 2.0 * x, lambda x: x + x, [(1.5,), (np.arange(4.0),)], name="twice")
    out = capsys.readouterr().out
    assert out.startswith("PASS: twice: agrees with the reference on all 2 cases")

    def both(a, b):
        return a + b, np.outer(a, b)

    cases = [(np.ones(3), np.arange(3.0)), {"a": np.zeros(2), "b": np.ones(2)}]
    check(both, both, cases, name="pair")
    assert capsys.readouterr().out.startswith("PASS: pair")


def test_tolerances_are_applied(capsys):
    check(lambda x: x * (1 + 1e-6), lambda x: x, [(3.0,)], name="loose", rtol=1e-5)
    assert capsys.readouterr().out.startswith("PASS")
    with pytest.raises(LabError, match="FAIL: tight: case 1 of 1"):
        check(lambda x: x * (1 + 1e-6), lambda x: x, [(3.0,)], name="tight")
    capsys.readouterr()
    check(lambda x: x + 1e-3, lambda x: x, [(0.0,)], name="abs", atol=1e-2)
    assert capsys.readouterr().out.startswith("PASS")


def test_fail_names_the_case_and_the_entry(capsys):
    def wrong(x):
        y = np.array(x, dtype=float)
        y[2] += 1.0
        return y

    with pytest.raises(LabError) as info:
        check(wrong, lambda x: np.array(x, dtype=float), [(np.arange(5),)], name="copy")
    message = str(info.value)
    assert "at index (2,)" in message and "got 3, expected 2" in message
    assert message in capsys.readouterr().out


def test_fail_on_shape_and_structure():
    with pytest.raises(LabError, match=r"should have shape \(3,\); got shape \(1, 3\)"):
        check(lambda x: x[None, :], lambda x: x, [(np.zeros(3),)], name="shape")
    with pytest.raises(LabError, match=r"the output\[1\] differs"):
        check(lambda: (1.0, 2.5), lambda: (1.0, 2.0), [()], name="tuple")
    with pytest.raises(LabError, match="should have 2 entries; got 3"):
        check(lambda: (1.0, 2.0, 3.0), lambda: (1.0, 2.0), [()], name="length")
    with pytest.raises(LabError, match="should be a number or an array; got str"):
        check(lambda: "1.0", lambda: 1.0, [()], name="type")


def test_student_exception_is_reported_with_its_line(capsys):
    def broken(x):
        return x / undefined_name  # noqa: F821

    with pytest.raises(LabError) as info:
        check(broken, lambda x: x, [(1.0,)], name="broken")
    message = str(info.value)
    assert "raised NameError" in message and "undefined_name" in message
    assert "line" in message


def test_reference_exception_must_be_reproduced(capsys):
    def ref(x):
        if x < 0:
            raise ValueError("x must be >= 0")
        return np.sqrt(x)

    def good(x):
        if x < 0:
            raise ValueError("negative")
        return x**0.5

    check(good, ref, [(4.0,), (-1.0,)], name="sqrt")
    assert capsys.readouterr().out.startswith("PASS")
    with pytest.raises(LabError, match="the reference raises ValueError"):
        check(lambda x: abs(x) ** 0.5, ref, [(4.0,), (-1.0,)], name="sqrt")


def test_not_attempted_for_a_skeleton(capsys, monkeypatch):
    def skeleton(x): ...

    with pytest.raises(LabError, match="NOT ATTEMPTED: skel"):
        check(skeleton, lambda x: x, [(1.0,), (2.0,)], name="skel")
    monkeypatch.setenv(labs.STUDENT_ENV, "1")
    check(skeleton, lambda x: x, [(1.0,), (2.0,)], name="skel")
    assert capsys.readouterr().out.splitlines()[-1].startswith("NOT ATTEMPTED: skel")


def test_student_mode_never_raises(capsys, monkeypatch):
    monkeypatch.setenv(labs.STUDENT_ENV, "1")
    assert labs.student_mode()
    check(lambda x: x + 1, lambda x: x, [(1.0,)], name="off by one")
    assert capsys.readouterr().out.startswith("FAIL: off by one: case 1 of 1")
    with pytest.raises(LabError):
        check(lambda x: x + 1, lambda x: x, [(1.0,)], name="forced", strict=True)
    monkeypatch.setenv(labs.STUDENT_ENV, "0")
    assert not labs.student_mode()


def test_set_student_mode_overrides_the_environment(capsys, monkeypatch):
    labs.set_student_mode()  # what the student notebooks' hidden cell does
    assert labs.student_mode()
    check(lambda x: x + 1, lambda x: x, [(1.0,)], name="lenient")
    assert capsys.readouterr().out.startswith("FAIL: lenient: case 1 of 1")
    monkeypatch.setenv(labs.STUDENT_ENV, "1")
    labs.set_student_mode(False)
    assert not labs.student_mode()
    with pytest.raises(LabError, match="FAIL: strict"):
        check(lambda x: x + 1, lambda x: x, [(1.0,)], name="strict")
    labs.set_student_mode(None)
    assert labs.student_mode()  # the environment decides again
    with pytest.raises(TypeError, match="on must be True, False or None; got 1"):
        labs.set_student_mode(1)


@pytest.mark.parametrize("student", [False, True], ids=["strict", "student"])
def test_one_fail_line_per_failing_case(student, capsys):
    def wrong_at_odd(x):
        if x == 1.0:
            raise ZeroDivisionError("division by zero")
        return x + 1.0 if x == 3.0 else x

    cases = [(0.0,), (1.0,), (2.0,), (3.0,)]
    labs.set_student_mode(student)
    if student:
        check(wrong_at_odd, lambda x: x, cases, name="id")
        out = capsys.readouterr().out
    else:
        with pytest.raises(LabError) as info:
            check(wrong_at_odd, lambda x: x, cases, name="id")
        out = str(info.value)
        assert out in capsys.readouterr().out
    lines = out.strip().splitlines()
    assert len(lines) == 3, out
    assert lines[0] == "FAIL: id: 2 of 4 cases disagree with the reference:"
    assert lines[1].startswith("    case 2 of 4 (1.0): your function raised ")
    assert "ZeroDivisionError: division by zero" in lines[1]
    assert lines[2].startswith("    case 4 of 4 (3.0): the output differs")
    assert sum(line.startswith("FAIL") for line in lines) == 1  # one verdict, however many cases


def test_generators_are_copied_so_both_draw_the_same():
    check(
        lambda rng, n: rng.standard_normal(n),
        lambda rng, n: rng.standard_normal(n),
        [(np.random.default_rng(3), 5), {"rng": np.random.default_rng(4), "n": 2}],
        name="draws",
    )


def test_nan_and_inf_match_themselves():
    value = np.array([np.nan, np.inf, 1.0])
    check(lambda: value.copy(), lambda: value, [()], name="special")
    with pytest.raises(LabError):
        check(lambda: np.array([0.0, np.inf, 1.0]), lambda: value, [()], name="nan")


@pytest.mark.parametrize(
    "kwargs, error, text",
    [
        ({"cases": []}, ValueError, "at least one case"),
        ({"cases": [1.0]}, TypeError, r"cases\[0\]"),
        ({"cases": "abc"}, TypeError, "list of cases"),
        ({"name": ""}, ValueError, "name"),
        ({"rtol": -1.0}, ValueError, "rtol"),
        ({"atol": "0"}, TypeError, "atol"),
        ({"strict": 1}, TypeError, "strict"),
    ],
)
def test_bad_arguments(kwargs, error, text):
    args = {"cases": [(1.0,)], "name": "x"} | kwargs
    with pytest.raises(error, match=text):
        check(lambda x: x, lambda x: x, **args)
    with pytest.raises(TypeError, match="student_fn"):
        check(1.0, lambda x: x, [(1.0,)], name="x")


# A reader's mistake is always a FAIL naming the case, never a crash of the notebook.


def _exit(x):
    import sys

    sys.exit(3)


def _generator_exit(x):
    raise GeneratorExit("closed")


class _BadEq:
    def __eq__(self, other):
        raise RuntimeError("no comparison")

    def __repr__(self):
        raise RuntimeError("no repr")


@pytest.mark.parametrize("student", [False, True], ids=["strict", "student"])
@pytest.mark.parametrize(
    "reader, text",
    [
        (lambda x: np.array(["a", "b"]), "got ndarray of dtype <U1"),
        (lambda x: np.str_("a"), "got str_ of dtype <U1"),
        (lambda x: "ab", "got str 'ab'"),
        (lambda x: np.array([None, 1.0], dtype=object), "got ndarray of dtype object"),
        (lambda x: _BadEq(), "got _BadEq <_BadEq>"),
        (_exit, "your function raised SystemExit: 3"),
        (_generator_exit, "your function raised GeneratorExit: closed"),
    ],
    ids=[
        "str-array",
        "np-str",
        "str",
        "object-array",
        "bad-eq",
        "sys-exit",
        "generator-exit",
    ],
)
def test_reader_mistakes_are_fail_verdicts(reader, text, student, capsys, monkeypatch):
    if student:
        monkeypatch.setenv(labs.STUDENT_ENV, "1")
        check(reader, lambda x: 2.0 * x, [(np.arange(2.0),)], name="lab")
        out = capsys.readouterr().out
    else:
        with pytest.raises(LabError) as info:
            check(reader, lambda x: 2.0 * x, [(np.arange(2.0),)], name="lab")
        assert not isinstance(info.value, labs.LabDefinitionError)
        out = str(info.value)
    assert out.startswith("FAIL: lab: case 1 of 1 (array([0., 1.]))")
    assert text in out


def test_non_numeric_output_against_a_non_numeric_reference(capsys):
    # the reference returns a string: a reader's object whose == raises is a FAIL
    check(lambda: _BadEq(), lambda: "ok", [()], name="text", strict=False)
    out = capsys.readouterr().out
    assert out.startswith("FAIL: text: case 1 of 1 ()")
    assert "RuntimeError: no comparison" in out


def test_keyboard_interrupt_still_stops_the_cell(monkeypatch):
    monkeypatch.setenv(labs.STUDENT_ENV, "1")

    def interrupted(x):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        check(interrupted, lambda x: x, [(1.0,)], name="stop")


def _type_error(x):
    raise TypeError("unsupported operand")


@pytest.mark.parametrize("student", [False, True], ids=["strict", "student"])
@pytest.mark.parametrize(
    "reader, reference, cases, text",
    [
        (_type_error, _type_error, [(1.0,), (2.0,)], "raises on every case"),
        (lambda x: x, _type_error, [(1.0,)], "raises on every case"),
        (lambda x, y: x, lambda x: x, [(1.0, 2.0)], "does not fit the reference"),
        (lambda x: x, lambda x: x, [{"y": 1.0}], "does not fit the reference"),
    ],
    ids=["both-raise-typeerror", "reference-raises", "too-many-args", "wrong-kwarg"],
)
def test_broken_lab_is_a_lab_error_not_a_verdict(reader, reference, cases, text, student, capsys, monkeypatch):
    if student:
        monkeypatch.setenv(labs.STUDENT_ENV, "1")
    with pytest.raises(labs.LabDefinitionError, match=text) as info:
        check(reader, reference, cases, name="broken")
    assert isinstance(info.value, LabError)
    assert "bug in the lab" in str(info.value)
    assert not capsys.readouterr().out.startswith("PASS")


def test_reference_raising_on_some_cases_is_still_checked(capsys):
    def ref(x):
        if x < 0:
            raise ValueError("x must be >= 0")
        return x

    check(ref, ref, [(1.0,), (-1.0,)], name="partial")
    assert capsys.readouterr().out.startswith("PASS: partial")


# A function that calls the reference it should replace is not accepted, in both editions.

_A_M_CASES = [(np.tanh, 5), (np.sin, 3)]
_NOT_ACCEPTED = (
    "FAIL: a_m: not accepted: your function calls lib.hermite.coefficients, the function this lab asks you to write."
)


def _by_gauss_hermite(f, degree):
    """An independent solution: a_m = E[f(z) h_m(z)] by a 120-node Gauss-Hermite rule."""
    nodes, weights = hermite_e.hermegauss(120)
    weights = weights / np.sqrt(2 * np.pi)
    return np.array([np.sum(weights * f(nodes) * hermite.hermite_function(m, nodes)) for m in range(degree + 1)])


def _wrapper(f, degree):
    return hermite.coefficients(f, degree)


def _through_an_alias(f, degree):
    return np.asarray(_renamed_coefficients(f, degree))


def _through_the_package(f, degree):
    return lib.hermite.coefficients(f, degree)


def _importing_it(f, degree):
    from lib.hermite import coefficients as mine

    return mine(f, degree)


def _through_a_helper(f, degree):
    return 1.0 * _wrapper(f, degree)


def _through_a_local_alias(f, degree):
    module = lib.hermite
    return module.coefficients(f, degree)


class _Callable:
    def __call__(self, f, degree):
        return _through_an_alias(f, degree)


_DELEGATING = {
    "the-reference": hermite.coefficients,
    "partial": functools.partial(hermite.coefficients),
    "wrapper": _wrapper,
    "alias": _through_an_alias,
    "package-attribute": _through_the_package,
    "import-inside": _importing_it,
    "helper": _through_a_helper,
    "local-alias": _through_a_local_alias,
    "lambda": lambda f, degree: _wrapper(f, degree),
    "callable-object": _Callable(),
}


@pytest.mark.parametrize("student", [False, True], ids=["strict", "student"])
@pytest.mark.parametrize("reader", list(_DELEGATING.values()), ids=list(_DELEGATING))
def test_a_function_that_calls_the_reference_is_not_accepted(reader, student, capsys, monkeypatch):
    if student:
        monkeypatch.setenv(labs.STUDENT_ENV, "1")
        check(reader, hermite.coefficients, _A_M_CASES, name="a_m")
    else:
        with pytest.raises(LabError, match="not accepted"):
            check(reader, hermite.coefficients, _A_M_CASES, name="a_m")
    assert capsys.readouterr().out == _NOT_ACCEPTED + "\n"


@pytest.mark.parametrize(
    "reference",
    [
        lambda f, degree: hermite.coefficients(f, degree),
        functools.partial(hermite.coefficients),
        _wrapper,
    ],
    ids=["lambda", "partial", "wrapper"],
)
def test_the_reference_may_be_a_thin_wrapper(reference, capsys):
    with pytest.raises(LabError, match="not accepted"):
        check(_through_an_alias, reference, _A_M_CASES, name="a_m")
    with pytest.raises(LabError, match="not accepted"):
        check(reference, reference, _A_M_CASES, name="a_m")  # the lab's own reference
    check(_by_gauss_hermite, reference, _A_M_CASES, name="a_m", rtol=1e-8, atol=1e-12)
    assert capsys.readouterr().out.splitlines()[-1].startswith("PASS: a_m")


def test_an_independent_solution_may_use_other_library_functions(capsys):
    # hermite.hermite_function lives in the reference's module, numpy is used freely
    check(_by_gauss_hermite, hermite.coefficients, _A_M_CASES, name="a_m", rtol=1e-8, atol=1e-12)
    assert capsys.readouterr().out.startswith("PASS: a_m: agrees with the reference on all 2 cases")
    assert labs.delegated_call(_by_gauss_hermite, hermite.coefficients) is None


_MINE = types.SimpleNamespace(coefficients=_by_gauss_hermite)


def test_a_readers_own_function_of_the_same_name_is_not_the_reference(capsys):
    def coefficients(f, degree):  # the reader's, shadowing the library's name
        return _by_gauss_hermite(f, degree)

    def attribute_of_an_object(f, degree):  # .coefficients of an object, not of lib.hermite
        return _MINE.coefficients(f, degree) + 0.0 * hermite.hermite_function(0, 0.0)

    for reader in (lambda f, degree: coefficients(f, degree), attribute_of_an_object):
        check(reader, hermite.coefficients, _A_M_CASES, name="a_m", atol=1e-12)
        assert capsys.readouterr().out.startswith("PASS: a_m")


def test_a_wrong_solution_still_fails_on_its_cases(capsys, monkeypatch):
    def wrong(f, degree):
        return 2.0 * _by_gauss_hermite(f, degree)

    monkeypatch.setenv(labs.STUDENT_ENV, "1")
    check(wrong, hermite.coefficients, _A_M_CASES, name="a_m", atol=1e-12)
    out = capsys.readouterr().out
    assert out.startswith(
        "FAIL: a_m: 2 of 2 cases disagree with the reference:\n    case 1 of 2 (tanh, 5): the output differs from the reference at index (1,)"
    )
    assert "not accepted" not in out


def test_delegated_call_names_the_function_and_checks_its_arguments():
    assert labs.delegated_call(_through_the_package, hermite.coefficients) == "lib.hermite.coefficients"
    assert labs.delegated_call(hermite.coefficients, lambda x: 2.0 * x) is None  # no library reference
    with pytest.raises(TypeError, match="student_fn must be callable; got 1.0"):
        labs.delegated_call(1.0, hermite.coefficients)
    with pytest.raises(TypeError, match="reference_fn must be callable"):
        labs.delegated_call(_wrapper, "coefficients")


def test_also_forbidden_functions_are_not_accepted_either(capsys):
    """A second library implementation of the reference, named in also_forbidden, is
    refused like the reference; without it the same function would pass."""
    from lib import theory

    def reader(rho_nl, alpha, tau, lam):
        return theory.pure_noise_error_integral(rho_nl, alpha, tau, lam)

    cases = [(1.1, 2.0, 2.0, 0.5)]
    kw = dict(name="pure noise", rtol=1e-6)
    labs.check(reader, theory.pure_noise_error, cases, **kw)
    assert capsys.readouterr().out.startswith("PASS")
    with pytest.raises(LabError, match="computes what this lab asks you to write"):
        labs.check(reader, theory.pure_noise_error, cases, also_forbidden=[theory.pure_noise_error_integral], **kw)
    assert "lib.theory" in capsys.readouterr().out


@pytest.mark.parametrize(("value", "text"), [("abc", "list of functions"), ([1.0], r"also_forbidden\[0\]")])
def test_also_forbidden_is_checked(value, text):
    with pytest.raises(TypeError, match=text):
        labs.check(lambda x: x, lambda x: x, [(1.0,)], name="id", also_forbidden=value)


def test_the_tolerance_is_relative_for_tiny_and_huge_outputs(capsys):
    """rtol scales with |expected|: an absolute tolerance of the same size gives both verdicts wrong.

    At 1e-12 an error of 1e-6 relative (1e-18 absolute) is far inside any absolute
    tolerance of 1e-8, but outside rtol = 1e-8; at 1e12 an error of 1e-15 relative (1e-3
    absolute) is far outside an absolute 1e-8, but inside rtol = 1e-8.
    """
    with pytest.raises(LabError, match="FAIL: tiny: case 1 of 1"):
        check(lambda x: x * (1 + 1e-6), lambda x: x, [(1e-12,)], name="tiny", rtol=1e-8)
    capsys.readouterr()
    check(lambda x: x + 1e-3, lambda x: x, [(1e12,)], name="huge", rtol=1e-8)
    assert capsys.readouterr().out.startswith("PASS: huge")
    # the same two outputs in one array: each entry is judged relative to itself
    with pytest.raises(LabError, match=r"FAIL: both: case 1 of 1"):
        check(lambda x: x * np.array([1 + 1e-6, 1.0]), lambda x: x, [(np.array([1e-12, 1e12]),)], name="both")
    capsys.readouterr()


def test_a_lambda_in_a_case_is_named_by_its_code():
    cases = [(np.tanh, 8), (lambda t: np.maximum(t, 0.0), 8), (lambda t: np.maximum(t, 0.2 * t), 8)]
    assert [labs._describe_case(c) for c in cases] == [
        "tanh, 8",
        "lambda t: np.maximum(t, 0.0), 8",
        "lambda t: np.maximum(t, 0.2 * t), 8",
    ]
    assert labs._describe(eval("lambda x: x + 1")) == "<lambda>"  # no source: the old name


def test_a_refusal_names_the_function_as_the_lab_does():
    import lib.theory.linear

    # icl_error is defined in lib.theory.linear and re-exported by lib.theory
    reference = lambda a: lib.theory.linear.icl_error(a)  # noqa: E731
    student = lambda a: lib.theory.icl_error(a)  # noqa: E731
    assert labs.delegated_call(student, reference) == "lib.theory.linear.icl_error"
    # a reference that is the function itself: its shortest public path, as before
    assert labs.delegated_call(student, lib.theory.linear.icl_error) == "lib.theory.icl_error"
