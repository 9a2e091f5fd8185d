"""tinygrad's op-test harness re-expressed for this engine: one program, two libraries.

tinygrad's ``helper_test_op(shapes, torch_fn, tinygrad_fn, ...)`` (test/backend/test_ops.py)
draws float inputs uniformly in [low, high) (default [-2, 2)) from seed 0, runs the op on
PyTorch and on tinygrad, compares the outputs, then the gradients of every input for the
backward of ``out.sum()``. Here a case (:class:`OpCase`) is one program
``program(lib, *tensors)`` written against ``lib``: ``autograd_core`` itself, or PyTorch
under this engine's names (``TorchLib``, tests/engine/test_torch_crosscheck.py), so the two
runs cannot drift apart. :func:`check_against_torch` runs it in one float dtype on both
libraries from the same values and compares

* the output: shape, dtype, values (nan for nan, inf for inf);
* after a backward of one non-uniform cotangent (uniform in [0.5, 1.5), fixed seed) on
  both sides, the gradient of every floating input. A cotangent of ones (tinygrad's
  ``out.sum()``) would give softmax or a layer norm without affine a gradient of zero
  whatever their backward does, so it would check nothing there.

:func:`raises_like_torch` is tinygrad's ``helper_test_exception``: both libraries refuse the
program, with the same exception class. No data lives here: the cases are in
tests/engine/test_tinygrad_op_cases.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pytest

import autograd_core as ag


@dataclass(frozen=True)
class Tolerances:
    """Bounds of ``|ours - theirs| <= atol * scale + rtol * |theirs|``, elementwise, where
    ``scale`` is the largest finite ``|theirs|`` of the array (at least 1): round-off in a
    sum grows with the size of its terms, not of its result, so an entry that cancels to
    near 0 (a running sum, an einsum over 13,824 products, a layer norm's weight gradient
    over 2,000 rows) is held to the array's scale, not to its own."""

    atol: float
    rtol: float


# float32 (eps = 1.2e-7): 2e-5 of the array's scale, about 170 units in the last place.
# Measured over 4 seeds, the largest difference was 4.5e-6 of the scale (layer_norm over 5
# channels without affine: its gradient divides by small standard deviations; each
# library is as far from the float64 result as the other). tinygrad's own bounds are
# atol 1e-6 and rtol 1e-3 (gradients atol 1e-4, rtol 1e-3), per entry.
# float64: round-off only (largest measured: 1.6e-14 of the scale), as in the project's
# other PyTorch cross-checks.
TOLERANCES = {
    np.dtype(np.float32): Tolerances(atol=2e-5, rtol=1e-5),
    np.dtype(np.float64): Tolerances(atol=1e-12, rtol=1e-10),
}


def assert_close(ours: np.ndarray, theirs: np.ndarray, tol: Tolerances, what: str) -> None:
    """``ours`` equals ``theirs`` within ``tol`` (nan for nan, inf for inf)."""
    finite = np.abs(theirs[np.isfinite(theirs)])
    scale = max(1.0, float(finite.max(initial=0.0)))
    np.testing.assert_allclose(ours, theirs, rtol=tol.rtol, atol=tol.atol * scale,
                               equal_nan=True, err_msg=what)


@dataclass(frozen=True)
class OpCase:
    """One tinygrad case. ``inputs``: per input a shape (drawn uniformly in [low, high)
    from seed 0, in the test's dtype) or an array of given values (floating ones cast to
    the test's dtype, others kept: indices, masks). Floating inputs require grad unless
    ``forward_only`` or their position is in ``constant``."""

    name: str
    inputs: tuple
    program: Callable
    low: float = -2.0
    high: float = 2.0
    forward_only: bool = False
    constant: tuple = ()

    def __repr__(self) -> str:
        return self.name

    @property
    def has_float_input(self) -> bool:
        """Whether the dtype under test reaches any input (else one run is enough)."""
        return any(not isinstance(s, np.ndarray) or s.dtype.kind == "f" for s in self.inputs)


