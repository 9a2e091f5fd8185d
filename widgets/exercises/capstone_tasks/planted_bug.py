"""C2, the capstone's second task (lesson 12): a bug hunt.

``C2.problem()`` is a residual CNN with one planted bug that the forward pass does not
show: every output value is right, no NaN appears, but the gradients are wrong. The
learner localises it with the debugging tools (forward pre-hooks to catch each module's
input, then ``gradcheck`` module by module, going down into the module that fails), then
derives what that module's hand-written backward should be and writes it in NumPy:
``C2(module="path", backward=swish_backward)``. The check knows where the bug is; it says
whether the named module is the innermost one that fails, a bigger one around it, the
whole model, or one that passes a gradient check; and it runs the learner's
``swish_backward(x, beta, g)`` by hand (no engine) on the lesson's arrays and on shapes and
β drawn when it runs, naming the known slips of the derivation (the planted one among
them). Letting the engine differentiate x·σ(βx) is not a fix the learner derived.
"""

from __future__ import annotations

import inspect
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

import autograd_core as ag
from autograd_core import nn
from autograd_core.recording.node import Function

from ...feedback import words
from ...feedback.check import check_gradient
from ...feedback.context import Mistake
from ...feedback.result import Result
from ..exercise import Exercise, register
from ..function_cases import Derivation
from ..parts import answers
from ..problems import rng


class SwishOp(Function):
    """f(x) = x · σ(βx), one op with its backward written by hand."""

    name = "swish"
    rule = "dx = g * (s + x * s * (1 - s))  (s = sigmoid(beta * x))"

    @staticmethod
    def forward(ctx, x, beta=1.0):
        s = 0.5 * (1 + np.tanh(0.5 * (beta * x)))  # σ(βx), never overflowing
        ctx.save(x=x, s=s)
        return x * s

    @staticmethod
    def backward(ctx, g):
        x, s = ctx.load("x"), ctx.load("s")
        return (g * (s + x * s * (1 - s)),)


class Swish(nn.Module):
    """x · σ(βx) as a single op (fewer saved arrays than x * (beta * x).sigmoid());
    β = 1 is SiLU."""

    def __init__(self, beta=1.0):
        super().__init__()
        self.beta = beta

    def forward(self, x):
        return SwishOp.apply(x, beta=self.beta)


class Residual(nn.Module):
    """y = body(x) + x; the body is conv → batch norm → Swish → conv → batch norm."""

    def __init__(self, channels, beta=1.0, generator=None, dtype=np.float64):
        super().__init__()
        kw = {"generator": generator, "dtype": dtype}
        self.body = nn.Sequential(OrderedDict([
            ("conv1", nn.Conv2d(channels, channels, 3, padding=1, bias=False, **kw)),
            ("bn1", nn.BatchNorm2d(channels, dtype=dtype)),
            ("act", Swish(beta)),
            ("conv2", nn.Conv2d(channels, channels, 3, padding=1, bias=False, **kw)),
            ("bn2", nn.BatchNorm2d(channels, dtype=dtype)),
        ]))

    def forward(self, x):
        return self.body(x) + x


def bug_hunt_model():
    """The CNN of the hunt: two residual blocks, Swish activations, 10 class scores."""
    kw = {"generator": ag.Generator(5), "dtype": ag.float64}
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1, **kw),
        nn.BatchNorm2d(8, dtype=ag.float64),
        Swish(),
        nn.MaxPool2d(2),
        nn.ResidualBlock(8, 8, **kw),
        Residual(8, beta=2.0, **kw),
        nn.ReLU(),
        nn.AvgPool2d(2),
        nn.Flatten(),
        nn.Linear(32, 10, **kw),
    )


# The code of the hand-written modules, as it runs. It shows the bug to a learner who
# derives the op's gradient and compares (a derivation of their own), and hides it from one
# who only reads: every Swish looks alike, and the one that fails is found by measuring.
SNIPPET = "\n\n".join(inspect.getsource(o) for o in (SwishOp, Swish, Residual, bug_hunt_model))

# Where the bug is, and the modules around it (a gradient check of each fails too).
_BUGGY_MODULE = "5.body.act"
_AROUND_THE_BUG = ("", "5", "5.body")


class _EngineSwish(nn.Module):
    """x · σ(βx) in the engine's own ops: its gradient is the engine's."""

    def __init__(self, beta):
        super().__init__()
        self.beta = beta

    def forward(self, x):
        return x * (self.beta * x).sigmoid()


def _reference_model() -> nn.Module:
    """The same model, weights and all, with the buggy Swish computed by the engine."""
    model = bug_hunt_model()
    model[5].body.act = _EngineSwish(model[5].body.act.beta)
    return model


def _hunt_batch() -> tuple[np.ndarray, np.ndarray]:
    g = rng(125)
    return g.standard_normal((2, 1, 8, 8)), g.integers(0, 10, 2)


