"""Tests of lib.teachers."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import raises_early
from numpy.testing import assert_allclose

import lib.theory
from lib import hermite, teachers
from lib.teachers import gaussian_equivalent


@pytest.mark.parametrize("teacher", ["relu", "tanh", "h2", "cubic", "sign"])
def test_label_moments_against_monte_carlo(teacher):
    rng = np.random.default_rng(0)
    z = rng.standard_normal(2_000_000)
    rho = 0.1
    y = hermite.get_link(teacher)(z) + np.sqrt(rho) * rng.standard_normal(z.size)
    m = teachers.label_moments(teacher, rho)
    mc = [np.mean(y * z), np.mean(y**2), np.mean(y**2 * z**2), np.mean(y**4)]
    assert_allclose(m, mc, rtol=0.03, atol=3e-3)


def test_label_moments_closed_forms():
    # y = z + sqrt(rho) eps: E[y^2 z^2] = 3 + rho, E[y^4] = 3 + 6 rho + 3 rho^2
    assert_allclose(teachers.label_moments("linear", 0.2), [1.0, 1.2, 3.2, 3 + 1.2 + 0.12], atol=1e-9)
    # h2 = (z^2 - 1)/sqrt 2: E[h2^2 z^2] = 5, E[h2^4] = 15
    assert_allclose(teachers.label_moments("h2", 0.0), [0.0, 1.0, 5.0, 15.0], atol=1e-8)
    with pytest.raises(ValueError, match="rho"):
        teachers.label_moments("relu", -0.1)


def test_gaussian_equivalent_ridge_values():
    a0, a1 = 1 / np.sqrt(2 * np.pi), 0.5
    c, r = teachers.gaussian_equivalent_ridge("relu", 0.1)
    assert_allclose([c, r], [a0, (0.35 - a0**2) / a1**2])
    c, r = teachers.gaussian_equivalent_ridge("relu", 0.1, intercept=False)
    assert_allclose([c, r], [0.0, 0.35 / 0.25])
    assert np.isinf(teachers.gaussian_equivalent_ridge("h2", 0.1)[1])
    with pytest.raises(TypeError, match="intercept"):
        teachers.gaussian_equivalent_ridge("relu", 0.1, intercept="yes")


def test_gaussian_equivalent_rho_must_be_a_scalar():
    raises_early(TypeError, "rho", gaussian_equivalent, "relu", [0.1, 0.2])


# --------------------------------------------------------------------------------------
# a teacher resolved once into a Link
# --------------------------------------------------------------------------------------
def test_as_link_returns_links_and_caches_the_moments():
    from lib.hermite import LINKS, Link

    assert teachers.as_link(None) is LINKS["linear"]
    assert teachers.as_link("ReLU") is LINKS["relu"]
    relu = teachers.as_link("relu")
    assert teachers.as_link(relu) is relu
    link = teachers.as_link(np.tanh)
    assert isinstance(link, Link) and link.f is np.tanh
    first = teachers.teacher_moments(link)
    assert link._cache["moments"] == first  # computed once, then read from the Link
    assert teachers.teacher_moments(link) is link._cache["moments"]
    assert_allclose(first, teachers.teacher_moments(np.tanh), rtol=1e-12)


def test_as_link_of_coefficients_uses_them_in_closed_form():
    link = teachers.as_link([0.5, 1.0, 0.3])
    assert link.has_closed_form
    assert_allclose(link.coefficients(4), [0.5, 1.0, 0.3, 0.0, 0.0])
    assert_allclose(link.coefficients(1), [0.5, 1.0])
    assert teachers.teacher_moments([0.5, 1.0, 0.3]) == (0.5, 1.0, 0.5**2 + 1.0 + 0.3**2)
    assert_allclose(link(np.array([0.0])), [0.5 - 0.3 / np.sqrt(2.0)])


@pytest.mark.parametrize(
    ("teacher", "exc"), [(3.0, TypeError), ("softplus", ValueError), (np.ones((2, 2)), ValueError)]
)
def test_as_link_refuses_what_is_not_a_teacher(teacher, exc):
    with pytest.raises(exc, match="teacher"):
        teachers.as_link(teacher)


@pytest.mark.parametrize(
    "call",
    [
        lambda f: teachers.teacher_moments(f),
        lambda f: teachers.effective_noise(f, 0.1),
        lambda f: teachers.gaussian_equivalent(f, 0.1),
        lambda f: teachers.label_moments(f, 0.1),
        lambda f: teachers.remainder(f),
        lambda f: lib.theory.nonlinear_icl_error(f, 2.0, 1.0, 2.0, 0.1),
        lambda f: lib.theory.spectral_limits.spectral_error(2.0, f, 0.1),
        lambda f: lib.theory.context_free.context_free_error(f, 4, 0.1),
    ],
    ids=[
        "teacher_moments",
        "effective_noise",
        "gaussian_equivalent",
        "label_moments",
        "remainder",
        "nonlinear",
        "spectral",
        "context_free",
    ],
)
def test_a_callable_teacher_is_probed_once_per_public_call(call):
    # A probe is a call on lib.quadrature.PROBE_GRID (recognizable by its exact values);
    # as_link probes once and caches the values, later checks and integrals reuse them.
    from lib.quadrature import PROBE_GRID

    probes = []

    def f(z):
        z = np.asarray(z)
        if z.shape == PROBE_GRID.shape and np.array_equal(z, PROBE_GRID):
            probes.append(1)
        return np.tanh(z) + 0.3 * z

    call(f)
    assert len(probes) == 1


def test_a_callable_teacher_whose_repr_raises_gets_the_usual_message():
    """The probe's message names the callable without calling a __repr__ that raises."""

    class Bad:
        def __repr__(self):
            raise RuntimeError("no repr")

        def __call__(self, z):
            raise ZeroDivisionError("inside the teacher")

    with pytest.raises(ValueError, match=r"teacher: .*its repr raised"):
        teachers.as_link(Bad())
