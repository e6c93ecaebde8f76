"""Bad and extreme input: every case of issue 9 gives a right number or an early, clear error.

Each error test checks the exception type, that the message names the argument, and that
it is raised *before* anything large happens: the random generator passed in has not
been used (its state is unchanged) and the traced peak memory of the failing call stays
small (no large allocation first). No test measures wall-clock time.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from numpy.testing import assert_allclose

from lib import attention, hermite, samplers, simulation, teachers, theory
from lib._checks import MemoryLimitError, check_broadcast, memory_limit
from lib.attention import fit_gamma
from lib.simulation import mc_error, simulate
from lib.baselines import dmmse_predict
from lib.hermite import coefficients, get_link
from lib.teachers import gaussian_equivalent, teacher_moments
from lib.samplers import sample_contexts, sample_features, sample_task_set
from lib.theory import icl_error, nonlinear_icl_error, optimal_lambda

INF = np.inf
#: A failing call may allocate at most this much before it raises (bytes).
SMALL = 8 * 2**20


def raises_early(exc, match, func, *args, **kwargs):
    """Call ``func(*args, rng=Generator, **kwargs)`` (if it takes rng) and check the error.

    Returns the exception. Asserts: type ``exc``, ``match`` in the message, traced
    peak memory below ``SMALL``, and (when a generator was passed) no draw from it.
    """
    rng = np.random.default_rng(123)
    state = rng.bit_generator.state
    if kwargs.pop("with_rng", False):
        kwargs["rng"] = rng
    tracemalloc.start()
    try:
        with pytest.raises(exc, match=match) as info:
            func(*args, **kwargs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < SMALL, f"{peak / 2**20:.1f} MiB allocated before the error"
    assert rng.bit_generator.state == state, "random numbers were drawn before the error"
    return info.value


# --------------------------------------------------------------------------------------
# 1. theory at extreme but legal input (more in tests/test_theory_properties.py)
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "args, kwargs, expected",
    [
        ((2, 1.5, 2, 0.1), dict(lam=1e200), 1.1),  # lam -> inf: the zero predictor, 1 + rho
        ((1e-16, 1.5, 2, 0.1), dict(lam=0.5), 2.2),  # alpha -> 0: (1 + rho) tau/(tau - 1)
        ((1e-20, 1.5, 2, 0.1), {}, 2.2),
        ((1e-300, 1.5, 2, 0.1), {}, 2.2),
        ((1e-300, 1.5, 0.5, 0.1), {}, 2.2),  # (1 + rho)/(1 - tau)
    ],
)
def test_issue_theory_cases(args, kwargs, expected):
    e = icl_error(*args, **kwargs)
    assert_allclose(e, expected, rtol=1e-12)
    assert e >= theory.icl_limit(args[0], args[3])


@pytest.mark.parametrize(
    "args, kwargs, name",
    [
        ((1e-310, 1.5, 2, 0.1), {}, "alpha"),  # x* = (1 + rho)/alpha overflows
        ((1e-300, 1.5, 2, 0.1), dict(lam=0.5), "alpha"),  # beyond the ridge formula's range
        ((2, 1.5, 2, 0.1), dict(lam=1e306), "lam"),
    ],
)
def test_theory_outside_supported_range_is_refused(args, kwargs, name):
    err = raises_early(ValueError, name, icl_error, *args, **kwargs)
    assert "supported range" in str(err)


# --------------------------------------------------------------------------------------
# 3. arrays where scalars are expected, shapes that do not broadcast
# --------------------------------------------------------------------------------------
def test_broadcast_errors_name_the_arguments_in_order():
    err = raises_early(ValueError, "alpha", icl_error, [1, 2], [1, 2, 3], 2, 0.1)
    msg = str(err)
    assert msg.index("alpha") < msg.index("kappa") and "(2,)" in msg and "(3,)" in msg
    msg = str(raises_early(ValueError, "alpha", icl_error, [1, 2], 1.5, 2, [0.1, 0.2, 0.3]))
    assert "rho" in msg and msg.index("alpha") < msg.index("rho")
    msg = str(raises_early(ValueError, "tau", theory.idg_error, 1, [1, 2, 3], [2, 3], 0.1))
    assert msg.index("kappa") < msg.index("tau")
    msg = str(raises_early(ValueError, "lam", icl_error, 1, 2, [2, 3, 4], 0.1, [0.1, 0.2]))
    assert msg.index("tau") < msg.index("lam")
    raises_early(ValueError, "rho_nl", theory.pure_noise_error, [1, 2], [1, 2, 3], 2)
    raises_early(ValueError, "kappa", theory.M_kappa, [1, 2], [1, 2, 3])
    raises_early(ValueError, "rho", theory.icl_limit, [1, 2], [1, 2, 3])
    raises_early(ValueError, "kappa", nonlinear_icl_error, "relu", [1, 2], [1, 2, 3], 2, 0.1)
    assert check_broadcast(("a", [1, 2]), ("b", 3.0), ("c", [[1], [2], [3]])) == (3, 2)


def test_lam_bounds_must_be_a_pair():
    raises_early(TypeError, "lam_bounds", optimal_lambda, 2, 1.5, 2, 0.1, lam_bounds=5)
    raises_early(TypeError, "lam_bounds", optimal_lambda, 2, 1.5, 2, 0.1, lam_bounds=(1, 2, 3))
    raises_early(ValueError, r"lam_bounds\[1\]", optimal_lambda, 2, 1.5, 2, 0.1, lam_bounds=(1.0, 0.5))


def test_gaussian_equivalent_rho_must_be_a_scalar():
    raises_early(TypeError, "rho", gaussian_equivalent, "relu", [0.1, 0.2])


@pytest.mark.parametrize("position, name", [(1, "alpha"), (2, "kappa"), (3, "tau"), (4, "rho"), (5, "lam")])
def test_simulate_array_arguments_are_named(position, name):
    args = [10, 2.0, 1.5, 2.0, 0.1, 0.0]
    args[position] = [args[position], args[position]]
    raises_early(TypeError, name, simulate, *args, with_rng=True)


@pytest.mark.parametrize(
    "args, name",
    [((10, 2, 1e308, 2, 0.1), "kappa"), ((10, 2, INF, 1e300, 0.1), "tau"), ((10, 1e300, INF, 2, 0.1), "alpha")],
)
def test_simulate_overflowing_sizes(args, name):
    err = raises_early(ValueError, name, simulate, *args, with_rng=True)
    assert "at most" in str(err)


# --------------------------------------------------------------------------------------
# 2. memory guard
# --------------------------------------------------------------------------------------
@pytest.fixture
def limit_16g(monkeypatch):
    monkeypatch.setenv("LIB_MEMORY_LIMIT", "16GiB")


@pytest.mark.parametrize(
    "args, kwargs, name",
    [
        ((3000, 2, INF, 2, 0.1), {}, "d and tau"),  # 402 GiB asked of numpy before
        ((10, 2, 1e12, 2, 0.1), {}, "kappa"),  # 728 TiB of tasks
        ((10, 1e12, INF, 2, 0.1), {}, "alpha"),
        ((200, 2, INF, 2, 0.1), dict(method="dense"), "d and tau"),  # p^2 = 12 GiB, twice
    ],
)
def test_simulate_memory_guard(limit_16g, args, kwargs, name):
    err = raises_early(MemoryError, name, simulate, *args, with_rng=True, **kwargs)
    assert isinstance(err, MemoryLimitError) and isinstance(err, ValueError)
    assert "limit of 16 GiB" in str(err) and "LIB_MEMORY_LIMIT" in str(err)


def test_sampler_and_solver_memory_guards(limit_16g):
    raises_early(MemoryError, "n, ell and d", sample_contexts, 10**5, 100, 1000, None, with_rng=True)
    raises_early(MemoryError, "n and d", sample_features, 10**9, 100, 200, None, with_rng=True)
    raises_early(MemoryError, "kappa", sample_task_set, 10**4, 1e6, with_rng=True)
    raises_early(MemoryError, "n and d", samplers.sample_tokens, 10**10, 100, with_rng=True)
    X, F, y = np.full((10, 1000), 0.03), np.ones((10, 1001)), np.ones(10)
    err = raises_early(MemoryError, "queries and features", fit_gamma, X, F, y, lam=1.0, method="dense")
    assert "TiB" in str(err)  # 8 p^2 = 7.3 TiB for p = 10^6


def test_monte_carlo_test_contexts_cost_time_not_memory(limit_16g):
    """mc_error runs in batches: its memory does not grow with n_test, and the estimate of
    simulate does not either (it once failed only after pretraining)."""
    assert simulation.mc_peak_bytes(10**12, 100, 200) == simulation.mc_peak_bytes(10**5, 100, 200)
    big = simulation.simulate_peak_bytes(100, 200, None, 30_000, teacher="relu", n_test=10**12)
    assert big == simulation.simulate_peak_bytes(100, 200, None, 30_000, teacher="relu", n_test=10**5)
    gamma = np.zeros((5, 6))
    tracemalloc.start()
    try:
        m, se = mc_error(gamma, 10, None, "relu", 0.1, 60_000, rng=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # three batches of 20,000, never an n_test-long array of squared errors in memory twice
    assert peak < 20 * 2**20 and np.isfinite(m) and se > 0


def test_memory_limit_environment_variable(monkeypatch):
    monkeypatch.setenv("LIB_MEMORY_LIMIT", "1MiB")
    assert memory_limit() == 2**20
    err = raises_early(MemoryLimitError, "simulate", simulate, 40, 2, INF, 2, 0.1, with_rng=True)
    assert "limit of 1 MiB (set by $LIB_MEMORY_LIMIT)" in str(err)
    monkeypatch.setenv("LIB_MEMORY_LIMIT", "none")
    assert memory_limit() == INF
    monkeypatch.setenv("LIB_MEMORY_LIMIT", "lots")
    with pytest.raises(ValueError, match="LIB_MEMORY_LIMIT"):
        memory_limit()
    monkeypatch.delenv("LIB_MEMORY_LIMIT")
    assert 0 < memory_limit() < INF


def test_largest_real_jobs_fit_under_6_gib():
    """The project's largest jobs (scripts/make_finite_size.py: d = 300, 400, alpha = 2,
    tau = 3, 10^6 test contexts, matfree) are estimated below 6 GiB, so a machine with
    7.5 GiB available runs them under the default limit."""
    for d in (300, 400):
        for k in (None, round(1.5 * d)):
            est = simulation.simulate_peak_bytes(d, 2 * d, k, 3 * d * d, 0.0, "auto", "h2", 10**6)
            assert est < 6 * 2**30


@pytest.mark.parametrize(
    "d, kappa, tau, method",
    [(20, INF, 2.0, "auto"), (40, 1.5, 2.0, "dense"), (60, 1.5, 0.5, "auto"), (60, INF, 3.0, "auto")],
)
def test_memory_estimate_bounds_the_measured_peak(d, kappa, tau, method):
    """simulate_peak_bytes against tracemalloc (numpy's allocations) at small d: never
    below the measured peak and within a factor 2.5 of it (d = 200 matfree, measured
    by hand: 0.54 GiB traced, 0.61 GiB estimated)."""
    ell, n = 2 * d, round(tau * d * d)
    k = None if kappa == INF else round(kappa * d)
    est = simulation.simulate_peak_bytes(d, ell, k, n, 0.0, method)
    tracemalloc.start()
    try:
        simulate(d, 2, kappa, tau, 0.1, rng=0, method=method)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= est <= 2.5 * peak


# --------------------------------------------------------------------------------------
# 4. consistency of what is accepted
# --------------------------------------------------------------------------------------
def test_non_square_integrable_teacher_refused_everywhere():
    def f(z):
        return np.exp(z**2)

    raises_early(ValueError, "square-integrable", teachers.effective_noise, f, 0.1)
    err = raises_early(ValueError, "square-integrable", simulate, 5, 2, INF, 2, 0.1, teacher=f, n_test=100,
                       with_rng=True)
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


def test_link_names_accepted_by_every_function_taking_a_link():
    relu = get_link("relu")
    assert_allclose(coefficients("relu", 4), coefficients(relu, 4))
    assert_allclose(coefficients("ReLU", 4), [1 / np.sqrt(2 * np.pi), 0.5, 1 / (2 * np.sqrt(np.pi)), 0, coefficients(relu, 4)[4]])
    assert hermite.second_moment("relu") == relu.second_moment
    assert hermite.linear_coefficient("tanh") == hermite.linear_coefficient(get_link("tanh"))
    z = np.linspace(-2, 2, 5)
    assert_allclose(teachers.remainder("relu")(z), teachers.remainder(relu)(z))
    assert_allclose(hermite.partial_sum_errors("relu", 3), hermite.partial_sum_errors(relu, 3))
    assert teacher_moments("relu") == teacher_moments(relu)
    with pytest.raises(ValueError, match="relu"):  # the message lists the names
        coefficients("rleu", 4)


@pytest.mark.parametrize(
    "name, value, kwargs",
    [("alpha", 0.05, dict(alpha=0.05)), ("alpha", 0.04, dict(alpha=0.04)), ("kappa", 0.05, dict(kappa=0.05)),
     ("tau", 0.005, dict(tau=0.005))],
)
def test_at_least_hints_give_an_accepted_value(name, value, kwargs):
    params = dict(d=10, alpha=2.0, kappa=1.5, tau=2.0, rho=0.1)
    params.update(kwargs)
    err = raises_early(ValueError, name, simulate, **params, with_rng=True)
    hint = float(str(err).rsplit("=", 1)[1].split()[0])
    params[name] = hint
    r = simulate(**params, rng=0)  # the hinted value is accepted
    assert np.isfinite(r["icl"])
    with pytest.raises(ValueError, match="at least 1/d = 0.1"):
        sample_task_set(10, 0.05)
    assert sample_task_set(10, 0.1, rng=0).shape == (1, 10)


def test_dmmse_with_tiny_noise_is_finite():
    tasks = samplers.sample_tasks(5, 4, rng=0)
    ctx = sample_contexts(30, 4, 6, tasks, rho=0.1, rng=1)
    for rho in (1e-320, 5e-324, 1e-300):
        pred = dmmse_predict(ctx.X, ctx.y, ctx.x_query, tasks, rho=rho)
        assert np.all(np.isfinite(pred))
        assert_allclose(pred, dmmse_predict(ctx.X, ctx.y, ctx.x_query, tasks, rho=0.0))
