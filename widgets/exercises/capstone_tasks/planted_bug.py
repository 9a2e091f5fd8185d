"""C2, the capstone's second task (lesson 12): a bug hunt.

``C2.problem()`` is a residual CNN with one planted bug that the forward pass does not
show: every output value is right, no NaN appears, but the gradients are wrong. The
learner localises it with the debugging tools (forward pre-hooks to catch each module's
input, then ``gradcheck`` module by module, going down into the module that fails) and
repairs it with a forward for that module: ``C2(module="path", forward=fixed_forward)``.
The check knows where the bug is; it says whether the named module is the innermost one
that fails, a bigger one around it, the whole model, or one that passes a gradient check,
and it runs the model with the learner's forward in place of that module: same scores?
the correct model's gradients? or still the buggy ones?
"""

from __future__ import annotations

import inspect
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

import autograd_core as ag
from autograd_core import nn
from autograd_core.nn import functional as F
from autograd_core.recording.node import Function

from ...feedback import words
from ...feedback.result import Result
from .. import learner
from ..exercise import Exercise, register
from ..parts import answers
from ..problems import learner_name, rng


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


@dataclass(frozen=True)
class _Run:
    scores: np.ndarray
    grads: dict  # name -> gradient (the input is "input"); None: no gradient reached it


def _run(model: nn.Module) -> _Run:
    x, y = _hunt_batch()
    xt = ag.tensor(x, requires_grad=True)
    out = model(xt)
    if not isinstance(out, ag.Tensor):
        raise TypeError(f"the model returned {words.a_type(out)}, not a tensor")
    F.cross_entropy(out, ag.tensor(y)).backward()
    grads = {name: None if p.grad is None else p.grad.numpy().copy()
             for name, p in model.named_parameters()}
    grads["input"] = None if xt.grad is None else xt.grad.numpy().copy()
    return _Run(out.numpy().copy(), grads)


@lru_cache(maxsize=4)
def _hunt_references(learner_key: str | None) -> tuple[_Run, _Run]:
    """(the correct model's run, the buggy model's run) on the hunt's batch."""
    return _run(_reference_model()), _run(bug_hunt_model())


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


def _largest_gap(a: dict, b: dict) -> tuple[float, list[str]]:
    """Largest difference between two runs' gradients, and the modules where they differ."""
    worst, where = 0.0, []
    for name, ga in a.items():
        gb = b.get(name)
        if (ga is None) != (gb is None):
            where.append(name)
            worst = float("inf")
            continue
        if ga is None:
            continue
        if not np.allclose(ga, gb, rtol=1e-9, atol=1e-12):
            where.append(name)
            worst = max(worst, float(np.max(np.abs(ga - gb))))
    return worst, where


class _NotATensor(Exception):
    """The learner's forward returned something other than a tensor."""


def _fix_part(module, forward) -> Result:
    if forward is None or forward is Ellipsis:
        return Result(False, "forward is still a placeholder: write fixed_forward(module, x), "
                             "a forward for the module you found, and pass the function.",
                      name="fix", diagnosis="none")
    if not callable(forward) or isinstance(forward, type):
        return Result(False, f"forward should be a function fixed_forward(module, x) that returns "
                             f"the module's output; you gave {words.a_type(forward)} "
                             f"({words.short(forward, 40)}).", name="fix", diagnosis="type")
    path = str(int(module)) if isinstance(module, int | np.integer) and not isinstance(
        module, bool) else module
    model = bug_hunt_model()
    targets = dict(model.named_modules())
    if not isinstance(path, str) or path.strip() not in targets or path.strip() == "":
        return Result(False, "Your fix replaces the forward of the module you name in "
                             "module=...; name one module of the model first.", name="fix",
                      diagnosis="needs_module")
    path = path.strip()
    target = targets[path]
    what = getattr(forward, "__name__", "forward")
    returned = []

    def patched(*args):
        out = forward(target, *args)
        if not isinstance(out, ag.Tensor):
            returned.append(out)
            raise _NotATensor
        return out

    target.forward = patched
    try:
        run = learner.call(_run, model, what=what)
    except learner.LearnerCodeFailed as exc:
        if isinstance(exc.error, _NotATensor):
            got = returned[0]
            return Result(False, f"Your function `{what}` returned "
                                 f"{'None' if got is None else 'a ' + type(got).__name__}, not a "
                                 "tensor: it must return the module's output.", name="fix",
                          diagnosis="type")
        return learner.failed(exc, name="fix")
    good, buggy = _hunt_references(learner_name())
    if run.scores.shape != good.scores.shape or not np.allclose(run.scores, good.scores,
                                                                rtol=1e-9, atol=1e-12):
        return Result(False, f"With your forward in place of module {path!r}, the model's scores "
                             "change: a fix must keep what the model computes.", name="fix",
                      diagnosis="output_changed",
                      hint="Compare your module's output with the original module's on the "
                           "same input: they must be equal.")
    gap, where = _largest_gap(run.grads, good.grads)
    if not where:
        return Result(True, f"With your forward in place of module {path!r}, the scores are the "
                            "same and every gradient (all parameters and the input) matches the "
                            "correct model's.", name="fix")
    if not _largest_gap(run.grads, buggy.grads)[1]:
        return Result(False, f"With your forward in place of module {path!r}, the gradients are "
                             "exactly the buggy model's: the bug is still there.", name="fix",
                      diagnosis="still_buggy")
    size = "some get no gradient at all" if gap == float("inf") else \
        f"by up to {words.number(gap)}"
    return Result(False, f"With your forward in place of module {path!r}, the scores are right "
                         f"but the gradients still differ from the correct model's ({size}).",
                  name="fix", diagnosis="gradients_differ")


@answers("module", "fix")
def _check_c2(module=None, forward=None) -> Result:
    """``C2(module="path", forward=fixed_forward)``: where the planted bug is (a path of
    ``model.named_modules()``), and ``fixed_forward(module, x)``, a forward for that
    module that repairs it.

    >>> _check_c2(module="2").parts[0].diagnosis            # doctest: +SKIP
    'passes'
    """
    fix = _fix_part(module, forward)
    return Result.combine([_module_part(module), fix])



# Wrong answers before the bug is found and fixed: the model has 24 module paths, and
# gradient checks of one's own find the one; asking the check about each is a search.
TRIES = 4
register(Exercise("C2", "spot_error", {"hunt": _check_c2}, problem=bug_hunt, snippet=SNIPPET,
                  tries=TRIES))
