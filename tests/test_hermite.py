"""Tests for lib.hermite: Hermite functions, coefficients, the link catalogue, teachers.

Closed forms are checked against adaptive quadrature, quadrature against exact rational
arithmetic and independent formulas, and every bad input against the error it must
raise (naming the argument, with no warning escaping).
"""

from __future__ import annotations

import math
import re
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.polynomial import hermite_e
from numpy.testing import assert_allclose
from scipy.special import ndtr

from lib import hermite as H
from lib import teachers

CLOSED = [name for name, link in H.LINKS.items() if link.has_closed_form]
PHI0 = 1.0 / math.sqrt(2.0 * math.pi)


def step_coefficients(c: float, degree: int) -> np.ndarray:
    """E[1{z > c} h_m(z)] = phi(c) h_{m-1}(c) / sqrt(m) for m >= 1, 1 - Phi(c) at m = 0."""
    a = np.empty(degree + 1)
    a[0] = 1.0 - ndtr(c)
    phic = math.exp(-c * c / 2) * PHI0
    a[1:] = phic * H.hermite_functions(degree - 1, c) / np.sqrt(np.arange(1, degree + 1))
    return a


def exact_hermite(m: int, z: Fraction) -> float:
    """h_m(z) from the integer recurrence He_{k+1} = z He_k - k He_{k-1}, in exact arithmetic."""
    prev, cur = Fraction(1), z
    if m == 0:
        return 1.0
    for k in range(1, m):
        prev, cur = cur, z * cur - k * prev
    return float(cur) / math.sqrt(math.factorial(m))


