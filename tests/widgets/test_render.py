"""widgets.render / widgets.svg: a captured graph as DOT text and SVG.

Expected values come from the program itself (shapes, nbytes of the NumPy arrays
involved, which op saves what by its definition), never from the DOT text.
"""

import dataclasses
import html
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from sample_programs import broadcast_mask_fanout

import autograd_core as ag
from autograd_core import nn
from autograd_core.ops.elementwise import Mul, Relu, Tanh
from autograd_core.ops.matmul import MatMul
from autograd_core.tools.graph import Graph, OpInfo, TensorInfo, capture
from widgets import svg as svg_module
from widgets import theme
from widgets.graph_ids import saved_node_id
from widgets.live import live
from widgets.render import to_dot
from widgets.summary import format_bytes, summarize
from widgets.svg import SVG, to_svg

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root
from bench.graph_shapes import mlp, shared_weight  # noqa: E402


def program(seed=0):
    """The shared sample program, its leaves by name."""
    y, x, w, b = broadcast_mask_fanout(seed)
    return y, {"x": x, "w": w, "b": b}


NODE = re.compile(r'^\s+(\w+) \[id="(\w+)", class="([^"]*)"(.*)\];$', re.M)
EDGE = re.compile(r"^\s+(\w+) -> (\w+) \[", re.M)


def nodes_of(dot):
    return {m[1]: {"id": m[2], "class": m[3], "attrs": m[4]} for m in NODE.finditer(dot)}


def label_of(node):
    return re.search(r"label=<(.*)>, tooltip=", node["attrs"])[1]


def attr(node, name):
    m = re.search(rf'{name}=("([^"]*)"|[^,\]]+)', node["attrs"])
    return m[2] if m and m[2] is not None else (m[1] if m else None)


def test_every_op_and_tensor_is_one_node_with_its_capture_id():
    y, _ = program()
    g = capture(y)
    nodes = nodes_of(to_dot(g))
    for o in g.ops:
        assert nodes[o.id]["id"] == o.id and "op" in nodes[o.id]["class"].split()
    for t in g.tensors:
        assert nodes[t.id]["id"] == t.id and "tensor" in nodes[t.id]["class"].split()
    own = [s for s in g.saved if s.tensor is None]
    assert len(nodes) == len(g.ops) + len(g.tensors) + len(own) + 1  # + the legend


def test_edges_are_the_graphs_edges_plus_one_per_op_made_saved_tensor():
    y, _ = program()
    g = capture(y)
    dot = to_dot(g)
    drawn = sorted(EDGE.findall(dot))
    expected = sorted(list(g.edges) + [(s.op, saved_node_id(s.op, s.name))
                                       for s in g.saved if s.tensor is None])
    assert drawn == expected


def test_labels_show_name_shape_dtype_and_op_names():
    y, leaves = program()
    g = capture(y)
    nodes = nodes_of(to_dot(g))
    x_id = next(t.id for t in g.tensors if t.name == "x")
    label = nodes[x_id]["attrs"]
    assert "<b>x</b>" in label and "(4, 3) float64" in label
    for o in g.ops:
        assert f"<b>{o.op}</b>" in nodes[o.id]["attrs"]
    constant = next(t for t in g.tensors if t.kind == "constant")
    assert "<b>2.0</b>" in nodes[constant.id]["attrs"]


def test_tensor_kinds_look_different_and_the_legend_names_them():
    # The graph is plain data: write one with every kind of tensor and nothing saved.
    t = [TensorInfo("t0", "leaf", (2,), "float64", "x"),
         TensorInfo("t1", "frozen parameter", (2,), "float64", "scale"),
         TensorInfo("t2", "intermediate", (2,), "float64", producer="op0"),
         TensorInfo("t3", "constant", (), "python number", label="2.0"),
         TensorInfo("t4", "output", (2,), "float64", producer="op1")]
    ops = (OpInfo("op0", "mul", "da = g * b", ("t0", "t1"), "t2", (), 0),
           OpInfo("op1", "mul", "da = g * b", ("t2", "t3"), "t4", (), 1))
    edges = (("t0", "op0"), ("t1", "op0"), ("op0", "t2"), ("t2", "op1"), ("t3", "op1"),
             ("op1", "t4"))
    nodes = nodes_of(to_dot(Graph(ops, tuple(t), edges, "t4")))
    looks = {info.kind: tuple(attr(nodes[info.id], a)
                              for a in ("fillcolor", "color", "style", "penwidth"))
             for info in t}
    assert len(set(looks.values())) == len(looks), looks
    for text in theme.KIND_TEXT.values():
        assert text in nodes["legend"]["attrs"]


