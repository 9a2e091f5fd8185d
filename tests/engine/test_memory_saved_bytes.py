"""Saved bytes are counted one way everywhere: each memory buffer once.

The program below saves views: a slice and a transpose of one leaf (two saves, one
buffer, never saved itself), and a reshape of an array tanh saved (a second save of
that buffer). Every place that reports saved bytes must give the bytes of the
distinct buffers, which the test finds on its own with ``np.shares_memory``: the
live count (``graph.saved_bytes``), the captured data (``Graph.saved_bytes``), the
memory module (``activation_bytes``, ``track_saved_bytes``) and the memory widget's
timeline, over the forward pass and after every step of the sweep.
"""

from __future__ import annotations

import numpy as np

import autograd_core as ag
from autograd_core.sweep.engine import reverse_topological
from autograd_core.tools import graph, memory
from widgets.render import to_dot
from widgets.replay import record
from widgets.summary import format_bytes
from widgets.timeline import forward_held, timeline


def program():
    """(loss, the arrays that own the memory of everything the graph saves)."""
    rng = np.random.default_rng(0)
    x, w, v, u = (ag.tensor(rng.normal(size=shape), requires_grad=True)
                  for shape in [(4, 6), (4, 2), (4, 3), (4, 2)])
    h = x.tanh()  # saves h
    loss = ((x[:, :2] * w).sum()  # saves a view of x, and w
            + (h.reshape(6, 4) @ v).sum()  # saves a view of h, and v
            + (x.T @ u).sum())  # saves another view of x, and u
    return loss, [t._data for t in (x, w, v, u, h)]


def buffers_bytes(loss, buffers) -> int:
    """Bytes of the distinct buffers the saved arrays live in, found by overlap."""
    hit = set()
    for node in reverse_topological(loss.grad_fn):
        for saved in node.saved.values():
            if saved.array is None:
                continue
            owners = [i for i, b in enumerate(buffers) if np.shares_memory(saved.array, b)]
            assert len(owners) == 1, (node, saved)
            hit.add(owners[0])
    return sum(buffers[i].nbytes for i in hit)


def test_every_count_of_saved_bytes_is_the_bytes_of_the_distinct_buffers():
    with memory.track_saved_bytes() as tracked:
        loss, buffers = program()
    expected = buffers_bytes(loss, buffers)
    assert expected == sum(b.nbytes for b in buffers)  # every buffer is saved at least once
    by_array = {id(s.array): s.nbytes for n in reverse_topological(loss.grad_fn)
                for s in n.saved.values()}
    assert sum(by_array.values()) > expected  # counting arrays would count views again

    captured = graph.capture(loss)
    assert graph.saved_bytes(loss) == expected
    assert captured.saved_bytes == graph.held_bytes(captured.saved) == expected
    assert memory.activation_bytes(loss) == expected
    assert tracked.peak == expected
    assert forward_held(captured)[-1] == expected
    assert len({s.buffer for s in captured.saved}) == len(buffers)


def test_the_timeline_of_the_sweep_matches_the_live_arrays_step_by_step():
    loss, buffers = program()
    live_after_each_step = []
    for _step in graph.backward_steps(loss):
        live_after_each_step.append(graph.saved_bytes(loss))
        assert live_after_each_step[-1] == buffers_bytes(loss, buffers)
    replay = record(program()[0])  # the same program again, swept by the widget's replay
    assert list(timeline(replay.graph, replay).backward) == live_after_each_step
    assert live_after_each_step[-1] == 0


def test_the_picture_names_the_buffer_a_saved_view_keeps_alive():
    loss, buffers = program()
    x = buffers[0]
    dot = to_dot(graph.capture(loss))
    assert f"a view keeping its {format_bytes(x.nbytes)} buffer alive" in dot