@dataclass(frozen=True)
class BugHunt:
    """C2's problem: the buggy model (fresh every time you ask), a batch and its labels."""

    model: nn.Module
    x: ag.Tensor
    y: ag.Tensor

    def __repr__(self) -> str:
        return ("A residual CNN with one planted bug (print(p.model) shows its modules; "
                "C2.snippet the code of its hand-written ones), a batch p.x of "
                f"{self.x.shape[0]} float64 images {words.shape(self.x.shape[1:])} and their "
                "labels p.y. Its forward values are right; some of its gradients are not.")


def bug_hunt() -> BugHunt:
    x, y = _hunt_batch()
    return BugHunt(bug_hunt_model(), ag.tensor(x), ag.tensor(y))


def _module_part(module) -> Result:
    if module is None or module is Ellipsis:
        return Result(False, "module is still a placeholder: replace it with the path of the "
                             "module you found, as model.named_modules() names it.",
                      name="module", diagnosis="none")
    if isinstance(module, nn.Module):
        return Result(False, f"module should be the module's path, a string such as "
                             f"'4.body.conv1' (the names model.named_modules() gives), not the "
                             f"{type(module).__name__} module itself.", name="module",
                      diagnosis="type")
    if isinstance(module, int | np.integer) and not isinstance(module, bool):
        module = str(int(module))
    if not isinstance(module, str):
        return Result(False, f"module should be a path such as '4.body.conv1', a string; you "
                             f"gave {words.a_type(module)} ({words.short(module, 40)}).",
                      name="module", diagnosis="type")
    paths = dict(bug_hunt_model().named_modules())
    path = module.strip()
    if path not in paths:
        # no "did you mean": the nearest path to a typo may be the very module to find
        return Result(False, f"The model has no module {words.short(path, 40)}; its paths are the "
                             "names model.named_modules() gives, such as '0' or "
                             "'4.body.conv1'.", name="module", diagnosis="unknown_module")
    kind = type(paths[path]).__name__
    if path == _BUGGY_MODULE:
        return Result(True, f"Module {path!r} ({kind}) is where the gradient goes wrong: a "
                            "gradient check on the input it receives fails, and it has no "
                            "smaller module inside.", name="module")
    if path == "":
        return Result(False, "'' is the whole model: that its gradients are wrong is the "
                             "symptom. Find the innermost module whose own gradient check "
                             "fails.", name="module", diagnosis="whole_model")
    if path in _AROUND_THE_BUG:
        return Result(False, f"Module {path!r} ({kind}) does fail a gradient check, but so does "
                             "a smaller module inside it, on its own input: go one level "
                             "down.", name="module", diagnosis="too_coarse")
    said = (" Its backward is written by hand, which makes it a natural suspect; measuring "
            "clears it." if kind == "Swish" else "")
    return Result(False, f"Module {path!r} ({kind}) passes a gradient check on the input it "
                         f"receives: its gradients agree with finite differences.{said}",
                  name="module", diagnosis="passes",
                  hint="Catch each module's input with a forward pre-hook, then gradcheck "
                       "every module on a copy of its input that requires grad.")


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1 + np.tanh(0.5 * z))


def _swish_mistakes(x: np.ndarray, beta: float, g: np.ndarray) -> list[Mistake]:
    """The backward of x · σ(βx) with one thing wrong, each named (the planted bug first)."""
    s, s1 = _sigmoid(beta * x), _sigmoid(x)
    return [
        Mistake(g * (s + x * s * (1 - s)), "Your backward computes what the planted one "
                "does: derive d(x · σ(βx))/dx yourself and compare, term by term.",
                "At β = 1 (module '2') the planted backward passes: what does β change?",
                "still_buggy"),
        Mistake(g * beta * (s + x * s * (1 - s)), "Your backward puts the inner derivative on "
                "both terms of the product rule; only the term from σ(βx) has it.",
                "Write d(x · σ(βx))/dx with the product rule, then each factor's derivative.",
                "inner_factor_on_both"),
        Mistake(g * (s + beta ** 2 * x * s * (1 - s)), "Your backward has the inner factor "
                "twice where it belongs once.", "Count the chain-rule factors of σ(βx).",
                "inner_factor_twice"),
        Mistake(g * (s1 + beta * x * s1 * (1 - s1)), "Your backward evaluates the sigmoid at x; "
                "the op computes it at βx.", "What did the forward pass save as s?",
                "sigmoid_of_x"),
        Mistake(g * beta * x * s * (1 - s), "Your backward has only the term from σ(βx): the "
                "product rule's other term, from the factor x, is missing.",
                "x · σ(βx) is a product: both factors depend on x.", "missing_product_term"),
        Mistake(g * s, "Your backward treats σ(βx) as a constant: its own derivative is "
                "missing.", "x · σ(βx) is a product: both factors depend on x.",
                "sigmoid_constant"),
        Mistake(s + beta * x * s * (1 - s), "Your backward leaves out the upstream gradient g: "
                "a backward multiplies its local derivative by what flows in.",
                "What does the op's backward receive, and what does it send on?",
                "missing_upstream"),
        Mistake(x * s, "Your backward returns the op's output, x · σ(βx), not its gradient.",
                "Differentiate x · σ(βx) with respect to x.", "value"),
    ] + ([] if beta == 2.0 else [
        Mistake(g * (_sigmoid(2 * x) + 2 * x * _sigmoid(2 * x) * (1 - _sigmoid(2 * x))),
                "Your backward uses β = 2, the lesson's, whatever β it is given.",
                "Use the beta your function receives.", "fixed_beta")])


