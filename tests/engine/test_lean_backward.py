"""``Tensor.backward()`` and ``backward_steps`` run one sweep: the same results, always.

``backward()`` runs the engine's sweep without building step records (the lean loop);
``backward_steps`` runs it recording a ``Step`` per visit (the stepper, the lessons).
Each program below is built twice from the same seed and swept both ways, and
everything a learner or a test can observe must agree bit for bit: every leaf's and
retained ``.grad`` (values, dtype, None-ness), which saved tensors were released, the
calls each hook received (in order, with the gradient it saw), and the exception
raised (type and message) with what was done before it.
"""

from __future__ import annotations

import numpy as np
import pytest
from sample_programs import broadcast_mask_fanout

import autograd_core as ag
from autograd_core import nn
from autograd_core.nn import functional as F
from autograd_core.sweep.engine import backward_steps, reverse_topological


class Log:
    """What a hook saw, in call order: (label, copy of the gradient)."""

    def __init__(self):
        self.calls = []

    def hook(self, label, change=None):
        def hook(grad):
            self.calls.append((label, grad.numpy().copy()))
            return None if change is None else change(grad)

        return hook


# -- programs: each returns (output, leaves, retained, gradient, retain_graph) --------------
def fanout(log, rng):
    y, x, w, b = broadcast_mask_fanout(int(rng.integers(1000)))
    return y, [x, w, b], [], None, False


def chain(log, rng):
    x = ag.tensor(rng.normal(size=(3, 3)), requires_grad=True)
    y = x
    for i in range(40):
        y = (y * 0.9).tanh() if i % 2 else y + x
    return y.sum(), [x], [], None, False


def hooks_everywhere(log, rng):
    x = ag.tensor(rng.normal(size=(4, 3)), requires_grad=True)
    w = ag.tensor(rng.normal(size=(3, 3)), requires_grad=True)
    x.register_hook(log.hook("x"))
    w.register_hook(log.hook("w, doubled", lambda g: g * 2.0))
    h = (x @ w).tanh()
    h.register_hook(log.hook("h"))
    h.retain_grad()
    z = h * x + (h @ w).sigmoid()  # x and w reached along several edges
    z.register_hook(log.hook("z, clipped", lambda g: g.clip(-0.1, 0.1)))
    return z, [x, w], [h], rng.normal(size=(4, 3)), False


def broadcast_and_dtypes(log, rng):
    a = ag.tensor(rng.normal(size=(1, 3)).astype(np.float32), requires_grad=True)
    b = ag.tensor(rng.normal(size=(4, 1)), requires_grad=True)  # float64
    c = ag.tensor(rng.normal(size=(3,)), requires_grad=True)
    y = (a * b + c).exp() / (b + 2.0) - a.astype(np.float64).relu()
    return y.mean(), [a, b, c], [], None, False


def unused_and_constant(log, rng):
    x = ag.tensor(rng.normal(size=(3,)), requires_grad=True)
    unused = ag.tensor(rng.normal(size=(3,)), requires_grad=True)
    frozen = ag.tensor(rng.normal(size=(3,)))
    _ = unused * 2.0
    y = (x * frozen).sum() + (x.detach() * 3.0).sum()
    return y, [x, unused], [], None, False


def same_leaf_twice(log, rng):
    x = ag.tensor(rng.normal(size=(2, 2)), requires_grad=True)
    x.register_hook(log.hook("x"))
    return x + x, [x], [], np.ones((2, 2)), False


def leaf_output(log, rng):
    x = ag.tensor(rng.normal(size=(3,)), requires_grad=True)
    x.register_hook(log.hook("x", lambda g: g * 3.0))
    return x, [x], [], rng.normal(size=(3,)), False


def retained_graph(log, rng):
    x = ag.tensor(rng.normal(size=(3,)), requires_grad=True)
    return (x * x).sum(), [x], [], None, True


def small_cnn(log, rng):
    ag.manual_seed(int(rng.integers(1000)))
    model = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4),
                          nn.ReLU(), nn.MaxPool2d(2))
    x = ag.tensor(rng.normal(size=(3, 2, 6, 6)), requires_grad=True)
    h = model(x)
    h.register_hook(log.hook("pooled"))
    logits = F.linear(h.flatten(1), ag.randn(5, 36, requires_grad=True))
    loss = F.cross_entropy(logits, ag.tensor(rng.integers(0, 5, size=3)))
    return loss, [x, *model.parameters()], [], None, False


PROGRAMS = [fanout, chain, hooks_everywhere, broadcast_and_dtypes, unused_and_constant,
            same_leaf_twice, leaf_output, retained_graph, small_cnn]


# -- programs that fail part-way: the same error, after the same work ---------------------------
def modified_after_save(log, rng):
    x = ag.tensor(rng.normal(size=(3,)), requires_grad=True)
    y = x * 2.0
    z = y.tanh()  # saves its output ...
    out = (z * x).sum()
    with ag.no_grad():
        z.add_(1.0)  # ... which is then changed in place
    return out, [x], [], None, False


