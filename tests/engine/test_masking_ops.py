"""masked_fill, tril/triu, cumsum, flip, F.pad, gather and scatter_add at their edges,
against PyTorch 2.13.0 CPU (issue "Attention on the engine").

The op table (tests/helpers/op_table.py) checks these ops on drawn shapes: gradients
against finite differences, values, gradients and second derivatives against PyTorch,
forward mode. Here: 0-d and empty inputs, nan and inf, dtypes, every argument PyTorch
refuses (the same kind of error, and PyTorch's sentence in ours), what each op saves,
and the small GPT these ops are for: causal self-attention with a tril mask and
masked_fill, a cross-entropy read with gather, double backward through it.

Kept differences, pinned below:

* scatter_add with src larger than the index: PyTorch's forward accepts it but its
  backward fails ("returned an invalid gradient"); ours gives src's unread entries 0.
* F.pad: only mode='constant'; other modes raise NotImplementedError.
* masked_fill, gather and scatter_add take a NumPy array where PyTorch wants a tensor
  (mask, index, src), as this engine's ops take NumPy operands everywhere.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_adversarial_ops import OURS, THEIRS, compare, leaf, lib_index, r

import autograd_core as ag
from autograd_core import autograd
from autograd_core.autograd import gradcheck
from autograd_core.nn import functional as F

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed: the cross-check against PyTorch 2.13.0 CPU "
    "is skipped (install it with: pip install -e '.[torch]')")

pytestmark = [pytest.mark.torch, pytest.mark.filterwarnings("ignore::RuntimeWarning")]

INF, NAN = np.inf, np.nan


def mask(lib, values):
    """A boolean mask tensor on either engine."""
    values = np.asarray(values, dtype=bool)
    return torch.from_numpy(values) if lib is THEIRS else ag.tensor(values)


def refuses_like(program, *arrays, grads=None):
    """Both engines raise for ``program(lib, *tensors)``, the same kind of error; return
    (our message, PyTorch's). Float arrays become leaves that require grad."""
    arrays = [np.asarray(a) for a in arrays]
    grads = grads or [a.dtype.kind == "f" for a in arrays]
    caught = []
    for lib in (THEIRS, OURS):
        with pytest.raises(Exception) as raised:
            program(lib, *[leaf(lib, a, g) for a, g in zip(arrays, grads)])
        caught.append(raised)
    theirs, ours = caught
    assert ours.type is theirs.type, (ours.value, theirs.value)
    assert "\nHint: " in str(ours.value)
    return str(ours.value), str(theirs.value)


def starts_like_torch(ours: str, theirs: str) -> None:
    """Our message begins with PyTorch's sentence (ours may add shapes, then a hint)."""
    assert ours.startswith(theirs.rstrip(".")), (ours, theirs)


# -- masked_fill -------------------------------------------------------------------------------
MASKED_FILL = {
    "0d": (lambda lib, x: x.masked_fill(mask(lib, True), 2.0), [np.array(3.0)]),
    "0d-mask": (lambda lib, x: x.masked_fill(mask(lib, False), 2.0), [r(2, 3)]),
    "empty": (lambda lib, x: x.masked_fill(mask(lib, [True, False, True]), 2.0),
              [np.zeros((0, 3))]),
    "empty-mask": (lambda lib, x: x.masked_fill(mask(lib, np.zeros((0, 1))), 2.0), [r(3)]),
    "mask-broadcasts-the-input": (
        lambda lib, x: x.masked_fill(mask(lib, [[[True, False, True]], [[False] * 3]]), -1.0),
        [r(2, 3)]),
    "neg-inf": (lambda lib, x: x.masked_fill(mask(lib, [True, False]), -INF), [r(3, 2)]),
    "nan-value": (lambda lib, x: x.masked_fill(mask(lib, [True, False]), NAN), [r(2)]),
    "inf-nan-inputs": (lambda lib, x: (x.masked_fill(mask(lib, [True, False, True, False]), 0.0)
                                       * 2), [np.array([INF, -INF, NAN, 1.0])]),
    "value-tensor-with-grad": (lambda lib, x, v: x.masked_fill(mask(lib, [[True, False]]), v),
                               [r(3, 2), np.array(1.5)]),
    "value-aliases-input": (lambda lib, x: x.masked_fill(mask(lib, [True, False]), x[0]),
                            [r(2)]),
    "function": (lambda lib, x: lib.m.masked_fill(x, mask(lib, [True, False]), 0.5), [r(2)]),
    "int-input-float-value": (lambda lib, x: x.masked_fill(mask(lib, [True, False]), 2.7),
                              [np.array([1, 2])]),
    "bool-input": (lambda lib, x: x.masked_fill(mask(lib, [True, False]), False),
                   [np.array([True, True])]),
    "causal-softmax": (lambda lib, x: lib.m.softmax(x.masked_fill(
        mask(lib, np.triu(np.ones((3, 3)), 1)), -INF), -1), [r(2, 3, 3)]),
}


@pytest.mark.parametrize("program, arrays", MASKED_FILL.values(), ids=MASKED_FILL.keys())
def test_masked_fill(program, arrays):
    compare(program, *arrays)


@pytest.mark.parametrize("kind", ["float", "numpy-float64", "int-tensor", "float64-tensor"])
def test_masked_fill_keeps_the_input_dtype(kind):
    for lib in (OURS, THEIRS):
        x = leaf(lib, np.ones(3, dtype=np.float32))
        v = {"float": 2.0, "numpy-float64": np.float64(2.0),
             "int-tensor": leaf(lib, np.array(2), requires_grad=False),
             "float64-tensor": leaf(lib, np.array(2.0), requires_grad=False)}[kind]
        y = x.masked_fill(mask(lib, [True, False, True]), v)
        assert str(y.dtype).endswith("float32") and y.tolist() == [2.0, 1.0, 2.0]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.uint8])
