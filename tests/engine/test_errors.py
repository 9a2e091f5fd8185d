"""Every bad input gets a clear error: one table of cases.

Each row is (case id, a call that triggers the mistake, the exception type, the
message fragments that must appear). Where PyTorch has the same error, the first
fragment is PyTorch's key phrase (checked against torch 2.13's own message), so a
search for our message finds PyTorch answers; the other fragments are what we add:
the op's name and the shapes involved. Messages we write are full sentences and,
where the table says so, end with a one-line "Hint:" that says how to fix it.

A second, shorter table lists the near-misses that must keep working (a
``retain_graph=True`` second backward, an optimizer-style update under no_grad).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

import autograd_core as ag
from autograd_core import no_grad, tensor
from autograd_core.autograd import gradcheck
from autograd_core.func import jacrev, jvp
from autograd_core.tools.graph import CycleError, topological_order


class Case(NamedTuple):
    id: str
    trigger: object  # a callable that makes the mistake
    exception: type
    fragments: tuple  # all must appear in str(exception)
    hint: bool | None  # True: ends with a "Hint:" line; None: message is NumPy's, not ours


def x3():
    return tensor([1.0, 2.0, 3.0], requires_grad=True)


def m23(requires_grad=True):
    return tensor(np.arange(6.0).reshape(2, 3), requires_grad=requires_grad)


# -- backward --------------------------------------------------------------------------
def backward_twice():
    x = x3()
    loss = (x * x).sum()
    loss.backward()
    loss.backward()


def backward_under_no_grad():
    x = x3()
    with no_grad():
        loss = (x * x).sum()
    loss.backward()


def modify_saved_constant(modify):
    """``w`` does not require grad, but ``x * w`` saves it (dx = g * w); changing it
    before backward would silently give the wrong gradient."""

    def trigger():
        w = tensor([1.0, 2.0, 3.0])
        x = tensor([1.0, 1.0, 1.0], requires_grad=True)
        loss = (x * w).sum()
        modify(w)
        loss.backward()

    return trigger


def optimizer_step_before_backward():
    x = x3()
    loss = (x * x).sum()  # saves x itself
    with no_grad():
        x.sub_(0.1)  # allowed (no_grad), but the graph still needed the old x
    loss.backward()


def write_numpy_view(get_view):
    def trigger():
        w = tensor([1.0, 2.0, 3.0])
        get_view(w)[0] = 5.0

    return trigger


# -- shapes ----------------------------------------------------------------------------
BROADCAST = ("The size of tensor a (3) must match the size of tensor b (4) at "
             "non-singleton dimension 1", "(2, 3)", "(4,)", "cannot be broadcast")


def broadcast_case(op, call):
    return Case(f"broadcast-{op}", lambda: call(m23(), tensor([1.0, 2.0, 3.0, 4.0])),
                RuntimeError, (f"{op}:",) + BROADCAST, True)


def dim_case(name, call, dim, low, high):
    return Case(f"dim-out-of-range-{name}", lambda: call(m23()), IndexError,
                (f"Dimension out of range (expected to be in range of [{low}, {high}], "
                 f"but got {dim})",), True)


def key_phrase_cases():
    not_a_tensor = "expected a Tensor, a NumPy array or a Python number, got"
    modified = ("one of the variables needed for gradient computation has been modified "
                "by an inplace operation", "'b'", "saved by mul", "(3,)",
                "is at version 1; expected version 0 instead")
    return [
        # backward
        Case("backward-twice", backward_twice, RuntimeError,
             ("Trying to backward through the graph a second time", "Specify retain_graph=True",
              "mul needs one of them"), True),
        Case("backward-no-requires-grad", lambda: tensor([1.0, 2.0]).sum().backward(),
             RuntimeError, ("element 0 of tensors does not require grad and does not have "
                            "a grad_fn",), True),
        Case("backward-made-under-no_grad", backward_under_no_grad, RuntimeError,
             ("does not require grad and does not have a grad_fn", "no_grad()"), True),
        Case("backward-implicit-non-scalar", lambda: (x3() * 2).backward(), RuntimeError,
             ("grad can be implicitly created only for scalar outputs", "(3,)", ".sum()"),
             True),
        Case("backward-gradient-wrong-shape",
             lambda: (x3() * 2).backward(gradient=np.ones(2)), RuntimeError,
             ("Mismatch in shape", "gradient has a shape of (2,)",
              "output has a shape of (3,)"), True),
        # matmul and broadcasting
        Case("matmul-inner-size", lambda: m23() @ ag.ones(4, 5), RuntimeError,
             ("cannot be multiplied", "(2, 3)", "(4, 5)", "inner sizes 3 and 4"), True),
        Case("matmul-batched-inner-size", lambda: ag.ones(7, 2, 3) @ ag.ones(7, 2, 3),
             RuntimeError, ("cannot be multiplied", "(7, 2, 3)", "inner sizes 3 and 2"),
             True),
        Case("matmul-vectors", lambda: ag.matmul(x3(), ag.ones(4)), RuntimeError,
             ("cannot be multiplied", "(3,)", "(4,)"), True),
        Case("matmul-scalar", lambda: ag.matmul(x3(), tensor(2.0)), RuntimeError,
             ("matmul: both arguments must be at least 1-D", "Hint: use * for scalars"),
             True),
        broadcast_case("add", lambda a, b: a + b),
        broadcast_case("sub", lambda a, b: a - b),
        broadcast_case("mul", lambda a, b: a * b),
        broadcast_case("div", lambda a, b: a / b),
        broadcast_case("maximum", ag.maximum),
        broadcast_case("minimum", ag.minimum),
        broadcast_case("where", lambda a, b: ag.where(np.ones((2, 3), bool), a, b)),
        Case("broadcast-where-condition",
             lambda: ag.where(np.ones(5, bool), m23(), tensor([1.0, 2.0, 3.0])),
             RuntimeError, ("where:", "condition of shape (5,)", "values of shape (2, 3)"),
             True),
        Case("broadcast-expand", lambda: m23().expand(4, 3), RuntimeError,
             ("expand:", "(2, 3)", "(4, 3)", "cannot be broadcast"), True),
        # in-place changes of something saved for backward
        Case("inplace-saved-add_", modify_saved_constant(lambda w: w.add_(1)), RuntimeError,
             modified, True),
        Case("inplace-saved-sub_", modify_saved_constant(lambda w: w.sub_(1)), RuntimeError,
             modified, True),
        Case("inplace-saved-mul_", modify_saved_constant(lambda w: w.mul_(2)), RuntimeError,
             modified, True),
        Case("inplace-saved-zero_", modify_saved_constant(lambda w: w.zero_()), RuntimeError,
             modified, True),
        Case("inplace-saved-fill_", modify_saved_constant(lambda w: w.fill_(7.0)),
             RuntimeError, modified, True),
        Case("inplace-saved-copy_", modify_saved_constant(lambda w: w.copy_(np.ones(3))),
             RuntimeError, modified, True),
        Case("inplace-saved-setitem", modify_saved_constant(lambda w: w.__setitem__(0, 5.0)),
             RuntimeError, modified, True),
        Case("inplace-saved-through-reshape",
             modify_saved_constant(lambda w: w.reshape(3, 1).add_(1)), RuntimeError,
             modified, True),
        Case("inplace-saved-through-slice",
             modify_saved_constant(lambda w: w[1:].zero_()), RuntimeError, modified, True),
        Case("inplace-saved-through-view-of-view",
             modify_saved_constant(lambda w: w.reshape(1, 3).reshape(3)[0:1].mul_(3)),
             RuntimeError, modified, True),
        Case("inplace-saved-through-detach",
             modify_saved_constant(lambda w: w.detach().add_(1)), RuntimeError, modified,
             True),
        Case("inplace-saved-leaf-optimizer-step-before-backward",
             optimizer_step_before_backward, RuntimeError,
             ("modified by an inplace operation", "saved by mul"), True),
        # the raw NumPy escape hatch is closed: numpy() views are read-only
        Case("numpy-view-is-read-only", write_numpy_view(lambda w: w.numpy()), ValueError,
             ("read-only",), None),
        Case("numpy-view-of-detach-is-read-only",
             write_numpy_view(lambda w: w.detach().numpy()), ValueError, ("read-only",), None),
        Case("numpy-view-ufunc-out-is-read-only",
             lambda: np.add(x3().numpy(), 1, out=x3().numpy()), ValueError, ("read-only",),
             None),
        # in-place changes of tensors that are part of autograd
        Case("inplace-leaf-requires-grad", lambda: x3().add_(1), RuntimeError,
             ("a leaf Variable that requires grad is being used in an in-place operation",
              "no_grad()"), True),
        Case("inplace-leaf-setitem", lambda: x3().__setitem__(0, 1.0), RuntimeError,
             ("a leaf Variable that requires grad is being used in an in-place operation",),
             True),
        Case("inplace-non-leaf", lambda: (x3() * 2).mul_(2), RuntimeError,
             ("in-place operations on a tensor that is part of a recorded graph",
              ".detach()"), True),
        # requires_grad
        Case("requires-grad-int", lambda: tensor([1, 2], requires_grad=True), RuntimeError,
             ("Tensors of floating point", "can require gradients", "int64"), True),
        Case("requires-grad-bool", lambda: tensor([True, False]).requires_grad_(),
             RuntimeError, ("Tensors of floating point", "can require gradients", "bool"),
             True),
        Case("requires-grad-int-zeros", lambda: ag.zeros(2, dtype=np.int32, requires_grad=True),
             RuntimeError, ("can require gradients", "int32"), True),
        Case("requires-grad-off-non-leaf", lambda: setattr(x3() * 2, "requires_grad", False),
             RuntimeError, ("you can only change requires_grad flags of leaf variables",
                            "var.detach()"), False),
        # shapes and dims
        Case("reshape-wrong-size", lambda: x3().reshape(2, 2), RuntimeError,
             ("is invalid for input of size 3", "[2, 2]"), True),
        Case("reshape-two-unknowns", lambda: m23().reshape(-1, -1), RuntimeError,
             ("is invalid for input of size 6", "use -1 for one size"), True),
        dim_case("sum", lambda t: t.sum(dim=2), 2, -2, 1),
        dim_case("sum-tuple", lambda t: t.sum(dim=(0, -3)), -3, -2, 1),
        dim_case("mean", lambda t: t.mean(dim=-3), -3, -2, 1),
        dim_case("max", lambda t: t.max(dim=2), 2, -2, 1),
        dim_case("var", lambda t: t.var(axis=5), 5, -2, 1),
        dim_case("softmax", lambda t: t.softmax(dim=2), 2, -2, 1),
        dim_case("log_softmax", lambda t: ag.log_softmax(t, dim=-3), -3, -2, 1),
        dim_case("logsumexp", lambda t: t.logsumexp(dim=2), 2, -2, 1),
        dim_case("cat", lambda t: ag.cat([t, t], dim=2), 2, -2, 1),
        dim_case("transpose", lambda t: t.transpose(0, 2), 2, -2, 1),
        dim_case("permute", lambda t: t.permute(0, 2), 2, -2, 1),
        dim_case("squeeze", lambda t: t.squeeze(2), 2, -2, 1),
        dim_case("flatten", lambda t: t.flatten(0, 2), 2, -2, 1),
        dim_case("split", lambda t: t.split(1, dim=2), 2, -2, 1),
        dim_case("unsqueeze", lambda t: t.unsqueeze(3), 3, -3, 2),
        dim_case("stack", lambda t: ag.stack([t, t], dim=-4), -4, -3, 2),
        Case("dim-unsqueeze-hint-counts-input-dims", lambda: x3().unsqueeze(2), IndexError,
             ("but got 2", "the input has 1 dimension(s)"), True),
        Case("cat-sizes-differ", lambda: ag.cat([m23(), ag.ones(2, 4)], dim=0), RuntimeError,
             ("cat:", "(2, 3)", "(2, 4)", "outside dim 0"), True),
        Case("stack-sizes-differ", lambda: ag.stack([m23(), ag.ones(2, 4)]), RuntimeError,
             ("stack expects each tensor to be equal size", "(2, 3)", "(2, 4)"), False),
        # one value expected
        Case("bool-of-many", lambda: bool(x3()), RuntimeError,
             ("Boolean value of Tensor with more than one value is ambiguous", "(3,)",
              ".any() or .all()"), True),
        Case("if-on-many", lambda: 1 if m23() > 0 else 0, RuntimeError,
             ("Boolean value of Tensor with more than one value is ambiguous",), True),
        Case("item-of-many", lambda: x3().item(), RuntimeError,
             ("a Tensor with 3 elements cannot be converted to",), True),
        Case("float-of-many", lambda: float(m23()), RuntimeError,
             ("a Tensor with 6 elements cannot be converted to", "(2, 3)"), True),
        # data a tensor cannot hold
        Case("data-ragged", lambda: tensor([[1.0, 2.0], [3.0]]), ValueError,
             ("ragged nested sequences", "same length"), True),
        Case("data-ragged-deep", lambda: tensor([[[1.0], [2.0]], [[3.0]]]), ValueError,
             ("ragged nested sequences",), True),
        Case("data-str", lambda: tensor("1.0"), TypeError,
             ("cannot make a tensor from data of type str",), False),
        Case("data-bytes", lambda: tensor(b"12"), TypeError,
             ("cannot make a tensor from data of type bytes",), False),
        Case("data-list-of-str", lambda: tensor(["a", "b"]), TypeError,
             ("cannot make a tensor from data of type list",), False),
        Case("data-None", lambda: tensor(None), TypeError,
             ("cannot make a tensor from data of type NoneType",), False),
        Case("data-list-with-None", lambda: tensor([1.0, None]), TypeError,
             ("cannot make a tensor from data of type list", "object"), False),
        Case("data-object-array", lambda: tensor(np.array([1, "a"], dtype=object)), TypeError,
             ("cannot make a tensor from data of type ndarray", "object"), False),
        Case("data-dict", lambda: tensor({"a": 1.0}), TypeError,
             ("cannot make a tensor from data of type dict",), False),
        Case("data-set", lambda: tensor({1.0, 2.0}), TypeError,
             ("cannot make a tensor from data of type set",), False),
        # operands of the wrong type
        Case("operand-dict-add", lambda: x3() + {"a": 1}, TypeError,
             ("add:", not_a_tensor, "dict"), False),
        Case("operand-dict-radd", lambda: {"a": 1} + x3(), TypeError,
             ("add:", not_a_tensor, "dict"), False),
        Case("operand-str-mul", lambda: x3() * "2", TypeError,
             ("mul:", not_a_tensor, "str"), False),
        Case("operand-None-sub", lambda: x3() - None, TypeError,
             ("sub:", not_a_tensor, "NoneType"), False),
        Case("operand-dict-matmul", lambda: m23() @ {"a": 1}, TypeError,
             ("matmul:", not_a_tensor, "dict"), False),
        Case("operand-dict-maximum", lambda: ag.maximum(x3(), {"a": 1}), TypeError,
             ("maximum:", not_a_tensor, "dict"), False),
        Case("operand-dict-where", lambda: ag.where([True] * 3, x3(), {"a": 1}), TypeError,
             ("where:", not_a_tensor, "dict"), False),
        Case("operand-dict-cat", lambda: ag.cat([x3(), {"a": 1}]), TypeError,
             ("cat:", not_a_tensor, "dict"), False),
        Case("operand-dict-exp", lambda: ag.exp({"a": 1}), TypeError,
             ("exp:", not_a_tensor, "dict"), False),
        Case("operand-str-tanh", lambda: ag.tanh("0.5"), TypeError,
             ("tanh:", not_a_tensor, "str"), False),
        Case("operand-dict-sum", lambda: ag.sum({"a": 1}), TypeError,
             ("sum:", not_a_tensor, "dict"), False),
        Case("operand-None-softmax", lambda: ag.softmax(None), TypeError,
             ("softmax:", not_a_tensor, "NoneType"), False),
        Case("operand-dict-reshape", lambda: ag.reshape({"a": 1}, 1), TypeError,
             ("reshape:", not_a_tensor, "dict"), False),
    ]


def _module_with_child():
    model = ag.nn.Sequential()
    model.fc = ag.nn.Linear(1, 1)
    model.fc = 3


def routed_cases():
    """Errors whose message the engine once built inline at the raise."""
    gain = ag.nn.init.calculate_gain
    return [
        # tensors
        Case("hook-without-grad", lambda: tensor([1.0]).register_hook(lambda g: g),
             RuntimeError, ("cannot register a hook on a tensor that doesn't require "
                            "gradient", "requires_grad=True"), True),
        Case("len-of-0-d", lambda: len(tensor(1.0)), TypeError, ("len() of a 0-d tensor",),
             None),
        Case("index-with-float-tensor", lambda: [1, 2][tensor(1.0)], TypeError,
             ("only integer tensors of a single element can be used as an index",), None),
        # ops
        Case("clip-without-bounds", lambda: ag.clip(x3()), RuntimeError,
             ("clip: At least one of 'min' or 'max' must not be None",), True),
        Case("sum-repeated-dim", lambda: m23().sum(dim=(0, -2)), RuntimeError,
             ("appears multiple times in the list of dims",), None),
        Case("permute-repeated-dim", lambda: m23().permute(0, 0), RuntimeError,
             ("permute:", "(0, 0)", "not a permutation of the 2 dimensions"), True),
        Case("cat-nothing", lambda: ag.cat([]), ValueError,
             ("cat: expected a non-empty sequence of tensors",), False),
        Case("split-size-zero", lambda: x3().split(0), ValueError,
             ("split: split_size must be positive, got 0",), False),
        Case("split-sections-sum", lambda: x3().split([1, 1]), RuntimeError,
             ("split: sizes [1, 1] must sum to the size of dim 0 (3)",), False),
        # modules, init, optimizers
        Case("module-without-forward", lambda: ag.nn.Module()(x3()), NotImplementedError,
             ("Module defines no forward method",), True),
        Case("module-buffer-not-tensor", lambda: ag.nn.Module().register_buffer("b", 1.0),
             TypeError, ("cannot assign 'float' as buffer 'b'",), None),
        Case("module-add-non-module", lambda: ag.nn.Module().add_module("c", 1), TypeError,
             ("int is not a Module subclass",), None),
        Case("module-child-set-to-int", _module_with_child, TypeError,
             ("cannot assign 'int' as child module 'fc'",), None),
        Case("init-fan-of-vector",
             lambda: ag.nn.init.calculate_fan_in_and_fan_out((3,)), ValueError,
             ("fan in and fan out need a weight with at least 2 dimensions", "(3,)"), False),
        Case("init-unknown-gain", lambda: gain("swish"), ValueError,
             ("unsupported nonlinearity 'swish'",), None),
        Case("optimizer-of-floats", lambda: ag.optim.SGD([1.0], lr=0.1), TypeError,
             ("can only optimize Tensors, but one of the params is float", "SGD"), True),
        # transforms and checks
        Case("jvp-has-aux", lambda: jvp(ag.exp, (x3(),), (x3(),), has_aux=True),
             NotImplementedError, ("jvp: has_aux=True is not supported",), False),
        Case("jacrev-argnums", lambda: jacrev(ag.exp, argnums=3)(x3()), RuntimeError,
             ("argnums 3 is out of range for a function called with 1 argument(s)",), False),
        Case("gradcheck-nothing-to-check", lambda: gradcheck(ag.exp, (tensor([1.0]),)),
             ValueError, ("gradcheck: no input requires grad",), True),
        Case("graph-cycle", lambda: topological_order("ab", [("a", "b"), ("b", "a")]),
             CycleError, ("the graph has a cycle:", "a -> b"), False),
    ]


# Known gaps: the fix is in a file this test's author does not own (recording/tensor.py) or
# would change an existing template's text; each reason says what to change.
EXTRA_CASES = [
    Case("numpy-asarray-is-read-only",
         write_numpy_view(lambda w: np.asarray(w)), ValueError, ("read-only",), None),
    Case("bool-of-empty", lambda: bool(tensor([])), RuntimeError,
         ("Boolean value of Tensor with no values is ambiguous",), True),
    # what a ported model file touches (errors/porting.py; more in test_porting.py)
    Case("device-cuda", lambda: tensor([1.0], device="cuda"), RuntimeError,
         ("CPU only", "'cuda'"), True),
    Case("device-not-a-device", lambda: ag.zeros(2, device=3), TypeError, ("a device is",),
         True),
    Case("to-two-devices", lambda: x3().to("cpu", "cpu"), TypeError, ("to() takes",), True),
    Case("topk-k", lambda: ag.topk(x3(), 4), RuntimeError, ("selected index k out of range",),
         True),
    Case("roll-shifts-dims", lambda: ag.roll(m23(), (1, 2), 0), RuntimeError,
         ("one shift per dim",), True),
    Case("multinomial-negative", lambda: ag.multinomial(tensor([1.0, -1.0]), 1), RuntimeError,
         ("probability tensor contains either inf, nan or element < 0",), True),
    Case("multinomial-too-many", lambda: ag.multinomial(tensor([1.0, 0.0]), 2), RuntimeError,
         ("without replacement",), True),
    Case("randint-no-size", lambda: ag.randint(5), TypeError, ("(high, size)",), True),
    Case("from-numpy-list", lambda: ag.from_numpy([1.0]), TypeError, ("NumPy array",), True),
    Case("module-list-function", lambda: ag.nn.ModuleList([abs]), TypeError,
         ("ModuleList holds nn.Module",), True),
    Case("module-list-index", lambda: ag.nn.ModuleList([])[0], IndexError, ("out of range",),
         False),
    Case("clip-norm-type", lambda: ag.nn.utils.clip_grad_norm_([x3()], 1.0, norm_type=-1),
         ValueError, ("norm_type",), True),
    Case("save-a-list", lambda: ag.save([x3()], "unused.npz"), TypeError, ("state dict",),
         True),
    Case("load-not-an-archive", lambda: ag.load(__import__("io").BytesIO(b"not a zip")),
         ValueError, ("not a state dict saved by autograd_core.save",), True),
    Case("no-grad-argument", lambda: no_grad(3), TypeError, ("function to decorate",), True),
]

def stepper_at(step: int):
    from widgets.stepper import BackwardStepper

    stepper = BackwardStepper((x3() * x3()).sum())
    stepper.step = step
    return stepper


def parse_typed_answer(text: str):
    from widgets.feedback.inputs import parse_answer

    return parse_answer(text)


def live_view_of(value):
    from widgets.live import live

    return live(value)


def widget_cases():
    """The presentation layer's messages (widgets/messages.py), built the same way."""
    from widgets.feedback.inputs import AnswerProblem

    return [
        Case("stepper-step-out-of-range", lambda: stepper_at(99), IndexError,
             ("step 99 is out of range", "to 2"), True),
        Case("stepper-unknown-input", lambda: stepper_at(1).predict(1.0, input="nope"),
             ValueError, ("this step sends gradients to the inputs", "'nope'"), True),
        Case("view-of-a-number", lambda: live_view_of(3), TypeError,
             ("live expects a Tensor", "got int"), True),
        Case("typed-answer-unreadable", lambda: parse_typed_answer("[1,"), AnswerProblem,
             ("could not read '[1,' as a number or an array",), None),
    ]


