"""Modules collapse and expand inside the stepper (and the tracer): the picture is laid
out again at the same step, and while the sweep is inside a collapsed module its box
carries the step's highlights. Headless: read the canvas's SVG and CSS traits."""

import re
import sys
from pathlib import Path

import numpy as np
import pytest
from sample_programs import broadcast_mask_fanout as program

import autograd_core as ag
from autograd_core import nn
from widgets import BackwardStepper, ForwardTracer
from widgets.graph_ids import edge_id, module_node_id
from widgets.highlight import STYLES

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root
from bench.graph_shapes import cnn  # noqa: E402


def node_ids(svg: str) -> set[str]:
    return set(re.findall(r'<g id="([^"]+)" class="node', svg))


def highlighted(css: str, category: str) -> set[str]:
    """The ids a CSS block gives ``category``'s style (see widgets.highlight.STYLES)."""
    inner, declarations = STYLES[category]
    ids: set[str] = set()
    for targets, rule_inner, rule in re.findall(r":is\(([^)]*)\)(.*?)\{([^}]*)\}", css):
        if rule == declarations and rule_inner == inner:
            ids.update(t.lstrip("#") for t in targets.split(",") if t.startswith("#"))
    return ids


def mlp_loss():
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    return model(ag.tensor(np.arange(6.0).reshape(2, 3) / 6, name="x")).sum()


@pytest.fixture
def stepper():
    s = BackwardStepper(mlp_loss())
    yield s
    s.close()


def step_of(s, module: str) -> int:
    """The step that visits the (first) op of ``module``."""
    ops = {o.id for o in s.graph.ops if o.module == module}
    return next(r.number for r in s.replay.steps if r.op in ops)


def test_the_picker_lists_the_modules_and_is_hidden_without_any(stepper):
    # each module by its path, its type and its op count (Linear records one op)
    assert stepper.module_picker.options == (("0 · Linear (1 op)", "0"),
                                             ("1 · Tanh (1 op)", "1"),
                                             ("2 · Linear (1 op)", "2"))
    assert stepper.module_picker.layout.display == ""
    plain = BackwardStepper(program()[0])
    assert plain.module_picker.options == ()
    assert plain.module_picker.layout.display == "none"
    plain.close()


def test_collapsing_draws_the_box_without_its_ops_and_keeps_the_step(stepper):
    s = stepper
    inside = [o.id for o in s.graph.ops if o.module == "0"]
    s.step = 2
    before = s.picture.svg
    s.module_picker.value = ("0",)  # what a click in the picker does
    assert s.collapsed == ("0",) and s.step == 2
    assert s.picture.svg == s.svg != before
    assert "m_0" in node_ids(s.svg) and not set(inside) & node_ids(s.svg)
    assert s.controls.value == 2 and s.controls.label.value == f"2 / {len(s.replay)}"


def test_while_the_sweep_is_inside_a_collapsed_module_its_box_is_highlighted(stepper):
    s = stepper
    s.collapsed = ("0",)
    k = step_of(s, "0")
    s.step = k
    box = module_node_id("0")
    css = s.picture.css
    assert highlighted(css, "current") == {box}
    assert s.picture.focus == box
    record = s.replay.step(k)
    assert box in highlighted(css, "sent")  # the weight and bias it sends to are in the box
    assert not {record.op, *(x.tensor for x in record.sent)} & (
        highlighted(css, "current") | highlighted(css, "sent"))
    for targets in re.findall(r":is\(([^)]*)\)", css):  # every id styled is drawn
        for ident in re.findall(r"#(\w+)", targets):
            assert f'id="{ident}"' in s.svg, ident


def test_an_op_outside_the_box_keeps_its_own_highlight_and_the_box_is_done_once_left(stepper):
    s = stepper
    s.collapsed = ("2",)
    box = module_node_id("2")
    after = step_of(s, "2") + 1
    s.step = after
    op = s.replay.step(after).op
    assert highlighted(s.picture.css, "current") == {op}
    assert box in highlighted(s.picture.css, "done")
    s.step = step_of(s, "2") - 1  # before the sweep reaches it: not done
    assert box not in highlighted(s.picture.css, "done")