def test_masked_fill_refuses_a_mask_that_is_not_bool(dtype):
    ours, theirs = refuses_like(lambda lib, x, m: x.masked_fill(m, 1.0), r(3),
                                np.zeros(3, dtype), grads=[True, False])
    starts_like_torch(ours, theirs)


@pytest.mark.parametrize("value, kind", [(np.array([1.0]), "dims"), (np.ones((1, 1)), "dims"),
                                         ("a", "type"), (None, "type")])
def test_masked_fill_refuses_a_value_that_is_not_a_number(value, kind):
    def program(lib, x):
        v = leaf(lib, value, requires_grad=False) if isinstance(value, np.ndarray) else value
        return x.masked_fill(mask(lib, [True, False, True]), v)

    ours, theirs = refuses_like(program, r(3))
    if kind == "dims":
        starts_like_torch(ours, theirs)


@pytest.mark.parametrize("mask_shape", [(3, 3), (2, 1, 4), (0,)])
def test_masked_fill_refuses_a_mask_that_does_not_broadcast(mask_shape):
    ours, _ = refuses_like(lambda lib, x: x.masked_fill(mask(lib, np.zeros(mask_shape)), 1.0),
                           r(2, 3))
    assert "must match the size of tensor b" in ours


@pytest.mark.parametrize("dtype, value", [(np.int64, INF), (np.int64, NAN), (np.int32, 2**40),
                                          (np.float32, 1e300), (np.float16, 1e6)])
def test_masked_fill_refuses_a_value_the_dtype_cannot_hold(dtype, value):
    ours, _ = refuses_like(lambda lib, x: x.masked_fill(mask(lib, [True]), value),
                           np.zeros(1, dtype), grads=[False])
    assert ours.startswith("value cannot be converted to type")


def test_masked_fill_holds_inf_in_every_float_dtype():
    for dtype in (np.float16, np.float32, np.float64):
        y = ag.tensor(np.zeros(2, dtype)).masked_fill(ag.tensor([True, False]), -INF)
        assert y.dtype == dtype and y.tolist() == [-INF, 0.0]


def test_masked_fill_saves_only_the_mask_in_its_own_shape():
    x = ag.tensor(r(4, 8, 8), requires_grad=True)
    y = x.masked_fill(ag.tensor(np.triu(np.ones((8, 8), bool), 1)), -INF)
    assert list(y.grad_fn.saved) == ["mask"]
    assert y.grad_fn.saved["mask"].nbytes == 64  # (8, 8) bools, not the broadcast (4, 8, 8)
    assert y.grad_fn.saved["mask"].source == ("input", 1)


def test_changing_the_mask_in_place_before_backward_raises_like_pytorch():
    def program(lib, x):
        m = mask(lib, [True, False, True])
        y = x.masked_fill(m, 0.0)
        m[0] = False
        y.sum().backward()

    ours, _ = refuses_like(program, r(3))
    assert "modified by an inplace operation" in ours


# -- tril, triu --------------------------------------------------------------------------------
TRIANGLES = {
    "square": (lambda lib, x: lib.m.tril(x), [r(4, 4)]),
    "wide-above": (lambda lib, x: lib.m.tril(x, 2), [r(3, 5)]),
    "tall-below": (lambda lib, x: lib.m.triu(x, -1), [r(5, 3)]),
    "batched": (lambda lib, x: x.triu(1) + x.tril(-1), [r(2, 3, 4, 4)]),
    "diagonal-past-the-corner": (lambda lib, x: x.tril(10) - x.triu(-10) + x.tril(-10),
                                 [r(3, 4)]),
    "empty-batch": (lambda lib, x: x.tril(), [np.zeros((0, 3, 3))]),
    "empty-matrix": (lambda lib, x: x.triu(), [np.zeros((2, 0, 3))]),
    "nan-inf-zeroed": (lambda lib, x: x.tril() * 1, [np.array([[1.0, NAN], [INF, -INF]])]),
    "int": (lambda lib, x: x.triu(), [np.arange(9).reshape(3, 3)]),
    "bool": (lambda lib, x: x.tril(), [np.ones((2, 2), bool)]),
    "1x1": (lambda lib, x: x.triu(1) + x.tril(), [r(1, 1)]),
}


