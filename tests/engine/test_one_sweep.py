"""One sweep for both modes: ``backward()`` and ``backward(create_graph=True)`` run the
same loop (``engine._sweep``), so what watches the lean sweep (anomaly detection,
``count_ops``, step records, hooks, ``retain_grad``, grad mode) watches the recorded one
the same way. Expected values come from the lean sweep, from closed forms, or from
PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import autograd_core as ag
from autograd_core import autograd
from autograd_core.sweep.engine import backward_steps
from autograd_core.tools.anomaly import detect_anomaly
from autograd_core.tools.counting import count_ops

try:
    import torch
except ImportError:
    torch = None


def small_network(seed: int = 0):
    rng = np.random.default_rng(seed)
    w = ag.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    x = ag.tensor(rng.standard_normal((5, 3)))
    return w, (lambda: ag.tanh(x @ w).exp().mean())


@pytest.mark.parametrize("create_graph", [False, True])
def test_anomaly_detection_stops_at_the_same_nan_in_both_modes(create_graph):
    """sqrt's slope at 0 is inf, times the 0 upstream: nan, in sqrt's backward."""
    x = ag.tensor([0.0, 1.0], requires_grad=True)
    loss = (x.sqrt() * 0).sum()
    with detect_anomaly(), pytest.raises(RuntimeError, match="'SqrtBackward' returned nan"):
        loss.backward(create_graph=create_graph)


def test_count_ops_counts_the_recorded_sweep_as_the_same_backward_work():
    counts = []
    for create_graph in (False, True):
        w, loss = small_network()
        with count_ops() as counted:
            loss().backward(create_graph=create_graph)
        counts.append(counted)
    lean, recorded = counts
    assert recorded.backward.macs == lean.backward.macs > 0
    assert recorded.backward.by_op == lean.backward.by_op
    assert recorded.forward.macs == lean.forward.macs  # the sweep's ops are not forward


def test_create_graph_inside_no_grad_still_records_the_gradient():
    """A gradient penalty computed in a no_grad block keeps its graph, as in PyTorch:
    d/dx sum((3x²)²) = 36x³."""
    x = ag.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x ** 3).sum()
    with ag.no_grad():
        (g,) = autograd.grad(y, x, create_graph=True)
        assert not ag.is_grad_enabled()  # the caller's mode is back after the sweep
    assert g.requires_grad and g.grad_fn is not None
    (g ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 36 * np.array([1.0, 8.0, 27.0]))


@pytest.mark.skipif(torch is None, reason="PyTorch not installed (pip install -e .[torch])")
def test_backward_with_create_graph_inside_no_grad_matches_pytorch():
    values = np.array([0.3, -1.2, 2.0])
    x = ag.tensor(values, requires_grad=True)
    loss = (ag.tanh(x) * x).sum()
    with ag.no_grad():
        loss.backward(create_graph=True)
    (x.grad ** 2).sum().backward()  # .grad had the first gradient; the penalty adds on
    t = torch.tensor(values, requires_grad=True)
    t_loss = (torch.tanh(t) * t).sum()
    with torch.no_grad():
        t_loss.backward(create_graph=True)
    (t.grad ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.detach().numpy(), t.grad.detach().numpy(), rtol=1e-12)


def test_step_records_of_the_recorded_sweep_hold_the_lean_sweeps_values():
    records = []
    for create_graph in (False, True):
        w, loss = small_network()
        steps = list(backward_steps(loss(), create_graph=create_graph))
        records.append([(s.node.op.name, s.reads, [(t.input_index, t.grad) for t in s.sent],
                         s.grad_output) for s in steps])
        if create_graph:
            assert w.grad.requires_grad  # the steps' leaf gradient has its graph
    lean, recorded = records
    assert [r[:2] for r in recorded] == [r[:2] for r in lean]
    for (_, _, sent_r, g_r), (_, _, sent_l, g_l) in zip(recorded, lean, strict=True):
        assert isinstance(g_r, np.ndarray)  # records hold arrays in both modes
        np.testing.assert_allclose(g_r, g_l, rtol=1e-12)
        for (i_r, a_r), (i_l, a_l) in zip(sent_r, sent_l, strict=True):
            assert i_r == i_l
            np.testing.assert_allclose(a_r, a_l, rtol=1e-12)


def test_grad_mode_is_the_callers_between_the_recorded_sweeps_steps():
    w, loss = small_network()
    out = loss()
    with ag.no_grad():
        modes = [ag.is_grad_enabled() for _ in backward_steps(out, create_graph=True)]
    assert modes and not any(modes)
    assert ag.is_grad_enabled()


def test_retain_grad_keeps_a_recorded_gradient():
    x = ag.tensor([0.5, -1.0], requires_grad=True)
    h = x * x
    h.retain_grad()
    (h.sin()).sum().backward(create_graph=True)
    assert h.grad.requires_grad
    np.testing.assert_allclose(h.grad.detach().numpy(), np.cos([0.25, 1.0]))
    h.grad.sum().backward()  # d/dx sum(cos(x²)) = -2x sin(x²), added to x.grad = 2x cos(x²)
    expected = 2 * x.numpy() * np.cos(x.numpy() ** 2) - 2 * x.numpy() * np.sin(x.numpy() ** 2)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)


def test_an_explicit_retain_graph_false_frees_the_forward_graph_as_in_pytorch():
    """``retain_graph`` defaults to ``create_graph``; asked for False it frees the saved
    tensors, and the second sweep, which goes back through them, says so."""
    x = ag.tensor([0.5, -1.0], requires_grad=True)
    loss = ag.tanh(x).sum()
    (g,) = autograd.grad(loss, x, create_graph=True, retain_graph=False)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        g.sum().backward()


# -- ops that raised under create_graph until their backward was written for both modes --
TARGET = np.array([0.5, -1.0, 2.0, 0.0])
LABELS = np.array([1.0, 0.0, 1.0, 1.0])
ROWS = np.array([0, 2, 2, 1])


def _programs(lib, tensor):
    """name -> f(x) (a scalar) for x of shape (4,), in the engine (``lib`` = ag, tensor =
    ag.tensor) or in PyTorch."""
    functional = lib.nn.functional
    return {
        "mse_loss": lambda x: functional.mse_loss(x * x, tensor(TARGET)),
        "mse_loss_sum": lambda x: functional.mse_loss(x.tanh(), tensor(TARGET),
                                                      reduction="sum"),
        "bce_with_logits": lambda x: functional.binary_cross_entropy_with_logits(
            x * x, tensor(LABELS)),
        "embedding": lambda x: (functional.embedding(tensor(ROWS), (x * x).reshape(4, 1))
                                ** 3).sum(),
        "cast": lambda x: (x.to(lib.float32) if lib is not ag else x.astype("float32")
                           ).tanh().sum(),
        "clone": lambda x: (x.clone() ** 3).sum(),
    }


def _hvp(f, x0, v):
    x = ag.tensor(x0, requires_grad=True)
    (g,) = autograd.grad(f(x), x, create_graph=True)
    (h,) = autograd.grad((g * ag.tensor(v)).sum(), x, allow_unused=True,
                         materialize_grads=True)
    return h.numpy()


def _lean_gradient(f, x0):
    x = ag.tensor(x0, requires_grad=True)
    f(x).backward()
    return x.grad.numpy()


@pytest.mark.parametrize("name", list(_programs(ag, ag.tensor)))
def test_second_derivatives_of_ops_that_used_to_raise_match_central_differences(name):
    f = _programs(ag, ag.tensor)[name]
    rng = np.random.default_rng(3)
    x0, v = rng.standard_normal(4) + 0.3, rng.standard_normal(4)
    # cast computes in float32 inside: a step that float32's rounding does not swamp
    eps, tolerance = (1e-2, 1e-3) if name == "cast" else (1e-6, 1e-6)
    expected = (_lean_gradient(f, x0 + eps * v) - _lean_gradient(f, x0 - eps * v)) / (2 * eps)
    np.testing.assert_allclose(_hvp(f, x0, v), expected, rtol=tolerance, atol=tolerance)


@pytest.mark.skipif(torch is None, reason="PyTorch not installed (pip install -e .[torch])")
@pytest.mark.parametrize("name", list(_programs(ag, ag.tensor)))
def test_second_derivatives_of_ops_that_used_to_raise_match_pytorch(name):
    rng = np.random.default_rng(4)
    x0, v = rng.standard_normal(4) + 0.3, rng.standard_normal(4)
    t = torch.tensor(x0, requires_grad=True)
    theirs = _programs(torch, torch.tensor)[name]
    (g,) = torch.autograd.grad(theirs(t), t, create_graph=True)
    (h,) = torch.autograd.grad((g * torch.tensor(v)).sum(), t)
    rtol = 1e-5 if name == "cast" else 1e-10
    np.testing.assert_allclose(_hvp(_programs(ag, ag.tensor)[name], x0, v), h.numpy(),
                               rtol=rtol, atol=1e-12)


def test_dropouts_second_derivative_keeps_its_mask():
    """d²/dx² of sum(dropout(x)²) is 2·mask/(1-p)², drawn from the engine's own mask."""
    x = ag.tensor(np.linspace(0.5, 2.0, 6), requires_grad=True)
    out = ag.nn.functional.dropout(x, 0.5, training=True, generator=ag.Generator(1))
    kept = out.detach().numpy() != 0
    (g,) = autograd.grad((out ** 2).sum(), x, create_graph=True)
    (h,) = autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 2 * kept * 4.0)
    assert 0 < kept.sum() < kept.size