@pytest.mark.parametrize("op_class, saved_names", [
    (MatMul, {"a", "b"}), (Relu, {"mask"}), (Tanh, {"out"}), (Mul, {"a", "b"}),
])
def test_saved_tensors_are_marked_once_with_their_bytes(op_class, saved_names):
    y, leaves = program()
    view = live(y)
    g = view.graph
    first = next(o for o in g.ops if o.op == op_class.name)
    assert {s.name for s in first.saved} == saved_names  # what its backward reads
    nodes = nodes_of(to_dot(g))
    for s in first.saved:
        node = s.tensor if s.tensor is not None else saved_node_id(first.id, s.name)
        nbytes = np.asarray(view.values[node]).nbytes  # the array the op kept
        label = label_of(nodes[node])
        assert f"({format_bytes(nbytes)})" in label
        assert label.count("saved by") == 1  # one mark, however many ops saved it
        if s.tensor is not None:
            assert "saved" in nodes[node]["class"].split() and first.id in label
        else:
            assert nodes[node]["class"] == "saved_own" and f"saved by {first.id}" in label


def test_relu_mask_is_a_separate_node_and_an_input_saved_is_not_duplicated():
    y, leaves = program()
    g = capture(y)
    dot = to_dot(g)
    relu = next(o for o in g.ops if o.op == "relu")
    mask = saved_node_id(relu.id, "mask")
    x = leaves["x"]
    h_rows, h_cols = x.shape[0], leaves["w"].shape[1]
    assert re.search(rf"^\s+{relu.id} -> {mask} \[.*style=dashed", dot, re.M)
    assert f"({format_bytes(h_rows * h_cols)})" in nodes_of(dot)[mask]["attrs"]  # bool: 1 B each
    x_id = next(t.id for t in g.tensors if t.name == "x")
    assert len(re.findall(rf'^\s+{x_id} \[', dot, re.M)) == 1
    assert f"({format_bytes(x.numpy().nbytes)})" in nodes_of(dot)[x_id]["attrs"]


def test_released_saved_tensors_are_marked_after_backward():
    y, _ = program()
    y.backward()
    dot = to_dot(capture(y))
    assert "(released)" in dot
    assert re.search(r"saved by op\d+ \(\d+ B\)", dot) is None


def with_modules(g, modules):
    """The same graph with ops tagged by module path (op index -> path)."""
    ops = tuple(dataclasses.replace(o, module=modules.get(i)) for i, o in enumerate(g.ops))
    return dataclasses.replace(g, ops=ops)


def cluster_body(dot, cluster):
    """The text between ``subgraph cluster_<id> {`` and its closing brace."""
    start = dot.index(f"subgraph cluster_{cluster} {{")
    depth, i = 0, dot.index("{", start)
    for j in range(i, len(dot)):
        depth += {"{": 1, "}": -1}.get(dot[j], 0)
        if depth == 0:
            return dot[i:j]
    raise AssertionError("unbalanced braces")


def test_module_paths_become_nested_clusters():
    y, _ = program()
    g = with_modules(capture(y), {0: "enc.fc", 1: "enc.fc", 2: "enc.act", 5: "head"})
    dot = to_dot(g)
    enc = cluster_body(dot, "m_enc")
    fc = cluster_body(dot, "m_enc_fc")
    assert "subgraph cluster_m_enc_fc {" in enc and "subgraph cluster_m_enc_act {" in enc
    assert re.search(rf"^\s+{g.ops[0].id} \[", fc, re.M)
    assert re.search(rf"^\s+{g.ops[1].id} \[", fc, re.M)
    assert re.search(rf"^\s+{g.ops[5].id} \[", cluster_body(dot, "m_head"), re.M)
    assert "subgraph cluster_m_head" not in enc
    # x and w are only used inside enc.fc: drawn inside it; the output is outside all.
    assert re.search(r"^\s+t0 \[", fc, re.M)
    assert not re.search(rf"^\s+{g.output} \[", enc, re.M)


def test_a_collapsed_module_is_one_box_with_the_edges_that_cross_it():
    y, _ = program()
    g = with_modules(capture(y), {0: "enc.fc", 1: "enc.fc", 2: "enc.act"})
    dot = to_dot(g, collapse=("enc",))
    nodes = nodes_of(dot)
    inside = [g.ops[i].id for i in (0, 1, 2)]
    assert not set(inside) & set(nodes)
    assert nodes["m_enc"]["class"] == "module_box"
    h = g.ops[2].output  # made inside, used outside: stays, fed by the box
    edges = EDGE.findall(dot)
    assert ("m_enc", h) in edges
    assert ("t0", "m_enc") not in edges  # x is used only inside: hidden in the box
    b = next(t.id for t in g.tensors if t.name == "b")
    assert b not in nodes
    assert len(edges) == len(set(edges)) or all(
        a != "m_enc" and c != "m_enc" for a, c in edges if edges.count((a, c)) > 1)