@pytest.mark.parametrize("program, arrays", TRIANGLES.values(), ids=TRIANGLES.keys())
def test_triangles(program, arrays):
    compare(program, *arrays)


@pytest.mark.parametrize("op", ["tril", "triu"])
@pytest.mark.parametrize("shape", [(), (3,)])
def test_triangles_need_two_dims(op, shape):
    ours, theirs = refuses_like(lambda lib, x: getattr(lib.m, op)(x), r(*shape))
    starts_like_torch(ours, theirs)


@pytest.mark.parametrize("diagonal", [1.5, True, None])
def test_triangle_diagonal_must_be_an_int(diagonal):
    ours, theirs = refuses_like(lambda lib, x: lib.m.triu(x, diagonal), r(2, 2))
    starts_like_torch(ours, theirs)


def test_triangles_save_nothing_and_take_an_int_tensor_diagonal():
    x = ag.tensor(r(3, 3), requires_grad=True)
    y = x.tril(ag.tensor(1))
    assert not y.grad_fn.saved and y.grad_fn.params == {"diagonal": 1}


# -- cumsum ------------------------------------------------------------------------------------
CUMSUM = {
    "0d": (lambda lib, x: lib.m.cumsum(x, 0), [np.array(2.0)]),
    "0d-dim-minus-1": (lambda lib, x: x.cumsum(-1), [np.array(2.0)]),
    "empty-along": (lambda lib, x: x.cumsum(0), [np.zeros((0, 3))]),
    "empty-across": (lambda lib, x: x.cumsum(0), [np.zeros((3, 0))]),
    "negative-dim": (lambda lib, x: x.cumsum(-2), [r(2, 3, 4)]),
    "inf-then-minus-inf": (lambda lib, x: x.cumsum(0), [np.array([1.0, INF, -INF, 2.0])]),
    "nan": (lambda lib, x: x.cumsum(0), [np.array([1.0, NAN, 2.0])]),
    "huge": (lambda lib, x: x.cumsum(0), [np.array([1e308, 1e308, -1e308])]),
    "int-to-int64": (lambda lib, x: x.cumsum(0), [np.array([1, 2, 3], np.int32)]),
    "bool-to-int64": (lambda lib, x: x.cumsum(0), [np.array([True, False, True])]),
    "dtype": (lambda lib, x: lib.m.cumsum(x, 0, dtype=lib.m.float64),
              [np.array([1.0, 2.0], np.float32)]),
    "twice": (lambda lib, x: x.cumsum(0).cumsum(1), [r(3, 4)]),
}


@pytest.mark.parametrize("program, arrays", CUMSUM.values(), ids=CUMSUM.keys())
def test_cumsum(program, arrays):
    compare(program, *arrays)


def test_cumsum_dtypes_are_pytorchs():
    for values in (np.array([1, 2], np.int32), np.array([True, False]), np.ones(2, np.float16)):
        assert str(ag.cumsum(ag.tensor(values), 0).dtype) == \
            str(torch.cumsum(torch.from_numpy(values), 0).dtype).removeprefix("torch.")
    x = ag.tensor(np.ones(2, np.float32), requires_grad=True)
    ag.cumsum(x, 0, dtype=np.float64).sum().backward()
    assert x.grad.dtype == np.float32 and x.grad.tolist() == [2.0, 1.0]


@pytest.mark.parametrize("shape, dim", [((3, 4), 2), ((3,), -2), ((), 1), ((), -2)])
def test_cumsum_dim_out_of_range(shape, dim):
    ours, theirs = refuses_like(lambda lib, x: x.cumsum(dim), r(*shape))
    starts_like_torch(ours, theirs)


@pytest.mark.parametrize("dim", [1.0, None, True])
def test_cumsum_dim_must_be_an_int(dim):
    ours, theirs = refuses_like(lambda lib, x: lib.m.cumsum(x, dim), r(3))
    starts_like_torch(ours, theirs)


# -- flip --------------------------------------------------------------------------------------
FLIP = {
    "0d-dim-0": (lambda lib, x: lib.m.flip(x, [0]) * 2, [np.array(2.0)]),
    "0d-no-dims": (lambda lib, x: lib.m.flip(x, ()) * 2, [np.array(2.0)]),
    "no-dims": (lambda lib, x: lib.m.flip(x, []), [r(2, 3)]),
    "empty": (lambda lib, x: lib.m.flip(x, (0, 1)), [np.zeros((0, 3))]),
    "negative-dims": (lambda lib, x: lib.m.flip(x, (-1, 0)), [r(2, 3, 4)]),
    "method-ints": (lambda lib, x: x.flip(0, 2), [r(2, 3, 4)]),
    "method-int": (lambda lib, x: x.flip(1), [r(2, 3)]),
    "method-list": (lambda lib, x: x.flip([0, 1]), [r(2, 3)]),
    "method-keyword": (lambda lib, x: x.flip(dims=(1,)), [r(2, 3)]),
    "aliased": (lambda lib, x: x * x.flip(0), [r(4)]),
    "twice": (lambda lib, x: x.flip(0).flip(0) * x, [r(3)]),
    "nan-inf": (lambda lib, x: x.flip(0) * 1, [np.array([NAN, INF, -INF])]),
    "int": (lambda lib, x: x.flip(0), [np.arange(4)]),
    "negative-stride-input": (lambda lib, x: x.flip(1), [np.arange(6.0).reshape(2, 3)[::-1]]),
}


