"""Recording on or off: ``no_grad`` and ``enable_grad``.

While recording is on (the default), every op whose inputs require grad records a
node and keeps the tensors its backward will read. Under ``no_grad()`` nothing is
recorded and nothing is saved, so intermediates are freed as soon as Python drops
them: that is what an inference-only forward pass is.
"""

from __future__ import annotations

import functools
import threading


class _State(threading.local):
    enabled = True


state = _State()


def is_grad_enabled() -> bool:
    """Whether ops record nodes right now."""
    return state.enabled


class _GradMode:
    _mode: bool

    def __enter__(self):
        self._previous = state.enabled
        state.enabled = self._mode
        return self

    def __exit__(self, *exc) -> None:
        state.enabled = self._previous

    def __call__(self, fn):
        """Use as a decorator: ``@no_grad()`` runs the whole function in this mode."""

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradMode):
    """Context manager and decorator that turns recording off.

    >>> with no_grad():
    ...     y = model(x)        # no nodes, no saved tensors
    """

    _mode = False


class enable_grad(_GradMode):
    """Context manager and decorator that turns recording back on inside ``no_grad``."""

    _mode = True
