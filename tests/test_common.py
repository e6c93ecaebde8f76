"""Tests of every module of lib (the shared conventions of input checks)."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import raises_early
from numpy.testing import assert_allclose

from lib import hermite, samplers, simulation, spectral, teachers, theory
from lib._checks import PARAMETERS
from lib.attention import fit_gamma
from lib.hermite import coefficients, get_link
from lib.samplers import sample_contexts, sample_features, sample_task_set
from lib.simulation import simulate
from lib.teachers import teacher_moments
from lib.theory import nonlinear_icl_error

INF = np.inf


def test_link_names_accepted_by_every_function_taking_a_link():
    relu = get_link("relu")
    assert_allclose(coefficients("relu", 4), coefficients(relu, 4))
    assert_allclose(
        coefficients("ReLU", 4), [1 / np.sqrt(2 * np.pi), 0.5, 1 / (2 * np.sqrt(np.pi)), 0, coefficients(relu, 4)[4]]
    )
    assert hermite.second_moment("relu") == relu.second_moment
    assert hermite.linear_coefficient("tanh") == hermite.linear_coefficient(get_link("tanh"))
    z = np.linspace(-2, 2, 5)
    assert_allclose(teachers.remainder("relu")(z), teachers.remainder(relu)(z))
    assert_allclose(hermite.partial_sum_errors("relu", 3), hermite.partial_sum_errors(relu, 3))
    assert teacher_moments("relu") == teacher_moments(relu)
    with pytest.raises(ValueError, match="relu"):  # the message lists the names
        coefficients("rleu", 4)


# --------------------------------------------------------------------------------------
# 4. consistency of what is accepted
# --------------------------------------------------------------------------------------
def test_non_square_integrable_teacher_refused_everywhere():
    def f(z):
        return np.exp(z**2)

    raises_early(ValueError, "square-integrable", teachers.effective_noise, f, 0.1)
    err = raises_early(
        ValueError, "square-integrable", simulate, 5, 2, INF, 2, 0.1, teacher=f, n_test=100, with_rng=True
    )
    assert "teacher" in str(err)
    raises_early(ValueError, "square-integrable", sample_features, 10, 5, 10, None, teacher=f, with_rng=True)


def test_bool_links_are_read_as_zero_one_everywhere():
    def step(z):
        return z > 0

    def step01(z):
        return (z > 0).astype(float)

    assert_allclose(teacher_moments(step), teacher_moments(step01), rtol=1e-12)
    assert_allclose(samplers.sample_labels(np.linspace(-1, 1, 5), step), [0, 0, 0, 1, 1])
    r1 = simulate(6, 2, INF, 2, 0.1, teacher=step, rng=4, n_test=200)
    r2 = simulate(6, 2, INF, 2, 0.1, teacher=step01, rng=4, n_test=200)
    assert r1["icl"] == r2["icl"] and r1["idg"] == r2["idg"]
    assert np.isfinite(nonlinear_icl_error(step, 2, 1.5, 2, 0.1))


def test_sampler_and_solver_memory_guards(limit_16g):
    raises_early(MemoryError, "n, ell and d", sample_contexts, 10**5, 100, 1000, None, with_rng=True)
    raises_early(MemoryError, "n and d", sample_features, 10**9, 100, 200, None, with_rng=True)
    raises_early(MemoryError, "kappa", sample_task_set, 10**4, 1e6, with_rng=True)
    raises_early(MemoryError, "n and d", samplers.sample_tokens, 10**10, 100, with_rng=True)
    X, F, y = np.full((10, 1000), 0.03), np.ones((10, 1001)), np.ones(10)
    err = raises_early(MemoryError, "queries and features", fit_gamma, X, F, y, lam=1.0, method="dense")
    assert "TiB" in str(err)  # 8 p^2 = 7.3 TiB for p = 10^6


# --------------------------------------------------------------------------------------
# every public function checks the model's parameters against lib._checks.PARAMETERS
# --------------------------------------------------------------------------------------


#: A valid call of each public function that takes model parameters.
VALID_CALLS = [
    (theory.icl_error, dict(alpha=2.0, kappa=1.0, tau=2.0, rho=0.1, lam=0.1)),
    (theory.idg_error, dict(alpha=2.0, kappa=1.0, tau=2.0, rho=0.1)),
    (theory.icl_limit, dict(alpha=2.0, rho=0.1)),
    (theory.optimal_lambda, dict(alpha=2.0, kappa=1.0, tau=2.0, rho=0.1)),
    (theory.nonlinear_icl_error, dict(teacher="relu", alpha=2.0, kappa=1.0, tau=2.0, rho=0.1, lam=0.1)),
    (theory.nonlinear_idg_error, dict(teacher="relu", alpha=2.0, kappa=1.0, tau=2.0, rho=0.1)),
    (theory.pure_noise_error, dict(rho_nl=1.0, alpha=2.0, tau=2.0, lam=0.1)),
    (theory.context_ridge_error, dict(teacher="relu", alpha=2.0, rho=0.1, ridge=0.5)),
    (teachers.effective_noise, dict(teacher="relu", rho=0.1)),
    (teachers.gaussian_equivalent_ridge, dict(teacher="relu", rho=0.1)),
    (spectral.spectral_overlap, dict(alpha=2.0, teacher="h2", rho=0.1)),
    (simulation.simulate, dict(d=3, alpha=2.0, kappa=1.0, tau=2.0, rho=0.1, lam=0.1)),
]


def _bad_values(interval):
    """Values outside ``interval``, with the error type each must raise."""
    bad = [(float("nan"), ValueError), ("one", TypeError)]
    if interval.low is not None:
        bad.append((interval.low - 1.0, ValueError))
        if interval.low_open:
            bad.append((interval.low, ValueError))
    if not interval.allow_inf:
        bad.append((float("inf"), ValueError))
    return bad


CASES = [
    pytest.param(func, kwargs, name, value, exc, id=f"{func.__name__}-{name}={value!r}")
    for func, kwargs in VALID_CALLS
    for name in kwargs
    if name in PARAMETERS
    for value, exc in _bad_values(PARAMETERS[name])
]


@pytest.mark.parametrize(("func", "kwargs"), [pytest.param(f, k, id=f.__name__) for f, k in VALID_CALLS])
def test_valid_calls_run(func, kwargs):
    func(**kwargs)


@pytest.mark.parametrize(("func", "kwargs", "name", "value", "exc"), CASES)
def test_parameter_out_of_range_is_refused_naming_it(func, kwargs, name, value, exc):
    with pytest.raises((ValueError, TypeError)) as info:
        func(**{**kwargs, name: value})
    assert isinstance(info.value, exc), f"{func.__name__}({name}={value!r}) raised {type(info.value).__name__}"
    assert name in str(info.value), f"the message does not name {name}: {info.value}"
