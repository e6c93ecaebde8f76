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


def test_a_teacher_that_writes_into_its_input_is_refused_and_the_probe_grid_kept():
    # as_link probes a callable on the shared PROBE_GRID: a teacher that doubled z in place
    # doubled the grid for every later probe of the process (the audit saw "f(z) = -inf at
    # z = -72" where the grid ends at 36). The input is read-only during the call now
    from lib.quadrature import PROBE_GRID
    from lib.teachers import as_link

    grid = PROBE_GRID.copy()

    def doubles_in_place(z):
        z *= 2.0
        return z

    with pytest.raises(ValueError, match=r"^teacher: f must be a vectorized .*read-only \(it writes into its input"):
        as_link(doubles_in_place)
    np.testing.assert_array_equal(PROBE_GRID, grid)
    assert PROBE_GRID.flags.writeable  # given back as it was
    z = np.linspace(-1.0, 1.0, 5)
    with pytest.raises(RuntimeError, match=r"writes into its input"):
        check_vectorized("g", lambda v: np.maximum(v, 0.0, out=v), z, call_error=RuntimeError)
    assert z.flags.writeable and z[0] == -1.0


def test_user_call_cuts_a_long_name_and_checks_its_error_class():
    from lib._checks import user_call
    from lib._usercall import MAX_CALLEE, callee_name

    class HugeRepr:
        def __repr__(self):
            return "R" * 10**6

    class BadRepr:
        def __repr__(self):
            raise RuntimeError("repr broke")

    z = np.zeros(3)
    with pytest.raises(ValueError) as info:  # the message carried the whole megabyte before
        with user_call("g", z, callee="R" * 10**6):
            raise KeyError("x")
    assert len(str(info.value)) < MAX_CALLEE + 200
    assert len(callee_name(HugeRepr())) <= MAX_CALLEE
    assert callee_name(BadRepr()) == "<BadRepr object (its repr raised)>"
    with pytest.raises(ValueError, match=r"calling <BadRepr object \(its repr raised\)> on an array"):
        check_vectorized("g", type("BadRepr", (BadRepr,), {"__call__": lambda self, v: 1 / 0})(), z)
    for bad in ("x", BaseException, None):
        with pytest.raises(TypeError, match=r"^user_call: call_error must be an Exception class"):
            with user_call("g", z, call_error=bad):
                pass
    with pytest.raises(KeyboardInterrupt):  # not a failure of the function: passed on as it is
        with user_call("g", z):
            raise KeyboardInterrupt


@pytest.mark.parametrize(
    "out, match",
    [  # each came back as numbers before: the masked entries' hidden values, time deltas
        # as integers; a ragged list raised numpy's own message without the argument
        (np.ma.masked_array(np.arange(5.0), mask=[0, 1, 0, 0, 0]), r"^g returned a masked array with masked"),
        (np.arange(5).astype("timedelta64[s]"), r"^g must return real numbers; it returned dtype timedelta64"),
        ([[1.0], [1.0, 2.0], 3, 4, 5], r"^g must return an array of real numbers; np.asarray of its result failed"),
    ],
)
def test_check_returned_refuses_what_is_not_plain_numbers(out, match):
    from lib._checks import check_returned

    with pytest.raises(ValueError, match=match):
        check_returned("g", out, np.zeros(5))
    assert check_returned("g", np.ma.masked_array(np.arange(5.0)), np.zeros(5)).tolist() == [0, 1, 2, 3, 4]


def test_check_real_takes_a_python_integer_beyond_int64():
    from lib._checks import check_scalar

    assert check_scalar("alpha", 10**30) == 1e30  # "got 10**30 (dtype object)" before
    with pytest.raises(ValueError, match=r"^alpha must be finite; got an integer of 401 digits"):
        check_scalar("alpha", 10**400)


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