# -- each op's derivative stated once ------------------------------------------------------
def _all_ops():
    import importlib
    import pkgutil

    import autograd_core.ops
    from autograd_core.recording.node import Function
    ops = set()
    for info in pkgutil.iter_modules(autograd_core.ops.__path__):
        module = importlib.import_module(f"autograd_core.ops.{info.name}")
        ops |= {obj for obj in vars(module).values() if isinstance(obj, type)
                and issubclass(obj, Function) and obj.__module__ == module.__name__
                and obj.name != "op"}
    return ops


# The ones whose backward keeps a faster path on arrays beside the rule a create_graph
# sweep records (a ``fast_backward`` beside a compiled rule, or a branch on
# ``ctx.recorded`` in a backward written by hand), and why. Each is held equal
# to its rule by test_create_graph.py (the recorded backward gives the lean one's values).
TWO_PATHS = {
    "relu": "a bit mask instead of where(mask, g, 0): ten times faster",
    "clip": "the same bit mask as relu",
    "gelu": "chunks and a float32 kernel (both gelus share the name)",
    "silu": "computed in float32 for float16 inputs, PyTorch's edge values",
    "softplus": "PyTorch's threshold and edge values, in the input's working dtype",
    "normal_cdf": "float32 kernel",
    "conv2d": "dx and dweight fused from one set of columns",
    "layer_norm": "in place, from the saved x̂ and 1/std",
    "rms_norm": "in place, from the saved x̂ and 1/rms",
    "batch_norm": "in place, from the saved x̂ and 1/std",
    "batch_norm_eval": "in place, from the saved x̂ and 1/std",
    "var": "from the saved centred input, without recomputing the mean",
    "softmax": "float16 worked in float32 and rounded once, as PyTorch's kernel",
    "log_softmax": "float16 worked in float32 and rounded once, as PyTorch's kernel",
}