CASES = key_phrase_cases() + routed_cases() + widget_cases()
IDS = [c.id for c in CASES]
assert len(set(IDS)) == len(IDS), "case ids must be unique"

def _raise(case: Case) -> BaseException:
    with pytest.raises(case.exception) as info:
        case.trigger()
    return info.value


@pytest.mark.parametrize("case", CASES + EXTRA_CASES)
def test_error_type_and_key_phrases(case: Case):
    message = str(_raise(case))
    missing = [f for f in case.fragments if f not in message]
    assert not missing, f"{case.id}: {missing} not in message:\n{message}"


@pytest.mark.parametrize("case", [c for c in CASES + EXTRA_CASES if c.hint is not None],
                         ids=lambda c: c.id)
def test_error_message_is_sentences_with_a_hint(case: Case):
    """Our messages: a first line that is a sentence (ends with a period, long enough
    to say what was expected and what was given), and a final 'Hint: ...' sentence
    when the table says we add one. No NumPy traceback text leaks in."""
    message = str(_raise(case))
    lines = message.split("\n")
    assert lines[0][:1].isalpha() and len(lines[0].split()) >= 5, message
    assert lines[0].endswith("."), f"first line is not a full sentence:\n{message}"
    if case.hint:
        assert len(lines) == 2 and lines[1].startswith("Hint: "), message
        assert lines[1].endswith("."), message
    else:
        assert "Hint:" not in message
    assert "ufunc" not in message and "numpy." not in message, message  # no NumPy internals


