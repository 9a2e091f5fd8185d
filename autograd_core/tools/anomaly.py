"""Anomaly detection: from a NaN in backward to the forward line that caused it.

A NaN or an inf in a gradient shows up far from where it was made: the reverse
sweep runs long after the forward line whose op produced it. Inside
``detect_anomaly()``:

* every node recorded keeps the traceback of the forward call that created it
  (``Node.trace``), trimmed to *your* frames: those of the engine, the standard
  library and installed packages (Jupyter, pytest) are left out;
* after each backward rule, its gradients are checked; the first non-finite one
  raises a ``RuntimeError`` with PyTorch's wording, "Function 'SqrtBackward'
  returned nan values in its 0th output.", followed by that traceback and a hint.

It costs a traceback per op and a check per gradient, so use it to hunt a bug, not
to train. (``autograd_core.autograd.detect_anomaly`` is the same object, as in PyTorch.)

>>> import autograd_core as ag
>>> x = ag.tensor([0.0, 1.0], requires_grad=True)
>>> with detect_anomaly():                      # doctest: +SKIP
...     x.sqrt().sum().backward()
RuntimeError: Function 'SqrtBackward' returned inf values in its 0th output. ...
"""

from __future__ import annotations

import os
import sysconfig
import traceback

import numpy as np

from .. import errors
from ..recording.node import Observer, observing
from ..recording.source import ENGINE_DIRECTORY

__all__ = ["detect_anomaly", "user_frames"]

_LIBRARY_DIRS = tuple(
    os.path.abspath(p) + os.sep
    for p in {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
)
MAX_FRAMES = 4


def _is_user_file(filename: str) -> bool:
    path = os.path.abspath(filename)
    if path.startswith(ENGINE_DIRECTORY):
        return False
    # <ipython-input-...>, <stdin> and notebook cells are user code; frozen modules are not
    if filename.startswith("<frozen"):
        return False
    return not path.startswith(_LIBRARY_DIRS)


def user_frames(limit: int = MAX_FRAMES) -> traceback.StackSummary:
    """The innermost ``limit`` frames of the current stack that are the user's code."""
    frames = [f for f in traceback.extract_stack()[:-1] if _is_user_file(f.filename)]
    return traceback.StackSummary.from_list(frames[-limit:])


class detect_anomaly(Observer):
    """Context manager (and decorator) that records each node's forward traceback and
    raises at the first backward rule that returns a NaN or an inf.

    ``check_nan=False`` keeps the tracebacks but skips the check (as in PyTorch).
    """

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        self._registrations: list = []

    def __enter__(self) -> detect_anomaly:
        registration = observing(self)
        registration.__enter__()
        self._registrations.append(registration)
        return self

    def __exit__(self, *exc) -> None:
        self._registrations.pop().__exit__(*exc)

    def __call__(self, fn):
        """Use as a decorator: the whole function runs in anomaly mode."""

        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        wrapper.__name__, wrapper.__doc__ = fn.__name__, fn.__doc__
        return wrapper

    def on_forward(self, op, node, arrays, out, params) -> None:
        if node is not None:
            node.trace = user_frames()

    def on_backward(self, node, grad_output, grads) -> None:
        if not self.check_nan:
            return
        for index, grad in enumerate(grads):
            kind = _non_finite_kind(grad)
            if kind is not None:
                trace = node.trace.format() if node.trace else []
                raise errors.anomaly(backward_name(node.op), node.op.name, kind, index,
                                     node.module, trace)


def backward_name(op) -> str:
    """PyTorch-style name of an op's backward: ``Sqrt`` -> ``"SqrtBackward"``."""
    return f"{op.__name__}Backward"


def _non_finite_kind(grad) -> str | None:
    """"nan" or "inf" if the gradient has such values, else None."""
    if grad is None:
        return None
    a = np.asarray(grad)
    if a.dtype.kind not in "fc" or np.isfinite(a).all():
        return None
    return "nan" if np.isnan(a).any() else "inf"
