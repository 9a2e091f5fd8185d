"""Recording on or off: ``no_grad`` and ``enable_grad``.

While recording is on (the default), every op whose inputs require grad records a
node and keeps the tensors its backward will read. Under ``no_grad()`` nothing is
recorded and nothing is saved, so intermediates are freed as soon as Python drops
them: that is what an inference-only forward pass is.
"""

from __future__ import annotations

import functools
import inspect
import threading

from .. import errors


class _State(threading.local):
    enabled = True


state = _State()


def is_grad_enabled() -> bool:
    """Whether ops record nodes right now."""
    return state.enabled


class _GradMode:
    _mode: bool

    def __new__(cls, orig_func=None):
        """``no_grad()`` is a context manager (and, called on a function, a decorator);
        ``@no_grad`` without parentheses decorates the function directly, as in
        PyTorch."""
        if orig_func is None:
            return super().__new__(cls)
        if not callable(orig_func):
            raise errors.grad_mode_argument(cls.__name__, orig_func)
        return cls()(orig_func)

    def __enter__(self):
        self._previous = state.enabled
        state.enabled = self._mode
        return self

    def __exit__(self, *exc) -> None:
        state.enabled = self._previous

    def __call__(self, fn):
        """Use as a decorator: ``@no_grad()`` runs the whole function in this mode; for
        a generator function, every stretch of its body between two ``yield``s (as
        PyTorch does: the caller's own mode is back while the generator is paused)."""
        if inspect.isgeneratorfunction(fn):
            return _each_resumption(self.__class__, fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper


def _each_resumption(mode, fn):
    """Wrap generator function ``fn`` so that its body runs under ``mode()`` each time
    it resumes (``next``, ``send``, ``throw``, ``close``) and nowhere else."""

    @functools.wraps(fn)
    def generator(*args, **kwargs):
        gen = fn(*args, **kwargs)
        resume, value = gen.send, None
        while True:
            with mode():
                try:
                    response = resume(value)
                except StopIteration as stop:
                    return stop.value
            try:
                value, resume = (yield response), gen.send
            except GeneratorExit:
                with mode():
                    gen.close()
                raise
            except BaseException as exc:  # thrown in by the caller: pass it on
                value, resume = exc, gen.throw

    return generator


class no_grad(_GradMode):
    """Context manager and decorator that turns recording off.

    >>> with no_grad():
    ...     y = model(x)        # no nodes, no saved tensors
    """

    _mode = False


class enable_grad(_GradMode):
    """Context manager and decorator that turns recording back on inside ``no_grad``."""

    _mode = True