def test_an_edge_into_the_box_carries_the_gradient_sent_along_it(stepper):
    s = stepper
    s.collapsed = ("1",)  # tanh alone: its input comes from outside the box
    k = step_of(s, "1")
    s.step = k
    tanh = s.replay.step(k).op
    source = next(o.inputs[0] for o in s.graph.ops if o.id == tanh)
    edge = f"e_{source}_{module_node_id('1')}"
    assert f'id="{edge}"' in s.svg
    assert edge in highlighted(s.picture.css, "sent-edge")
    assert edge_id(tanh, 0) not in s.picture.css


def test_expanding_restores_the_first_picture_and_its_highlights(stepper):
    s = stepper
    k = step_of(s, "0")
    s.step = k
    svg, css = s.picture.svg, s.picture.css
    s.collapsed = ("0", "1")
    assert s.picture.svg != svg
    s.module_picker.value = ()
    assert s.step == k
    assert s.picture.svg == svg == s.svg and s.picture.css == css
    assert s.pages is s.pages.origin  # the first layout, value tooltips and all


def test_a_stepper_built_collapsed_highlights_the_box_and_expands():
    s = BackwardStepper(mlp_loss(), collapse=("0",))
    assert s.collapsed == ("0",) and "m_0" in node_ids(s.svg)
    s.last()
    assert "m_0" in highlighted(s.picture.css, "current")
    s.collapsed = ()
    assert "m_0" not in node_ids(s.picture.svg)
    assert s.replay.step(s.step).op in highlighted(s.picture.css, "current")
    s.close()


def test_close_stops_both_the_first_and_the_current_pages():
    s = BackwardStepper(mlp_loss())
    first = s.pages
    s.collapsed = ("1",)
    current = s.pages
    assert current is not first
    s.collapsed = ("2",)  # a page set laid out later and left: closed at once
    assert current._closed and not first._closed
    s.close()
    assert first._closed and s.pages._closed


def test_a_paged_stepper_collapses_a_block_around_the_current_op():
    s = BackwardStepper(cnn(900), picture="neighbourhood")
    k = 30
    s.step = k
    assert s.pages.arrived.wait(30)
    op = s.replay.step(k).op
    block = ".".join(next(o.module for o in s.graph.ops if o.id == op).split(".")[:2])
    s.collapsed = (block,)
    assert s.pages.paged and s.step == k
    box = module_node_id(block)
    assert box in node_ids(s.picture.svg) and op not in node_ids(s.picture.svg)
    assert highlighted(s.picture.css, "current") == {box}
    visible = s.pages.visible(s.pages.shown)
    assert set(re.findall(r"#((?:op|t|m_)\w+)", s.picture.css)) <= visible
    s.collapsed = ()
    assert op in node_ids(s.picture.svg)
    s.close()


@pytest.mark.parametrize("blocks", [1, 40])  # 40: too many paths, outer levels listed
def test_a_block_is_listed_with_its_type_and_every_op_inside_it(blocks):
    """Each module reads '<path> · <its class> (<ops in it and inside it> ops)'; the
    class is checked against the model's own named_modules."""
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1),
                          nn.Sequential(*[nn.ResidualBlock(4) for _ in range(blocks)]),
                          nn.Flatten(), nn.Linear(64, 2))
    view = BackwardStepper(model(ag.tensor(np.ones((1, 3, 4, 4)))).sum())
    classes = {path: type(m).__name__ for path, m in model.named_modules()}
    options = view.module_picker.options
    assert options and any(path.count(".") >= 1 for _, path in options)
    for label, path in options:
        inside = [o for o in view.graph.ops
                  if o.module == path or (o.module or "").startswith(path + ".")]
        ops = f"{len(inside)} op{'s' * (len(inside) != 1)}"
        assert label == f"{path} · {classes[path]} ({ops})"
    view.close()


def test_the_tracer_collapses_too():
    tracer = ForwardTracer(mlp_loss())
    assert [path for _, path in tracer.module_picker.options] == ["0", "1", "2"]
    tracer.step = 2  # tanh, in module 1
    tracer.collapsed = ("1",)
    assert tracer.step == 2 and "m_1" in node_ids(tracer.picture.svg)
    assert highlighted(tracer.picture.css, "current") == {"m_1"}
    tracer.collapsed = ()
    assert tracer.rows[1].op in highlighted(tracer.picture.css, "current")
    tracer.close()