def case(name: str, inputs, program: Callable, **options) -> OpCase:
    """An :class:`OpCase`; a lone shape or array may be given without its tuple."""
    if isinstance(inputs, np.ndarray) or (isinstance(inputs, tuple) and
                                          all(isinstance(d, int) for d in inputs)):
        inputs = (inputs,)
    return OpCase(name, tuple(inputs), program, **options)


def named(prefix: str, cases) -> list[OpCase]:
    """The cases with ``prefix/`` before each name (the op family: readable test ids)."""
    return [replace(c, name=f"{prefix}/{c.name}") for c in cases]


def input_arrays(op_case: OpCase, dtype, seed: int = 0) -> list[np.ndarray]:
    """The case's inputs in ``dtype``, drawn as tinygrad draws them (one generator, seeded
    once, the shapes in order)."""
    rng = np.random.default_rng(seed)
    arrays = []
    for spec in op_case.inputs:
        if isinstance(spec, np.ndarray):
            arrays.append(spec.astype(dtype) if spec.dtype.kind == "f" else spec.copy())
        else:
            arrays.append(rng.uniform(op_case.low, op_case.high, spec).astype(dtype))
    return arrays


@dataclass
class Run:
    """What one library computed: the output and each input's gradient (None: the input
    does not require grad, or the library left its ``.grad`` unset)."""

    value: np.ndarray
    grads: list


def _requires_grad(op_case: OpCase, arrays) -> list[bool]:
    return [a.dtype.kind == "f" and not op_case.forward_only and i not in op_case.constant
            for i, a in enumerate(arrays)]


def run(lib, op_case: OpCase, arrays, seed: int = 1) -> Run:
    """The case's program on ``lib`` (``autograd_core`` or a ``TorchLib``), then, if the
    output requires grad, one backward of the cotangent drawn from ``seed``."""
    needs = _requires_grad(op_case, arrays)
    leaves = [lib.tensor(a.copy(), requires_grad=r) for a, r in zip(arrays, needs)]
    out = op_case.program(lib, *leaves)
    value = np.asarray(out.detach().numpy())
    if not out.requires_grad:
        return Run(value, [None] * len(leaves))
    g = np.random.default_rng(seed).uniform(0.5, 1.5, value.shape).astype(value.dtype)
    out.backward(lib.tensor(g))
    return Run(value, [None if not r or t.grad is None else np.asarray(t.grad.numpy())
                       for t, r in zip(leaves, needs)])


def check_against_torch(op_case: OpCase, dtype, torch_lib) -> None:
    """Same output (shape, dtype, values) and same gradients on this engine as on
    PyTorch (``torch_lib``), in ``dtype``, within :data:`TOLERANCES`."""
    dtype = np.dtype(dtype)
    tol = TOLERANCES[dtype]
    arrays = input_arrays(op_case, dtype)
    ours, theirs = run(ag, op_case, arrays), run(torch_lib, op_case, arrays)
    assert ours.value.shape == theirs.value.shape, "output shape"
    assert ours.value.dtype == theirs.value.dtype, "output dtype"
    if ours.value.dtype.kind == "f":
        assert_close(ours.value, theirs.value, tol, f"{op_case.name}: output")
    else:
        np.testing.assert_array_equal(ours.value, theirs.value)
    for i, (mine, expected) in enumerate(zip(ours.grads, theirs.grads)):
        assert (mine is None) == (expected is None), f"input {i}: gradient set on one side"
        if mine is not None:
            assert mine.shape == expected.shape and mine.dtype == expected.dtype, f"input {i}"
            assert_close(mine, expected, tol, f"{op_case.name}: gradient of input {i}")


def raises_like_torch(program: Callable, arrays, torch_lib) -> str:
    """``program(lib, *tensors)`` raises on PyTorch and on this engine, the same class;
    returns this engine's message."""
    with pytest.raises(Exception) as theirs:
        program(torch_lib, *[torch_lib.tensor(a.copy()) for a in arrays])
    with pytest.raises(Exception) as ours:
        program(ag, *[ag.tensor(a.copy()) for a in arrays])
    assert ours.type is theirs.type, (ours.value, theirs.value)
    return str(ours.value)
