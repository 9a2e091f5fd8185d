"""The autograd machinery under misuse, each case run on both engines (issue 15).

Every row of ``CASES`` is one small program written once against a namespace ``lib``
(``autograd_core`` or ``torch``, see :class:`Lib`). The test runs it on both and asks
for the same outcome: the same values, or the same exception type with PyTorch's key
phrase in both messages. Families: hooks, ``.grad`` accumulation, views and in-place
changes between forward and backward, grad mode, and starting a backward (gradient=,
non-scalar outputs, 0-d and zero-size tensors, nan/inf, reuse after release).

Where the engine differs from PyTorch on purpose, ``test_documented_differences``
asserts our choice; the docstring of each case there says why.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

import autograd_core as ag


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip(
        "torch", reason="PyTorch is not installed: the cross-check against PyTorch 2.13.0 "
        "CPU is skipped (install it with: pip install -e '.[torch]')")


class Lib:
    """The few names a case needs, spelled the same way for both engines."""

    def __init__(self, module):
        self.m = module
        self.is_torch = module.__name__ == "torch"
        self.no_grad, self.enable_grad = module.no_grad, module.enable_grad
        self.is_grad_enabled = module.is_grad_enabled

    def t(self, data, requires_grad: bool = False, dtype="float64"):
        """A leaf tensor of ``data`` (float64 unless told)."""
        kind = getattr(self.m, dtype) if self.is_torch else np.dtype(dtype)
        return self.m.tensor(data, dtype=kind, requires_grad=requires_grad)

    def value(self, x):
        """A tensor, list or tuple of them, as NumPy (recursively)."""
        if isinstance(x, list | tuple):
            return [self.value(v) for v in x]
        if x is None or isinstance(x, bool | int | float | str | np.ndarray):
            return x
        return np.array(x.detach().numpy() if self.is_torch else x.numpy())


def outcome(case, lib: Lib):
    """("ok", values) or ("raises", exception type, message) of running ``case``."""
    try:
        return ("ok", lib.value(case(lib)))
    except Exception as exc:  # noqa: BLE001 - the point is to compare whatever it is
        return ("raises", type(exc), str(exc))


class Case(NamedTuple):
    id: str
    program: object  # program(lib) -> result, or raises
    phrase: str | None = None  # PyTorch's key phrase when both must raise


# -- hooks ----------------------------------------------------------------------------------
def hook_size_intermediate(lib):
    x = lib.t([1.0, 2.0], True)
    y = x * 2
    y.register_hook(lambda g: lib.t(np.ones(5)))
    y.sum().backward()


def hook_size_leaf(lib):
    x = lib.t([1.0, 2.0], True)
    x.register_hook(lambda g: lib.t(np.ones(5)))
    (x * 2).sum().backward()
    return x.grad


def hook_size_output_leaf(lib):
    x = lib.t([1.0, 2.0], True)
    x.register_hook(lambda g: lib.t(np.ones(3)))
    x.backward(lib.t([1.0, 1.0]))


def hook_dtype_leaf(lib):
    x = lib.t([1.0, 2.0], True)
    x.register_hook(lambda g: g.float())
    (x * 2).sum().backward()


def hook_numpy_intermediate(lib):
    x = lib.t([1.0, 2.0], True)
    y = x * 2
    y.register_hook(lambda g: np.ones(2))
    y.sum().backward()


def hook_numpy_leaf(lib):
    x = lib.t([1.0, 2.0], True)
    x.register_hook(lambda g: np.ones(2))
    (x * 2).sum().backward()


def hook_float(lib):
    x = lib.t([1.0, 2.0], True)
    x.register_hook(lambda g: 3.0)
    (x * 2).sum().backward()


def hook_leaf_fanout_sees_total(lib):
    x = lib.t([1.0, 1.0], True)
    seen = []
    x.register_hook(lambda g: seen.append(lib.value(g)))
    (x * 3 + x * 2).sum().backward()
    return seen + [x.grad]


def hook_leaf_fanout_clips_total(lib):
    x = lib.t([1.0, 1.0], True)
    x.register_hook(lambda g: g.clamp(max=4.0) if lib.is_torch else g.clip(max=4.0))
    (x * 3 + x * 2).sum().backward()
    return x.grad


def hook_leaf_used_twice_by_one_op(lib):
    x = lib.t([1.0, 3.0], True)
    calls = []
    x.register_hook(lambda g: calls.append(1) or g * 2)
    (x * x).sum().backward()
    return [x.grad, len(calls)]


def hook_leaf_fanout_through_nodes(lib):
    x = lib.t([1.0, 2.0], True)
    seen = []
    x.register_hook(lambda g: seen.append(lib.value(g)))
    a = x.exp()
    b = (x * x).sum() + a.sum() + x.sum()
    b.backward()
    return seen + [x.grad]


def hook_intermediate_fanout_sees_total(lib):
    x = lib.t([1.0, 2.0], True)
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(lib.value(g)))
    (y * 3 + y).sum().backward()
    return seen + [x.grad]


def hook_chain_in_order(lib):
    x = lib.t([1.0, 2.0], True)
    x.register_hook(lambda g: g + 1)
    x.register_hook(lambda g: g * 10)
    (x * 2).sum().backward()
    return x.grad


def hook_none_keeps_grad(lib):
    x = lib.t([1.0, 2.0], True)
    x.register_hook(lambda g: None)
    (x * 5).sum().backward()
    return x.grad


def hook_removed(lib):
    x = lib.t([1.0, 2.0], True)
    handle = x.register_hook(lambda g: g * 100)
    handle.remove()
    (x * 5).sum().backward()
    return x.grad


def hook_each_backward(lib):
    x = lib.t([1.0, 2.0], True)
    calls = []
    x.register_hook(lambda g: calls.append(lib.value(g)))
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    return calls + [x.grad]


def hook_without_grad(lib):
    lib.t([1.0]).register_hook(lambda g: g)


def hook_raises(lib):
    x = lib.t([1.0], True)
    x.register_hook(lambda g: 1 / 0)
    (x * 2).sum().backward()


# -- accumulation into .grad -----------------------------------------------------------------
def grad_accumulates_in_place(lib):
    x = lib.t([1.0, 1.0], True)
    (x * 3).sum().backward()
    g = x.grad
    (x * 2).sum().backward()
    return [g is x.grad, g]


def grad_three_retained(lib):
    x = lib.t([1.0, 2.0], True)
    y = (x * x).sum()
    for _ in range(3):
        y.backward(retain_graph=True)
    return x.grad


def grad_set_none_then_backward(lib):
    x = lib.t([1.0, 2.0], True)
    (x * 3).sum().backward()
    x.grad = None
    (x * 2).sum().backward()
    return x.grad


def grad_user_set_then_accumulate(lib):
    x = lib.t([1.0, 2.0], True)
    x.grad = lib.t([10.0, 10.0])
    (x * 2).sum().backward()
    return x.grad


def grad_fanout_both_inputs(lib):
    x = lib.t([1.0, 2.0], True)
    y = lib.t([3.0, 4.0], True)
    (x + y).sum().backward()
    with lib.no_grad():
        x.grad.zero_()
    return [x.grad, y.grad]


def retain_grad_accumulates(lib):
    x = lib.t([1.0, 2.0], True)
    y = x * 2
    y.retain_grad()
    z = (y * y).sum()
    z.backward(retain_graph=True)
    z.backward()
    return y.grad


# -- views and in-place changes -------------------------------------------------------------
def view_before_requires_grad(lib):
    x = lib.t([1.0, 2.0, 3.0])
    v = x[:2]
    x.requires_grad_()
    v.add_(1.0)


def view_before_requires_grad_setitem(lib):
    x = lib.t([1.0, 2.0, 3.0])
    v = x[:2]
    x.requires_grad_()
    v[0] = 5.0


def view_of_view_before_requires_grad(lib):
    x = lib.t([1.0, 2.0, 3.0])
    w = x[:2][:1]
    x.requires_grad_()
    w.mul_(2.0)


def view_before_requires_grad_no_grad_ok(lib):
    x = lib.t([1.0, 2.0, 3.0])
    v = x[:2]
    x.requires_grad_()
    with lib.no_grad():
        v.add_(1.0)
    return x


def view_of_detached_ok(lib):
    x = lib.t([1.0, 2.0, 3.0], True)
    v = x.detach()[:2]
    v.add_(1.0)
    return x


def view_of_leaf_recorded(lib):
    x = lib.t([1.0, 2.0, 3.0], True)
    x[:2].add_(1.0)


def view_then_base_requires_grad_unset_ok(lib):
    x = lib.t([1.0, 2.0, 3.0])
    v = x[:2]
    v.add_(1.0)
    return x


def inplace_leaf(lib):
    lib.t([1.0], True).add_(1.0)


def constant_changed_before_backward(lib):
    x = lib.t([1.0, 2.0], True)
    a = lib.t([3.0, 4.0])
    y = (x * a).sum()
    a.add_(1.0)
    y.backward()


def leaf_changed_under_no_grad_before_backward(lib):
    x = lib.t([1.0, 2.0], True)
    y = (x * x).sum()
    with lib.no_grad():
        x.add_(1.0)
    y.backward()


def leaf_changed_through_detach_before_backward(lib):
    x = lib.t([1.0, 2.0], True)
    y = (x * x).sum()
    x.detach().mul_(3.0)
    y.backward()


def changed_between_retained_backwards(lib):
    x = lib.t([1.0, 2.0], True)
    a = lib.t([3.0, 4.0])
    y = (x * a).sum()
    y.backward(retain_graph=True)
    a.add_(1.0)
    y.backward()


def changed_after_backward_new_forward_ok(lib):
    x = lib.t([1.0, 2.0], True)
    (x * x).sum().backward()
    with lib.no_grad():
        x.sub_(x.grad)
    x.grad = None
    (x * x).sum().backward()
    return [x, x.grad]


def unused_constant_changed_ok(lib):
    x = lib.t([1.0, 2.0], True)
    a = lib.t([3.0, 4.0])
    y = (x + a).sum()  # add saves nothing
    a.add_(1.0)
    y.backward()
    return x.grad


# -- grad mode ------------------------------------------------------------------------------
def no_grad_generator(lib):
    @lib.no_grad()
    def gen(x):
        yield lib.is_grad_enabled()
        yield (x * 2).requires_grad

    x = lib.t([1.0], True)
    inside = list(gen(x))
    return inside + [lib.is_grad_enabled()]


def no_grad_generator_paused_restores(lib):
    @lib.no_grad()
    def gen():
        yield 1
        yield 2

    g = gen()
    next(g)
    between = lib.is_grad_enabled()
    g.close()
    return [between, lib.is_grad_enabled()]


def enable_grad_generator_inside_no_grad(lib):
    @lib.enable_grad()
    def gen(x):
        yield (x * 2).requires_grad

    x = lib.t([1.0], True)
    with lib.no_grad():
        inside = list(gen(x))
        after = lib.is_grad_enabled()
    return inside + [after]


def no_grad_function(lib):
    @lib.no_grad()
    def f(x):
        return (x * 2).requires_grad

    return [f(lib.t([1.0], True)), lib.is_grad_enabled()]


def no_grad_restores_after_exception(lib):
    try:
        with lib.no_grad():
            raise KeyError("k")
    except KeyError:
        pass
    return lib.is_grad_enabled()


def enable_grad_inside_no_grad(lib):
    x = lib.t([1.0], True)
    with lib.no_grad():
        with lib.enable_grad():
            inner = (x * 2).requires_grad
        outer = (x * 2).requires_grad
    return [inner, outer]


def backward_inside_no_grad(lib):
    x = lib.t([1.0, 2.0], True)
    y = (x * x).sum()
    with lib.no_grad():
        y.backward()
    return x.grad


# -- starting a backward --------------------------------------------------------------------
def non_scalar_without_gradient(lib):
    (lib.t([1.0, 2.0], True) * 2).backward()


def zero_size_without_gradient(lib):
    (lib.t(np.zeros(0), True) * 2).backward()


def gradient_wrong_shape(lib):
    (lib.t([1.0, 2.0], True) * 2).backward(lib.t([1.0, 1.0, 1.0]))


def gradient_wrong_shape_scalar_output(lib):
    (lib.t([1.0, 2.0], True) * 2).sum().backward(lib.t([1.0, 1.0]))


def gradient_0d_for_scalar(lib):
    x = lib.t([1.0, 2.0], True)
    (x * 2).sum().backward(lib.t(3.0))
    return x.grad


def gradient_float32_for_float64(lib):
    x = lib.t([1.0, 2.0], True)
    (x * 2).backward(lib.t([1.0, 1.0], dtype="float32"))
    return x.grad


def not_requiring_grad(lib):
    (lib.t([1.0]) * 2).sum().backward()


def detached_output(lib):
    (lib.t([1.0], True) * 2).sum().detach().backward()


def second_backward(lib):
    x = lib.t([1.0, 2.0], True)
    y = (x * x).sum()
    y.backward()
    y.backward()


def second_backward_through_saved_free_op(lib):
    x = lib.t([1.0, 2.0], True)
    y = (x + 1.0).sum()
    y.backward()
    y.backward()
    return x.grad


def backward_0d(lib):
    x = lib.t(3.0, True)
    (x * x).backward()
    return x.grad


def backward_leaf_scalar(lib):
    x = lib.t(3.0, True)
    x.backward()
    return x.grad


def backward_leaf_with_gradient(lib):
    x = lib.t([3.0, 4.0], True)
    x.backward(lib.t([1.0, 2.0]))
    x.backward(lib.t([1.0, 2.0]))
    return x.grad


def backward_zero_size(lib):
    x = lib.t(np.zeros((0, 3)), True)
    (x * 2).sum().backward()
    return [x.grad, list(x.grad.shape)]


def backward_zero_size_mean(lib):
    x = lib.t(np.zeros(0), True)
    y = x.mean()
    y.backward()
    return [y, x.grad]


def nan_gradient_propagates(lib):
    x = lib.t([1.0, 2.0], True)
    (x * float("nan")).sum().backward()
    return x.grad


def inf_times_zero(lib):
    x = lib.t([0.0, 1.0], True)
    (x * float("inf")).sum().backward()
    y = lib.t([0.0, 1.0], True)
    (y * y * float("inf")).sum().backward()
    return [x.grad, y.grad]


def nan_seed(lib):
    x = lib.t([1.0, 2.0], True)
    (x * 2).backward(lib.t([float("nan"), 1.0]))
    return x.grad


def nonleaf_grad_is_none(lib):
    x = lib.t([1.0], True)
    y = x * 2
    y.sum().backward()
    return y.grad


def requires_grad_int(lib):
    lib.t([1, 2], dtype="int64").requires_grad_()


def non_leaf_requires_grad_false(lib):
    y = lib.t([1.0], True) * 2
    y.requires_grad = False


CASES = [
    Case("hook size, intermediate", hook_size_intermediate, "has changed the size of value"),
    Case("hook size, leaf", hook_size_leaf, "has changed the size of value"),
    Case("hook size, output leaf", hook_size_output_leaf, "has changed the size of value"),
    Case("hook dtype, leaf", hook_dtype_leaf, "has changed the type of value"),
    Case("hook numpy, intermediate", hook_numpy_intermediate, "but hook returned"),
    Case("hook numpy, leaf", hook_numpy_leaf, "but hook returned"),
    Case("hook float", hook_float, "but hook returned 'float'"),
    Case("leaf hook fan-out sees total", hook_leaf_fanout_sees_total),
    Case("leaf hook fan-out clips total", hook_leaf_fanout_clips_total),
    Case("leaf hook, one op uses it twice", hook_leaf_used_twice_by_one_op),
    Case("leaf hook, fan-out through nodes", hook_leaf_fanout_through_nodes),
    Case("intermediate hook fan-out", hook_intermediate_fanout_sees_total),
    Case("hooks chain in order", hook_chain_in_order),
    Case("hook returns None", hook_none_keeps_grad),
    Case("hook removed", hook_removed),
    Case("hook runs per backward", hook_each_backward),
    Case("hook without requires_grad", hook_without_grad,
         "cannot register a hook on a tensor that doesn't require gradient"),
    Case("hook raises", hook_raises, "division by zero"),
    Case(".grad accumulates in place", grad_accumulates_in_place),
    Case(".grad three retained backwards", grad_three_retained),
    Case(".grad set None then backward", grad_set_none_then_backward),
    Case(".grad set by the user, then accumulated", grad_user_set_then_accumulate),
    Case(".grad of two leaves do not alias", grad_fanout_both_inputs),
    Case("retain_grad accumulates", retain_grad_accumulates),
    Case("view before requires_grad, add_", view_before_requires_grad,
         "a view of a leaf Variable that requires grad is being used in an in-place"),
    Case("view before requires_grad, setitem", view_before_requires_grad_setitem,
         "a view of a leaf Variable that requires grad is being used in an in-place"),
    Case("view of view before requires_grad", view_of_view_before_requires_grad,
         "a view of a leaf Variable that requires grad is being used in an in-place"),
    Case("view before requires_grad, under no_grad", view_before_requires_grad_no_grad_ok),
    Case("view of detach, add_", view_of_detached_ok),
    Case("recorded view of a leaf, add_", view_of_leaf_recorded,
         "a view of a leaf Variable that requires grad is being used in an in-place"),
    Case("view, base never requires grad", view_then_base_requires_grad_unset_ok),
    Case("in-place on a leaf", inplace_leaf,
         "a leaf Variable that requires grad is being used in an in-place operation"),
    Case("saved constant changed before backward", constant_changed_before_backward,
         "modified by an inplace operation"),
    Case("leaf changed under no_grad before backward",
         leaf_changed_under_no_grad_before_backward, "modified by an inplace operation"),
    Case("leaf changed through detach before backward",
         leaf_changed_through_detach_before_backward, "modified by an inplace operation"),
    Case("changed between retained backwards", changed_between_retained_backwards,
         "modified by an inplace operation"),
    Case("changed after backward, new forward", changed_after_backward_new_forward_ok),
    Case("unsaved constant changed", unused_constant_changed_ok),
    Case("no_grad generator", no_grad_generator),
    Case("no_grad generator paused", no_grad_generator_paused_restores),
    Case("enable_grad generator in no_grad", enable_grad_generator_inside_no_grad),
    Case("no_grad function", no_grad_function),
    Case("no_grad restores after exception", no_grad_restores_after_exception),
    Case("enable_grad inside no_grad", enable_grad_inside_no_grad),
    Case("backward inside no_grad", backward_inside_no_grad),
    Case("non-scalar without gradient", non_scalar_without_gradient,
         "grad can be implicitly created only for scalar outputs"),
    Case("zero-size without gradient", zero_size_without_gradient,
         "grad can be implicitly created only for scalar outputs"),
    Case("gradient of another shape", gradient_wrong_shape, "Mismatch in shape"),
    Case("gradient of another shape, scalar", gradient_wrong_shape_scalar_output,
         "Mismatch in shape"),
    Case("0-d gradient for a scalar", gradient_0d_for_scalar),
    Case("float32 gradient for float64", gradient_float32_for_float64),
    Case("output not requiring grad", not_requiring_grad,
         "does not require grad and does not have a grad_fn"),
    Case("detached output", detached_output,
         "does not require grad and does not have a grad_fn"),
    Case("second backward", second_backward, "Trying to backward through the graph a second"),
    Case("second backward, nothing saved", second_backward_through_saved_free_op),
    Case("0-d backward", backward_0d),
    Case("leaf scalar backward", backward_leaf_scalar),
    Case("leaf backward with gradient", backward_leaf_with_gradient),
    Case("zero-size backward", backward_zero_size),
    Case("zero-size mean backward", backward_zero_size_mean),
    Case("nan gradient", nan_gradient_propagates),
    Case("inf times zero", inf_times_zero),
    Case("nan seed", nan_seed),
    Case("non-leaf .grad is None", nonleaf_grad_is_none),
    Case("requires_grad on int", requires_grad_int,
         "only Tensors of floating point dtype can require gradients"),
    Case("requires_grad=False on non-leaf", non_leaf_requires_grad_false,
         "you can only change requires_grad flags of leaf variables"),
]


@pytest.mark.torch
@pytest.mark.filterwarnings("ignore::UserWarning")  # PyTorch warns on .grad of a non-leaf
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy warns on 0 * inf, empty mean
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_same_outcome_as_pytorch(case, torch):
    theirs = outcome(case.program, Lib(torch))
    ours = outcome(case.program, Lib(ag))
    if case.phrase is not None:
        assert theirs[0] == "raises", theirs
        assert case.phrase in theirs[2], theirs[2]
        assert ours[0] == "raises", ours
        assert ours[1] is theirs[1], (ours, theirs)
        assert case.phrase in ours[2], ours[2]
    else:
        assert theirs[0] == "ok", theirs
        assert ours[0] == "ok", ours
        assert _same(ours[1], theirs[1]), (ours[1], theirs[1])
    assert ag.is_grad_enabled() and torch.is_grad_enabled()


def _same(a, b) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and np.allclose(a, b, equal_nan=True)
    return a == b


# -- what the engine's own records say ------------------------------------------------------
def test_hook_messages_name_the_hook_and_hint():
    def double_size(g):
        return ag.tensor(np.ones(4))

    x = ag.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(double_size)
    with pytest.raises(RuntimeError, match=r"hook 'double_size' has changed the size of "
                       r"value \(was \(2,\) got \(4,\)\)\.\nHint: "):
        (x * 2).sum().backward()

    def to_numpy(g):
        return g.numpy()

    y = ag.tensor([1.0], requires_grad=True)
    y.register_hook(to_numpy)
    with pytest.raises(TypeError, match=r"hook returned 'numpy.ndarray' \(the hook is "
                       r"'to_numpy'\)\.\nHint: "):
        (y * 2).sum().backward()


def test_leaf_hook_steps_match_backward():
    """The stepper's records and backward() agree for a hooked leaf with fan-out: the
    hook runs once, and the last contribution's ``total`` is the final ``.grad``."""
    from autograd_core.sweep.engine import backward_steps

    def program():
        x = ag.tensor([1.0, 1.0], requires_grad=True)
        calls = []
        x.register_hook(lambda g: calls.append(g.tolist()) or g.clip(max=4.0))
        return x, (x * 3 + x * 2).sum(), calls

    x, loss, calls = program()
    steps = list(backward_steps(loss))
    to_x = [s for step in steps for s in step.sent if s.target is x]
    assert sorted(s.grad.tolist() for s in to_x) == [[2.0, 2.0], [3.0, 3.0]]
    assert to_x[-1].total.tolist() == x.grad.tolist() == [4.0, 4.0]
    assert calls == [[5.0, 5.0]]
    x2, loss2, calls2 = program()
    loss2.backward()
    assert x2.grad.tolist() == x.grad.tolist() and calls2 == calls