def test_engine_builds_every_message_in_the_errors_package():
    """The convention: a raise in the engine names a builder of ``autograd_core.errors``
    (or re-raises), so no message is written inline where it is raised."""
    root = Path(ag.__file__).parent
    inline = re.compile(r"raise [A-Z]\w*\((\s*f?[\"']|$)")
    offenders = [f"{path.relative_to(root)}:{number}"
                 for path in sorted(root.rglob("*.py")) if "errors" not in path.parts
                 for number, line in enumerate(path.read_text().splitlines(), 1)
                 if inline.search(line)]
    assert not offenders, f"messages written at the raise: {offenders}"


# -- what must keep working --------------------------------------------------------------
def second_backward_with_retain_graph():
    x = x3()
    loss = (x * x).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    return x.grad.numpy(), 2 * (2 * np.array([1.0, 2.0, 3.0]))  # accumulated twice


def optimizer_update_under_no_grad():
    x = x3()
    (x * x).sum().backward()
    with no_grad():
        x.sub_(0.5 * x.grad)  # x - 0.5 * 2x = 0
    assert x.is_leaf and x.requires_grad
    (x * x).sum().backward()  # a fresh forward after the update is fine
    return x.numpy(), np.zeros(3)


def modify_constant_nobody_saved():
    w = tensor([1.0, 2.0, 3.0])
    x = x3()
    loss = (x + w).sum()  # add saves nothing: its gradient does not read w
    w.add_(1)
    loss.backward()
    return x.grad.numpy(), np.ones(3)