def test_nn_module_paths_reach_the_clusters():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 4)
            self.out = nn.Linear(4, 1)

        def forward(self, x):
            return self.out(self.fc(x).tanh())

    model = nn.Sequential(Block(), nn.ReLU())
    g = capture(model(ag.ones((2, 3))).sum())
    dot = to_dot(g)
    paths = {o.id: o.module for o in g.ops}
    block = cluster_body(dot, "m_0")
    for op_id, path in paths.items():
        if path in ("0.fc", "0.out"):
            inner = cluster_body(dot, "m_0_" + path.split(".")[1])
            assert re.search(rf"^\s+{op_id} \[", inner, re.M)
            assert inner in block
        elif path is None:
            assert not re.search(rf"^\s+{op_id} \[", block, re.M)


def test_same_program_twice_gives_the_same_dot_and_svg():
    first, second = program(seed=3)[0], program(seed=3)[0]
    v1, v2 = live(first), live(second)
    d1 = to_dot(v1.graph, values=v1.values, input_names=v1.input_names)
    d2 = to_dot(v2.graph, values=v2.values, input_names=v2.input_names)
    assert d1 == d2
    assert "0x" not in d1  # no memory address anywhere
    to_svg.cache_clear()
    s1 = to_svg(d1)
    to_svg.cache_clear()
    assert to_svg(d2) == s1


def test_svg_has_ids_classes_and_the_tooltip_as_title():
    y, _ = program()
    view = live(y)
    svg = to_svg(to_dot(view.graph, values=view.values, input_names=view.input_names))
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    matmul = next(o for o in view.graph.ops if o.op == "matmul")
    group = re.search(rf'<g id="{matmul.id}" class="node op">\n<title>([^<]*)</title>', svg)
    assert group, "op node group with its tooltip as <title>"
    title = html.unescape(group[1]).replace("\xa0", " ")  # Graphviz keeps runs of spaces
    for line in MatMul.rule.splitlines():
        assert line in title
    assert "saved for backward" in title
    assert "xlink:title" not in svg
    picture = SVG(svg)
    assert picture._repr_svg_() == svg and "0x" not in repr(picture)


def test_values_and_grads_summaries_in_labels_and_tooltips():
    y, leaves = program()
    y.backward()
    view = live(y)
    grads = {tid: leaf.grad.numpy() for tid, leaf in view.leaves.items()}
    dot = to_dot(view.graph, values=view.values, grads=grads, show_values=True)
    b_id = next(t.id for t in view.graph.tensors if t.name == "b")
    label = nodes_of(dot)[b_id]["attrs"]
    assert summarize(leaves["b"].numpy()) in label
    assert "grad " + summarize(leaves["b"].grad.numpy()) in label


@pytest.mark.parametrize("array, expected", [
    (np.array([1.0, -2.0]), "[ 1. -2.]"),
    (np.array(3.0), "3"),
    (np.array([[-0.0, 1.0]]), "[[0. 1.]]"),
    (np.arange(100.0), "(100,) min 0 max 99 mean 49.5 norm "
     + f"{np.sqrt(sum(i * i for i in range(100))):.4g}"),
    (np.ones((10, 10), dtype=bool), "(10, 10) 100 of 100 True"),
])
def test_summaries_write_small_arrays_in_full_and_summarise_large_ones(array, expected):
    assert summarize(array) == expected


@pytest.mark.parametrize("values", [[-1e-17, 2.5], [[-3e-9, 1.0], [np.nan, -np.inf]],
                                    [-0.0, -0.00004, 7.0]])
def test_a_value_too_small_to_show_prints_as_zero_never_minus_zero(values):
    """-1e-17 left over from rounding prints at 4 decimals as '-0.', which a learner
    reads as a bug (the stepper's leaf gradients showed it): it prints as '0.'."""
    from widgets.summary import full

    a = np.array(values)
    for text in (summarize(a), full(a)):
        assert re.search(r"-0\.(?!\d)", text) is None, text  # "-0." but not "-0.25"
        assert "0." in text and ("nan" in text) == bool(np.isnan(a).any()), text


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_statistic_that_is_rounding_noise_shows_as_zero(dtype):
    """A layer-normalised row's mean is zero up to rounding; its last bits depend on the
    CPU's kernels. Nudged by a few units in the last place (as another kernel rounds),
    the summary reads the same, with mean 0; a real mean of the same tensor still shows."""
    from widgets.summary import noise_floor

    rows = np.random.default_rng(0).standard_normal((4, 8)).astype(dtype)
    normed = (rows - rows.mean(1, keepdims=True)) / rows.std(1, keepdims=True)
    eps = np.finfo(dtype).eps
    texts = {summarize(normed + np.asarray(k * eps, dtype=dtype)) for k in (-3, 0, 2, 5)}
    assert len(texts) == 1 and " mean 0 " in texts.pop()
    assert " mean 0 " not in summarize(normed + dtype(1e-2))  # a real offset shows
    # The floor is the dtype's resolution at the tensor's scale: 16 units in the last place.
    assert noise_floor(dtype, 2.0) == pytest.approx(16 * 2.0 * eps)
    assert noise_floor(np.int64, 2.0) == 0