@pytest.mark.parametrize("program, arrays", FLIP.values(), ids=FLIP.keys())
def test_flip(program, arrays):
    compare(program, *arrays)


def test_flip_returns_a_copy_as_pytorch_does():
    x = ag.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.flip(0)
    assert not np.shares_memory(y.numpy(), x.numpy()) and y._base is None
    assert not y.grad_fn.saved


@pytest.mark.parametrize("dims", [0, [0.0], (True,), "0"])
def test_flip_dims_must_be_a_tuple_of_ints(dims):
    ours, theirs = refuses_like(lambda lib, x: lib.m.flip(x, dims), r(2, 3))
    starts_like_torch(ours, theirs)


def test_flip_method_needs_dims():
    ours, theirs = refuses_like(lambda lib, x: x.flip(), r(2, 3))
    starts_like_torch(ours, theirs)


@pytest.mark.parametrize("dims", [(0, 0), (1, -1), (0, 1, -2)])
def test_flip_refuses_a_repeated_dim(dims):
    ours, theirs = refuses_like(lambda lib, x: lib.m.flip(x, dims), r(2, 3))
    starts_like_torch(ours, theirs)


@pytest.mark.parametrize("shape, dims", [((2, 3), (2,)), ((2, 3), (-3,)), ((), (1,))])
def test_flip_dim_out_of_range(shape, dims):
    ours, theirs = refuses_like(lambda lib, x: lib.m.flip(x, dims), r(*shape))
    starts_like_torch(ours, theirs)


# -- F.pad -------------------------------------------------------------------------------------
PAD = {
    "last-dim": (lambda lib, x: lib.F.pad(x, (1, 2)), [r(2, 3, 4)]),
    "last-two": (lambda lib, x: lib.F.pad(x, (1, 2, 3, 0)), [r(2, 3, 4)]),
    "every-dim": (lambda lib, x: lib.F.pad(x, (1, 2, 0, 1, 2, 0)), [r(2, 3, 4)]),
    "list": (lambda lib, x: lib.F.pad(x, [1, 1]), [r(3)]),
    "nothing": (lambda lib, x: lib.F.pad(x, ()), [r(2, 3)]),
    "0d-nothing": (lambda lib, x: lib.F.pad(x, ()), [np.array(2.0)]),
    "crop": (lambda lib, x: lib.F.pad(x, (-1, -2)), [r(2, 4)]),
    "crop-to-nothing": (lambda lib, x: lib.F.pad(x, (-2, -2)), [r(2, 4)]),
    "crop-everything-then-pad": (lambda lib, x: lib.F.pad(x, (-3, 1), value=2.0), [r(3)]),
    "crop-and-pad": (lambda lib, x: lib.F.pad(x, (-1, 2, 1, -1)), [r(3, 3)]),
    "value": (lambda lib, x: lib.F.pad(x, (1, 1), value=-1.5), [r(2)]),
    "value-none": (lambda lib, x: lib.F.pad(x, (1, 1), "constant", None), [r(2)]),
    "value-inf": (lambda lib, x: lib.F.pad(x, (1, 0), value=-INF), [r(2)]),
    "value-nan": (lambda lib, x: lib.F.pad(x, (0, 1), value=NAN), [r(2)]),
    "value-0d-tensor": (lambda lib, x: lib.F.pad(x, (1, 1), value=leaf(lib, np.array(3.0),
                                                                        False)), [r(2)]),
    "empty-input": (lambda lib, x: lib.F.pad(x, (1, 1)), [np.zeros((0, 3))]),
    "empty-dim-padded": (lambda lib, x: lib.F.pad(x, (0, 0, 1, 1)), [np.zeros((0, 3))]),
    "int-input-float-value": (lambda lib, x: lib.F.pad(x, (1, 1), value=2.7),
                              [np.array([1, 2])]),
    "image": (lambda lib, x: lib.F.conv2d(lib.F.pad(x, (1, 1, 1, 1)), leaf(
        lib, np.ones((1, 1, 3, 3)), False)), [r(1, 1, 4, 4)]),
    "nan-inf-input": (lambda lib, x: lib.F.pad(x, (-1, 1)) * 2, [np.array([NAN, INF, 1.0])]),
}


@pytest.mark.parametrize("program, arrays", PAD.values(), ids=PAD.keys())
def test_pad(program, arrays):
    compare(program, *arrays)


def test_pad_crop_gets_no_gradient_where_it_cropped():
    x = ag.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    F.pad(x, (-1, 2)).backward(ag.tensor([10.0, 20.0, 30.0, 40.0, 50.0]))
    assert x.grad.tolist() == [0.0, 10.0, 20.0, 30.0]
    y = F.pad(x, (1, -3))
    assert y.tolist() == [0.0, 1.0] and not y.grad_fn.saved


