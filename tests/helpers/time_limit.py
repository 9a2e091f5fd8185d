"""``at_most(seconds)``: fail a block that would hang (reading a named pipe, say) rather
than hang the test run. Uses SIGALRM: the main thread of a POSIX process, as pytest and
its xdist workers run tests."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def at_most(seconds: int) -> Iterator[None]:
    """Raise TimeoutError in the block if it takes longer than ``seconds``."""
    def expire(*_):
        raise TimeoutError(f"it did not finish within {seconds} s")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
