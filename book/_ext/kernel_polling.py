"""A lost wake-up from the kernel costs at most a second, not a cell's whole timeout.

MyST-NB's inline execution and nbclient wait for each reply of the kernel through
``jupyter_client``'s asynchronous channels, whose ``get_msg(timeout)`` awaits a
single ``zmq.asyncio`` poll for the whole timeout (240 s per cell in this book).
ZeroMQ tells the event loop that a message has arrived through an edge-triggered
descriptor; on the rare occasion the loop misses that edge, pyzmq finds the waiting
message only when the poll times out (its timeout handler polls once more, without
waiting), and the cell returns, correct, after the full timeout. That is the stall
seen in this book's builds: about once in a few builds one chapter took 240 s longer
than usual (ch. 6 in 263.6 s instead of 22-48 s), with the kernel and the client
both idle.

:func:`install` replaces that single wait by polls of at most :data:`SLICE` seconds
until the same deadline, so a missed wake-up costs at most one slice. Nothing else
changes: the same timeout, the same ``queue.Empty`` when no message comes, the same
message otherwise. It is a Sphinx extension (listed in ``_config.yml``) for the book
build, and the test suite installs it for its own notebook runs
(``tests/conftest.py``).
"""

from __future__ import annotations

import time
from queue import Empty
from typing import Any

from jupyter_client.channels import AsyncZMQSocketChannel

#: The longest single poll, in seconds: the most a missed wake-up can delay a reply.
SLICE = 1.0

_ORIGINAL = AsyncZMQSocketChannel.get_msg


async def _get_msg_in_slices(
    self: AsyncZMQSocketChannel, timeout: float | None = None
) -> dict[str, Any]:
    """``get_msg`` with the wait cut into polls of at most :data:`SLICE` seconds."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        wait = (
            SLICE
            if deadline is None
            else min(SLICE, max(0.0, deadline - time.monotonic()))
        )
        if await self.socket.poll(int(wait * 1000)):
            return await self._recv()
        if deadline is not None and time.monotonic() >= deadline:
            raise Empty


def install() -> None:
    """Make every asynchronous kernel channel of this process poll in slices."""
    AsyncZMQSocketChannel.get_msg = _get_msg_in_slices  # type: ignore[method-assign]


def uninstall() -> None:
    """Restore ``jupyter_client``'s own ``get_msg`` (for tests)."""
    AsyncZMQSocketChannel.get_msg = _ORIGINAL  # type: ignore[method-assign]


def setup(app: Any) -> dict[str, Any]:
    """Sphinx entry point: install the sliced polls before any notebook executes."""
    install()
    return {"parallel_read_safe": True, "parallel_write_safe": True}