@pytest.mark.parametrize("pad, fragment", [
    ((1,), "divisible by 2"), ((1, 2, 3), "divisible by 2"),
    ((1, 1, 1, 1, 1, 1, 1, 1), "two times the input dimension"),
    ((-3, -2), "narrow(): length must be non-negative"),
    ((-5, 1), "narrow(): length must be non-negative"),
    ((0, 0, -2, -2), "narrow(): length must be non-negative"),
])
def test_pad_refuses_pads_that_do_not_fit(pad, fragment):
    ours, theirs = refuses_like(lambda lib, x: lib.F.pad(x, pad), r(2, 3, 4) if len(pad) != 4
                                else r(3, 4))
    assert fragment in ours and fragment in theirs


def test_pad_of_a_0d_input_refuses_any_pad():
    ours, theirs = refuses_like(lambda lib, x: lib.F.pad(x, (1, 1)), np.array(1.0))
    starts_like_torch(ours, theirs)


@pytest.mark.parametrize("pad", [1, (1.5, 1), (True, 1)])
def test_pad_must_be_a_tuple_of_ints(pad):
    ours, theirs = refuses_like(lambda lib, x: lib.F.pad(x, pad), r(3))
    starts_like_torch(ours, theirs)


@pytest.mark.parametrize("value", ["a", np.array([2.0])])
def test_pad_value_must_be_a_number(value):
    def program(lib, x):
        v = leaf(lib, value, False) if isinstance(value, np.ndarray) else value
        return lib.F.pad(x, (1, 1), value=v)

    refuses_like(program, r(3))


def test_pad_refuses_a_value_the_dtype_cannot_hold():
    ours, _ = refuses_like(lambda lib, x: lib.F.pad(x, (1, 1), value=INF), np.array([1, 2]))
    assert ours.startswith("value cannot be converted to type")


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "bogus"])
def test_pad_supports_only_the_constant_mode(mode):
    with pytest.raises(NotImplementedError, match="only mode='constant' is supported"):
        F.pad(ag.tensor(r(1, 2, 4)), (1, 1), mode=mode)
    if mode == "bogus":  # PyTorch's kind and sentence for a mode it does not know either
        with pytest.raises(NotImplementedError, match="Unrecognised padding mode bogus"):
            torch.nn.functional.pad(torch.zeros(1, 2, 4), (1, 1), mode=mode)
        with pytest.raises(NotImplementedError, match="Unrecognised padding mode bogus"):
            F.pad(ag.tensor(r(1, 2, 4)), (1, 1), mode=mode)


# -- gather ------------------------------------------------------------------------------------
INDEX = np.array([[0, 3], [2, 2], [1, 0]])
GATHER = {
    "dim-1": (lambda lib, x, i: lib.m.gather(x, 1, i), [r(3, 4), INDEX]),
    "dim-0-repeats": (lambda lib, x, i: x.gather(0, i), [r(3, 4), np.array([[2, 2, 0, 2]] * 3)]),
    "negative-dim": (lambda lib, x, i: x.gather(-1, i), [r(3, 4), INDEX]),
    "smaller-index": (lambda lib, x, i: x.gather(1, i), [r(3, 4), np.array([[1], [0]])]),
    "longer-along-dim": (lambda lib, x, i: x.gather(1, i), [r(2, 2), np.zeros((2, 5), int)]),
    "3d": (lambda lib, x, i: x.gather(1, i), [r(2, 3, 4), np.array([[[2, 0, 1, 1]]] * 2)]),
    "int32-index": (lambda lib, x, i: x.gather(1, i), [r(3, 4), INDEX.astype(np.int32)]),
    "0d-input-0d-index": (lambda lib, x, i: x.gather(0, i), [np.array(2.0), np.array(0)]),
    "0d-input-1d-index": (lambda lib, x, i: x.gather(0, i), [np.array(2.0), np.array([0, 0])]),
    "1d-input-0d-index": (lambda lib, x, i: x.gather(0, i), [r(3), np.array(2)]),
    "empty-index": (lambda lib, x, i: x.gather(1, i), [r(3, 4), np.zeros((0, 2), int)]),
    "empty-index-larger-elsewhere": (lambda lib, x, i: x.gather(1, i),
                                     [r(3, 4), np.zeros((5, 0), int)]),
    "empty-input": (lambda lib, x, i: x.gather(1, i), [np.zeros((0, 3)), np.zeros((0, 2), int)]),
    "nan-inf": (lambda lib, x, i: x.gather(0, i) * 2, [np.array([NAN, INF]), np.array([1, 0, 1])]),
    "cross-entropy": (lambda lib, x, i: -lib.m.log_softmax(x, 1).gather(1, i).mean(),
                      [r(4, 5), np.array([[1], [4], [0], [1]])]),
    "rows-repeated": (lambda lib, w, i: w.gather(0, i) * 3, [r(4, 3), np.array([[1, 1, 3],
                                                                               [1, 0, 3]])]),
}


