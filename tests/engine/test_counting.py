"""Counted work (tools/counting.py): ops and multiply-adds per phase, and what they show.

* the cost model, op by op, against multiply-adds counted by hand (einsum: the product
  of its letters' sizes, forward, backward and jvp; amax and amin as reductions);
* phases: forward (recording or not), backward (one rule per node, per input that
  gets a gradient), jvp;
* T2/W2: for many inputs -> one output reverse mode wins by a factor n, for one
  input -> many outputs forward mode wins by a factor n (exact counts);
* S6: ONE backward pass fills every leaf's gradient: each node runs once.
"""

from __future__ import annotations

import numpy as np
import pytest

import autograd_core as ag
from autograd_core.func import jvp
from autograd_core.nn import functional as F
from autograd_core.tools import counting
from widgets.lessons.modes import _jacobian_costs, _mode_costs


def _counted(program, *shapes, requires_grad=True):
    xs = [ag.randn(*s, generator=ag.Generator(i), requires_grad=requires_grad)
          for i, s in enumerate(shapes)]
    with counting.count_ops() as c:
        out = program(*xs)
    return c, out


@pytest.mark.parametrize("name, program, shapes, macs", [
    ("matmul", lambda a, b: a @ b, [(2, 3), (3, 4)], 2 * 4 * 3),
    ("batched matmul", lambda a, b: a @ b, [(5, 2, 3), (3, 4)], 5 * 2 * 4 * 3),
    ("dot product", lambda a, b: a @ b, [(7,), (7,)], 7),
    ("matrix-vector", lambda a, b: a @ b, [(4, 6), (6,)], 4 * 6),
    ("linear with bias", lambda x, w, b: F.linear(x, w, b), [(8, 3), (5, 3), (5,)],
     8 * 5 * 3 + 8 * 5),
    ("linear without bias", lambda x, w: F.linear(x, w), [(8, 3), (5, 3)], 8 * 5 * 3),
    ("conv2d", lambda x, w: F.conv2d(x, w, padding=1), [(2, 3, 5, 5), (4, 3, 3, 3)],
     2 * 4 * 5 * 5 * (3 * 3 * 3)),
    ("conv2d groups", lambda x, w: F.conv2d(x, w, groups=2), [(1, 4, 3, 3), (2, 2, 2, 2)],
     1 * 2 * 2 * 2 * (2 * 2 * 2)),
    ("broadcast add", lambda a, b: a + b, [(4, 1), (3,)], 4 * 3),
    ("tanh", lambda a: ag.tanh(a), [(2, 5)], 10),
    ("sum", lambda a: a.sum(dim=1), [(4, 5)], 20),
    ("amax", lambda a: a.amax(dim=1), [(4, 5)], 20),  # reductions: input elements
    ("amin", lambda a: a.amin(dim=(0, 1)), [(4, 5)], 20),
    ("softmax", lambda a: ag.softmax(a, dim=0), [(3, 2)], 6),
    ("reshape", lambda a: a.reshape(6), [(2, 3)], 0),
    ("getitem", lambda a: a[0], [(2, 3)], 0),
])
def test_forward_cost_model(name, program, shapes, macs):
    c, _ = _counted(program, *shapes)
    assert (c.forward.ops, c.forward.macs) == (1, macs)


@pytest.mark.parametrize("name, program, shapes, backward_macs", [
    # both operands of a product need their own m·n·k product
    ("matmul", lambda a, b: a @ b, [(2, 3), (3, 4)], 2 * (2 * 4 * 3)),
    ("linear", lambda x, w, b: F.linear(x, w, b), [(8, 3), (5, 3), (5,)],
     2 * (8 * 5 * 3) + 8 * 5),
    ("mul", lambda a, b: a * b, [(3, 4), (3, 4)], 2 * 12),
    ("exp", lambda a: a.exp(), [(3, 4)], 12),
    ("amax", lambda a: a.amax(dim=0), [(3, 4)], 12),
    ("amin", lambda a: a.amin(), [(3, 4)], 12),
])
def test_backward_costs_one_product_per_input_that_gets_a_gradient(name, program, shapes,
                                                                   backward_macs):
    c, out = _counted(program, *shapes)
    with counting.count_ops() as back:
        out.backward(np.ones(out.shape))
    assert (back.backward.ops, back.backward.macs) == (1, backward_macs)


