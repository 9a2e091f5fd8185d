"""Any size, never a hang: what the views draw of a huge graph, and the guard on
Graphviz. Structural facts only (what is drawn, how many nodes, that the layout
has a timeout); the times are measured in ``bench/bench_widgets.py --scale``.
"""

import re
import stat
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from autograd_core.tools.graph import capture
from widgets import BackwardStepper, ForwardTracer, GraphView, controls, draw, graph_view, panels
from widgets import svg as svg_module
from widgets.render import COPY_SPAN, layout_estimate, plan_picture, to_dot
from widgets.svg import LayoutTimeout, to_svg

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root
from bench.graph_shapes import chain, cnn, reused_leaf_loop  # noqa: E402

NODE = re.compile(r'<g id="([^"]+)" class="node')


def drawn_nodes(svg: str) -> list[str]:
    return NODE.findall(svg)


@pytest.fixture(scope="module")
def big_chain():
    return chain(10_000)


@pytest.fixture(scope="module")
def loop_graph():
    return capture(reused_leaf_loop(3000))


# -- predicting the cost ---------------------------------------------------------------------
def test_the_estimate_grows_with_the_graph_and_needs_no_graphviz(monkeypatch, big_chain):
    monkeypatch.setattr(svg_module.subprocess, "run", None)  # any Graphviz call would fail
    small, large = layout_estimate(capture(chain(300))), layout_estimate(capture(big_chain))
    assert large.nodes > 30 * small.nodes // 2 and large.seconds > 10 * small.seconds


def test_a_reused_leaf_is_drawn_once_per_use_so_no_edge_spans_the_graph(loop_graph):
    g = loop_graph
    x = next(t for t in g.tensors if t.name == "x")
    users = [o for o in g.ops if x.id in o.inputs]
    dot = to_dot(g)
    copies = re.findall(rf'^\s+({x.id}_at_\w+) \[id="\1", class="tensor leaf copy_{x.id}',
                        dot, re.M)
    assert len(copies) == len(users) - 1  # the first use draws the leaf itself
    order = {o.id: o.order for o in g.ops}
    for source, op in re.findall(r"^\s+(\w+) -> (op\d+) \[", dot, re.M):
        if source == x.id:
            assert order[op] == users[0].order  # only its first use hangs off the leaf
    assert layout_estimate(g).span < COPY_SPAN * 10  # no long edges left to route


def test_small_graphs_keep_one_node_per_leaf():
    g = capture(reused_leaf_loop(40))
    assert "copy_" not in to_dot(g)


# -- what a view draws of a huge graph --------------------------------------------------------
@pytest.mark.parametrize("shape, size", [(chain, 10_000), (reused_leaf_loop, 3000),
                                         (cnn, 3000)])
def test_the_plan_for_a_huge_graph_is_small(shape, size):
    g = capture(shape(size))
    plan = plan_picture(g, controls.VIEW_BUDGET)
    assert plan.note and plan.estimate.seconds <= controls.VIEW_BUDGET
    assert plan.estimate.nodes <= 1500
    if shape is cnn:  # modules: a column of collapsed blocks, every op accounted for
        assert plan.ops is None and plan.collapse
    else:  # no modules: the first and last ops, the ones between as one note
        assert plan.ops is not None and sum(b - a for a, b in plan.ops) <= 120


def test_graph_view_of_the_reused_leaf_loop_draws_a_part_and_says_so(loop_graph):
    view = GraphView(loop_graph)
    nodes = drawn_nodes(view.svg)
    assert len(nodes) <= 600 and "gap0" in nodes
    assert "too many to lay out quickly" in view.note.value
    assert "ops=(start, stop)" in view.note.value
    ops = {o.id for o in loop_graph.ops}
    assert loop_graph.ops[0].id in nodes and loop_graph.ops[-1].id in nodes
    assert len(ops & set(nodes)) <= 120
    view.close()


def test_graph_view_of_a_module_heavy_cnn_collapses_its_blocks():
    y = cnn(3000)
    view = GraphView(y)
    assert "modules are drawn as one box" in view.note.value
    listed = {path for _, path in view.module_picker.options}
    assert set(view.collapsed) and set(view.collapsed) <= listed
    boxes = [n for n in drawn_nodes(view.svg) if n.startswith("m_")]
    assert len(boxes) == len(view.plan.collapse) > 50
    view.module_picker.value = tuple(view.collapsed[1:])  # open one block
    opened = view.plan.collapse
    assert len(opened) == len(boxes) - 1
    view.close()


def test_draw_takes_a_range_of_ops(big_chain):
    g = capture(big_chain)
    svg = draw(g, ops=(100, 140))._repr_svg_()
    ops = [n for n in drawn_nodes(svg) if n.startswith("op")]
    assert ops == [f"op{k}" for k in range(100, 140)]
    assert "gap0" in svg and "gap1" in svg  # what comes before, and after