@pytest.mark.parametrize("program, arrays", GATHER.values(), ids=GATHER.keys())
def test_gather(program, arrays):
    compare(program, *arrays)


GATHER_ERRORS = {
    "index-too-big": (lambda lib, x: x.gather(1, lib_index(lib, [[0, 4]])), r(3, 4)),
    "index-negative": (lambda lib, x: x.gather(1, lib_index(lib, [[0, -1]])), r(3, 4)),
    "into-empty": (lambda lib, x: x.gather(0, lib_index(lib, [[0, 0]])), np.zeros((0, 3))),
    "0d-index-out": (lambda lib, x: x.gather(0, lib_index(lib, np.array(1))), np.array(1.0)),
    "fewer-dims": (lambda lib, x: x.gather(1, lib_index(lib, [0, 1])), r(3, 4)),
    "more-dims": (lambda lib, x: x.gather(1, lib_index(lib, [[[0, 1]]])), r(3, 4)),
    "0d-input-2d-index": (lambda lib, x: x.gather(0, lib_index(lib, [[0]])), np.array(1.0)),
    "larger-outside-dim": (lambda lib, x: x.gather(1, lib_index(lib, [[0, 1]] * 4)), r(3, 4)),
    "larger-outside-dim-0": (lambda lib, x: x.gather(0, lib_index(lib, [[0] * 5])), r(3, 4)),
    "float-index": (lambda lib, x: x.gather(1, lib_index(lib, [[0.0, 1.0]])), r(3, 4)),
    "uint8-index": (lambda lib, x: x.gather(1, lib_index(lib, np.array([[0, 1]], np.uint8))),
                    r(3, 4)),
    "bool-index": (lambda lib, x: x.gather(1, lib_index(lib, [[True, False]])), r(3, 4)),
    "dim-out-of-range": (lambda lib, x: x.gather(2, lib_index(lib, [[0, 1]])), r(3, 4)),
    "dim-out-of-range-first": (lambda lib, x: x.gather(2, lib_index(lib, [[0.0]])), r(3, 4)),
    "0d-dim-1": (lambda lib, x: x.gather(1, lib_index(lib, np.array(0))), np.array(1.0)),
    "dim-float": (lambda lib, x: lib.m.gather(x, 1.0, lib_index(lib, [[0]])), r(3, 4)),
    "dim-bool": (lambda lib, x: lib.m.gather(x, True, lib_index(lib, [[0]])), r(3, 4)),
    "index-list": (lambda lib, x: lib.m.gather(x, 1, [[0]]), r(3, 4)),
}


@pytest.mark.parametrize("program, x", GATHER_ERRORS.values(), ids=GATHER_ERRORS.keys())
def test_gather_refuses_like_pytorch(program, x):
    ours, theirs = refuses_like(program, x)
    assert theirs.split(" (")[0].rstrip(".") in ours, (ours, theirs)


def test_gather_saves_only_its_index():
    x = ag.tensor(r(3, 4), requires_grad=True)
    index = ag.tensor(INDEX)
    y = x.gather(1, index)
    assert list(y.grad_fn.saved) == ["index"] and y.grad_fn.saved["index"].source == ("input", 1)
    index[0, 0] = 1  # PyTorch's version check: the saved index was changed
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# -- scatter_add -------------------------------------------------------------------------------
SCATTER = {
    "dim-1": (lambda lib, a, i, s: lib.m.scatter_add(a, 1, i, s), [r(3, 4), INDEX, r(3, 2)]),
    "dim-0-repeats": (lambda lib, a, i, s: a.scatter_add(0, i, s),
                      [r(3, 4), np.array([[2, 2, 0, 2], [2, 0, 0, 2]]), r(2, 4)]),
    "negative-dim": (lambda lib, a, i, s: a.scatter_add(-1, i, s), [r(3, 4), INDEX, r(3, 2)]),
    "into-zeros": (lambda lib, s, i: lib.m.scatter_add(lib.m.zeros(3, 4, dtype=s.dtype), 1,
                                                       i, s), [r(3, 2), INDEX]),
    "smaller-index-outside-dim": (lambda lib, a, i, s: a.scatter_add(1, i, s),
                                  [r(3, 4), np.array([[3]]), r(1, 1)]),
    "longer-along-dim": (lambda lib, a, i, s: a.scatter_add(1, i, s),
                         [r(2, 2), np.ones((2, 5), int), r(2, 5)]),
    "int32-index": (lambda lib, a, i, s: a.scatter_add(1, i, s),
                    [r(3, 4), INDEX.astype(np.int32), r(3, 2)]),
    "0d": (lambda lib, a, i, s: a.scatter_add(0, i, s), [np.array(1.0), np.array(0),
                                                         np.array(3.0)]),
    "0d-self-1d-index": (lambda lib, a, i, s: a.scatter_add(0, i, s),
                         [np.array(1.0), np.array([0, 0]), r(2)]),
    "1d-self-0d-index": (lambda lib, a, i, s: a.scatter_add(0, i, s),
                         [r(2), np.array(1), np.array(3.0)]),
    "empty-index": (lambda lib, a, i, s: a.scatter_add(0, i, s),
                    [r(2, 3), np.zeros((0, 5), int), np.zeros((0, 5))]),
    "empty-self": (lambda lib, a, i, s: a.scatter_add(1, i, s),
                   [np.zeros((0, 3)), np.zeros((0, 1), int), np.zeros((0, 1))]),
    "inf-nan": (lambda lib, a, i, s: a.scatter_add(0, i, s) * 2,
                [np.array([INF, 1.0]), np.array([0, 1, 1]), np.array([-INF, NAN, 1.0])]),
    "src-aliases-self": (lambda lib, a, i: a.scatter_add(0, i, a), [r(3), np.array([2, 2, 0])]),
    "ints": (lambda lib, a, i, s: a.scatter_add(0, i, s),
             [np.zeros(2, int), np.array([0, 0]), np.array([3, 4])]),
}