def hook_returns_wrong_shape(log, rng):
    x = ag.tensor(rng.normal(size=(3,)), requires_grad=True)
    h = x.exp()
    h.register_hook(log.hook("h", lambda g: g.sum()))
    return (h * h).sum(), [x], [], None, False


def hook_returns_array(log, rng):
    x = ag.tensor(rng.normal(size=(3,)), requires_grad=True)
    x.register_hook(log.hook("x", lambda g: g.numpy() * 2))
    return (x * x).sum(), [x], [], None, False


def hook_raises(log, rng):
    x = ag.tensor(rng.normal(size=(3,)), requires_grad=True)
    h = x.sin()

    def boom(g):
        raise ValueError("a hook failed")

    h.register_hook(boom)
    return (h * x).sum(), [x], [], None, False


def implicit_gradient_of_many(log, rng):
    x = ag.tensor(rng.normal(size=(3,)), requires_grad=True)
    return x * 2.0, [x], [], None, False


def gradient_of_wrong_shape(log, rng):
    x = ag.tensor(rng.normal(size=(3,)), requires_grad=True)
    return x * 2.0, [x], [], np.ones(4), False


def nothing_requires_grad(log, rng):
    return ag.tensor([1.0, 2.0]).sum(), [], [], None, False


FAILING = [modified_after_save, hook_returns_wrong_shape, hook_returns_array, hook_raises,
           implicit_gradient_of_many, gradient_of_wrong_shape, nothing_requires_grad]


# -- running a program both ways ---------------------------------------------------------------
def _grad(t):
    return None if t.grad is None else t.grad.numpy().copy()


def run(program, seed: int, stepped: bool, twice: bool = False) -> dict:
    """Build ``program`` from ``seed``, sweep it (lean or stepped), and return what can
    be observed afterwards. ``twice``: sweep a second time (a retained graph adds up,
    a released one raises)."""
    log = Log()
    out, leaves, retained, gradient, retain_graph = program(log, np.random.default_rng(seed))
    nodes = (sorted(reverse_topological(out.grad_fn), key=lambda n: n.seq)
             if out.grad_fn is not None else [])
    error = None
    for _ in range(2 if twice else 1):
        try:
            if stepped:
                for _step in backward_steps(out, gradient, retain_graph):
                    pass
            else:
                out.backward(gradient, retain_graph=retain_graph)
        except Exception as exc:  # noqa: BLE001 - the error itself is compared
            error = (type(exc), str(exc))
            break
    return {
        "grads": [_grad(t) for t in leaves],
        "retained": [_grad(t) for t in retained],
        "released": [(n.op.name, n.released, [(s.name, s.released) for s in n.saved.values()])
                     for n in nodes],
        "hooks": log.calls,
        "error": error,
    }


def assert_same(lean: dict, stepped: dict) -> None:
    assert lean["error"] == stepped["error"]
    assert lean["released"] == stepped["released"]
    for key in ("grads", "retained"):
        assert len(lean[key]) == len(stepped[key])
        for a, b in zip(lean[key], stepped[key]):
            assert (a is None) == (b is None)
            if a is not None:
                assert a.dtype == b.dtype and a.shape == b.shape
                assert a.tobytes() == b.tobytes()  # bit for bit (nan and -0.0 included)
    assert [label for label, _ in lean["hooks"]] == [label for label, _ in stepped["hooks"]]
    for (_, a), (_, b) in zip(lean["hooks"], stepped["hooks"]):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_lean_and_stepped_sweeps_agree(program, seed):
    lean, stepped = run(program, seed, stepped=False), run(program, seed, stepped=True)
    assert lean["error"] is None
    assert any(g is not None for g in lean["grads"]) or not lean["grads"]
    assert_same(lean, stepped)


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_a_second_sweep_agrees_too(program):
    """A retained graph sums a second gradient in; a released one refuses the same way."""
    assert_same(run(program, 5, stepped=False, twice=True),
                run(program, 5, stepped=True, twice=True))


@pytest.mark.parametrize("program", FAILING, ids=lambda p: p.__name__)
def test_the_same_errors_after_the_same_work(program):
    lean, stepped = run(program, 3, stepped=False), run(program, 3, stepped=True)
    assert lean["error"] is not None
    assert_same(lean, stepped)


def test_the_lean_sweep_leaves_no_step_records_behind():
    """Nothing of the records is built or kept: ``Node.reads`` stays unset."""
    y, x, w, b = broadcast_mask_fanout()
    nodes = reverse_topological(y.grad_fn)
    y.backward()
    assert all(n.reads is None for n in nodes)
    assert all(n.released for n in nodes)


def test_steps_still_come_one_at_a_time():
    """The stepped sweep is lazy: after the first step only the first node is released."""
    y, *_ = broadcast_mask_fanout()
    steps = backward_steps(y)
    first = next(steps)
    nodes = reverse_topological(y.grad_fn)
    assert first.node is nodes[0] and nodes[0].released
    assert not any(n.released for n in nodes[1:] if n.saved)
    rest = list(steps)
    assert [s.node for s in [first, *rest]] == nodes
