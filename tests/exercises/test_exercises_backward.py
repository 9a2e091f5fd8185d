"""Write the backward yourself: check_backward (and W3, W4) on ops a learner might write,
right ones and each way of getting the contract or the math wrong."""

import numpy as np
import pytest

import autograd_core as ag
from autograd_core.recording.node import Function
from widgets import exercises as ex
from widgets.exercises import backward_check, check_backward
from widgets.exercises.backward_specs import SPECS


@pytest.fixture(autouse=True)
def _own_progress_file(tmp_path, monkeypatch):
    """Progress goes to this test's own file, never to a learner's home directory."""
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))


class Softplus(Function):
    name = "softplus"

    @staticmethod
    def forward(ctx, x):
        ctx.save(x=x)
        return np.log1p(np.exp(x))

    @staticmethod
    def backward(ctx, g):
        return (g / (1 + np.exp(-ctx.load("x"))),)


class Sigmoid(Function):
    name = "sigmoid"

    @staticmethod
    def forward(ctx, x):
        out = 1 / (1 + np.exp(-x))
        ctx.save(out=out)
        return out

    @staticmethod
    def backward(ctx, g):
        s = ctx.load("out")
        return (g * s * (1 - s),)


class LayerNorm(Function):
    name = "layer_norm"

    @staticmethod
    def forward(ctx, x, eps=1e-5):
        inv = 1 / np.sqrt(x.var(-1, keepdims=True) + eps)
        xhat = (x - x.mean(-1, keepdims=True)) * inv
        ctx.save(xhat=xhat, inv=inv)
        return xhat

    @staticmethod
    def backward(ctx, g):
        xhat, inv = ctx.load("xhat"), ctx.load("inv")
        return (inv * (g - g.mean(-1, keepdims=True) - xhat * (g * xhat).mean(-1,
                                                                          keepdims=True)),)


def variant(base, forward=None, backward=None):
    """A copy of ``base`` with another forward and/or backward."""
    body = {}
    if forward:
        body["forward"] = staticmethod(forward)
    if backward:
        body["backward"] = staticmethod(backward)
    return type(base.__name__ + "Variant", (base,), body)


def _read_unsaved(ctx, g):
    return (g / (1 + np.exp(-ctx.load("input"))),)


def _no_tuple(ctx, g):
    return g / (1 + np.exp(-ctx.load("x")))


def _two_grads(ctx, g):
    return g, g


def _in_place(ctx, g):
    g *= 1 / (1 + np.exp(-ctx.load("x")))
    return (g,)


def _no_upstream(ctx, g):
    return (1 / (1 + np.exp(-ctx.load("x"))),)


def _sign_inside(ctx, g):
    return (g / (1 + np.exp(ctx.load("x"))),)


def _raises(ctx, g):
    return (g * undefined_name,)  # noqa: F821 - the learner's bug


def _returns_none(ctx, g):
    ctx.load("x")
    return (None,)


def _save_extra(ctx, x):
    ctx.save(x=x, spare=x * 2)
    return np.log1p(np.exp(x))


def _tensor_forward(ctx, x):
    ctx.save(x=x)
    return ag.log(1 + ag.exp(ag.tensor(x)))


def _wrong_forward(ctx, x):
    ctx.save(x=x)
    return np.exp(x)


def _sigmoid_from_input(ctx, x):
    ctx.save(x=x)
    return 1 / (1 + np.exp(-x))


def _sigmoid_backward_from_input(ctx, g):
    s = 1 / (1 + np.exp(-ctx.load("x")))
    return (g * s * (1 - s),)


def _ln_naive(ctx, g):
    ctx.load("xhat")
    return (g * ctx.load("inv"),)