@pytest.mark.parametrize("program, arrays", SCATTER.values(), ids=SCATTER.keys())
def test_scatter_add(program, arrays):
    compare(program, *arrays)


SCATTER_ERRORS = {
    "index-too-big": (lambda lib, a, s: a.scatter_add(1, lib_index(lib, [[0, 4]]), s[:1]),
                      r(3, 4), r(3, 2)),
    "index-negative": (lambda lib, a, s: a.scatter_add(1, lib_index(lib, [[0, -1]]), s[:1]),
                       r(3, 4), r(3, 2)),
    "larger-than-src": (lambda lib, a, s: a.scatter_add(1, lib_index(lib, INDEX), s),
                        r(3, 4), r(3, 1)),
    "larger-than-self": (lambda lib, a, s: a.scatter_add(1, lib_index(lib, [[0, 1]] * 4), s),
                         r(3, 4), r(4, 2)),
    "larger-than-self-dim-0": (lambda lib, a, s: a.scatter_add(0, lib_index(lib, [[0] * 5]), s),
                               r(3, 4), r(1, 5)),
    "0d-src-2-entries": (lambda lib, a, s: a.scatter_add(0, lib_index(lib, [0, 0]), s),
                         r(1), np.array(3.0)),
    "index-fewer-dims": (lambda lib, a, s: a.scatter_add(1, lib_index(lib, [0, 1]), s),
                         r(3, 4), r(1, 2)),
    "index-more-dims": (lambda lib, a, s: a.scatter_add(1, lib_index(lib, [[[0, 1]]]), s),
                        r(3, 4), r(1, 2, 1)),
    "src-more-dims": (lambda lib, a, s: a.scatter_add(1, lib_index(lib, [[0, 1]]), s),
                      r(3, 4), r(1, 2, 1)),
    "src-dtype": (lambda lib, a, s: a.scatter_add(1, lib_index(lib, [[0, 1]]), s),
                  r(3, 4).astype(np.float32), r(1, 2)),
    "float-index": (lambda lib, a, s: a.scatter_add(1, lib_index(lib, [[0.0, 1.0]]), s),
                    r(3, 4), r(1, 2)),
    "dim-out-of-range": (lambda lib, a, s: a.scatter_add(2, lib_index(lib, [[0, 1]]), s),
                         r(3, 4), r(1, 2)),
    "dim-float": (lambda lib, a, s: lib.m.scatter_add(a, 1.0, lib_index(lib, [[0]]), s),
                  r(3, 4), r(1, 1)),
    "src-number": (lambda lib, a, s: a.scatter_add(1, lib_index(lib, [[0]]), 1.0),
                   r(3, 4), r(1, 1)),
}


@pytest.mark.parametrize("program, a, src", SCATTER_ERRORS.values(), ids=SCATTER_ERRORS.keys())
def test_scatter_add_refuses_like_pytorch(program, a, src):
    ours, theirs = refuses_like(program, a, src)
    theirs = theirs.replace("scatter(): ", "scatter_add(): ")  # ours names the op called
    assert theirs.split(" (")[0].rstrip(".") in ours, (ours, theirs)


def test_scatter_add_with_src_larger_than_the_index_differs_from_pytorch_by_design():
    """PyTorch's forward reads src's leading block, its backward then fails; ours gives
    the entries of src that were never read a gradient of 0."""
    a, src, index = r(3, 4), r(3, 5), INDEX
    t_src = torch.tensor(src, requires_grad=True)
    t_out = torch.scatter_add(torch.tensor(a), 1, torch.from_numpy(index), t_src)
    with pytest.raises(RuntimeError, match="invalid gradient"):
        t_out.sum().backward()
    s = ag.tensor(src, requires_grad=True)
    out = ag.scatter_add(ag.tensor(a), 1, index, s)
    np.testing.assert_allclose(out.numpy(), t_out.detach().numpy(), rtol=1e-12)
    out.backward(ag.tensor(np.arange(12.0).reshape(3, 4)))
    expected = np.zeros((3, 5))
    expected[:, :2] = np.take_along_axis(np.arange(12.0).reshape(3, 4), index, 1)
    np.testing.assert_array_equal(s.grad.numpy(), expected)
    assert gradcheck(lambda x: ag.scatter_add(ag.tensor(a), 1, index, x) ** 2, (s,))
    # and twice: the create_graph rule pads gather's result with zeros the same way
    (g,) = autograd.grad((ag.scatter_add(ag.tensor(a), 1, index, s) ** 2).sum(), s,
                         create_graph=True)
    (h,) = autograd.grad(g.sum(), s)
    # d²/dsrc_j dsrc_k of sum(out²) is 2 where j and k land on the same entry of out
    same = (index[:, :, None] == index[:, None, :]).sum(axis=2)
    np.testing.assert_array_equal(h.numpy(), np.pad(2.0 * same, ((0, 0), (0, 3))))


