"""Tests of every module of lib (the shared conventions of input checks)."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import raises_early
from numpy.testing import assert_allclose

from lib import baselines, hermite, samplers, simulation, teachers, theory
from lib._checks import PARAMETERS
from lib.attention import fit_gamma
from lib.hermite import coefficients, get_link
from lib.samplers import sample_contexts, sample_features, sample_task_set
from lib.simulation import simulate
from lib.teachers import teacher_moments
from lib.teaching import plotting
from lib.theory import nonlinear_icl_error, spectral_limits

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
    (spectral_limits.spectral_overlap, dict(alpha=2.0, teacher="h2", rho=0.1)),
    (simulation.simulate, dict(d=3, alpha=2.0, kappa=1.0, tau=2.0, rho=0.1, lam=0.1)),
    (teachers.label_moments, dict(teacher="relu", rho=0.1)),
    (samplers.sample_contexts, dict(n=2, d=3, ell=4, tasks=None, teacher="relu", rho=0.1)),
    (baselines.baseline_errors, dict(d=3, alpha=2.0, prior_tasks=None, rho=0.1, n_test=20)),
    (spectral_limits.spectral_error, dict(alpha=2.0, teacher="h2", rho=0.1)),
    (spectral_limits.weak_recovery_threshold, dict(teacher="h2", rho=0.1)),
    (theory.transition_kappa, dict(q=0.5, teacher="relu", alpha=2.0, tau=3.0, rho=0.1)),
    (theory.kappa_inf_floor, dict(a1=0.5, rho_nl=0.3, alpha=2.0)),
    (plotting.equivalence_figure, dict(teacher="relu", alpha=2.0, kappa=1.5, rho=0.1, lam=0.0, n_points=20)),
]

#: Functions whose model parameters must be single numbers: a list is refused by name.
SCALAR_CALLS = [
    (func, kwargs, name)
    for func, kwargs in VALID_CALLS
    if func
    in (
        simulation.simulate,
        teachers.label_moments,
        samplers.sample_contexts,
        baselines.baseline_errors,
        spectral_limits.weak_recovery_threshold,
        theory.transition_kappa,
        plotting.equivalence_figure,
    )
    for name in kwargs
    if name in PARAMETERS
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
    if interval.high is not None:
        bad.append((10.0 * interval.high, ValueError))
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


# --------------------------------------------------------------------------------------
# issue 19, item 6: messages name the argument; scalars are scalars; a raising teacher
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("func", "kwargs", "name"), [pytest.param(f, k, n, id=f"{f.__name__}-{n}") for f, k, n in SCALAR_CALLS]
)
def test_scalar_parameter_given_a_list_is_refused_naming_it(func, kwargs, name):
    with pytest.raises(TypeError, match=f"{name} must be a single real number"):
        func(**{**kwargs, name: [1.0, 2.0]})


def _raising_teacher(z):
    raise RuntimeError("boom")


TEACHER_CALLS = [
    pytest.param(f, k, id=f.__name__)
    for f, k in VALID_CALLS
    if "teacher" in k and f not in (simulation.simulate, samplers.sample_contexts, baselines.baseline_errors)
]


@pytest.mark.parametrize(("func", "kwargs"), TEACHER_CALLS)
def test_a_raising_teacher_is_reported_as_the_teacher(func, kwargs):
    with pytest.raises((ValueError, TypeError), match="teacher.*RuntimeError: boom"):
        func(**{**kwargs, "teacher": _raising_teacher})


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: theory.icl_error(2.0, 1.5, 3.0, 0.1, None), "lam must be a real number"),
        (lambda: plotting.task_diversity_figure(teacher=3), "teacher must be a string"),
        (lambda: baselines.baseline_errors(5, 2.0, [1.0, 2.0], 0.1), "prior_tasks must be None or a 2-D array"),
        (lambda: baselines.dmmse_task_set_errors(5, 2.0, INF, 0.1), "kappa must be finite here"),
        (lambda: hermite.pad_coefficients(0.5, 3), "coeffs must be a 1-D array"),
        (lambda: hermite.pad_coefficients([0.5], 10**12), "degree must be an integer in"),
        (lambda: plotting.color_for("x", 2.5), "index must be an integer"),
        (lambda: simulation.mc_peak_bytes("many", 4, 8), "n_test must be an integer"),
        (lambda: theory.pure_noise_error_integral(1e-300, 2.0, 3.0, 0.1), "must be below 1e150"),
        (lambda: theory.idg_error(2.0, 1.5, 1e-300, 0.1), "idg_error: the formula cannot be evaluated"),
        (lambda: theory.kappa_inf_floor(1e300, 0.3, 2.0), "a1 must be <= 1e"),
        (lambda: fit_gamma(np.ones((3, 2)), np.ones((3, 3)), None), "targets must be an array"),
    ],
)
def test_bad_arguments_are_refused_naming_them(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_monte_carlo_memory_guards(limit_16g):
    # issue 19, item 5: the squared errors of every test context, and the seeds of every run
    tasks = samplers.sample_tasks(3, 5, 0)
    err = raises_early(MemoryError, "n_test", baselines.baseline_errors, 5, 2.0, tasks, 0.1, n_test=2 * 10**9)
    assert "GiB" in str(err)
    raises_early(MemoryError, "n_test", baselines.context_ridge_errors, 5, 2.0, 0.1, n_test=2 * 10**9)
    raises_early(MemoryError, "draws", simulation.simulate_many, 3, 2.0, INF, 2.0, 0.1, draws=10**8, with_rng=True)