# (spec, op, {part: diagnosis})
CASES = [
    ("softplus", Softplus, {"forward": "correct", "dx": "correct", "saved": "correct"}),
    ("sigmoid", Sigmoid, {"forward": "correct", "dx": "correct", "saved": "correct"}),
    ("layer_norm", LayerNorm, {"forward": "correct", "dx": "correct", "saved": "correct"}),
    ("softplus", variant(Softplus, backward=_read_unsaved), {"": "read_unsaved"}),
    ("softplus", variant(Softplus, backward=_no_tuple), {"": "contract"}),
    ("softplus", variant(Softplus, backward=_two_grads), {"": "contract"}),
    ("softplus", variant(Softplus, backward=_in_place), {"": "contract"}),
    ("softplus", variant(Softplus, forward=_tensor_forward), {"": "contract"}),
    ("softplus", variant(Softplus, backward=_raises), {"": "raised"}),
    ("softplus", variant(Softplus, backward=_no_upstream),
     {"forward": "correct", "dx": "missing_upstream", "saved": "correct"}),
    ("softplus", variant(Softplus, backward=_sign_inside),
     {"forward": "correct", "dx": "sign_inside", "saved": "correct"}),
    ("softplus", variant(Softplus, backward=_returns_none),
     {"forward": "correct", "dx": "no_gradient", "saved": "correct"}),
    ("softplus", variant(Softplus, forward=_save_extra),
     {"forward": "correct", "dx": "correct", "saved": "saved_unread"}),
    ("softplus", variant(Softplus, forward=_wrong_forward),
     {"forward": "values", "dx": "correct", "saved": "correct"}),
    ("sigmoid", variant(Sigmoid, forward=_sigmoid_from_input,
                        backward=_sigmoid_backward_from_input),
     {"forward": "correct", "dx": "correct", "saved": "saves_input"}),
    ("layer_norm", variant(LayerNorm, backward=_ln_naive),
     {"forward": "correct", "dx": "batchnorm_naive", "saved": "correct"}),
]