def test_scatter_add_saves_the_index_only_when_src_needs_a_gradient():
    a = ag.tensor(r(3, 4), requires_grad=True)
    assert not a.scatter_add(1, INDEX, ag.tensor(r(3, 2))).grad_fn.saved
    y = a.scatter_add(1, INDEX, ag.tensor(r(3, 2), requires_grad=True))
    assert list(y.grad_fn.saved) == ["index"]


def test_gather_and_scatter_add_are_each_others_adjoint():
    """<gather(x, index), y> = <x, scatter_add(0, index, y)>: why each one's backward is
    the other."""
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((3, 5))
    index = rng.integers(0, 4, (3, 5))
    left = float((ag.gather(ag.tensor(x), 1, index) * ag.tensor(y)).sum())
    right = float((ag.tensor(x) * ag.scatter_add(ag.zeros(3, 4), 1, index, ag.tensor(y))).sum())
    assert left == pytest.approx(right, rel=1e-12)


# -- the small GPT -----------------------------------------------------------------------------
def causal_attention_loss(lib, x, wq, wk, wv, wo, targets):
    """One causal self-attention head over (B, T, C) inputs, a linear read-out to V
    logits and their cross-entropy read with gather: a GPT's first block, written once
    for both libraries."""
    t = x.shape[1]
    ones = leaf(lib, np.ones((t, t)), requires_grad=False)
    future = lib.m.tril(ones) == 0
    q, k, v = x @ wq, x @ wk, x @ wv
    scores = (q @ k.transpose(-2, -1)) / np.sqrt(q.shape[-1])
    att = lib.m.softmax(scores.masked_fill(future, float("-inf")), -1)
    logits = (att @ v) @ wo
    picked = lib.m.log_softmax(logits, -1).gather(-1, targets)
    return -picked.mean()


def _gpt_inputs():
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in ((2, 4, 3), (3, 3), (3, 3), (3, 2), (2, 5))]
    return arrays, rng.integers(0, 5, (2, 4, 1))


def test_causal_attention_matches_pytorch():
    arrays, targets = _gpt_inputs()
    compare(lambda lib, *ts: causal_attention_loss(lib, *ts[:-1], ts[-1]), *arrays, targets)


def test_the_future_gets_no_gradient():
    """The causal mask at work: the first position's output does not depend on the
    inputs at later positions, so their gradient is exactly 0."""
    arrays, _ = _gpt_inputs()
    x = ag.tensor(arrays[0], requires_grad=True)
    wq, wk, wv, wo = (ag.tensor(a) for a in arrays[1:])
    t = x.shape[1]
    future = ag.tril(ag.ones(t, t)) == 0
    q, k, v = x @ wq, x @ wk, x @ wv
    att = ag.softmax((q @ k.transpose(-2, -1)).masked_fill(future, float("-inf")), -1)
    ((att @ v) @ wo)[:, 0].sum().backward()
    assert np.all(x.grad.numpy()[:, 1:] == 0) and np.all(x.grad.numpy()[:, 0] != 0)


def test_causal_attention_second_derivatives_match_pytorch():
    """Hessian-vector product through masked_fill, tril, softmax and gather (double
    backward), against PyTorch's."""
    arrays, targets = _gpt_inputs()
    v = np.random.default_rng(5).standard_normal(arrays[0].shape)
    results = []
    for lib in (OURS, THEIRS):
        leaves = [leaf(lib, a) for a in arrays]
        index = lib_index(lib, targets)
        loss = causal_attention_loss(lib, *leaves, index)
        grad = autograd.grad if lib is OURS else torch.autograd.grad
        (g,) = grad(loss, leaves[0], create_graph=True)
        tensor = ag.tensor if lib is OURS else torch.from_numpy
        hvp = grad((g * tensor(v)).sum(), leaves)
        results.append([np.asarray(h.detach().numpy() if lib is THEIRS else h.numpy())
                        for h in hvp])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


def test_the_new_ops_have_public_names():
    names = {"masked_fill", "tril", "triu", "cumsum", "flip", "pad", "gather", "scatter_add"}
    for name in names - {"pad"}:
        assert name in ag.__all__ and callable(getattr(ag.Tensor, name))
    assert "pad" in F.__all__
