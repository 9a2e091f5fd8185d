"""Messages of layer norm and RMS norm (ops/layer_norm.py, their functions in
nn/functional.py and the modules nn.LayerNorm, nn.RMSNorm). Each starts with PyTorch's
sentence for the same mistake; shapes are written as PyTorch writes them, ``[2, 3]``.

Raised from: nn/functional.py, nn/layers.py.
"""

from __future__ import annotations

import numpy as np

from ._text import error, size_text

_TRAILING = ("normalized_shape names the input's last dims, e.g. (768,) for an input "
             "(batch, tokens, 768): the statistics are taken over those dims of each row.")


def normalized_shape_type(op: str, value) -> TypeError:
    """normalized_shape given as something that is not a tuple (or list) of ints."""
    if isinstance(value, tuple | list):
        bad = next(i for i, v in enumerate(value) if not _is_int(v))
        message = (f"{op}(): argument 'normalized_shape' (position 2) must be tuple of ints, "
                   f"but found element of type {type(value[bad]).__name__} at pos {bad}.")
    else:
        message = (f"{op}(): argument 'normalized_shape' (position 2) must be tuple of ints, "
                   f"not {type(value).__name__}.")
    hint = "write the trailing dims as a tuple, e.g. (4,) for the last dim of size 4"
    if _is_int(value):
        hint += f": {op}(x, ({value},)). The module nn.{_module(op)}({value}) takes an int"
    return error(TypeError, message, hint + ".")


def normalized_shape_empty() -> RuntimeError:
    """normalized_shape = (): no dims to normalise over."""
    return error(RuntimeError, "Expected normalized_shape to be at least 1-dimensional, i.e., "
                 "containing at least one element, but got normalized_shape = [].", _TRAILING)


def normalized_shape_mismatch(normalized_shape, input_shape) -> RuntimeError:
    """The input's trailing dims are not normalized_shape."""
    dims = ", ".join(str(d) for d in normalized_shape)
    k, ndim = len(normalized_shape), len(input_shape)
    if k > ndim:
        here = f"Here the input has {ndim} dims, fewer than the {k} to normalise."
    elif k == 1:
        here = f"Here the input's last dim is {input_shape[-1]}."
    else:
        here = f"Here the input's last {k} dims are {size_text(input_shape[ndim - k:])}."
    return error(RuntimeError, f"Given normalized_shape={size_text(normalized_shape)}, expected "
                 f"input with shape [*, {dims}], but got input of size{size_text(input_shape)}.",
                 f"{_TRAILING} {here}")


def rms_norm_rank(dims: int, ndim: int) -> ValueError:
    """rms_norm with more normalised dims than the input has (PyTorch: a ValueError)."""
    return error(ValueError, f"Input tensor must have at least {dims} dimensions, but got "
                 f"{ndim}.", _TRAILING)


def norm_affine_shape(name: str, shape, normalized_shape) -> RuntimeError:
    """A weight or bias whose shape is not normalized_shape."""
    return error(RuntimeError, f"Expected {name} to be of same shape as normalized_shape, but "
                 f"got {name} of shape {size_text(shape)} and normalized_shape = "
                 f"{size_text(normalized_shape)}.",
                 f"{name} holds one value per element of a row: its shape is normalized_shape, "
                 f"here {tuple(normalized_shape)}.")


def norm_eps_type(op: str, position: int, value, optional: bool) -> TypeError:
    """eps that is not a number (rms_norm's may also be None: PyTorch's sentence does not
    say so, the hint does)."""
    return error(TypeError, f"{op}(): argument 'eps' (position {position}) must be float, "
                 f"not {type(value).__name__}.", "eps is a small positive number added "
                 "under the square root, e.g. eps=1e-5" + (" (None: the dtype's machine epsilon)."
                                                  if optional else "."))


def _is_int(v) -> bool:
    return isinstance(v, int | np.integer) and not isinstance(v, bool)


def _module(op: str) -> str:
    return "LayerNorm" if op == "layer_norm" else "RMSNorm"


def norm_module_shape(module: str, value) -> Exception:
    """nn.LayerNorm / nn.RMSNorm given a normalized_shape that is not an int or a tuple of
    ints (a TypeError, as PyTorch's), or one with a negative size (a RuntimeError)."""
    example = f"e.g. nn.{module}(768) or nn.{module}((3, 4)) for the last dims of the input."
    if isinstance(value, tuple) and all(_is_int(v) for v in value):
        return error(RuntimeError, f"Trying to create tensor with negative dimension "
                     f"{min(value)}: {size_text(value)}.", "normalized_shape holds the sizes "
                     f"of the input's last dims, each 0 or more: {example}")
    return error(TypeError, f"{module}: normalized_shape must be an int or a tuple of ints, "
                 f"not {type(value).__name__}.", example)
