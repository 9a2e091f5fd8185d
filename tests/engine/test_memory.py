"""The engine's memory behaviour: what a recorded graph keeps alive, and for how long.

* No reference cycles: a graph is freed by reference counting alone, the moment the
  program drops its output (the cyclic collector is switched off while we look).
* Under ``no_grad`` nothing is saved, so a forward pass holds about one layer's
  activations at a time, while a recording forward keeps one per layer: exactly
  what ``graph.saved_bytes`` reports, plus a little bookkeeping per node.
* During backward each saved array and each intermediate gradient is freed as soon
  as the sweep is past the node that needed it, so peak memory is "forward saved +
  a layer or two", not "forward saved + every gradient".
* Against PyTorch: peak RSS growth of one forward+backward of the same MLP, each
  engine in a fresh subprocess (:func:`peak_rss_growth`, reusable by benchmarks).

Sizes come from tracemalloc, which sees NumPy's array buffers (NumPy reports them
to it); BLAS's private work buffers and PyTorch's allocations are invisible to it,
hence RSS for the PyTorch comparison.
"""

from __future__ import annotations

import contextlib
import gc
import sys
import tracemalloc
import weakref
from pathlib import Path

import pytest

import autograd_core as ag
from autograd_core import no_grad
from autograd_core.sweep.engine import backward_steps, reverse_topological
from autograd_core.tools import graph

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root
from bench.memory_probe import can_reset_peak_rss, peak_rss_growth  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
KIB = 1024
# NumPy's ufuncs work through a buffer of 8192 elements when they broadcast or cast;
# tracemalloc sees it as a transient 64 KiB allocation on top of the arrays.
UFUNC_BUFFER = 8192 * 8
# Python objects the engine keeps per recorded node (the Node, its saved-tensor
# records, shape tuples, the output tensor's metadata): measured ~1.1 KiB on
# CPython 3.11; 2 KiB leaves room for other versions without hiding a leaked array
# (the smallest array in these tests is 128 KiB).
BOOKKEEPING_PER_NODE = 2 * KIB
# Small Python objects alive at a peak (a few Tensors, tuples, frames): ~3 KiB measured.
PYTHON_OBJECTS = 16 * KIB