# -- einsum: the product of its letters' sizes --------------------------------------------------
# (equation, shapes, forward, backward with a gradient for every operand, jvp with a tangent
# for every operand), each counted by hand: letter by letter, b·h·q·k·d and so on.
EINSUM_COSTS = [
    # matmul's pricing: m·n·k, then m·n·k per operand (g·bᵀ and aᵀ·g)
    ("ij,jk->ik", [(2, 3), (3, 4)], 2 * 3 * 4, 2 * (2 * 3 * 4), 2 * (2 * 3 * 4)),
    # attention's scores: output elements (b·h·q·k) times the summed extent d
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)], 2 * 3 * 4 * 6 * 5,
     2 * (2 * 3 * 4 * 6 * 5), 2 * (2 * 3 * 4 * 6 * 5)),
    # attention's weighted values: b·h·q·d outputs, each a sum over k
    ("bhqk,bhkd->bhqd", [(2, 3, 4, 6), (2, 3, 6, 5)], 2 * 3 * 4 * 6 * 5,
     2 * (2 * 3 * 4 * 6 * 5), 2 * (2 * 3 * 4 * 6 * 5)),
    # a row sum: the input's elements; its gradient broadcasts g along j (by ones(5))
    ("ij->i", [(4, 5)], 4 * 5, 4 * 5, 4 * 5),
    # a transpose: one product per element
    ("ij->ji", [(4, 5)], 4 * 5, 4 * 5, 4 * 5),
    # an outer product: one product per output element, for each operand's gradient too
    ("i,j->ij", [(3,), (4,)], 3 * 4, 2 * (3 * 4), 2 * (3 * 4)),
    # a diagonal reads 3 elements; its gradient contracts g with a 3×3 identity (9)
    ("ii->i", [(3, 3)], 3, 3 * 3, 3),
    # a trace: the same, its output a scalar
    ("ii->", [(3, 3)], 3, 3 * 3, 3),
    # a size-1 dim broadcasts against the same letter's size: j is 4 for both operands
    ("ij,ij->i", [(3, 1), (3, 4)], 3 * 4, 2 * (3 * 4), 2 * (3 * 4)),
    # '...' and an implicit output: 'Aij,jk->Aik', A of size 5
    ("...ij,jk", [(5, 2, 3), (3, 4)], 5 * 2 * 3 * 4, 2 * (5 * 2 * 3 * 4), 2 * (5 * 2 * 3 * 4)),
    # three operands: every letter once, i·j·k·l, for each operand's gradient too
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], 2 * 3 * 4 * 5, 3 * (2 * 3 * 4 * 5),
     3 * (2 * 3 * 4 * 5)),
]


@pytest.mark.parametrize("equation, shapes, forward, backward, tangents", EINSUM_COSTS,
                         ids=[c[0] for c in EINSUM_COSTS])
def test_einsum_costs_the_product_of_its_letters_sizes(equation, shapes, forward, backward,
                                                       tangents):
    c, out = _counted(lambda *xs: ag.einsum(equation, *xs), *shapes)
    assert (c.forward.ops, c.forward.macs) == (1, forward)
    with counting.count_ops() as back:
        out.backward(np.ones(out.shape))
    assert back.backward.by_op == {"einsum": (1, backward)}
    primals = tuple(ag.randn(*s, generator=ag.Generator(i)) for i, s in enumerate(shapes))
    with counting.count_ops() as forward_mode:
        jvp(lambda *xs: ag.einsum(equation, *xs), primals,
            tuple(ag.ones(*s) for s in shapes))
    assert forward_mode.jvp.by_op == {"einsum": (1, tangents)}


def test_einsum_is_priced_as_the_matmul_it_computes():
    """The same product written both ways: the same forward and backward counts."""
    counts = []
    for program in (lambda a, b: a @ b, lambda a, b: ag.einsum("bij,bjk->bik", a, b)):
        c, out = _counted(program, (5, 2, 3), (5, 3, 4))
        with counting.count_ops() as back:
            out.backward(np.ones(out.shape))
        counts.append((c.forward.macs, back.backward.macs))
    assert counts[0] == counts[1] == (5 * 2 * 3 * 4, 2 * (5 * 2 * 3 * 4))


def test_einsum_backward_counts_only_the_operands_that_get_a_gradient():
    q = ag.randn(2, 4, 5, requires_grad=True)
    k = ag.randn(2, 6, 5)  # no gradient wanted
    out = ag.einsum("bqd,bkd->bqk", q, k)
    with counting.count_ops() as back:
        out.backward(np.ones(out.shape))
    assert back.backward.macs == 2 * 4 * 6 * 5


