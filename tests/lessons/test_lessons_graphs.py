"""widgets.lessons.graphs: fan-out and merges read off a captured graph.

Every expected value is written down from the program's structure (which op reads
which value), not taken from the helper's own output.
"""

import html
import re

import numpy as np
import pytest

import autograd_core as ag
from autograd_core import nn
from autograd_core.tools.graph import capture
from widgets.lessons.graphs import (
    consumers,
    draw_sideways,
    fan_out,
    hide_rules,
    merges,
    motif_report,
)


def leaf(name, values=(0.5, -1.0, 2.0)):
    return ag.tensor(list(values), requires_grad=True).named(name)


def chain():
    return ag.tanh(ag.exp(leaf("x")) * 0.5)


def branch_add():
    h = ag.tanh(leaf("x")).named("h")
    return ag.exp(h) + ag.sin(h)


def square():
    x = leaf("x")
    return x * x


def reuse():
    x, w = leaf("x"), leaf("w")
    return ag.tanh(ag.tanh(x * w) * w)


def gating():
    x, v, w = leaf("x"), leaf("v"), leaf("w")
    return ag.sigmoid(x * v) * ag.tanh(x * w)


def concatenate():
    x = leaf("x")
    return ag.cat([ag.tanh(x), ag.exp(x)])


def constant_used_twice():
    c = ag.tensor([1.0, 2.0, 3.0]).named("c")  # no grad: a constant at each use
    return c * leaf("y") + c * leaf("z")


def unnamed_leaf_twice():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    return ag.exp(x) + ag.sin(x)


def residual():
    block = nn.ResidualBlock(3, linear=True, dtype=ag.float64, generator=ag.Generator(0))
    x = ag.tensor(np.random.default_rng(0).standard_normal((4, 3)), requires_grad=True)
    return block(x.named("x"))


# program, {tensor label: op names reading it}, [(merge op, joining inputs)]
CASES = [
    (chain, {}, []),
    (branch_add, {"h": ("exp", "sin")}, [("add", ("exp", "sin"))]),
    (square, {"x": ("mul", "mul")}, [("mul", ("x", "x"))]),
    (reuse, {"w": ("mul", "mul")}, [("mul", ("tanh", "w"))]),
    (gating, {"x": ("mul", "mul")}, [("mul", ("sigmoid", "tanh"))]),
    (concatenate, {"x": ("tanh", "exp")}, [("cat", ("tanh", "exp"))]),
    (constant_used_twice, {}, [("add", ("mul", "mul"))]),
    (unnamed_leaf_twice, {"t0": ("exp", "sin")}, [("add", ("exp", "sin"))]),
    (residual, {"x": ("linear", "add")}, [("add", ("batch_norm", "x"))]),
]


@pytest.mark.parametrize("program, spread, joined", CASES, ids=[c[0].__name__ for c in CASES])
def test_fan_out_and_merges(program, spread, joined):
    output = program()
    assert fan_out(output) == spread
    assert merges(output) == joined


@pytest.mark.parametrize("program", [c[0] for c in CASES], ids=[c[0].__name__ for c in CASES])
def test_a_captured_graph_gives_the_same_answer_as_the_tensor(program):
    output = program()
    graph = capture(output)
    assert fan_out(graph) == fan_out(output)
    assert merges(graph) == merges(output)


def test_consumers_lists_every_edge_in_execution_order():
    x = ag.tensor(1.0, requires_grad=True)
    y = ag.exp(x * x) * x  # op0 mul(x, x), op1 exp, op2 mul(exp, x)
    assert consumers(capture(y)) == {"t0": ("op0", "op0", "op2"), "t1": ("op1",),
                                     "t2": ("op2",), "t3": ()}


def test_motif_report_has_one_row_per_program_in_order():
    report = motif_report({"chain": chain(), "reuse": reuse()})
    assert [r[0] for r in report.rows] == ["chain", "reuse"]
    assert report.rows[0][1:] == ("exp → mul → tanh", "-", "-")
    assert report.rows[1][1:] == ("mul → tanh → mul → tanh", "w → mul, mul", "mul(tanh, w)")
    assert "reuse" in repr(report)


def test_draw_sideways_lays_a_chain_out_wider_than_tall():
    svg = draw_sideways(chain()).data
    width, height = (float(v) for v in re.search(
        r'<svg width="([\d.]+)pt" height="([\d.]+)pt"', svg).groups())
    assert width > 2 * height
    assert "legend" not in svg


def test_hide_rules_leaves_out_only_the_named_ops_rules():
    """Lesson 02 draws concatenations before and after exercise L2, which asks for cat's
    rule: the pictures keep every tooltip, less that one rule."""
    from autograd_core.tools.graph import capture as cap

    output = concatenate()
    cat_rule, tanh_rule = (next(o.rule for o in cap(output).ops if o.op == name)
                           for name in ("cat", "tanh"))
    picture = draw_sideways(output)
    hidden = hide_rules(picture, "cat", why="exercise L2").data

    def read(svg: str) -> str:  # a tooltip as a browser shows it (Graphviz keeps spaces)
        return html.unescape(svg).replace("\xa0", " ")

    assert cat_rule in read(picture.data) and cat_rule not in read(hidden)
    assert "not shown here: exercise L2" in hidden
    assert tanh_rule in read(hidden)  # the other ops keep their rules
    assert hidden.count("<title>") == picture.data.count("<title>")
    assert read(hide_rules(picture, "exp").data).count(cat_rule) == 1