def _compiled(op) -> bool:
    """Whether the backward ``op`` runs is the one compiled from its own rule."""
    return getattr(op.backward, "source", None) is not None and op.backward.__doc__ == op.rule


def test_every_op_runs_its_rule():
    """Each op's backward is compiled from its rule text (recording/rule.py): its
    derivative is stated once, and the rule a learner reads is the code that runs."""
    ops = _all_ops()
    assert len(ops) > 70  # the discovery found the op library
    hand_written = sorted(op.__name__ for op in ops if not _compiled(op))
    assert not hand_written, f"a backward written by hand beside the rule: {hand_written}"


def test_a_compiled_backward_is_the_rule_and_nothing_else():
    from autograd_core.ops.elementwise import Div
    assert Div.backward.__doc__ == Div.rule == "da = g / b\ndb = -g * a / b**2"
    assert "da = g / b" in Div.backward_source and "db = -g * a / b ** 2" in Div.backward_source


def test_every_op_states_its_derivative_once_or_is_listed_with_its_fast_path():
    """An op with a faster path on arrays beside its rule (``fast_backward``) states its
    derivative twice: only the listed ones may, and a listed one that no longer does
    leaves the list."""
    import inspect
    import re

    def two_paths(op) -> bool:  # a fast path beside its compiled rule, or a branch by hand
        if _compiled(op):
            return getattr(op, "fast_backward", None) is not None
        return re.search(r"\bctx\.recorded\b", inspect.getsource(op.backward)) is not None

    found = {op.name for op in _all_ops() if two_paths(op)}
    assert found == set(TWO_PATHS), (
        f"stated twice but not listed: {sorted(found - set(TWO_PATHS))}; listed but "
        f"stated once now: {sorted(set(TWO_PATHS) - found)}")


def test_no_module_holds_gradient_rules_apart_from_the_ops():
    from pathlib import Path

    import autograd_core
    folder = Path(autograd_core.__file__).parent
    assert not sorted(folder.rglob("graph_backward*.py"))