def test_step_records_keep_their_values_after_accumulation():
    """``.grad`` is the same Tensor after a second backward, but the arrays a first
    sweep recorded (what the stepper replays) keep the values they had."""
    from autograd_core.sweep.engine import backward_steps

    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 3).sum()
    first = [s for step in backward_steps(y, retain_graph=True) for s in step.sent]
    g = x.grad
    y.backward()
    assert g is x.grad and g.tolist() == [6.0, 6.0]
    assert first[-1].total.tolist() == [3.0, 3.0]


def test_documented_differences():
    """Differences from PyTorch kept on purpose (each a refusal or a more lenient
    answer, never a different gradient):

    * A view taken before ``requires_grad`` was set does not start requiring grad with
      its base (PyTorch's view does, yet sends no gradient to the base): ours refuses a
      backward from it instead of silently leaving ``x.grad`` None.
    * ``backward(gradient=...)`` accepts a list or an array (cast to the output's dtype);
      PyTorch requires a Tensor.
    * ``.grad`` accumulation puts the sum into the same Tensor object (``g is x.grad``)
      but as a new array, so a NumPy view taken of the old ``.grad`` keeps old values.
    * Changing a view made under ``no_grad`` of a leaf that requires grad raises the
      view-of-a-leaf message, not PyTorch's "A view was created in no_grad mode".
    """
    x = ag.tensor([1.0, 2.0, 3.0])
    v = x[:2]
    x.requires_grad_()
    with pytest.raises(RuntimeError, match="does not require grad"):
        (v * 2).sum().backward()

    w = ag.tensor([1.0, 2.0], requires_grad=True)
    (w * 2).backward([1.0, 3.0])
    assert w.grad.tolist() == [2.0, 6.0]

    old = w.grad.numpy()
    (w * 2).backward(np.array([1.0, 1.0]))
    assert w.grad.tolist() == [4.0, 8.0] and old.tolist() == [2.0, 6.0]

    z = ag.tensor([1.0, 2.0], requires_grad=True)
    with ag.no_grad():
        view = z[:1]
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        view.add_(1.0)
    assert z.tolist() == [1.0, 2.0]
