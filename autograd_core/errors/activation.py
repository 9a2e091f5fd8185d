"""Messages of the activation functions (nn.functional gelu, silu, softplus, leaky_relu
and their layers): PyTorch's kind of error and, where PyTorch has one, its sentence.

Raised from: nn/functional.py.
"""

from __future__ import annotations

from ._text import error


def gelu_approximate_type(value) -> TypeError:
    """gelu's ``approximate`` that is not a string (PyTorch's wording)."""
    return error(TypeError, "gelu(): argument 'approximate' must be str, not "
                 f"{type(value).__name__}.", "approximate='none' (the exact Φ, with erf) or "
                 "approximate='tanh'.")


def gelu_approximate(value: str) -> RuntimeError:
    """gelu's ``approximate`` string that is neither 'none' nor 'tanh'."""
    return error(RuntimeError, "approximate argument must be either none or tanh.",
                 f"got approximate={value!r}; use 'none' (the exact Φ, with erf) or 'tanh' "
                 "(lower case).")


def not_a_number(op: str, name: str, value) -> TypeError:
    """A number argument (softplus's beta, leaky_relu's negative_slope) given something
    else (PyTorch's wording)."""
    return error(TypeError, f"{op}(): argument '{name}' must be Number, not "
                 f"{type(value).__name__}.", f"pass a Python number, e.g. {name}=0.5.")


def not_floating(op: str, dtype) -> NotImplementedError:
    """An activation applied to integer or boolean data (PyTorch refuses it too)."""
    return error(NotImplementedError, f"{op}: not implemented for {dtype} input; it needs "
                 "floating point values.", "convert first, e.g. x.double() or x.float().")


def inplace_activation(op: str) -> NotImplementedError:
    """``inplace=True``: this engine records no in-place op."""
    return error(NotImplementedError, f"{op}: inplace=True is not supported: this engine "
                 "records no in-place op.", "drop inplace=True; the result has the same "
                 "values, in a new tensor.")