def test_the_gap_note_says_how_many_ops_of_which_kinds():
    g = capture(reused_leaf_loop(1000))
    dot = to_dot(g, ops=[(0, 10)])
    label = re.search(r'gap0 \[.*label=<(.*)>, tooltip', dot)[1]
    n = len(g.ops) - 10
    assert f"{n:,} ops not drawn" in label and "mul" in label and "add" in label


# -- the stepper and the tracer: the neighbourhood of the current op ------------------------
@pytest.fixture(scope="module")
def paged_stepper():
    stepper = BackwardStepper(chain(10_000))
    yield stepper
    stepper.close()


def shown_ops(view) -> set[str]:
    return {n for n in drawn_nodes(view.picture.svg) if n.startswith("op")}


def test_a_stepper_on_ten_thousand_nodes_shows_pages_around_the_current_op(paged_stepper):
    s = paged_stepper
    assert s.pages.paged and s.pages.size <= controls.PAGE_OPS
    assert "neighbourhood of the current op" in s.note.value
    n = len(s.replay)
    for k in [1, 2, 61, 200, n // 2, n - 3, n, 5, 0]:
        s.step = k
        assert s.pages.arrived.wait(30)  # the page is laid out in the background
        ops = shown_ops(s)
        assert len(ops) <= controls.PAGE_OPS
        op = s.replay.step(k).op if k else s.graph.ops[-1].id
        assert op in ops, (k, op)
        css = s.picture.css
        assert len(css) < 20_000  # the page's ids only, not the graph's
        for ident in re.findall(r"#(op\d+|t\d+)", css):
            assert ident in s.pages.visible(s.pages.shown)


def test_a_step_on_the_same_page_only_restyles(paged_stepper):
    s = paged_stepper
    s.step = 300
    assert s.pages.arrived.wait(30)
    s.step = 301  # the same page
    picture = s.picture.svg
    s.step = 302
    assert s.picture.svg is picture


def test_a_step_does_not_wait_for_graphviz(monkeypatch, paged_stepper):
    s = paged_stepper
    s.step = 10
    assert s.pages.arrived.wait(30)
    calls = []
    monkeypatch.setattr(controls, "_lay_out", lambda pages, page: calls.append(page) or
                        __import__("time").sleep(0.5) or "<svg></svg>")
    s.pages._svgs.clear()  # forget the pages laid out ahead
    before = s.picture.svg
    s.step = len(s.replay) // 3  # far away: its page must be laid out
    assert s.picture.svg is before  # still the old page, for now
    assert s.pages.arrived.wait(30) and s.pages.current_svg == "<svg></svg>"


def test_leaves_grad_follow_the_stepper_after_jumps():
    y, x, c = _loop_with_leaves(300)
    stepper = BackwardStepper(y)
    n = len(stepper.replay)
    for k in [n, 5, n // 2, 0, n - 1, 7]:
        stepper.step = k
        for tid, leaf in stepper.replay.leaves.items():
            expected = stepper.replay.leaf_grad(tid, k)
            assert (leaf.grad is None) == (expected is None)
            if expected is not None:
                assert np.array_equal(leaf.grad.numpy(), expected)
    stepper.close()


def test_a_jump_changes_grads_inside_the_tensors_already_there():
    """As the engine accumulates: a reference taken earlier follows the stepper, and a
    jump makes no new Tensor for a leaf that already has a gradient (each would be one
    more object for Python's collector to examine; its pauses land on steps)."""
    y, x, c = _loop_with_leaves(300)
    stepper = BackwardStepper(y, picture="neighbourhood")
    n = len(stepper.replay)
    tid = next(t for t, leaf in stepper.replay.leaves.items() if leaf is x)
    stepper.step = n // 4
    g = x.grad
    assert g is not None
    for k in (n, n // 2, n // 3):
        stepper.step = k
        assert x.grad is g
        assert np.array_equal(g.numpy(), stepper.replay.leaf_grad(tid, k))
    stepper.step = 0
    assert x.grad is None
    stepper.close()


def _loop_with_leaves(n):
    import autograd_core as ag

    x = ag.tensor(np.linspace(0.5, 0.9, 3), requires_grad=True, name="x")
    c = ag.tensor(np.full(3, 0.1), requires_grad=True, name="c")
    acc = ag.tensor(np.ones(3))
    for _ in range(n):
        acc = acc * x + c
    return acc.sum(), x, c


def test_an_accumulation_lists_its_last_contributions_only():
    y, x, c = _loop_with_leaves(200)
    stepper = BackwardStepper(y, picture="neighbourhood")
    stepper.last()  # the last step adds x's last contribution to 199 earlier ones
    text = stepper.step_html.value
    assert text.count("from op") <= panels.CONTRIBUTIONS + 2
    assert "earlier contributions" in text
    stepper.close()


def test_the_leaves_panel_lists_the_changed_leaves_first_and_says_how_many():
    y = cnn(700)
    stepper = BackwardStepper(y)
    leaves = len(stepper.replay.leaves)
    assert leaves > panels.LEAF_ROWS
    stepper.step = len(stepper.replay) // 2
    panel = stepper.leaves_html.value
    assert panel.count("<tr") == panels.LEAF_ROWS
    assert f"{panels.LEAF_ROWS} of {leaves:,}" in panel
    changed = [s.tensor for s in stepper.replay.step(stepper.step).sent if s.to_leaf]
    for tid in changed:
        assert f">{tid} " in panel or f">{tid}&" in panel or tid in panel
    stepper.close()


def test_a_forward_tracer_on_ten_thousand_nodes_follows_the_op(big_chain):
    tracer = ForwardTracer(big_chain)
    assert tracer.pages.paged
    for k in [1, 500, len(tracer.rows)]:
        tracer.step = k
        assert tracer.pages.arrived.wait(30)
        assert tracer.rows[k - 1].op in shown_ops(tracer)
    tracer.close()


# -- the guard on Graphviz ---------------------------------------------------------------------
def test_every_layout_has_a_timeout(monkeypatch):
    seen = []
    real = svg_module.subprocess.run

    def run(*args, **kwargs):
        seen.append(kwargs.get("timeout"))
        return real(*args, **kwargs)

    monkeypatch.setattr(svg_module.subprocess, "run", run)
    to_svg.cache_clear()
    y = reused_leaf_loop(60)
    draw(y)
    GraphView(reused_leaf_loop(60)).close()
    BackwardStepper(reused_leaf_loop(60)).close()
    ForwardTracer(reused_leaf_loop(60)).close()
    assert seen and all(t is not None and t > 0 for t in seen)


@pytest.fixture
def slow_renderer(tmp_path, monkeypatch):
    """A fake Graphviz that sleeps on any graph of more than 200 lines of DOT, and
    lays smaller ones out with the real renderer."""
    real = svg_module.renderer()
    fake = tmp_path / "slow-dot"
    fake.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import subprocess, sys, time
        dot = sys.stdin.buffer.read()
        if dot.count(b"\\n") > 200:
            time.sleep(60)
        sys.stdout.buffer.write(subprocess.run([{real!r}, *sys.argv[1:]], input=dot,
                                               capture_output=True).stdout)
        """))
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(svg_module, "renderer", lambda: str(fake))
    to_svg.cache_clear()
    yield
    to_svg.cache_clear()


def test_a_slow_layout_is_stopped_with_a_message_that_says_what_to_do(slow_renderer):
    dot = to_dot(capture(chain(300)))
    with pytest.raises(LayoutTimeout) as stopped:
        to_svg(dot, timeout=0.5)
    message = str(stopped.value)
    assert "within 0.5 s, so it was stopped" in message
    assert "collapse=" in message and "ops=(start, stop)" in message
    assert "timeout=" in message and "LAYOUT_TIMEOUT" in message
    assert stopped.value.seconds == 0.5


def test_draw_full_raises_the_timeout(slow_renderer):
    with pytest.raises(LayoutTimeout):
        draw(chain(300), picture="full", timeout=0.3)


def test_graph_view_falls_back_to_a_small_picture_when_graphviz_is_slow(slow_renderer,
                                                                           monkeypatch):
    monkeypatch.setattr(graph_view, "WHOLE_TIMEOUT", 0.3)
    view = GraphView(chain(300))  # predicted quick, but this Graphviz hangs on it
    assert "Graphviz was stopped after 0.3 s" in view.note.value
    assert len([n for n in drawn_nodes(view.svg) if n.startswith("op")]) <= 24
    view.close()


def test_a_stepper_pages_when_the_whole_layout_is_stopped(slow_renderer, monkeypatch):
    monkeypatch.setattr(controls, "WHOLE_TIMEOUT", 0.3)
    monkeypatch.setattr(controls, "PAGE_OPS", 20)  # pages of < 200 lines of DOT
    stepper = BackwardStepper(chain(300))
    assert stepper.pages.paged
    stepper.next()
    assert stepper.pages.arrived.wait(30)
    assert stepper.replay.step(1).op in shown_ops(stepper)
    stepper.close()


@pytest.mark.skipif(sys.platform == "win32", reason="the memory cap is POSIX only")
def test_a_layout_past_the_memory_cap_is_stopped_with_a_message(monkeypatch):
    monkeypatch.setattr(svg_module, "LAYOUT_MEMORY", 40 * 1024 * 1024)
    to_svg.cache_clear()
    with pytest.raises(LayoutTimeout, match=r"ran out of .* GiB it may use[\s\S]*LAYOUT_MEMORY"):
        to_svg(to_dot(capture(chain(3000))))