@pytest.mark.parametrize("spec, op, codes", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_check_backward(spec, op, codes):
    # check_backward itself, unrecorded: on softplus the public one is W3's whole check
    result = backward_check._check_backward(op, spec)
    got = {p.name: p.diagnosis for p in (result.parts or (result,))}
    assert got == codes, repr(result)
    assert result.ok == all(c == "correct" for c in codes.values())
    assert "Traceback" not in repr(result)


def test_reading_an_unsaved_name_is_a_sentence():
    result = check_backward(variant(Softplus, backward=_read_unsaved), "softplus")
    assert "ctx.load('input')" in result.message and "'x'" in result.message


def test_the_line_of_a_raising_backward_is_named():
    result = check_backward(variant(Softplus, backward=_raises), "softplus")
    assert "NameError" in result.message and "undefined_name" in result.message


@pytest.mark.parametrize("not_an_op", [None, 3, Softplus(), "Softplus", np.exp])
def test_not_an_op(not_an_op):
    expected = "none" if not_an_op is None else "type"  # None: the placeholder, not a try
    assert check_backward(not_an_op, "softplus").diagnosis == expected


def test_gradcheck_mode_for_any_op():
    x = [np.linspace(-2.0, 2.0, 6).reshape(2, 3)]
    assert check_backward(Sigmoid, None, inputs=x).ok
    wrong = check_backward(variant(Softplus, backward=_no_upstream), None, inputs=x)
    assert [p.diagnosis for p in wrong.parts] == ["missing_upstream", "correct"]


def test_check_leaves_nothing_behind_on_the_learners_class():
    before = dict(vars(Softplus))
    check_backward(Softplus, "softplus")
    assert dict(vars(Softplus)) == before


def test_w3_composes_the_local_rule():
    result = ex.W3(Softplus)
    assert result.ok and len(result.parts) == 4
    assert not ex.W3(variant(Softplus, backward=_no_upstream)).ok


def test_w4_wants_the_output_saved():
    assert ex.W4(Sigmoid).ok
    result = ex.W4(variant(Sigmoid, forward=_sigmoid_from_input,
                           backward=_sigmoid_backward_from_input))
    assert not result.ok and "saves_input" in [p.diagnosis for p in result.parts]


def test_unknown_spec_is_an_authoring_error():
    with pytest.raises(KeyError, match="no backward exercise"):
        check_backward(Softplus, "cosh")


def _sigmoid_rebuilding_z(ctx, g):
    s = ctx.load("out")
    z = np.log(s / (1 - s))                 # the input, rebuilt from the output
    e = np.exp(-z)                          # ... and the exp the item says is not needed
    return (g * e / (1 + e) ** 2,)


def test_w4_refuses_a_backward_that_rebuilds_the_input_and_calls_exp():
    """Issue #39: reading only the output is not enough when backward rebuilds z from it and
    recomputes exp(-z); the values are right, so only the watch on what backward computes
    from what it read can tell."""
    rebuilt = variant(Sigmoid, backward=_sigmoid_rebuilding_z)
    result = ex.W4(rebuilt)
    codes = {p.name: p.diagnosis for p in result.parts}
    assert codes == {"forward": "correct", "dx": "correct", "saved": "recomputes"}, repr(result)
    assert "exp" in result.parts[-1].message and "log" in result.parts[-1].message


def _by_engine(spec):
    """An op whose backward hands the work to the engine: the spec's own reference, run
    forward and backward inside the learner's backward (the values are right)."""

    class ByEngine(Function):
        @staticmethod
        def forward(ctx, *arrays, **params):
            ctx.save(**{f"a{i}": a for i, a in enumerate(arrays)})
            with ag.no_grad():
                return spec.reference(*[ag.tensor(a) for a in arrays], **params).numpy()

        @staticmethod
        def backward(ctx, g):
            leaves = [ag.tensor(ctx.load(f"a{i}"), requires_grad=True)
                      for i in range(len(ctx.saved))]
            spec.reference(*leaves, **ctx.params).backward(ag.tensor(np.asarray(g)))
            return tuple(t.grad.numpy() for t in leaves)

    return ByEngine


ex.registry()  # every item registered, so SPEC_ITEMS holds W3's and W4's specs too


@pytest.mark.parametrize("spec_name", sorted(backward_check.SPEC_ITEMS))
def test_a_backward_that_runs_the_engine_is_refused_on_every_item(spec_name):
    """Issue #39: on every item whose answer is an op (generated from SPEC_ITEMS, not
    listed by hand), a backward that lets the engine compute the gradients is refused."""
    item = backward_check.SPEC_ITEMS[spec_name]
    result = ex.registry()[item].check(_by_engine(SPECS[spec_name]))
    assert not result.ok, item
    assert result.diagnosis == "uses_engine", (item, repr(result))


@pytest.mark.parametrize("borrowing", ["subclass", "method"])
@pytest.mark.parametrize("spec_name", sorted(backward_check.SPEC_ITEMS))
def test_an_op_that_takes_the_engines_own_op_is_refused_on_every_item(spec_name, borrowing):
    """Issue #39's third audit: ``class MySigmoid(Sigmoid)`` inherits the engine's
    backward, which a check then runs from its own code, where no watch sees the learner.
    An op whose base is one of the engine's ops, or that takes a method from one, is
    refused (its only engine base may be Function)."""
    from autograd_core.ops.elementwise import Sigmoid

    if borrowing == "subclass":
        op = type("MyOp", (Sigmoid,), {"name": "my_op"})
    else:
        op = type("MyOp", (Function,), {"name": "my_op", "forward": Sigmoid.forward,
                                        "backward": Sigmoid.backward})
    item = backward_check.SPEC_ITEMS[spec_name]
    result = ex.registry()[item].check(op)
    assert not result.ok and result.diagnosis == "uses_engine", (item, repr(result))
    assert "Sigmoid" in result.message or "from the engine" in result.message


class _ConvByEngineCode(Function):
    """B2's op with the engine's own array-level conv backward: it runs no engine op, so
    only the watch on calls into the engine's code can tell (issue #39's re-audit)."""

    @staticmethod
    def forward(ctx, x, w, padding=1):
        from numpy.lib.stride_tricks import sliding_window_view

        xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
        ctx.save(x=x, w=w)
        return np.einsum("ncpqij,ocij->nopq", sliding_window_view(xp, w.shape[2:], axis=(2, 3)),
                         w)

    @staticmethod
    def backward(ctx, g):
        from autograd_core.ops import conv

        x, w, p = ctx.load("x"), ctx.load("w"), ctx.params["padding"]
        return (conv.input_grad(g, w, x.shape, (1, 1), (p, p), (1, 1), 1),
                conv.weight_grad(g, x, w.shape, (1, 1), (p, p), (1, 1), 1))


def test_a_backward_that_calls_the_engines_array_code_is_refused():
    result = ex.B2(_ConvByEngineCode)
    assert not result.ok and result.diagnosis == "uses_engine", repr(result)
    assert "conv.input_grad" in result.message


def test_the_engines_array_code_behind_a_library_function_is_still_the_engines():
    """The audit's route: ``functools.singledispatch(conv.input_grad)`` put a frame of
    Python's own library between the learner's backward and the engine."""
    import functools

    from autograd_core.ops import conv

    class Dispatched(_ConvByEngineCode):
        @staticmethod
        def backward(ctx, g):
            x, w, p = ctx.load("x"), ctx.load("w"), ctx.params["padding"]
            return (functools.singledispatch(conv.input_grad)(g, w, x.shape, (1, 1), (p, p),
                                                              (1, 1), 1),
                    functools.singledispatch(conv.weight_grad)(g, x, w.shape, (1, 1), (p, p),
                                                               (1, 1), 1))

    result = ex.B2(Dispatched)
    assert not result.ok and result.diagnosis == "uses_engine", repr(result)


def test_a_forward_that_runs_engine_ops_is_refused_but_a_tensor_returned_is_named_first():
    def engine_forward(ctx, x):
        ctx.save(out=1 / (1 + np.exp(-x)))
        return ag.sigmoid(ag.tensor(x)).numpy()

    result = ex.W4(variant(Sigmoid, forward=engine_forward))
    assert not result.ok and result.diagnosis == "uses_engine", repr(result)
    assert "forward" in result.message


def _tabled(spec):
    """An op whose backward answers from a table: the engine's gradients worked out before
    the check, on the inputs ``spec.inputs()`` lists (the fourth audit's route for B2-B6)."""
    arrays = spec.inputs()
    params = {**spec.params, **(spec.data() if spec.data is not None else {})}
    leaves = [ag.tensor(a, requires_grad=True) for a in arrays]
    out = spec.reference(*leaves, **params)
    out.backward(ag.tensor(backward_check._upstream(out.shape)))  # the check's upstream
    table, value = [leaf.grad.numpy() for leaf in leaves], out.numpy()

    class Tabled(Function):
        @staticmethod
        def forward(ctx, *xs, **kwargs):
            ctx.save(x=xs[0])
            return value

        @staticmethod
        def backward(ctx, upstream):
            return tuple(table)

    return Tabled


@pytest.mark.parametrize("drawn", ["afresh", "as listed"])
@pytest.mark.parametrize("spec_name", sorted(backward_check.SPEC_ITEMS))
def test_a_backward_from_answers_worked_out_beforehand_does_not_fit(spec_name, drawn,
                                                                    monkeypatch):
    """The inputs (and seeded parameters) of a written backward's check are drawn afresh at
    every check, so a table of the engine's gradients on the listed inputs does not fit;
    the control: with the inputs as listed, the same table's gradients are right."""
    import contextlib

    from widgets.exercises import problems

    if drawn == "as listed":
        monkeypatch.setattr(problems, "unseen", lambda secret=None: contextlib.nullcontext())
    item = backward_check.SPEC_ITEMS[spec_name]
    result = ex.registry()[item].check(_tabled(SPECS[spec_name]))
    gradients_right = [p.ok for p in result.parts if p.name.startswith("d")]
    assert gradients_right and all(gradients_right) == (drawn == "as listed"), (item, repr(result))
