"""Tests of lib._checks."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import raises_early
from numpy.testing import assert_allclose

from lib._checks import PARAMETERS, MemoryLimitError, check_param, check_vectorized, memory_limit, scalar_or_array
from lib.simulation import simulate

INF = np.inf


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


# --------------------------------------------------------------------------------------
# calling a user's function, and the declared parameter ranges
# --------------------------------------------------------------------------------------


def test_check_vectorized_returns_a_float_copy():
    z = np.linspace(-1.0, 1.0, 5)
    out = check_vectorized("f", lambda t: t, z)
    assert out.dtype == float and not np.may_share_memory(out, z)
    assert_allclose(out, z)
    assert check_vectorized("f", lambda t: t > 0, z).tolist() == [0.0, 0.0, 0.0, 1.0, 1.0]


@pytest.mark.parametrize(
    ("f", "exc", "match"),
    [
        (lambda t: 1.0, ValueError, r"^g must return an array of the same shape"),
        (lambda t: t + 1j, ValueError, r"^g must return real numbers"),
        (lambda t: t / 0.0, ValueError, r"^g returned non-finite values"),
        (lambda t: t.nope, RuntimeError, r"^g must be a vectorized function"),
    ],
)
def test_check_vectorized_names_the_argument(f, exc, match):
    with np.errstate(divide="ignore", invalid="ignore"):
        with pytest.raises(exc, match=match):
            check_vectorized("g", f, np.linspace(-1.0, 1.0, 5), call_error=RuntimeError)


def test_user_call_reports_a_failing_call_and_silences_warnings_when_quiet():
    # the context as_link makes its one call of a teacher in: it gets the callee's repr,
    # not the callee, and only reports; the call and its result stay with the caller
    import warnings

    from lib._checks import check_returned, user_call

    z = np.linspace(-1.0, 1.0, 5)
    with pytest.raises(
        TypeError, match=r"^g must be a vectorized function.*calling <f> on an array of shape \(5,\) raised"
    ):
        with user_call("g", z, callee="<f>", call_error=TypeError):
            z.nope  # noqa: B018
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with user_call("g", z, quiet=True):
            out = z / 0.0  # no RuntimeWarning escapes
    with pytest.warns(RuntimeWarning):  # not quiet: the warning is the caller's
        with np.errstate(divide="warn"), user_call("g", z):
            np.float64(1.0) / 0.0
    assert np.isinf(out).sum() == 4
    assert check_returned("g", out, z, check_finite=False).shape == (5,)
    with pytest.raises(ValueError, match=r"^g returned non-finite values"):
        check_returned("g", out, z)


def test_check_param_uses_the_declared_ranges():
    assert check_param("kappa", np.inf, scalar=True) == np.inf
    assert check_param("rho", 0.0, scalar=True) == 0.0
    with pytest.raises(ValueError, match="alpha"):
        check_param("alpha", 0.0)
    with pytest.raises(ValueError, match="tau"):
        check_param("tau", np.inf)
    with pytest.raises(TypeError, match="lam"):
        check_param("lam", [0.1, 0.2], scalar=True)
    assert set(PARAMETERS) >= {"alpha", "kappa", "tau", "rho", "lam"}


def test_scalar_or_array():
    assert isinstance(scalar_or_array(np.float64(2.0)), float)
    assert scalar_or_array([1, 2]).dtype == float


# --- issue 19, item 5: the guard's limit is the process's, not only the machine's -------
_RLIMIT_SCRIPT = """
import resource
resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, resource.RLIM_INFINITY))
import lib
from lib._checks import MemoryLimitError
for call in (
    lambda: lib.sample_features(4 * 10**7, 20, 10, None),
    lambda: lib.baseline_errors(10, 2.0, None, 0.1, n_test=2 * 10**9, rng=0),
):
    try:
        call()
    except MemoryLimitError as exc:
        assert "ulimit -v" in str(exc), exc
    else:
        raise SystemExit("no MemoryLimitError")
print("ok")
"""


def test_memory_guard_uses_the_address_space_limit():
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "LIB_MEMORY_LIMIT"}
    out = subprocess.run([sys.executable, "-c", _RLIMIT_SCRIPT], capture_output=True, text=True, env=env)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_memory_guard_uses_the_cgroup_limit(monkeypatch):
    from lib import _limits as _checks

    files = {
        "/sys/fs/cgroup/memory.max": 4 * 2**30,
        "/sys/fs/cgroup/memory.current": 3 * 2**30,
        "/sys/fs/cgroup/memory/memory.limit_in_bytes": 2.0**63,  # v1: no limit
    }
    monkeypatch.delenv("LIB_MEMORY_LIMIT", raising=False)
    monkeypatch.setattr(_checks, "_read_number", lambda path: files.get(path))
    monkeypatch.setattr(_checks, "_machine_available_bytes", lambda: 64.0 * 2**30)
    assert _checks._cgroup_free_bytes() == 2**30
    assert memory_limit() == pytest.approx(0.8 * 2**30)
    files["/sys/fs/cgroup/memory.max"] = float("inf")  # "max": no v2 limit either
    assert _checks._cgroup_free_bytes() == float("inf")


def test_progress_reports_only_long_loops():
    import io

    from lib._checks import Progress

    quiet, loud = io.StringIO(), io.StringIO()
    short = Progress("short()", 10, after=1e9, stream=quiet)
    long = Progress("long()", 10, after=0.0, every=0.0, stream=loud)
    for done in range(1, 10):
        short.update(done)
        long.update(done)
    assert quiet.getvalue() == ""
    lines = loud.getvalue().splitlines()
    assert lines[0].startswith("long(): estimated time") and "% done" in lines[-1]