def test_a_sum_of_terms_that_cancel_shows_as_zero_at_its_inputs_scale():
    """``(xhat * c).sum()`` cancels to about 1e-15: the scalar alone has no scale, so the
    graph measures it against what its op read; the product the program dropped counts
    at the scale of the values it was made from."""
    x = ag.randn(4, 2, generator=ag.Generator(13), requires_grad=True)
    xhat = (x - x.mean(dim=0)) / ag.sqrt(x.var(dim=0))
    loss = (xhat * ag.tensor([[1.0, -2.0]])).sum()
    noise = float(loss.numpy())
    assert noise != 0 and abs(noise) < 1e-14  # what the program computed: not 0 exactly
    view = live(loss)
    dot = to_dot(view.graph, values=view.values)
    assert 'value: 0"' in dot  # the output's tooltip ends with its value
    assert f"{noise:.4g}" not in dot
    # A sum that is not zero keeps its digits.
    view = live((xhat * ag.tensor([[1.0, -2.0]])).abs().sum())
    assert "value: 0" not in to_dot(view.graph, values=view.values)


def test_only_what_was_added_up_is_measured_against_its_terms():
    """Entries are separate numbers: a small one beside a large one is real, and so is a
    sum of tiny products (the product, dropped by the program, is bounded by its
    factors, not by x alone)."""
    for big, small, dtype in ((1e6, 1.0, np.float32), (1.0, 0.01, np.float16)):
        # (NumPy's own print of these differs between versions: compare with a real 0)
        shown = summarize(np.array([big, small], dtype=dtype))
        assert shown != summarize(np.array([big, 0.0], dtype=dtype)), shown
    x = ag.randn(5, generator=ag.Generator(0), requires_grad=True)
    tiny = (x * 1e-20).sum()
    view = live(tiny)
    assert f"value: {float(tiny.numpy()):.4g}" in to_dot(view.graph, values=view.values)


@pytest.mark.parametrize("n, text", [(0, "0 B"), (16, "16 B"), (1536, "1.5 KiB"),
                                     (3 * 1024 ** 2, "3.0 MiB")])
def test_format_bytes(n, text):
    assert format_bytes(n) == text


def test_a_leaf_output_alone_is_drawn():
    x = ag.tensor([1.0], requires_grad=True, name="x")
    nodes = nodes_of(to_dot(capture(x)))
    assert set(nodes) == {"t0", "legend"}


@pytest.mark.parametrize("output, min_nodes", [
    (mlp(125, width=8, batch=4), 1000),
    (shared_weight(60, size=4), 400),  # long edges: the cheaper layout settings kick in
])
def test_large_graphs_render(output, min_nodes):
    g = capture(output)
    assert len(g.ops) + len(g.tensors) >= min_nodes
    svg = to_svg(to_dot(g))
    ids = set(re.findall(r'<g id="([^"]+)" class="node', svg))
    assert {o.id for o in g.ops} <= ids and {t.id for t in g.tensors} <= ids


def test_a_missing_renderer_says_what_to_install(monkeypatch):
    monkeypatch.setattr(svg_module.shutil, "which", lambda *a, **k: None)
    with pytest.raises(RuntimeError, match=r"pip install graphviz-pure==0\.2\.2"):
        svg_module.renderer()


@pytest.mark.parametrize("shape, lines", [((1, 16, 1, 1), 3), ((2, 1, 3), 3), ((2, 3), 2),
                                          ((1, 4), 1)])
def test_full_values_drop_size_one_axes_of_3d_and_more(shape, lines):
    """A batch norm's (1, 16, 1, 1) inv_std reads as one row of 16 numbers, with its
    shape said, instead of sixteen lines of brackets; matrices keep their layout."""
    from widgets.summary import full

    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) + 0.5
    text = full(a)
    assert len(text.splitlines()) == lines, text
    assert ("size-1 axes" in text) == (len(shape) >= 3)
    numbers = [float(v) for v in text.split(":")[-1].replace("[", " ").replace("]", " ").split()]
    assert numbers == list(a.ravel())