def _engine_swish_grad(x: np.ndarray, beta: float, g: np.ndarray) -> np.ndarray:
    """d(x · σ(βx))/dx times g, by the engine's own ops."""
    xt = ag.tensor(x, requires_grad=True)
    (xt * (beta * xt).sigmoid()).backward(ag.tensor(g))
    return xt.grad.numpy()


def _swish_case(seed: int, drawn: bool, betas: tuple[float, float] = (2.0, 2.0)):
    """(x, beta, g) of the lesson's shape (the input of block 5's activation, β = 2) or,
    drawn, of another shape and a β in ``betas``; the engine's answer; the mistakes."""
    g = rng(seed)
    if drawn:
        shape = tuple(int(n) for n in g.integers(2, 6, size=int(g.integers(2, 4))))
        beta = float(g.uniform(*betas))
    else:
        shape, beta = (2, 8, 4, 4), 2.0
    x, up = 2 * g.standard_normal(shape), g.standard_normal(shape)
    return (x, beta, up), _engine_swish_grad(x, beta, up), {
        "mistakes": _swish_mistakes(x, beta, up)}


def _swish_compare(out, expected, ctx) -> Result:
    return check_gradient(out, expected, name="fix", reference="the engine's gradient", **ctx)


# The fix is the learner's derivation: their swish_backward(x, beta, g), by hand, on the
# lesson's arrays and on shapes and β drawn when the check runs (β below 1 and above 2:
# at β = 1 the planted backward is right).
_SWISH_BACKWARD = Derivation("swish_backward", (
    ("the lesson's arrays (β = 2)", lambda: _swish_case(126, False)),
    ("arrays of another shape and a β between 0.3 and 0.8 drawn now",
     lambda: _swish_case(127, True, (0.3, 0.8))),
    ("arrays of a third shape and a β between 2.5 and 4 drawn now",
     lambda: _swish_case(128, True, (2.5, 4.0)))),
    _swish_compare, right="the backward of x · σ(βx), for any β.", label="fix",
    probe="Is the lesson's β, or a shape, built into it?")


def _fix_part(backward) -> Result:
    if backward is None or backward is Ellipsis:
        return Result(False, "backward is still a placeholder: write swish_backward(x, beta, g) "
                             "in NumPy, the gradient the module's op should send back, and "
                             "pass the function.", name="fix", diagnosis="none")
    if not callable(backward) or isinstance(backward, type):
        return Result(False, f"backward should be a function swish_backward(x, beta, g) that "
                             f"returns the gradient with respect to x; you gave "
                             f"{words.a_type(backward)} ({words.short(backward, 40)}).",
                      name="fix", diagnosis="type")
    return _SWISH_BACKWARD.check(backward)


class _SwishWith(Function):
    """x · σ(βx) with its gradient computed by a backward(x, beta, g) given as a param."""

    name = "swish"
    rule = "dx = backward(x, beta, g)  (yours)"

    @staticmethod
    def forward(ctx, x, beta=1.0, backward=None):
        return SwishOp.forward(ctx, x, beta=beta)

    @staticmethod
    def backward(ctx, g):
        return (np.asarray(ctx.params["backward"](ctx.load("x"), ctx.params["beta"], g),
                           dtype=g.dtype),)


def with_backward(model: nn.Module, path: str, backward) -> nn.Module:
    """``model`` with the Swish at ``path`` sending back ``backward(x, beta, g)`` (yours)
    in place of its own backward; the forward values stay the same.

    >>> fixed = with_backward(C2.problem().model, "2", my_swish_backward)  # doctest: +SKIP
    """
    module = dict(model.named_modules())[path]
    if not isinstance(module, Swish):
        raise TypeError(f"with_backward replaces a Swish's backward; {path!r} is a "
                        f"{type(module).__name__}")
    module.forward = lambda x: _SwishWith.apply(x, beta=module.beta, backward=backward)
    return model


@answers("module", "fix")
def _check_c2(module=None, backward=None) -> Result:
    """``C2(module="path", backward=swish_backward)``: where the planted bug is (a path of
    ``model.named_modules()``), and ``swish_backward(x, beta, g)``, in NumPy, the gradient
    with respect to x that the buggy module's op should send back for upstream gradient g.

    >>> _check_c2(module="2").parts[0].diagnosis            # doctest: +SKIP
    'passes'
    """
    return Result.combine([_module_part(module), _fix_part(backward)])


# Wrong answers before the bug is found and fixed: the model has 24 module paths, and
# gradient checks of one's own find the one; asking the check about each is a search.
TRIES = 4
register(Exercise("C2", "spot_error", {"hunt": _check_c2}, problem=bug_hunt, snippet=SNIPPET,
                  tries=TRIES))