def modify_a_clone_of_a_saved_tensor():
    w = tensor([1.0, 2.0, 3.0])
    x = x3()
    loss = (x * w).sum()
    w.clone().add_(1)
    loss.backward()
    return x.grad.numpy(), np.array([1.0, 2.0, 3.0])


def modify_after_backward():
    w = tensor([1.0, 2.0, 3.0])
    x = x3()
    (x * w).sum().backward()
    w.add_(1)
    return x.grad.numpy(), np.array([1.0, 2.0, 3.0])


def copy_of_numpy_view_is_writable():
    t = tensor([1.0, 2.0])
    a = np.array(t.numpy())
    a[0] = 9.0
    return t.numpy(), np.array([1.0, 2.0])


def requires_grad_true_on_non_leaf_is_a_no_op():
    y = x3() * 2
    y.requires_grad_(True)  # PyTorch allows this: the flag does not change
    return np.array(y.requires_grad), np.array(True)


ALLOWED = [
    second_backward_with_retain_graph,
    optimizer_update_under_no_grad,
    modify_constant_nobody_saved,
    modify_a_clone_of_a_saved_tensor,
    modify_after_backward,
    copy_of_numpy_view_is_writable,
    requires_grad_true_on_non_leaf_is_a_no_op,
]


@pytest.mark.parametrize("program", ALLOWED)
def test_near_misses_keep_working(program):
    got, expected = program()
    np.testing.assert_allclose(got, expected)