@contextlib.contextmanager
def refcounting_only():
    """Run the body with the cyclic garbage collector off, so whatever is freed is
    freed by reference counting alone."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def make_mlp(depth: int, width: int, batch: int, seed: int = 0):
    """Weights ~ N(0, 1/width) (tanh stays out of saturation), zero biases, input x."""
    g = ag.Generator(seed)
    weights = [(ag.randn(width, width, generator=g) * width ** -0.5).detach().requires_grad_()
               for _ in range(depth)]
    biases = [ag.zeros(width, requires_grad=True) for _ in range(depth)]
    x = ag.randn(batch, width, generator=g)
    return weights, biases, x


def tanh_mlp(x, weights, biases):
    """h <- tanh(h @ W + b), layer after layer, written the way a learner writes it."""
    h = x
    for w, b in zip(weights, biases):
        h = ag.tanh(h @ w + b)
    return h


# -- a. no reference cycles ------------------------------------------------------------
ALL_NODES = frozenset({"0:matmul", "1:add", "2:tanh", "3:matmul", "4:add", "5:relu",
                       "6:log_softmax", "7:sum"})
H_NODES = frozenset({"0:matmul", "1:add", "2:tanh"})  # the subgraph behind h
GRAPH_ARRAYS = frozenset({"tanh.out", "relu.mask", "log_softmax.out"})


def build_graph(params, x):
    """A small classifier: h = tanh(x @ W1 + b1); z = relu(h @ W2 + b2);
    out = log_softmax(z).sum(). Returns (out, h, weakrefs by label).

    Weak references go to the two tensors, to every recorded node (labelled by
    recording order) and to every array the graph saved that the program does not
    hold anyway (the parameters and x are held by the caller, so they are left out).
    """
    w1, b1, w2, b2 = params
    h = ag.tanh(x @ w1 + b1)
    out = ag.log_softmax(ag.relu(h @ w2 + b2), dim=1).sum()
    seen = {id(p._data) for p in params} | {id(x._data)}
    refs = {"out": weakref.ref(out), "h": weakref.ref(h)}
    for i, node in enumerate(sorted(reverse_topological(out.grad_fn), key=lambda n: n.seq)):
        refs[f"{i}:{node.op.name}"] = weakref.ref(node)
        for name, saved in node.saved.items():
            if id(saved.array) not in seen:  # first saver names it: tanh.out, not matmul.a
                seen.add(id(saved.array))
                refs[f"{node.op.name}.{name}"] = weakref.ref(saved.array)
    return out, h, refs


KEEP = [
    # (id, what to run first, what the program keeps, alive while kept)
    ("nothing", None, lambda out, h: None, set()),
    ("out", None, lambda out, h: out, {"out"} | ALL_NODES | GRAPH_ARRAYS),
    ("out-after-backward", "backward", lambda out, h: out, {"out"} | ALL_NODES),
    ("out-after-retain-graph", "retain", lambda out, h: out,
     {"out"} | ALL_NODES | GRAPH_ARRAYS),
    ("nothing-after-backward", "backward", lambda out, h: None, set()),
    ("nothing-after-retain-graph", "retain", lambda out, h: None, set()),
    ("steps-of-a-sweep", "steps", lambda out, steps: steps, ALL_NODES),
    ("out.item()", None, lambda out, h: out.item(), set()),
    ("out.detach()", None, lambda out, h: out.detach(), set()),
    # an intermediate keeps its own subgraph, and nothing recorded after it
    ("h", None, lambda out, h: h, {"h", "tanh.out"} | H_NODES),
    ("h-after-backward", "backward", lambda out, h: h, {"h", "tanh.out"} | H_NODES),
    # detach shares the data (h's values stay), never the graph
    ("h.detach()", None, lambda out, h: h.detach(), {"tanh.out"}),
    ("h.detach().numpy()", None, lambda out, h: h.detach().numpy(), {"tanh.out"}),
    ("h.numpy()", None, lambda out, h: h.numpy(), {"tanh.out"}),
]


@pytest.mark.parametrize("first, keep, expected_alive",
                         [pytest.param(*row[1:], id=row[0]) for row in KEEP])
def test_graph_is_freed_by_reference_counting(first, keep, expected_alive):
    g = ag.Generator(1)
    batch, width, classes = 256, 512, 10
    params = [ag.randn(width, width, generator=g, requires_grad=True),
              ag.zeros(width, requires_grad=True),
              ag.randn(width, classes, generator=g, requires_grad=True),
              ag.zeros(classes, requires_grad=True)]
    x = ag.randn(batch, width, generator=g)
    with refcounting_only():
        out, h, refs = build_graph(params, x)
        assert set(refs) == {"out", "h"} | ALL_NODES | GRAPH_ARRAYS
        assert refs["tanh.out"]().nbytes == batch * width * 8  # the large one: 1 MiB
        if first == "backward":
            out.backward()
        elif first == "retain":
            out.backward(retain_graph=True)
        kept = keep(out, list(backward_steps(out)) if first == "steps" else h)
        del out, h

        alive = {label for label, ref in refs.items() if ref() is not None}
        assert alive == expected_alive
        del kept
        assert [label for label, ref in refs.items() if ref() is not None] == []
    assert gc.collect() == 0, "the graph left reference cycles for the collector"


# -- b. no_grad frees intermediates; recording keeps what saved_bytes says ----------------
def traced_forward(run):
    """(result, peak bytes above the start, bytes still held at the end) of ``run()``."""
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        result = run()
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak - start, current - start


@pytest.mark.parametrize("depth", [10, 20, 40])
def test_no_grad_holds_one_layer_while_recording_holds_every_layer(depth):
    """20 layers x 256 units, batch 64, float64: one activation is 128 KiB.

    Under no_grad, ``h = tanh(h @ W + b)`` holds at most three activations at once
    (the layer input, the matmul or add result, and the next one), whatever the
    depth. A recording forward keeps one activation per layer (tanh saves its
    output, the next matmul saves the same array as its input), so it grows with
    depth. The ratio is therefore about depth / 3.5 (measured 5.8x at depth 20,
    11.6x at depth 40); no forward can go below 2 activations alive (a layer's
    input and output), so 10x is out of reach before depth 20 whatever the engine.
    """
    width, batch = 256, 64
    layer = batch * width * 8
    weights, biases, x = make_mlp(depth, width, batch)

    with no_grad():
        out, peak_no_grad, kept = traced_forward(lambda: tanh_mlp(x, weights, biases))
    assert out.grad_fn is None
    assert peak_no_grad <= 3 * layer + UFUNC_BUFFER + PYTHON_OBJECTS
    assert kept <= layer + PYTHON_OBJECTS  # the output itself
    del out

    out, peak_recording, retained = traced_forward(
        lambda: tanh_mlp(x, weights, biases).sum())
    nodes = len(reverse_topological(out.grad_fn))
    held_before = {id(t._data) for t in weights + [x]}
    saved_here = graph.saved_bytes(out) - sum(  # the arrays the forward created
        s.nbytes for n in reverse_topological(out.grad_fn) for s in n.saved.values()
        if id(s.array) in held_before)
    assert saved_here == depth * layer
    assert saved_here <= retained <= saved_here + nodes * BOOKKEEPING_PER_NODE
    assert retained / peak_no_grad >= depth / 4


# -- c. backward frees as it goes --------------------------------------------------------
def test_backward_releases_saved_tensors_and_gradients_as_it_goes():
    """Walk the sweep step by step on a 20-layer tanh MLP and measure after each step
    (tracemalloc's peak is reset before each step, so it catches temporaries inside
    a node's backward too). Parameter gradients are the result and stay; everything
    else must stay within "forward saved + 3 activations" and end at "nothing saved".
    """
    depth, width, batch = 20, 256, 64
    layer = batch * width * 8
    weights, biases, x = make_mlp(depth, width, batch)
    params = weights + biases

    def param_grad_bytes():
        return sum(p.grad.numpy().nbytes for p in params if p.grad is not None)

    gc.collect()
    tracemalloc.start()
    try:
        out = tanh_mlp(x, weights, biases).sum()
        before = tracemalloc.get_traced_memory()[0]
        saved = [graph.saved_bytes(out)]
        activations = depth * layer
        excess = []  # peak during each step above "before", parameter gradients aside
        released_something = []
        sweep = backward_steps(out)
        while True:
            tracemalloc.reset_peak()
            step = next(sweep, None)
            if step is None:
                break
            excess.append(tracemalloc.get_traced_memory()[1] - before - param_grad_bytes())
            saved.append(graph.saved_bytes(out))
            released_something.append(bool(step.released))
            del step
        after = tracemalloc.get_traced_memory()[0] - param_grad_bytes()
    finally:
        tracemalloc.stop()

    assert saved[-1] == 0
    for i, did_release in enumerate(released_something):
        assert saved[i + 1] < saved[i] if did_release else saved[i + 1] == saved[i], i
    # not "forward saved + all gradients" (that would be + depth activations):
    assert max(excess) <= 3 * layer + UFUNC_BUFFER + PYTHON_OBJECTS
    nodes = 3 * depth + 1
    assert after <= before - activations + nodes * BOOKKEEPING_PER_NODE


# -- d. peak memory against PyTorch ------------------------------------------------------
@pytest.mark.torch
@pytest.mark.skipif(not can_reset_peak_rss(), reason=(
    "this system has no /proc/self/clear_refs (a Linux feature), so peak memory cannot be "
    "measured here: nothing to install; the test runs on Linux, as in CI"))
def test_peak_memory_of_forward_backward_is_close_to_pytorch():
    """A measurement, not a benchmark: the assertion is only that we are within 2x
    of PyTorch's peak growth (and not suspiciously below what the model needs).
    The numbers are printed for the record (run with -s)."""
    pytest.importorskip("torch", reason="PyTorch is not installed: the peak-memory comparison "
                        "is skipped (install it with: pip install -e '.[torch]')")
    depth, width, batch = 30, 512, 256
    ours = peak_rss_growth("autograd_core", depth, width, batch)
    theirs = peak_rss_growth("torch", depth, width, batch)
    print(f"\npeak RSS growth, {depth}x{width} tanh MLP, batch {batch}, float32: "
          f"autograd_core {ours['growth'] / 2**20:.1f} MiB, "
          f"torch {theirs['growth'] / 2**20:.1f} MiB")
    # Any engine ends the step holding the parameter gradients (float32); an engine
    # that frees as it goes needs little more (saved activations shrink while the
    # gradients grow). Less than that would mean the measurement missed the step.
    param_grads = depth * (width * width + width) * 4
    for growth in (ours["growth"], theirs["growth"]):
        assert growth >= 0.9 * param_grads
    assert ours["growth"] <= 2 * theirs["growth"]