def test_an_input_that_needs_no_gradient_costs_nothing_in_backward():
    w = ag.randn(3, 4, requires_grad=True)
    x = ag.randn(2, 3)  # data: no gradient wanted
    out = x @ w
    with counting.count_ops() as back:
        out.backward(np.ones((2, 4)))
    assert back.backward.macs == 2 * 4 * 3


def test_no_grad_forward_is_counted_and_phases_are_separate():
    x = ag.randn(3, 3)
    with counting.count_ops() as c:
        with ag.no_grad():
            (x @ x).sum()
    assert c.forward.ops == 2 and c.backward.ops == 0 and c.jvp.ops == 0
    assert c.total_macs == 27 + 9
    assert [r[0] for r in c.rows()] == ["forward", "recompute", "backward", "jvp", "total"]
    assert "multiply-adds" in str(c) and "forward=2 ops" in repr(c)


def test_jvp_phase_counts_one_rule_per_op_per_tangent():
    a, b = ag.randn(2, 3), ag.randn(3, 4)
    with counting.count_ops() as one:
        jvp(lambda x: x @ b, (a,), (ag.ones(2, 3),))
    with counting.count_ops() as both:
        jvp(lambda x, y: x @ y, (a, b), (ag.ones(2, 3), ag.ones(3, 4)))
    assert one.jvp.macs == 24 and both.jvp.macs == 48
    assert one.forward.macs == both.forward.macs == 24


def test_one_backward_pass_fills_every_leafs_gradient():
    """S6: two parameters, one pass; each recorded op's rule runs exactly once."""
    x = ag.randn(4, 3, generator=ag.Generator(0))
    w1 = ag.randn(3, 5, generator=ag.Generator(1), requires_grad=True)
    w2 = ag.randn(5, 2, generator=ag.Generator(2), requires_grad=True)
    with counting.count_ops() as c:
        loss = (ag.tanh(x @ w1) @ w2).sum()
        loss.backward()
    assert w1.grad is not None and w2.grad is not None
    assert c.backward.ops == c.forward.ops == 4
    assert c.backward.by_op == {"sum": (1, 8), "matmul": (2, 4 * 2 * 5 * 2 + 4 * 5 * 3),
                                "tanh": (1, 20)}


# -- forward vs reverse mode (T2, W2) --------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 8, 32])
def test_reverse_mode_wins_many_to_one_and_forward_mode_wins_one_to_many(n):
    hidden = 5
    W = ag.randn(hidden, n, generator=ag.Generator(0))
    many_to_one = _jacobian_costs(lambda x: ag.tanh(W @ x).sum(), ag.randn(n))
    # one pass costs a forward (matmul hidden·n, tanh hidden, sum hidden) and one
    # derivative sweep of the same cost (only x carries a tangent / gets a gradient)
    one_pass = hidden * n + 2 * hidden
    assert many_to_one["forward"] == {"passes": n, "ops": 6 * n, "macs": n * 2 * one_pass}
    assert many_to_one["reverse"] == {"passes": 1, "ops": 6, "macs": 2 * one_pass}
    assert many_to_one["max_difference"] < 1e-14

    v, c = ag.randn(n, generator=ag.Generator(1)), ag.randn(n, generator=ag.Generator(2))
    one_to_many = _jacobian_costs(lambda t: ag.tanh(t * v + c), ag.randn(1))
    # forward: mul, add, tanh on n elements, and their jvp rules;
    # reverse: the forward once, then n sweeps back through the three ops
    assert one_to_many["forward"]["macs"] == 2 * 3 * n
    assert one_to_many["reverse"]["macs"] == 3 * n + n * 3 * n
    assert one_to_many["forward"]["passes"] == 1 and one_to_many["reverse"]["passes"] == n


def test_mode_costs_table_names_the_cheaper_mode():
    rows = _mode_costs(sizes=(1, 4, 16))
    cheaper = {(r["case"], r["n"]): r["cheaper"] for r in rows}
    assert cheaper["many inputs -> one output", 1] == "tie"
    assert cheaper["one input -> many outputs", 1] == "tie"
    for n in (4, 16):
        assert cheaper["many inputs -> one output", n] == "reverse"
        assert cheaper["one input -> many outputs", n] == "forward"
    big = {r["case"]: r for r in rows if r["n"] == 16}
    ratio = big["many inputs -> one output"]
    assert ratio["forward macs"] == 16 * ratio["reverse macs"]