@pytest.fixture
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# --------------------------------------------------------------------------- h_m
def test_hermite_function_matches_numpy_hermite_e():
    z = np.linspace(-4, 4, 41)
    for m in range(21):
        e_m = np.zeros(m + 1)
        e_m[m] = 1.0
        expected = hermite_e.hermeval(z, e_m) / math.sqrt(math.factorial(m))
        assert_allclose(H.hermite_function(m, z), expected, rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("m", [40, 100, 150])
@pytest.mark.parametrize("z", [Fraction(0), Fraction(3, 2), Fraction(-9, 4), Fraction(15, 2)])
def test_hermite_function_stable_at_high_degree(m, z):
    exact = exact_hermite(m, z)
    scale = max(1.0, abs(exact))
    assert abs(float(H.hermite_function(m, float(z))) - exact) <= 1e-11 * scale


def test_hermite_functions_shapes_and_examples():
    z = np.array([[0.0, 1.0], [2.0, -3.0]])
    out = H.hermite_functions(3, z)
    assert out.shape == (4, 2, 2)
    assert_allclose(out[2], (z**2 - 1) / math.sqrt(2))
    assert_allclose(out[3], (z**3 - 3 * z) / math.sqrt(6))
    assert H.hermite_function(2, 1.5).shape == ()


def test_orthonormality_by_quadrature():
    degree = 12
    gram = np.array([H.coefficients(lambda z, n=n: H.hermite_function(n, z), degree) for n in range(degree + 1)])
    assert_allclose(gram, np.eye(degree + 1), atol=1e-11)
    # and far out: E[h_40 h_m] = delta_{40, m}
    row = H.coefficients(lambda z: H.hermite_function(40, z), 45)
    assert_allclose(row, np.eye(46)[40], atol=1e-10)


# --------------------------------------------------------------------------- closed forms
@pytest.mark.parametrize("name", CLOSED)
def test_closed_forms_match_quadrature(name):
    link = H.LINKS[name]
    assert_allclose(H.coefficients(link.f, 30), link.coefficients(30), atol=1e-10)
    assert_allclose(H.second_moment(link.f), link.second_moment, rtol=1e-10)


def test_relu_values_from_theory():
    a = H.LINKS["relu"].coefficients(25)
    assert_allclose(a[:3], [1 / math.sqrt(2 * math.pi), 0.5, 1 / (2 * math.sqrt(math.pi))], rtol=1e-14)
    assert_allclose(a[3::2], 0.0, atol=1e-15)
    for k in range(1, 13):  # a_{2k} = (-1)^{k+1} (2k-3)!! / (sqrt(2 pi) sqrt((2k)!))
        dfact = math.prod(range(2 * k - 3, 0, -2))
        expected = (-1) ** (k + 1) * dfact / math.sqrt(2 * math.pi * math.factorial(2 * k))
        assert a[2 * k] == pytest.approx(expected, rel=1e-12)


def test_sign_erf_sin_formulas_with_factorials():
    sign, erf, sin = (H.LINKS[n].coefficients(21) for n in ("sign", "erf", "sin"))
    for k in range(11):
        m = 2 * k + 1
        dfact = math.prod(range(2 * k - 1, 0, -2))
        root = math.sqrt(math.factorial(m))
        assert sign[m] == pytest.approx(2 * PHI0 * (-1) ** k * dfact / root, rel=1e-12)
        expected_erf = 2 / math.sqrt(3 * math.pi) * (-2 / 3) ** k * dfact / root
        assert erf[m] == pytest.approx(expected_erf, rel=1e-12)
        assert sin[m] == pytest.approx((-1) ** k * math.exp(-0.5) / root, rel=1e-12)
    for a in (sign, erf, sin):
        assert_allclose(a[::2], 0.0, atol=1e-15)


def test_tanh_numerical_values():
    tanh = H.LINKS["tanh"]
    a = tanh.coefficients(9)
    assert a[1] == pytest.approx(0.6057055, abs=1e-7)
    assert_allclose(a[::2], 0.0, atol=1e-12)  # odd function
    assert_allclose(tanh.coefficients(50)[:10], a, atol=0)  # cache extended consistently
    assert tanh.second_moment == pytest.approx(np.sum(tanh.coefficients(60) ** 2), abs=1e-8)


def test_h2_has_no_linear_part():
    assert H.linear_coefficient(H.LINKS["h2"].f) == pytest.approx(0.0, abs=1e-13)
    assert teachers.teacher_moments("h2") == (0.0, 0.0, 1.0)


# --------------------------------------------------------------------------- accuracy at unknown kinks
@pytest.mark.parametrize("c", [0.5, 0.1234567, -1.7320508, 2.2360679, -0.987654321, 3.3])
def test_step_at_unannounced_point(c, no_warnings):
    a = H.coefficients(lambda z: z > c, 40)  # booleans are read as 0/1
    assert_allclose(a, step_coefficients(c, 40), atol=1e-10)


@pytest.mark.parametrize("c", [0.3, -0.77777])
def test_kinks_at_unannounced_points(c):
    degree = 30
    s = step_coefficients(c, degree + 1)
    m = np.arange(degree + 1)
    # (z - c) 1{z > c}:  z h_m = sqrt(m+1) h_{m+1} + sqrt(m) h_{m-1}
    lower = np.concatenate([[0.0], np.sqrt(m[1:]) * s[:-2]])
    expected = np.sqrt(m + 1) * s[1:] + lower - c * s[:-1]
    assert_allclose(H.coefficients(lambda z: np.maximum(z - c, 0.0), degree), expected, atol=1e-10)
    # |z - c| = 2 relu(z - c) - (z - c)
    absolute = 2 * expected
    absolute[0] += c
    absolute[1] -= 1.0
    assert_allclose(H.coefficients(lambda z: np.abs(z - c), degree), absolute, atol=1e-10)


def test_relu_abs_sign_given_as_plain_callables():
    for name, fun in [("relu", lambda z: np.maximum(z, 0)), ("abs", np.abs), ("sign", np.sign)]:
        assert_allclose(H.coefficients(fun, 40), H.LINKS[name].coefficients(40), atol=1e-10)


def test_floor_many_jumps():
    # floor(z) = sum over integers j of 1{z >= j} minus the negative ones: the coefficients
    # are a sum of steps at every integer (only |j| <= 9 matters at 1e-12).
    expected = sum(step_coefficients(float(j), 10) for j in range(1, 10))
    expected -= sum(1.0 * (np.arange(11) == 0) - step_coefficients(float(j), 10) for j in range(-9, 1))
    assert_allclose(H.coefficients(np.floor, 10), expected, atol=1e-10)


# --------------------------------------------------------------------------- Parseval, linearity
@pytest.mark.parametrize("name", ["erf", "sin", "tanh", "cubic", "offset"])
def test_parseval_smooth(name):
    link = H.LINKS[name]
    assert np.sum(link.coefficients(120) ** 2) == pytest.approx(link.second_moment, abs=1e-9)


@pytest.mark.parametrize("name", ["relu", "abs", "sign"])
def test_parseval_with_direct_residuals(name):
    link = H.LINKS[name]
    a = link.coefficients(40)
    errors = H.partial_sum_errors(link, 40)
    assert_allclose(errors**2 + np.cumsum(a**2), link.second_moment, atol=1e-10)
    assert np.all(np.diff(errors) <= 1e-15)


def test_partial_sum_error_decay_rates():
    # jump: a_m^2 ~ m^{-3/2} -> error ~ D^{-1/4};  kink: a_m^2 ~ m^{-5/2} -> error ~ D^{-3/4}
    degrees = np.arange(21, 81, 2)  # odd degrees for sign, even ones shift by one for relu
    sign = H.partial_sum_errors(H.LINKS["sign"], 80)[degrees]
    relu = H.partial_sum_errors(H.LINKS["relu"], 81)[degrees + 1]
    assert np.polyfit(np.log(degrees), np.log(sign), 1)[0] == pytest.approx(-0.25, abs=0.02)
    assert np.polyfit(np.log(degrees + 1), np.log(relu), 1)[0] == pytest.approx(-0.75, abs=0.03)


@settings(max_examples=12, deadline=None)
@given(
    weights=st.lists(st.floats(-3, 3, allow_nan=False), min_size=3, max_size=3),
    names=st.lists(st.sampled_from(sorted(H.LINKS)), min_size=3, max_size=3),
)
def test_coefficients_are_linear(weights, names):
    links = [H.LINKS[n] for n in names]

    def combo(z):
        return sum(w * link.f(z) for w, link in zip(weights, links))

    expected = sum(w * link.coefficients(12) for w, link in zip(weights, links))
    assert_allclose(H.coefficients(combo, 12), expected, atol=1e-9)


# --------------------------------------------------------------------------- partial sums, remainder
def test_partial_sum_reproduces_polynomials():
    z = np.linspace(-3, 3, 13)
    assert_allclose(H.partial_sum([0.0, 1.0, 0.0, 0.5], z), H.LINKS["cubic"](z), atol=1e-13)
    assert_allclose(H.partial_sum(H.coefficients(lambda z: z**4, 6), z), z**4, atol=1e-9)


def test_partial_sum_matches_hermite_e():
    rng = np.random.default_rng(0)
    a = rng.normal(size=15)
    z = np.linspace(-2, 2, 9)
    he = a / np.sqrt([math.factorial(m) for m in range(15)])
    assert_allclose(H.partial_sum(a, z), hermite_e.hermeval(z, he), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f", [H.LINKS["relu"], np.tanh, lambda z: np.exp(-((z - 0.4) ** 2))])
def test_remainder_is_orthogonal_to_z(f):
    f_perp = teachers.remainder(f)
    a = H.coefficients(f, 3)
    b = H.coefficients(f_perp.f, 3)
    assert b[1] == pytest.approx(0.0, abs=1e-12)
    assert_allclose(b[[0, 2, 3]], a[[0, 2, 3]], atol=1e-12)
    assert H.second_moment(f_perp.f) == pytest.approx(H.second_moment(f) - a[1] ** 2, abs=1e-11)
    z = np.linspace(-2, 2, 5)
    assert_allclose(f_perp(z) + a[1] * z, np.asarray(f(z), dtype=float), atol=1e-14)


def test_best_linear_fit_is_a0_plus_a1_z():
    # least squares on Gauss-Hermite nodes of high order approximates E[(f - b0 - b1 z)^2]
    z, w = hermite_e.hermegauss(80)
    w = w / w.sum()
    f = np.tanh(z) + 0.3 * z**2
    design = np.stack([np.ones_like(z), z], axis=1) * np.sqrt(w)[:, None]
    b, *_ = np.linalg.lstsq(design, f * np.sqrt(w), rcond=None)
    a = H.coefficients(lambda t: np.tanh(t) + 0.3 * t**2, 1)
    assert_allclose(b, a, atol=1e-9)


# --------------------------------------------------------------------------- teachers
def test_resolve_teacher():
    assert teachers.resolve_teacher(None) is H.LINKS["linear"]
    assert teachers.resolve_teacher(" ReLU ") is H.LINKS["relu"]
    assert teachers.resolve_teacher(H.LINKS["sign"]) is H.LINKS["sign"]
    assert teachers.resolve_teacher(np.tanh) is np.tanh
    series = teachers.resolve_teacher([0.5, 1.0])
    assert_allclose(series(np.array([0.0, 2.0])), [0.5, 2.5])
    with pytest.raises(ValueError, match="teacher must be one of"):
        teachers.resolve_teacher("softplus")
    with pytest.raises(TypeError, match="teacher"):
        teachers.resolve_teacher(3.0)
    with pytest.raises(ValueError, match="teacher"):
        teachers.resolve_teacher(np.ones((2, 2)))


def test_teacher_moments():
    assert teachers.teacher_moments(None) == (0.0, 1.0, 1.0)
    a0, a1, ef2 = teachers.teacher_moments("relu")
    assert (a0, a1, ef2) == pytest.approx((PHI0, 0.5, 0.5), rel=1e-14)
    assert teachers.teacher_moments([0.1, 0.2, 0.3]) == pytest.approx((0.1, 0.2, 0.14))
    assert teachers.teacher_moments(np.array([0.7])) == pytest.approx((0.7, 0.0, 0.49))
    numeric = teachers.teacher_moments(lambda z: np.maximum(z, 0.0))
    assert_allclose(numeric, (PHI0, 0.5, 0.5), atol=1e-11)


def test_gaussian_equivalent():
    g, rho_eq = teachers.gaussian_equivalent("relu", 0.1)
    assert rho_eq == pytest.approx(0.1 + 0.5 - 1 / (2 * math.pi) - 0.25, rel=1e-13)
    z = np.array([-1.0, 0.0, 2.0])
    assert_allclose(g(z), PHI0 + 0.5 * z)
    assert_allclose(g.coefficients(3), [PHI0, 0.5, 0.0, 0.0])
    assert teachers.gaussian_equivalent(None, 0.25)[1] == 0.25  # linear teacher: nothing added
    assert teachers.gaussian_equivalent("offset", 0.0)[1] == 0.0
    assert teachers.gaussian_equivalent(np.tanh, 0.0)[1] == pytest.approx(
        H.LINKS["tanh"].second_moment - H.LINKS["tanh"].coefficients(1)[1] ** 2, abs=1e-11
    )
    with pytest.raises(ValueError, match="rho"):
        teachers.gaussian_equivalent("relu", -0.1)


def test_get_link():
    assert H.get_link("TANH") is H.LINKS["tanh"]
    with pytest.raises(ValueError, match="name must be one of"):
        H.get_link("gelu")
    with pytest.raises(TypeError, match="name"):
        H.get_link(3)


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("bad", [3.0, None, [1.0, 2.0]])
def test_non_callable_f(bad):
    with pytest.raises(TypeError, match=r"^f must be a callable"):
        H.coefficients(bad, 3)
    with pytest.raises(TypeError, match=r"^f must be a callable"):
        H.second_moment(bad)


def test_link_names_are_links_and_unknown_names_are_named():
    assert np.array_equal(H.coefficients("relu", 3), H.LINKS["relu"].coefficients(3))
    with pytest.raises(ValueError, match=r"^f must be a callable or a link name.*'gelu'"):
        H.coefficients("gelu", 3)


@pytest.mark.parametrize(
    "f, message",
    [
        (lambda z: np.exp(z**2), r"not square-integrable"),
        (lambda z: np.exp(z**2 / 4), r"does not look square-integrable"),
        (lambda z: 1 / z, r"f must return finite values.*f\(0\) = inf"),
        (lambda z: 1 / (z - 0.31415), r"finite values|did not converge"),
        (lambda z: np.sqrt(z), r"f must return finite values.*nan"),
        (lambda z: np.where(z > 2.3456, np.nan, z), r"f must return finite values"),
        (lambda z: 1.0, r"f must return an array of the same shape"),
        (lambda z: np.stack([z, z]), r"f must return an array of the same shape"),
        (lambda z: z + 1j, r"f must return real numbers"),
    ],
)
def test_bad_f_raises_value_error_naming_f(f, message, no_warnings):
    with pytest.raises(ValueError, match=message):
        H.coefficients(f, 4)
    with pytest.raises(ValueError, match=r"\bf\b"):
        H.partial_sum_errors(f, 2)


def test_non_vectorized_f(no_warnings):
    with pytest.raises(TypeError, match=r"^f must be a vectorized function"):
        H.coefficients(math.sin, 2)


def test_square_integrable_but_fast_growing_is_fine(no_warnings):
    # E[exp(z^2/4.4)^2] = 1/sqrt(1 - 2/2.2) = sqrt(11); E[z^10] = 9!! = 945
    assert H.second_moment(lambda z: np.exp(z**2 / 4.4)) == pytest.approx(math.sqrt(11), rel=1e-9)
    assert H.coefficients(lambda z: z**10, 0)[0] == pytest.approx(945.0, rel=1e-10)


@pytest.mark.parametrize(
    "degree, error",
    [(-1, ValueError), (2.5, TypeError), (True, TypeError), ("3", TypeError), (H.MAX_DEGREE + 1, ValueError)],
)
def test_bad_degree(degree, error):
    for call in (
        lambda: H.coefficients(np.tanh, degree),
        lambda: H.partial_sum_errors(np.tanh, degree),
        lambda: H.LINKS["relu"].coefficients(degree),
    ):
        with pytest.raises(error, match=r"^degree must be an integer"):
            call()


def test_bad_m_z_and_coeffs(no_warnings):
    with pytest.raises(ValueError, match=r"^m must be"):
        H.hermite_function(-1, 0.0)
    with pytest.raises(TypeError, match=r"^m must be"):
        H.hermite_function(1.0, 0.0)
    with pytest.raises(ValueError, match=r"^z must not be NaN"):
        H.hermite_function(2, [0.0, np.nan])
    with pytest.raises(ValueError, match=r"^z: .*overflows"):
        H.hermite_function(40, 1e300)
    with pytest.raises(ValueError, match=r"^coeffs must be a non-empty 1-D array"):
        H.partial_sum(np.ones((2, 2)), 0.0)
    with pytest.raises(ValueError, match=r"^coeffs must be a non-empty 1-D array"):
        H.partial_sum([], 0.0)
    with pytest.raises(ValueError, match=r"^z: .*overflows"):
        H.partial_sum([0.0, 1.0, 1.0], 1e200)


def test_links_doc_comment_lists_the_catalogue():
    """The API page hides LINKS' repr and shows its doc comment: it must name every link."""
    import re
    from pathlib import Path

    src = Path(H.__file__).read_text()
    comment = re.search(r"((?:#:.*\n)+)LINKS", src).group(1)
    listed = re.findall(r"``(\w+)``", comment.split("Each value")[0])
    assert listed == list(H.LINKS)
    assert ":meta hide-value:" in comment


def test_teacher_with_infinite_fourth_moment_is_refused():
    """exp(z^2/5): E f^2 = sqrt(5) but E f^4 = inf, so the equivalence has no meaning."""
    from lib import theory

    def heavy(z):
        return np.exp(z**2 / 5)

    assert math.isclose(H.second_moment(heavy), math.sqrt(5), rel_tol=1e-8)
    with pytest.raises(ValueError, match=r"E\[f\(z\)\^4\] must be finite"):
        teachers.teacher_moments(heavy)
    with pytest.raises(ValueError, match="fourth|E\\[f\\(z\\)\\^4\\]"):
        theory.nonlinear_icl_error(heavy, 2.0, 1.5, 3.0, 0.1)


def test_teacher_with_finite_fourth_moment_is_accepted():
    """exp(z^2/9): E f^4 = 1/sqrt(1 - 8/9) = 3 is finite; E f^2 = 1/sqrt(1 - 4/9)."""
    a0, a1, ef2 = teachers.teacher_moments(lambda z: np.exp(z**2 / 9))
    assert math.isclose(ef2, 1 / math.sqrt(1 - 4 / 9), rel_tol=1e-8)
    assert abs(a1) < 1e-10


def test_changing_degrees_odd_even_links():
    sign = np.flatnonzero(H.changing_degrees(H.get_link("sign"), 20, min_degree=10))
    assert sign.tolist() == [11, 13, 15, 17, 19]
    relu = np.flatnonzero(H.changing_degrees(H.get_link("relu"), 20, min_degree=10))
    assert relu.tolist() == [10, 12, 14, 16, 18, 20]


def test_changing_degrees_callable_matches_link_and_errors_change_there():
    link = H.get_link("abs")
    assert np.array_equal(H.changing_degrees(link.f, 16, 2), H.changing_degrees(link, 16, 2))
    err = H.partial_sum_errors(link, 16)
    mask = H.changing_degrees(link, 16, 1)
    # where a_D = 0 the error does not move; where it is kept, it drops
    assert np.all(np.diff(err)[~mask[1:]] == pytest.approx(0.0, abs=1e-12))
    assert np.all(np.diff(err)[mask[1:]] < 0)


@pytest.mark.parametrize(
    "kwargs, word",
    [
        (dict(max_degree=-1), "max_degree"),
        (dict(max_degree=5, min_degree=6), "min_degree"),
        (dict(max_degree=5, min_degree=0, tol=-1.0), "tol"),
        (dict(max_degree=10_000), "max_degree"),
    ],
)
def test_changing_degrees_rejects_bad_input(kwargs, word):
    with pytest.raises(ValueError, match=word):
        H.changing_degrees(H.get_link("relu"), **kwargs)


@pytest.mark.parametrize("m", [10**9, 151])
def test_hermite_function_bounds_the_index(m):
    # issue 19, item 5: h_m costs m passes over z; the index is bounded by MAX_DEGREE
    with pytest.raises(ValueError, match=r"m must be an integer in \[0, MAX_DEGREE = 150\]"):
        H.hermite_function(m, 0.3)
    with pytest.raises(ValueError, match="degree must be an integer in"):
        H.hermite_functions(m, 0.3)


def test_old_names_are_aliases():
    """hermite_function(s) are the old names of hermite_polynomial(s), kept for existing code."""
    assert H.hermite_function is H.hermite_polynomial
    assert H.hermite_functions is H.hermite_polynomials


@pytest.mark.parametrize("kwargs", [{"also": None}, {"also": 3}, {"also": ["x"]}, {"argument": None}, {"argument": 3}])
def test_get_link_refuses_message_words_that_are_not_text(kwargs):
    # the keywords only shape the message: before, also=None gave "name must be Noneone of ..."
    # for an unknown name and was ignored for a known one
    ((key, value),) = kwargs.items()
    for name in ("relu", "quartic"):
        with pytest.raises(TypeError, match=rf"^get_link: {key} must be a str .*got {re.escape(repr(value))}"):
            H.get_link(name, **kwargs)
    with pytest.raises(ValueError, match=r"^teacher must be a callable, one of \['abs', .*got 'quartic'"):
        H.get_link("quartic", argument="teacher", also="a callable, ")


def test_a_link_name_is_looked_up_only_by_get_link(monkeypatch):
    # Issue 33: one look-up of a teacher's name. as_link and the functions of lib.hermite
    # that accept a name call get_link, once, with their argument's name for the message.
    from lib import teachers

    seen = []
    real = H.get_link

    def counting_get_link(name, **options):
        seen.append((name, options.get("argument")))
        return real(name, **options)

    monkeypatch.setattr(H, "get_link", counting_get_link)
    monkeypatch.setattr(teachers, "get_link", counting_get_link)
    assert teachers.as_link(" ReLU") is H.LINKS["relu"]
    assert np.array_equal(H.coefficients("tanh", 3), H.LINKS["tanh"].coefficients(3))
    assert seen == [(" ReLU", "teacher"), ("tanh", "f")]
    with pytest.raises(ValueError, match=r"^teacher must be one of \[.*'relu'.*\]; got 'gelu'$"):
        teachers.as_link("gelu")
    with pytest.raises(ValueError, match=r"^f must be a callable or a link name, one of \[.*\]; got 'gelu'$"):
        H.second_moment("gelu")


def test_no_lib_module_reads_the_catalogue_by_a_computed_key():
    # The static half of the test above: outside get_link, LINKS is read only by a
    # literal key (LINKS["relu"]); LINKS.get(...) or LINKS[name] would be a second look-up.
    import ast
    from pathlib import Path

    found = []
    for path in sorted(Path(H.__file__).resolve().parent.rglob("*.py")):
        tree = ast.parse(path.read_text())
        inside_get_link = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == "get_link":
                inside_get_link |= {id(n) for n in ast.walk(node)}
        for node in ast.walk(tree):
            if id(node) in inside_get_link:
                continue
            if isinstance(node, ast.Attribute) and node.attr == "get" and getattr(node.value, "id", None) == "LINKS":
                found.append(f"{path.name}:{node.lineno} LINKS.get")
            if (
                isinstance(node, ast.Subscript)
                and getattr(node.value, "id", None) == "LINKS"
                and not isinstance(node.slice, ast.Constant)
            ):
                found.append(f"{path.name}:{node.lineno} LINKS[...]")
    assert found == []
