"""Tests for book/_ext/kernel_polling.py: a kernel's reply is awaited in short polls."""

import asyncio
import sys
from pathlib import Path
from queue import Empty

import pytest

pytest.importorskip("jupyter_client")  # not in the floors' environment (`make test-min`)
from jupyter_client.channels import AsyncZMQSocketChannel  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "book" / "_ext"))

import kernel_polling  # noqa: E402


class _Socket:
    """A socket whose message is seen only by the poll numbered ``ready_at`` (or never)."""

    def __init__(self, ready_at=None):
        self.ready_at = ready_at
        self.polls = []

    async def poll(self, timeout_ms):
        self.polls.append(timeout_ms)
        return int(self.ready_at is not None and len(self.polls) >= self.ready_at)


class _Channel:
    def __init__(self, socket):
        self.socket = socket

    async def _recv(self):
        return {"msg": "reply"}


def _get(channel, timeout):
    return asyncio.run(kernel_polling._get_msg_in_slices(channel, timeout))


def test_a_wait_is_cut_into_polls_of_at_most_a_slice_up_to_the_same_deadline(monkeypatch):
    # a poll that sees nothing returns at once here, so the deadline is reached by the
    # clock; a slice of 10 ms keeps the test short
    monkeypatch.setattr(kernel_polling, "SLICE", 0.01)
    socket = _Socket(ready_at=None)
    with pytest.raises(Empty):
        _get(_Channel(socket), 0.05)
    assert len(socket.polls) >= 5
    assert max(socket.polls) <= 10


def test_a_missed_wake_up_is_caught_by_the_next_slice():
    # the first poll misses the message (as when the loop misses ZeroMQ's edge); the
    # second, at most one slice later, returns it
    socket = _Socket(ready_at=2)
    assert _get(_Channel(socket), 240) == {"msg": "reply"}
    assert socket.polls[0] <= 1000 * kernel_polling.SLICE
    assert len(socket.polls) == 2


def test_no_timeout_waits_in_slices_too():
    socket = _Socket(ready_at=3)
    assert _get(_Channel(socket), None) == {"msg": "reply"}
    assert socket.polls == [1000, 1000, 1000]


def test_a_zero_timeout_polls_once_without_waiting():
    socket = _Socket(ready_at=None)
    with pytest.raises(Empty):
        _get(_Channel(socket), 0)
    assert socket.polls == [0]


def test_install_and_uninstall_swap_jupyter_clients_get_msg():
    before = AsyncZMQSocketChannel.get_msg
    try:
        kernel_polling.install()
        assert AsyncZMQSocketChannel.get_msg is kernel_polling._get_msg_in_slices
    finally:
        kernel_polling.uninstall()
    assert AsyncZMQSocketChannel.get_msg is kernel_polling._ORIGINAL
    if before is kernel_polling._get_msg_in_slices:  # the suite installs it (conftest)
        kernel_polling.install()


def test_the_book_build_the_grader_and_the_test_suite_install_it():
    config = (ROOT / "_config.yml").read_text()
    assert "kernel_polling: book/_ext" in config
    assert "kernel_polling.install()" in (ROOT / "scripts" / "grade_labs.py").read_text()
    assert AsyncZMQSocketChannel.get_msg is kernel_polling._get_msg_in_slices


def test_a_real_kernel_answers_through_the_sliced_channel():
    nbformat = pytest.importorskip("nbformat")
    NotebookClient = pytest.importorskip("nbclient").NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("print(6 * 7)")]
    NotebookClient(nb, timeout=60, kernel_name="python3").execute()
    assert nb.cells[0].outputs[0]["text"].strip() == "42"
