"""einsum (ops/einsum.py), its backward (an einsum again, recorded under create_graph) and its
equation parser, against PyTorch 2.13.0 CPU (issue "Attention on the engine").

The op table (tests/helpers/op_table.py) checks the rows einsum_matmul,
einsum_attention_scores, einsum_outer, einsum_trace, einsum_diagonal, einsum_ellipsis,
einsum_sum, einsum_chain, einsum_size_1_broadcast, einsum_implicit_batched,
einsum_list_form and einsum_random (equations drawn at random over 1-3 operands) against
finite differences and PyTorch: values, gradients, second derivatives, forward mode.
Here: attention written with einsum, third derivatives, the gradient's own equation,
what the node saves, the edges (empty, 0-d, nan/inf, dtypes, NumPy operands, layouts),
and every equation PyTorch refuses: the same kind of error, with PyTorch's sentence.

Kept differences, pinned below:

* Operands of different dtypes promote as NumPy's do (PyTorch refuses them), as
  everywhere in this engine; a NumPy array is an operand too (a constant).
* The sublist form ``einsum(a, [0, 1], b, [1, 2])`` is not supported: a TypeError says so.
* Subscripts are letters, so an equation whose ``...`` needs more dims than there are
  letters left (52 in all) is refused; PyTorch has no such limit.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_adversarial_ops import OURS, THEIRS, compare, leaf, r, raises_like

import autograd_core as ag
from autograd_core import autograd
from autograd_core.autograd.functional import hessian
from autograd_core.func import jvp
from autograd_core.ops import einsum as es
from autograd_core.tools import graph

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed: the cross-check against PyTorch 2.13.0 CPU "
    "is skipped (install it with: pip install -e '.[torch]')")

pytestmark = [pytest.mark.torch, pytest.mark.filterwarnings("ignore::RuntimeWarning")]

INF, NAN = np.inf, np.nan


def einsum(equation):
    return lambda lib, *xs: lib.m.einsum(equation, *xs)


# -- attention, and derivatives of every order ---------------------------------------------
def attention(lib, q, k, v):
    """Scaled dot-product attention written with two einsums, as a learner writes it."""
    scores = lib.m.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(q.shape[-1])
    return lib.m.einsum("bhqk,bhkd->bhqd", lib.m.softmax(scores, -1), v)


def test_attention_with_einsum_matches_torch_and_sdpa():
    q, k, v = r(2, 3, 4, 5, seed=1), r(2, 3, 6, 5, seed=2), r(2, 3, 6, 5, seed=3)
    compare(attention, q, k, v)
    with torch.no_grad():
        expected = torch.nn.functional.scaled_dot_product_attention(
            *(torch.from_numpy(x) for x in (q, k, v)))
    ours = attention(OURS, *(ag.tensor(x) for x in (q, k, v)))
    np.testing.assert_allclose(ours.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)


def _second(lib, grad, equation, arrays, seed=5):
    """d/dx of <d<v, einsum>/dx, w> on one engine, through ``grad(create_graph=True)``."""
    rng = np.random.default_rng(seed)
    xs = [leaf(lib, a) for a in arrays]
    out = lib.m.einsum(equation, *xs)
    v = rng.standard_normal(tuple(out.shape))
    tensor = ag.tensor if lib is OURS else torch.from_numpy
    firsts = grad(out, xs, tensor(v), create_graph=True)
    phi = sum((g * tensor(rng.standard_normal(a.shape))).sum()
              for g, a in zip(firsts, arrays, strict=True))
    return [np.asarray(s.detach().numpy() if lib is THEIRS else s.numpy())
            for s in grad(phi, xs)]


@pytest.mark.parametrize("equation, shapes", [
    ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 2, 4)]), ("ii,i->i", [(3, 3), (3,)]),
    ("...ij,...jk", [(2, 2, 3), (3, 2)]), ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)])])
def test_second_derivatives_of_products_match_torch(equation, shapes):
    arrays = [r(*s, seed=i) for i, s in enumerate(shapes)]
    ours = _second(OURS, autograd.grad, equation, arrays)
    theirs = _second(THEIRS, torch.autograd.grad, equation, arrays)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_hessian_of_a_trilinear_form_matches_torch():
    """x ↦ einsum('i,ij,j->', x, A, x * x): a cubic, so its Hessian is not constant."""
    a = r(3, 3, seed=4)

    def ours(x):
        return ag.einsum("i,ij,j->", x, ag.tensor(a), x * x)

    def theirs(x):
        return torch.einsum("i,ij,j->", x, torch.from_numpy(a), x * x)

    x = r(3, seed=5)
    expected = torch.autograd.functional.hessian(theirs, torch.from_numpy(x))
    np.testing.assert_allclose(hessian(ours, ag.tensor(x)).numpy(), expected.numpy(),
                               rtol=1e-12, atol=1e-12)


def test_forward_mode_matches_torch_func_jvp():
    a, b, ta, tb = r(2, 3), r(3, 4, seed=1), r(2, 3, seed=2), r(3, 4, seed=3)
    _, ours = jvp(lambda x, y: ag.einsum("ij,jk->ik", x, y), (ag.tensor(a), ag.tensor(b)),
                  (ag.tensor(ta), ag.tensor(tb)))
    _, theirs = torch.func.jvp(lambda x, y: torch.einsum("ij,jk->ik", x, y),
                               (torch.from_numpy(a), torch.from_numpy(b)),
                               (torch.from_numpy(ta), torch.from_numpy(tb)))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


def test_the_rule_is_recorded_as_einsum():
    x, y = ag.tensor(r(3, 3), requires_grad=True), ag.tensor(r(3), requires_grad=True)
    dx, dy = autograd.grad(ag.einsum("ii,i->", x, y), [x, y], create_graph=True)
    assert dx.grad_fn.name == dy.grad_fn.name == "einsum"
    assert dx.grad_fn.params["equation"] == ",i,iA->iA"  # g, y and an identity
    np.testing.assert_allclose(dx.numpy(), np.diag(y.numpy()))
    np.testing.assert_allclose(dy.numpy(), np.diag(x.numpy()))
    (g,) = autograd.grad(ag.einsum("ii", x), [x], create_graph=True)
    assert g.grad_fn is None  # the trace is linear: its gradient, the identity, a constant
    np.testing.assert_array_equal(g.numpy(), np.eye(3))


# -- the gradient's equation ---------------------------------------------------------------
@pytest.mark.parametrize("equation, i, shapes, plan, constants", [
    ("ij,jk->ik", 0, [(2, 3), (3, 4)], "ik,jk->ij", []),
    ("ij,jk->ik", 1, [(2, 3), (3, 4)], "ik,ij->jk", []),
    ("bhqd,bhkd->bhqk", 1, [(1, 2, 3, 4), (1, 2, 5, 4)], "bhqk,bhqd->bhkd", []),
    ("ii->", 0, [(3, 3)], ",iA->iA", [("eye", 3)]),
    ("ii->i", 0, [(3, 3)], "i,iA->iA", [("eye", 3)]),
    ("ij->", 0, [(2, 3)], ",i,j->ij", [("ones", 2), ("ones", 3)]),
    ("ij->i", 0, [(2, 3)], "i,j->ij", [("ones", 3)]),
    # j is size 1 in a: b's gradient still needs j's full size 3
    ("ij,jk->ik", 1, [(2, 1), (3, 4)], "ik,ij,j->jk", [("ones", 3)]),
])
def test_gradient_plan(equation, i, shapes, plan, constants):
    assert es.gradient_plan(equation, i, shapes) == (plan, tuple(constants))


@pytest.mark.parametrize("equation, shapes, canonical", [
    ("ij,jk", [(2, 3), (3, 4)], "ij,jk->ik"),
    ("ba", [(2, 3)], "ba->ab"),
    ("aB,aC", [(2, 3), (2, 4)], "aB,aC->BC"),  # implicit output: A-Z before a-z
    ("ii", [(3, 3)], "ii->"),
    (" i j -> j ", [(2, 3)], "ij->j"),
    ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)], "Aij,jk->Aik"),
    ("...ij,...jk", [(5, 1, 2, 3), (4, 3, 4)], "ABij,Bjk->ABik"),
    ("b...a", [(2, 3, 4, 5)], "bABa->ABab"),
    ("...->", [(2, 3)], "AB->"),
    ("i->...", [(2,)], "i->"),
    ("", [()], "->"),
    ("i,,j", [(2,), (), (3,)], "i,,j->ij"),
])
def test_canonical_equation(equation, shapes, canonical):
    assert es.canonical_equation(equation, shapes) == canonical


# -- what the node saves ----------------------------------------------------------------------
@pytest.mark.parametrize("grads, saved", [
    ((True, True), {"a_0", "a_1"}), ((True, False), {"a_1"}), ((False, True), {"a_0"})])
def test_saves_only_the_operands_the_others_gradients_read(grads, saved):
    a = ag.tensor(r(2, 3), requires_grad=grads[0])
    b = ag.tensor(r(3, 4), requires_grad=grads[1])
    out = ag.einsum("ij,jk->ik", a, b)
    assert set(out.grad_fn.saved) == saved
    assert graph.saved_bytes(out) == 8 * sum({"a_0": 6, "a_1": 12}[n] for n in saved)


def test_three_operands_save_the_other_two_and_one_operand_saves_nothing():
    x = ag.tensor(r(2, 3), requires_grad=True)
    out = ag.einsum("ij,jk,kl->il", x, r(3, 4), r(4, 2))  # two NumPy constants
    assert set(out.grad_fn.saved) == {"a_1", "a_2"}
    assert ag.einsum("ij->ji", x).grad_fn.saved == {}
    assert ag.einsum("ii->i", ag.tensor(r(3, 3), requires_grad=True)).grad_fn.saved == {}


def test_a_numpy_operand_is_copied_when_recorded():
    w = r(3, 4)
    x = ag.tensor(r(2, 3), requires_grad=True)
    out = ag.einsum("ij,jk->ik", x, w)
    expected = w.sum(axis=1)
    w[:] = 0.0  # the caller's array changes; the recorded copy does not
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.broadcast_to(expected, (2, 3)))


def test_the_output_is_a_new_array_not_a_view_of_an_input():
    x = ag.tensor(r(3, 3))
    for equation in ("ii->i", "ij->ji", "ij->ij"):
        out = ag.einsum(equation, x)
        assert not np.shares_memory(out.numpy(), x.numpy())
        assert out._base is None


# -- edges, against PyTorch ----------------------------------------------------------------
EDGES = {
    "empty-batch": (einsum("bij,bjk->bik"), [np.zeros((0, 2, 3)), r(0, 3, 4)]),
    "empty-contracted": (einsum("ij,jk->ik"), [np.zeros((2, 0)), np.zeros((0, 3))]),
    "empty-trace": (einsum("ii"), [np.zeros((0, 0))]),
    "0-d-times-0-d": (einsum(",->"), [np.array(2.0), np.array(-3.0)]),
    "0-d-alone": (einsum(""), [np.array(2.0)]),
    "0-d-and-vector": (einsum(",i->i"), [np.array(2.0), r(3)]),
    "nan": (einsum("ij,jk->ik"), [np.array([[1.0, NAN], [2.0, 3.0]]), r(2, 2)]),
    "inf": (einsum("i,i->"), [np.array([INF, 1.0]), np.array([2.0, 3.0])]),
    "inf-times-zero": (einsum("i,i->"), [np.array([INF, 1.0]), np.array([0.0, 3.0])]),
    "size-1-broadcast": (einsum("ij,jk->ik"), [r(2, 1), r(3, 4)]),
    "size-1-in-diagonal-operand": (einsum("ii,i->i"), [r(1, 1), r(3)]),
    "size-1-vector": (einsum("i,i->i"), [r(1), r(3)]),
    "ellipsis-broadcast": (einsum("...ij,...jk->...ik"), [r(5, 1, 2, 3), r(4, 3, 4)]),
    "ellipsis-summed": (einsum("...i->"), [r(2, 3, 4)]),
    "ellipsis-middle": (einsum("b...a"), [r(2, 3, 4, 5)]),
    "ellipsis-none-given": (einsum("i->...i"), [r(3)]),
    "uppercase": (einsum("Ab,bC->AC"), [r(2, 3), r(3, 4)]),
    "spaces": (einsum(" ij , jk -> ik "), [r(2, 3), r(3, 4)]),
    "triple-diagonal": (einsum("iii->i"), [r(2, 2, 2)]),
    "diagonal-and-sum": (einsum("iji->j"), [r(2, 3, 2)]),
    "aliasing": (lambda lib, x: lib.m.einsum("ij,kj->ik", x, x), [r(3, 2)]),
    "transposed-layout": (lambda lib, x: lib.m.einsum("ij,jk->ik", x.T, x), [r(3, 2)]),
    "list-form": (lambda lib, a, b: lib.m.einsum("ij,jk", [a, b]), [r(2, 3), r(3, 4)]),
    "int-operands": (einsum("ij,jk->ik"), [np.arange(6).reshape(2, 3),
                                            np.arange(12).reshape(3, 4)]),
    "large-contraction": (einsum("bij,bjk->bik"), [r(3, 20, 30), r(3, 30, 10)]),
}


@pytest.mark.parametrize("program, arrays", EDGES.values(), ids=EDGES.keys())
def test_edges_match_torch(program, arrays):
    compare(program, *arrays)


def test_float32_stays_float32_like_torch():
    a, b = r(2, 3).astype(np.float32), r(3, 4).astype(np.float32)
    compare(einsum("ij,jk->ik"), a, b, rtol=1e-5, atol=1e-6)
    x, y = ag.tensor(a, requires_grad=True), ag.tensor(b, requires_grad=True)
    out = ag.einsum("ij,jk->ik", x, y)
    out.sum().backward()
    assert out.dtype == x.grad.dtype == y.grad.dtype == np.float32


def test_mixed_dtypes_promote_as_numpy_does_where_torch_refuses():
    a, b = r(3).astype(np.float32), r(3)
    with pytest.raises(RuntimeError, match="expected scalar type"):
        torch.einsum("i,i->", torch.from_numpy(a), torch.from_numpy(b))
    x = ag.tensor(a, requires_grad=True)
    out = ag.einsum("i,i->", x, ag.tensor(b))
    assert out.dtype == np.float64
    out.backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad.numpy(), b.astype(np.float32))


# -- equations PyTorch refuses --------------------------------------------------------------
REFUSED = {
    "repeated-sizes-differ": ("ii", [(3, 4)]),
    "repeated-size-1-does-not-broadcast": ("ii", [(3, 1)]),
    "output-repeated": ("ij->ii", [(2, 2)]),
    "output-unknown": ("ij->k", [(2, 2)]),
    "more-operands": ("ij->j", [(2, 2), (2, 2)]),
    "fewer-operands": ("ij,jk->ik", [(2, 3)]),
    "fewer-operands-empty-term": ("ij,jk,->ik", [(2, 3), (3, 4)]),
    "too-many-subscripts": ("ijk->", [(2, 3)]),
    "too-few-subscripts": ("ij->", [(2, 3, 4)]),
    "subscripts-for-a-0-d": ("i->", [()]),
    "no-subscripts-for-a-vector": ("->", [(2,)]),
    "ellipsis-too-many-subscripts": ("ij...->...", [(2,)]),
    "sizes-differ": ("ij,jk->ik", [(2, 3), (4, 5)]),
    "ellipsis-sizes-differ": ("...ij,...jk->...ik", [(5, 2, 3), (2, 3, 4)]),
    "digit": ("i1->i", [(2, 2)]),
    "two-arrows": ("i->i->i", [(2,)]),
    "dash": ("i-i", [(2,)]),
    "comma-in-output": ("i->i,", [(2,)]),
    "lone-dot": ("i.j", [(2, 2)]),
    "four-dots": ("....", [(2, 2)]),
    "two-ellipses": ("...i...", [(2, 2)]),
    "two-ellipses-in-output": ("...i->...i...", [(2,)]),
    "two-dots-in-output": ("i->..", [(2,)]),
}


def _torch_message(equation, shapes) -> str:
    with pytest.raises(Exception) as raised:
        torch.einsum(equation, *(torch.zeros(s) for s in shapes))
    # PyTorch's own typo ("operand 1has size"): ours has the space
    return str(raised.value).splitlines()[0].replace("has size", " has size").replace(
        "  has", " has")


@pytest.mark.parametrize("equation, shapes", REFUSED.values(), ids=REFUSED.keys())
def test_refused_equations_raise_torchs_error_with_its_sentence(equation, shapes):
    message = raises_like(lambda lib, *xs: lib.m.einsum(equation, *xs),
                          *(np.zeros(s) for s in shapes))
    first, hint = message.split("\n")
    assert first == _torch_message(equation, shapes) + "."
    assert hint.startswith("Hint: ") and hint.endswith(".")


@pytest.mark.parametrize("call, kind, phrase", [
    (lambda lib: lib.einsum("ij"), ValueError, "must specify the equation string and at least"),
    (lambda lib: lib.einsum("ij", []), ValueError, "at least one operand"),
    (lambda lib: lib.einsum(3, lib.ones(2)), TypeError, "argument 'equation' (position 1) must "
     "be str, not int"),
    (lambda lib: lib.einsum("i", 3.0), TypeError, "expected Tensor as element 0 in argument 1, "
     "but got float"),
    (lambda lib: lib.einsum("i,i", lib.ones(2), [1.0, 2.0]), TypeError,
     "expected Tensor as element 1 in argument 1, but got list"),
], ids=["no-operands", "empty-list", "equation-not-str", "number-operand", "list-operand"])
def test_bad_arguments_raise_torchs_error(call, kind, phrase):
    with pytest.raises(kind) as theirs:
        call(torch)
    with pytest.raises(kind) as ours:
        call(ag)
    assert phrase in str(theirs.value) and phrase in str(ours.value)
    assert "\nHint: " in str(ours.value)


def test_the_sublist_form_is_refused_with_a_sentence():
    np.testing.assert_allclose(  # PyTorch has it
        torch.einsum(torch.ones(2, 3), [0, 1], torch.ones(3), [1]).numpy(), [3.0, 3.0])
    with pytest.raises(TypeError, match="sublist form .* is not supported"):
        ag.einsum(ag.ones(2, 3), [0, 1], ag.ones(3), [1])


def test_an_ellipsis_needing_more_letters_than_are_left_is_refused():
    letters = es.LETTERS
    x = np.zeros((1,) * 26)
    y = np.zeros((1,) * 27)
    equation = f"{letters[:26]},{letters[26:]}...->"
    assert torch.einsum(equation, torch.zeros(x.shape), torch.zeros(y.shape)).shape == ()
    with pytest.raises(RuntimeError, match="needs 53 distinct subscripts"):
        ag.einsum(equation, x, y)
