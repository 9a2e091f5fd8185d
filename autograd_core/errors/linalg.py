"""Messages of linear algebra: det, inv, solve, slogdet and trace (ops/linalg.py and its
wrappers in autograd_core/linalg.py and ops/api.py). Each starts with PyTorch's sentence
for the same mistake where PyTorch has one.

Raised from: linalg.py, ops/api.py, ops/linalg.py.
"""

from __future__ import annotations

from ._text import error, shape_text

# How PyTorch's messages name a dtype.
_TORCH_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                "uint8": "Byte", "bool": "Bool", "float16": "Half"}


def linalg_too_few_dims(op: str, shape: tuple) -> RuntimeError:
    """A matrix function given something with fewer than two dims."""
    return error(RuntimeError, f"linalg.{op}: The input tensor A must have at least 2 "
                 f"dimensions (it has shape {shape_text(shape)}).",
                 "a matrix has two dims, rows and columns; a batch of matrices has more. "
                 "A vector v becomes a one-row matrix with v.reshape(1, -1).")


def linalg_not_square(op: str, shape: tuple) -> RuntimeError:
    """A matrix function that needs square matrices given rectangular ones."""
    rows, columns = shape[-2], shape[-1]
    return error(RuntimeError, f"linalg.{op}: A must be batches of square matrices, but "
                 f"they are {rows} by {columns} matrices.",
                 f"{op} is defined for square matrices only (as many rows as columns); for "
                 "a rectangular A, AᵀA is square.")


def linalg_dtype(op: str, dtype) -> RuntimeError | NotImplementedError:
    """A matrix function given integers, booleans or float16: NumPy's linear algebra (and
    PyTorch's CPU kernels) work in float32 and float64 only."""
    name = str(dtype)
    if name == "float16":
        return error(NotImplementedError, f"linalg.{op}: float16 is not supported: the "
                     "factorisations behind it (LU) run in float32 or float64 only, here and "
                     "in PyTorch's CPU kernels.", "convert first: A.float() or A.double().")
    return error(RuntimeError, f"linalg.{op}: Expected a floating point or complex tensor as "
                 f"input. Got {_TORCH_NAMES.get(name, name)}.",
                 "convert first: A.double() (or A.float()).")


def linalg_dtypes_differ(op: str, a_dtype, b_dtype) -> RuntimeError:
    """solve given A and B of different dtypes (PyTorch refuses too)."""
    return error(RuntimeError, f"linalg.{op}: Expected A and B to have the same dtype, but "
                 f"found A of type {a_dtype} and B of type {b_dtype} instead.",
                 "convert one of them: B.to(A.dtype).")


def singular(op: str) -> RuntimeError:
    """inv or solve of a singular matrix, or the gradient of det or slogdet at one (which
    needs A⁻¹)."""
    return error(RuntimeError, f"linalg.{op}: the input matrix is singular (its determinant "
                 "is 0), so it has no inverse. The gradients of det and slogdet need that "
                 "inverse too: det(A) A⁻ᵀ and A⁻ᵀ.",
                 "check A's rank (a repeated or zero row makes it singular); to keep a "
                 "matrix invertible while training, add a small multiple of the identity.")


def solve_shapes(a: tuple, b: tuple) -> RuntimeError:
    """solve's A and B that do not fit the equation AX = B."""
    a_text = "x".join(str(s) for s in a[-2:])
    b_text = "x".join(str(s) for s in (b[-2:] if len(b) > 1 else (b[0], 1)))
    return error(RuntimeError, f"linalg.solve: Incompatible shapes of A and B for the "
                 f"equation AX = B ({a_text} and {b_text}).",
                 "B has as many rows as A (a vector of A's size, or a matrix (n, k) whose "
                 "columns are k right-hand sides); batch sizes broadcast.")


def trace_not_matrix(shape: tuple) -> RuntimeError:
    """trace given something that is not one matrix (as torch.trace, no batches)."""
    return error(RuntimeError, f"trace: expected a matrix, but got tensor with dim "
                 f"{len(shape)} (shape {shape_text(shape)}).",
                 "trace takes one matrix; einsum('...ii->...', A) gives the trace of each "
                 "matrix of a batch.")
