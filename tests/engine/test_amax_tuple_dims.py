"""amax and amin (ops/reductions.py), and reductions over a tuple of dims (sum, mean,
var, logsumexp, max/min, amax/amin), against PyTorch 2.13.0 CPU (issue "Attention on
the engine").

The op table (tests/helpers/op_table.py) checks the rows amax, amin_method, amax_all,
sum_dims, mean_dims, var_dims and logsumexp_dims (dims drawn as an int, a tuple or a
list, negative spellings and ``()`` included) against finite differences and PyTorch.
Here: ties (shared evenly, as torch.amax does), nan and inf, empty and 0-d inputs, what
the node saves, forward mode, and every dim argument PyTorch refuses.

Kept differences and PyTorch's own quirks, pinned below:

* ``max()``/``min()`` (values only) send a nan slice's gradient to its nan values, as
  ``torch.max()`` does, while ``amax``/``amin`` give the whole slice nan, as
  ``torch.amax`` does: each follows its PyTorch namesake.
* ``logsumexp(x, dim=())`` is refused, as PyTorch refuses it (with an internal shape
  message; ours says what to pass), where ``sum``, ``mean``, ``var`` and ``amax`` read
  ``()`` as every dim.
* PyTorch's backward of ``var(x, dim=())`` is not the gradient of its forward: the
  forward reduces every dim, the backward divides by 1 - correction instead of
  n - correction (n times too large with correction=0, inf/nan with the default 1; its
  double backward too). Ours gives the gradients of ``dim=None``, which PyTorch has
  right.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_adversarial_ops import THEIRS, compare, leaf, r, raises_like

import autograd_core as ag
from autograd_core import autograd
from autograd_core.func import jvp

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed: the cross-check against PyTorch 2.13.0 CPU "
    "is skipped (install it with: pip install -e '.[torch]')")

pytestmark = [pytest.mark.torch, pytest.mark.filterwarnings("ignore::RuntimeWarning")]

INF, NAN = np.inf, np.nan
TIES = np.array([[1.0, 3.0, 3.0], [3.0, 2.0, 0.0]])


# -- amax and amin ------------------------------------------------------------------------
AMAX = {
    "all-ties": (lambda lib, x: lib.m.amax(x), [TIES]),
    "dim-ties": (lambda lib, x: lib.m.amax(x, 1), [TIES]),
    "tuple-ties-keepdim": (lambda lib, x: lib.m.amin(x, (0, -1), True), [-TIES]),
    "list-dims": (lambda lib, x: lib.m.amax(x, [1, 0]), [TIES]),
    "empty-tuple-is-all": (lambda lib, x: lib.m.amin(x, ()), [TIES]),
    "method": (lambda lib, x: x.amax(dim=-1, keepdim=True), [TIES]),
    "method-default": (lambda lib, x: x.amin(), [TIES]),
    "all-equal": (lambda lib, x: lib.m.amax(x, 0), [np.ones((4, 2))]),
    "nan": (lambda lib, x: lib.m.amax(x, 1), [np.array([[1.0, NAN, 3.0], [1.0, 2.0, 2.0]])]),
    "nan-everywhere": (lambda lib, x: lib.m.amin(x), [np.array([NAN, 1.0, NAN])]),
    "inf-ties": (lambda lib, x: lib.m.amax(x), [np.array([1.0, INF, INF])]),
    "minus-inf": (lambda lib, x: lib.m.amin(x, 0), [np.array([-INF, 0.0, -INF])]),
    "0-d": (lambda lib, x: lib.m.amax(x), [np.array(2.0)]),
    "0-d-dim-0": (lambda lib, x: lib.m.amax(x, 0), [np.array(2.0)]),
    "0-d-dim-minus-1-keepdim": (lambda lib, x: lib.m.amin(x, (-1,), True), [np.array(2.0)]),
    "empty-other-dim": (lambda lib, x: lib.m.amax(x, 1), [np.zeros((0, 3))]),
    "single": (lambda lib, x: lib.m.amax(x, 0), [np.array([5.0])]),
    "ints": (lambda lib, x: lib.m.amax(x, 0), [np.array([[1, 5], [7, 2]])]),
    "3-d-two-dims": (lambda lib, x: lib.m.amax(x, (0, 2)), [np.round(r(3, 2, 4), 0)]),
}


@pytest.mark.parametrize("program, arrays", AMAX.values(), ids=AMAX.keys())
def test_amax_amin_match_torch(program, arrays):
    compare(program, *arrays)


def test_ties_share_evenly_and_nan_gives_the_slice_nan():
    x = ag.tensor(TIES, requires_grad=True)
    ag.amax(x, 1).backward(ag.tensor([1.0, 2.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, 0.5, 0.5], [2.0, 0.0, 0.0]])
    x = ag.tensor([[1.0, NAN], [1.0, 2.0]], requires_grad=True)
    ag.amax(x, 1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[NAN, NAN], [0.0, 1.0]])


def test_max_and_amax_differ_at_a_nan_as_torchs_do():
    values = np.array([1.0, NAN, NAN])
    compare(lambda lib, x: x.max(), values)  # torch.max(): the nan values share it
    compare(lambda lib, x: x.amax(), values)  # torch.amax: all nan
    x = ag.tensor(values, requires_grad=True)
    x.max().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.5, 0.5])


def test_amax_records_an_amax_node_that_saves_only_the_mask():
    x = ag.tensor(TIES, requires_grad=True)
    out = ag.amax(x, dim=1)
    assert out.grad_fn.name == "amax" and list(out.grad_fn.saved) == ["mask"]
    assert out.grad_fn.saved["mask"].dtype == np.bool_
    assert ag.amin(x).grad_fn.name == "amin"


def test_forward_mode_shares_ties_like_torch():
    t = np.arange(6.0).reshape(2, 3)
    _, ours = jvp(lambda x: ag.amax(x, 1), (ag.tensor(TIES),), (ag.tensor(t),))
    _, theirs = torch.func.jvp(lambda x: torch.amax(x, 1), (torch.from_numpy(TIES),),
                               (torch.from_numpy(t),))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())  # [1.5, 3]: ties averaged


def test_second_derivative_through_amax_of_a_product_matches_torch():
    def second(lib, grad, tensor):
        x = leaf(lib, TIES)
        (g,) = grad((lib.m.amax(x * x, 1) ** 2).sum(), [x], create_graph=True)
        (h,) = grad((g * tensor(np.arange(6.0).reshape(2, 3))).sum(), [x])
        return h.detach().numpy() if lib is THEIRS else h.numpy()

    from test_adversarial_ops import OURS
    np.testing.assert_allclose(second(OURS, autograd.grad, ag.tensor),
                               second(THEIRS, torch.autograd.grad, torch.from_numpy),
                               rtol=1e-12)


EMPTY = {
    "all": (lambda lib, x: lib.m.amax(x), np.zeros((0, 3)), RuntimeError,
            "amax(): Expected reduction dim to be specified for input.numel() == 0."),
    "dim": (lambda lib, x: lib.m.amin(x, 0), np.zeros((0, 3)), IndexError,
            "amin(): Expected reduction dim 0 to have non-zero size."),
    "tuple": (lambda lib, x: lib.m.amax(x, (1, 0)), np.zeros((0, 3)), IndexError,
              "amax(): Expected reduction dim 0 to have non-zero size."),
    "middle": (lambda lib, x: lib.m.amax(x, (0, 1)), np.zeros((2, 0, 3)), IndexError,
               "amax(): Expected reduction dim 1 to have non-zero size."),
}


@pytest.mark.parametrize("program, array, kind, sentence", EMPTY.values(), ids=EMPTY.keys())
def test_amax_of_nothing_is_refused_like_torch(program, array, kind, sentence):
    message = raises_like(program, array)
    assert sentence in message and "\nHint: " in message
    with pytest.raises(kind):
        program(THEIRS, leaf(THEIRS, array))


# -- dims: ints, tuples, lists, () -----------------------------------------------------------
REDUCTIONS = {
    "sum": lambda lib, x, dim, keepdim=False: lib.m.sum(x, dim, keepdim),
    "mean": lambda lib, x, dim, keepdim=False: lib.m.mean(x, dim, keepdim),
    # by name: torch.var(x, True) would read True as its old `unbiased` argument
    "var": lambda lib, x, dim, keepdim=False: lib.m.var(x, dim=dim, keepdim=keepdim),
    "logsumexp": lambda lib, x, dim, keepdim=False: lib.m.logsumexp(x, dim, keepdim),
    "amax": lambda lib, x, dim, keepdim=False: lib.m.amax(x, dim, keepdim),
    "amin": lambda lib, x, dim, keepdim=False: lib.m.amin(x, dim, keepdim),
}
DIMS = [(0, 2), (-1, 0), [2, -3], (1,), [-2], (0, 1, 2), (2, 1, 0)]


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS, ids=repr)
@pytest.mark.parametrize("name", REDUCTIONS)
def test_tuple_and_list_dims_match_torch(name, dim, keepdim):
    reduce = REDUCTIONS[name]
    compare(lambda lib, x: reduce(lib, x, dim, keepdim), r(2, 3, 4))


@pytest.mark.parametrize("name", ["sum", "mean", "amax", "amin"])
@pytest.mark.parametrize("empty", [(), []], ids=["tuple", "list"])
def test_no_dims_means_every_dim_as_in_torch(name, empty):
    reduce = REDUCTIONS[name]
    compare(lambda lib, x: reduce(lib, x, empty), r(2, 3))
    compare(lambda lib, x: reduce(lib, x, empty, True), r(2, 3))
    compare(lambda lib, x: reduce(lib, x, empty), np.array(1.5))  # 0-d: itself


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("empty", [(), []], ids=["tuple", "list"])
def test_var_over_no_dims_has_torchs_value_and_the_gradient_of_dim_none(empty, keepdim):
    x = r(2, 3)
    with torch.no_grad():
        expected = torch.var(torch.from_numpy(x), empty, keepdim=keepdim)
    t = ag.tensor(x, requires_grad=True)
    out = ag.var(t, empty, keepdim=keepdim)
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-12)
    compare(lambda lib, a: lib.m.var(a, None, keepdim=keepdim) if lib is THEIRS
            else lib.m.var(a, empty, keepdim=keepdim), x)


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min"])
def test_numpys_axis_of_no_axes_keeps_numpys_meaning(name):
    """``axis=()`` reduces over nothing (NumPy), ``dim=()`` over everything (PyTorch)."""
    x = r(2, 3)
    reduce = getattr(ag, name)
    np.testing.assert_allclose(reduce(ag.tensor(x), axis=()).numpy(),
                               getattr(np, name)(x, axis=()))
    assert reduce(ag.tensor(x), dim=()).shape == ()
    t = ag.tensor(x, requires_grad=True)
    reduce(t, axis=(), keepdims=True).backward(ag.tensor(x))
    np.testing.assert_allclose(t.grad.numpy(), x)


def test_max_and_min_over_no_dims_reduce_every_dim_like_amax():
    x = ag.tensor(TIES)
    assert ag.max(x, dim=()).item() == 3.0 and ag.min(x, dim=[]).item() == 0.0


def test_logsumexp_over_no_dims_is_refused_as_in_torch():
    message = raises_like(lambda lib, x: lib.m.logsumexp(x, ()), r(2, 3))
    assert "logsumexp(): dim=() names no dim to reduce over." in message
    assert "\nHint: " in message
    compare(lambda lib, x: lib.m.logsumexp(x, ()), np.array(1.5))  # a 0-d input: itself


def test_torchs_backward_of_var_over_no_dims_divides_by_one_not_n():
    values, w, v = np.array([0.5, -1.0, 2.0]), np.array([1.0, -2.0, 0.5]), 0.75
    x = leaf(THEIRS, values)
    (g,) = torch.autograd.grad(torch.var(x, (), correction=0), [x])
    np.testing.assert_allclose(g.numpy(), 2 * (values - values.mean()) / 1)  # n = 3 is right
    x = leaf(THEIRS, values)
    (g,) = torch.autograd.grad(torch.var(x, ()), [x])  # correction 1: 1 - 1 = 0
    assert np.isnan(g[0]) and np.isinf(g[1:]).all()
    # phi(x) = <d var / dx, w> · v with var over every dim, correction 0:
    # d var / dx = 2 (x - mean) / n, so d phi / dx = 2 v (w - mean(w)) / n
    truth = 2 * v * (w - w.mean()) / 3

    def second(lib, grad, tensor, dim):
        x = leaf(lib, values)
        (g,) = grad(lib.m.var(x, dim, correction=0), [x], tensor(np.array(v)),
                    create_graph=True)
        (h,) = grad((g * tensor(w)).sum(), [x])
        return h.detach().numpy() if lib is THEIRS else h.numpy()

    from test_adversarial_ops import OURS
    for dim in ((), None, (0,)):
        np.testing.assert_allclose(second(OURS, autograd.grad, ag.tensor, dim), truth,
                                   rtol=1e-12)
    np.testing.assert_allclose(second(THEIRS, torch.autograd.grad, torch.from_numpy, ()),
                               3 * truth, rtol=1e-12)
    np.testing.assert_allclose(second(THEIRS, torch.autograd.grad, torch.from_numpy, None),
                               truth, rtol=1e-12)


BAD_DIMS = {  # dim, PyTorch's kind of error, its sentence (if it has one sentence)
    "repeated": ((0, -2), RuntimeError, "dim 0 appears multiple times in the list of dims"),
    "repeated-list": ([1, 1], RuntimeError, "dim 1 appears multiple times in the list of dims"),
    "out-of-range": ((0, 5), IndexError, "Dimension out of range (expected to be in range of "
                     "[-2, 1], but got 5)"),
    "float-in-tuple": ((0, 1.0), TypeError, None),  # PyTorch's sentence depends on the op
    "float": (1.0, TypeError, None),
    "str": ("a", TypeError, None),
    "bool": (True, TypeError, None),
}


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("dim, kind, phrase", BAD_DIMS.values(), ids=BAD_DIMS.keys())
def test_bad_dims_are_refused_like_torch(name, dim, kind, phrase):
    reduce = REDUCTIONS[name]
    message = raises_like(lambda lib, x: reduce(lib, x, dim), r(2, 3))
    with pytest.raises(kind) as theirs:
        reduce(THEIRS, leaf(THEIRS, r(2, 3)), dim)
    if phrase is None:
        assert message.startswith(f"{name}(): argument 'dim' (position 2) must be tuple of "
                                  "ints") and "\nHint: " in message
    else:
        assert phrase in message and phrase in str(theirs.value)


def test_repeated_dims_of_a_0_d_input_are_refused_like_torch():
    for name in REDUCTIONS:
        message = raises_like(lambda lib, x, n=name: REDUCTIONS[n](lib, x, (0, -1)),
                              np.array(2.0))
        assert "dim 0 appears multiple times" in message


def test_a_float_dim_names_the_op_and_says_what_to_pass():
    with pytest.raises(TypeError) as raised:
        ag.sum(ag.ones(2, 3), dim=(0, 1.5))
    assert str(raised.value) == (
        "sum(): argument 'dim' (position 2) must be tuple of ints, but found element of type "
        "float at pos 1.\nHint: write the ints as a tuple, e.g. dim=(0, 1).")
