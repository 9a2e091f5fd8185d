"""Messages of einsum (ops/einsum.py and its wrapper in ops/api.py): PyTorch's kind
of error and, for each mistake in an equation, PyTorch's sentence, then a hint.

Raised from: ops/api.py, ops/einsum.py.
"""

from __future__ import annotations

from ._text import error, shape_text

_EXAMPLE = "e.g. einsum('ij,jk->ik', a, b)"


def einsum_no_operands() -> ValueError:
    """einsum with an equation and nothing to apply it to (PyTorch's wording)."""
    return error(ValueError, "einsum(): must specify the equation string and at least one "
                 "operand, or at least one operand and its subscripts list.",
                 f"pass the operands after the equation, {_EXAMPLE}, or as one list.")


def einsum_equation_type(value) -> TypeError:
    """An equation that is not a string (PyTorch's wording); the sublist form too."""
    return error(TypeError, "einsum(): argument 'equation' (position 1) must be str, not "
                 f"{type(value).__name__}.", f"the equation comes first, as a string, {_EXAMPLE} "
                 "(the sublist form einsum(a, [0, 1], b, [1, 2]) is not supported).")


def einsum_operand_type(index: int, value) -> TypeError:
    """An operand that is not a tensor (PyTorch's wording; a NumPy array is fine here)."""
    return error(TypeError, f"einsum(): expected Tensor as element {index} in argument 1, but "
                 f"got {type(value).__name__}.", "wrap it first: ag.tensor(value).")


def einsum_subscript(index: int, char: str) -> RuntimeError:
    """A character of the equation that is neither a letter nor part of , -> ... or space."""
    return error(RuntimeError, f"einsum(): invalid subscript given at index {index} in the "
                 "equation string, subscripts must be in [a-zA-Z].",
                 f"{char!r} is not a subscript; name each dim by one letter, separate the "
                 "operands by commas, put '->' once before the output and '...' for "
                 "broadcast dims.")


def einsum_ellipsis(operand: int | None, again: bool) -> RuntimeError:
    """A '.' that is not part of '...', or a second '...' in one operand (``operand``
    None: in the output). PyTorch's wording."""
    where = "output" if operand is None else f"operand {operand}"
    if again:
        message = (f"einsum(): found '.' for {where} for which an ellipsis was already found."
                   if operand is not None else
                   "einsum(): found '.' for output but an ellipsis (...) was already found.")
    else:
        message = (f"einsum(): found '.' for {where} that is not part of any ellipsis"
                   + (" (...)." if operand is None else "."))
    return error(RuntimeError, message, "write an ellipsis as three dots, '...', at most once "
                 "per operand and once in the output.")


def einsum_operand_count(more: bool, named: int, given: int) -> RuntimeError:
    """More or fewer operands than the equation has comma-separated terms (PyTorch's
    wording)."""
    return error(RuntimeError, f"einsum(): {'more' if more else 'fewer'} operands were "
                 "provided than specified in the equation.", f"the equation names {named} "
                 f"operand(s), one per comma-separated term, and {given} were given.")


def einsum_subscript_count(count: int, shape: tuple, operand: int, ellipsis: bool
                           ) -> RuntimeError:
    """An operand whose subscripts do not fit its number of dims (PyTorch's wording)."""
    ndim = len(shape)
    if ellipsis:
        message = (f"einsum(): the number of subscripts in the equation ({count}) is more "
                   f"than the number of dimensions ({ndim}) for operand {operand}.")
    else:
        message = (f"einsum(): the number of subscripts in the equation ({count}) does not "
                   f"match the number of dimensions ({ndim}) for operand {operand} and no "
                   "ellipsis was given.")
    return error(RuntimeError, message, f"operand {operand} has shape {shape_text(shape)}: give "
                 "it one letter per dim, or '...' for the dims you do not name.")


def einsum_output_subscript(label: str, repeated: bool) -> RuntimeError:
    """An output subscript named twice, or that no input has (PyTorch's wording)."""
    if repeated:
        return error(RuntimeError, f"einsum(): output subscript {label} appears more than once "
                     "in the output.", "each output dim is named once; a repeated input "
                     "subscript ('ii->i') takes a diagonal.")
    return error(RuntimeError, f"einsum(): output subscript {label} does not appear in the "
                 "equation for any input operand.", "the output can only keep subscripts of "
                 "the inputs (to add a dim, unsqueeze or expand the result).")


def einsum_repeated_size(label: str, operand: int, size: int, first: int) -> RuntimeError:
    """A subscript repeated within one operand ('ii') over dims of different sizes."""
    return error(RuntimeError, f"einsum(): subscript {label} is repeated for operand {operand} "
                 f"but the sizes don't match, {size} != {first}.", "a repeated subscript "
                 "takes a diagonal, which needs dims of the same size.")


def einsum_size(label: str, size: int, operand: int, seen: int) -> RuntimeError:
    """A subscript whose size differs between operands, neither size 1."""
    return error(RuntimeError, f"einsum(): subscript {label} has size {size} for operand "
                 f"{operand} which does not broadcast with previously seen size {seen}.",
                 "a subscript names the same dim in every operand: its sizes must be equal, "
                 "or 1 (which broadcasts).")


def einsum_ellipsis_size(dim: int, operand: int, size: int, seen: int) -> RuntimeError:
    """Dims under '...' that do not broadcast between operands (PyTorch's wording)."""
    return error(RuntimeError, f"einsum(): dimension {dim} covered by ellipsis in operand "
                 f"{operand} has size {size} which does not broadcast with previously seen "
                 f"ellipsis with size {seen} for the respective dimension.", "the dims under "
                 "'...' broadcast as in a + b: compared from the right, each pair equal or 1.")


def einsum_letters(needed: int) -> RuntimeError:
    """An equation (with its ellipsis dims, or its gradient's diagonals) needing more
    subscripts than there are letters."""
    return error(RuntimeError, f"einsum: this equation needs {needed} distinct subscripts, more "
                 "than the 52 letters a-z and A-Z.", "name fewer dims, e.g. reshape several "
                 "dims into one first.")
