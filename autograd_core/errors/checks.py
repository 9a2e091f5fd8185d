"""Messages of the debugging tools (tools/gradcheck.py, tools/anomaly.py's
detect_anomaly): what went wrong in a backward rule, and where.

Raised from: autograd/__init__.py, tools/anomaly.py, tools/gradcheck.py.
"""

from __future__ import annotations

import numpy as np

from ._text import error


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck`` when analytic and numeric gradients disagree (a
    ``RuntimeError``, as PyTorch's is, so ``except RuntimeError`` catches it)."""


def gradcheck_nothing() -> ValueError:
    """gradcheck over inputs none of which requires grad."""
    return error(ValueError, "gradcheck: no input requires grad, so there is nothing to "
                 "check.", "pass tensors created with requires_grad=True.")


def gradcheck_dtype(index: int, dtype) -> UserWarning:
    """gradcheck over an input in less than double precision (a warning, as in PyTorch:
    the check still runs, and will likely fail)."""
    return error(UserWarning, f"gradcheck: Input #{index} requires gradient and is not a "
                 f"double precision floating point (it is {dtype}). This check will likely "
                 "fail: finite differences are too inaccurate in lower precision.",
                 "convert with tensor(data, dtype=float64).")


def gradcheck_mismatch(output: int, wrt: int, element: tuple, row: int, analytic: float,
                       numeric: float, low_precision: dict | None = None) -> GradcheckError:
    """The worst element where the engine's Jacobian and finite differences disagree:
    output ``output``'s element ``row`` against input ``wrt``'s element ``element``.
    ``low_precision`` ({input index: dtype} of checked inputs that are not float64)
    names precision as the likely cause instead of a wrong rule."""
    if low_precision:
        named = ", ".join(f"input {i} is {np.dtype(d).name}" for i, d in low_precision.items())
        hint = (f"the likely cause is precision, not a wrong rule: {named}, and finite "
                "differences in less than float64 lose most of their digits to rounding. "
                "Check again with float64 inputs, e.g. "
                "tensor(data, dtype='float64', requires_grad=True).")
    else:
        hint = "a backward rule is wrong for this op or input."
    return error(GradcheckError, f"Jacobian mismatch for output {output} with respect to input "
                 f"{wrt}, at input index {element} (output element {row}):\n"
                 f"  analytic (engine) = {analytic:.10g}\n  numeric (finite diff) = "
                 f"{numeric:.10g}", hint)


_ANOMALY_HINTS = {
    "sqrt": "sqrt has an infinite slope at 0 (its backward divides by 2*sqrt(a)); keep the "
            "input away from 0, e.g. sqrt(x + 1e-12).",
    "log": "log's backward divides by its input, so a 0 (or tiny) input gives inf; clamp it, "
           "e.g. log(x.clamp(min=1e-12)), or use log_softmax instead of log(softmax(x)).",
    "div": "a division's backward divides by the denominator (squared for the denominator's "
           "own gradient), so a denominator near 0 gives inf; add a small epsilon to it.",
    "pow": "a**b with b < 1 has an infinite slope at a = 0, and log(a) (for b's gradient) is "
           "undefined for a <= 0; keep the base positive.",
}
_ANOMALY_HINT = ("look at the values this op received on the forward line above: a NaN in "
                 "backward usually comes from inf * 0 or 0 / 0 in its rule, an inf from a "
                 "division by a value near 0 or an overflowing exp.")


def anomaly(backward_name: str, op: str, kind: str, index: int, module,
            trace_lines: list[str]) -> RuntimeError:
    """A backward rule returned NaN or inf under detect_anomaly(). ``trace_lines``: the
    formatted frames of the forward call that created the node."""
    where = f"The op {op!r}" + (f" (in module {module!r})" if module else "")
    if trace_lines:
        origin = (f"{where} was created by this forward call (innermost last):\n"
                  + "".join(trace_lines).rstrip("\n"))
    else:
        origin = (f"{where} was created before anomaly detection was on, so its forward "
                  "line is unknown.")
    return error(RuntimeError, f"Function '{backward_name}' returned {kind} values in its "
                 f"{index}th output.\n{origin}", _ANOMALY_HINTS.get(op, _ANOMALY_HINT))
