"""GraphView draws on the GraphCanvas (pan, zoom, fit, overview, click to inspect),
keeps its module collapse and its stored static picture; the old HTML picture is gone.
Headless: the canvas's traits are set as the browser would set them."""

import re

import pytest
from ipywidgets.widgets.widget import _instances
from sample_programs import broadcast_mask_fanout as program

import autograd_core as ag
from autograd_core import nn
from widgets import GraphView, controls
from widgets.canvas import GraphCanvas
from widgets.graph_view import describe_node


def node_ids(svg: str) -> set[str]:
    return set(re.findall(r'<g id="([^"]+)" class="node', svg))


@pytest.fixture
def model_view():
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    view = GraphView(model(ag.ones((2, 3))).sum())
    yield view
    view.close()


def test_the_picture_is_a_graph_canvas_that_fits_without_shrinking_text():
    view = GraphView(program()[0])
    assert isinstance(view.picture, GraphCanvas)
    assert view.picture.svg == view.svg and view.picture.fit
    assert view.picture.min_font_px == 9.0
    assert view.picture.max_height == "640px"
    view.close()


def test_the_old_html_picture_is_gone():
    assert not hasattr(controls, "Picture")
    assert not hasattr(controls, "FIT_NODES")


@pytest.mark.parametrize("pick, says", [
    (lambda g: g.ops[0].id, "gradient rule:"),                     # an op
    (lambda g: next(t.id for t in g.tensors if t.name == "w"), "leaf (requires grad)"),
    (lambda g: g.output, "output"),
])
def test_clicking_a_node_describes_it_over_the_picture(pick, says):
    view = GraphView(program()[0])
    assert view.picture.detail == ""  # nothing selected: no inspector over the picture
    node = pick(view.graph)
    view.picture.selected = node  # what the browser sends on a click
    assert f"<code>{node}</code>" in view.picture.detail
    assert says in view.picture.detail
    view.close()


def test_describe_node_reads_the_pictures_tooltip_and_escapes_nothing_twice():
    view = GraphView(program()[0])
    op = view.graph.ops[0]
    text = describe_node(view.svg, op.id)
    assert f"{op.id}: {op.op}" in text
    assert "&amp;#" not in text  # the SVG's entities are shown, not escaped again
    assert "Click a node" in describe_node(view.svg, "no_such_node")
    assert "Click a node" in describe_node(view.svg, "")
    view.close()


def test_collapsing_redraws_the_canvas_and_the_box_can_be_inspected(model_view):
    view = model_view
    linear = next(o.id for o in view.graph.ops if o.module == "0")
    view.picture.selected = linear
    view.module_picker.value = ("0",)
    assert view.picture.svg == view.svg
    assert linear not in node_ids(view.svg) and "m_0" in node_ids(view.svg)
    assert "Click a node" in view.picture.detail  # the op clicked is in the box now
    view.picture.selected = "m_0"
    assert "module 0 (collapsed)" in view.picture.detail and linear in view.picture.detail
    view.module_picker.value = ()
    assert linear in node_ids(view.picture.svg) and "m_0" not in node_ids(view.picture.svg)


def test_the_stored_notebook_keeps_the_collapsed_picture(model_view):
    view = model_view
    view.collapsed = ("0", "2")
    bundle, _metadata = view._repr_mimebundle_()
    assert bundle["image/svg+xml"] == view.svg == view.picture.svg
    assert {"m_0", "m_2"} <= node_ids(bundle["image/svg+xml"])


def test_the_module_picker_is_hidden_without_modules():
    view = GraphView(program()[0])
    assert view.module_picker.options == ()
    assert view.module_picker.layout.display == "none"
    view.close()


def test_close_closes_the_canvas_and_the_picker(model_view):
    before = set(_instances)
    view = GraphView(model_view.graph)
    made = set(_instances) - before
    assert view.picture.model_id in made and view.module_picker.model_id in made
    view.close()
    assert not made & set(_instances)


def test_a_module_that_runs_no_op_of_its_own_can_be_folded():
    """A transformer block's ``mlp`` is a Sequential: every op in it runs in one of its
    children, yet the picker lists it, and folding it draws one box for its three ops."""
    block = nn.TransformerBlock(8, 2, generator=ag.Generator(0))
    view = GraphView(block(ag.randn(1, 4, 8, dtype=ag.float32)))
    paths = [path for _, path in view.module_picker.options]
    assert {"mlp", "mlp.fc", "mlp.gelu", "mlp.proj", "attn", "attn.q_proj"} <= set(paths)
    assert dict(view.module_picker.options).get("mlp · Sequential (3 ops)") == "mlp"
    unfolded = view.picture.svg
    view.module_picker.value = ("mlp",)
    folded = view.picture.svg
    assert folded != unfolded and "mlp" in folded
    assert ">gelu<" in unfolded and ">gelu<" not in folded


def test_the_module_picker_shows_up_to_eight_modules_without_scrolling():
    """Lesson 15's block has six modules: a list of five rows hid the last one."""
    from autograd_core.tools.graph import capture

    for count in (1, 6, 8, 12):
        model = nn.Sequential(*[nn.Linear(2, 2) for _ in range(count)])
        graph = capture(model(ag.randn(1, 2)).sum())
        picker = controls.module_picker(graph)
        assert len(picker.options) == count
        assert picker.rows == min(count, 8)
