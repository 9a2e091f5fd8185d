"""Derivations as written on a whiteboard (issue #41): LaTeX, Unicode plain text and index
notation, read by a grammar into NumPy, never run; ambiguous notation asked about.

Every expected value is written here in NumPy, independently of the reader. The
notations are the ones the issue found refused (W^T, xᵀ, 2x, ⊙, Σ_i, 1/N with a named N,
σ, max(0, x), |x|, diag, tr, det, inv, X^{-1}, erf, softmax, π, np.sum, np.matmul,
.transpose(), .var()), in both spellings where there are two.
"""

from __future__ import annotations

from math import erf

import numpy as np
import pytest

import autograd_core as ag
from widgets.exercises import check_derivation
from widgets.feedback.formula_text import FormulaError, read_formula
from widgets.feedback.whiteboard import MAX_ELEMENTS, Ask

RNG = np.random.default_rng(41)
x, W, g = RNG.standard_normal((4, 3)), RNG.standard_normal((3, 2)), RNG.standard_normal((4, 2))
A = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
u, v = RNG.standard_normal(3), RNG.standard_normal(3)
ARRAYS = {"x": x, "W": W, "g": g, "A": A, "u": u, "v": v, "N": 4}
NAMES = ("x", "W", "A", "u", "v")


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


def softmax_rows(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


TANH_W = x.T @ (g * (1 - np.tanh(x @ W) ** 2))

READ = [  # (text, the value it means, in NumPy)
    (r"x^\top (g \odot (1 - \tanh^2(x W)))", TANH_W),
    (r"\frac{\partial L}{\partial W} = x^\top \left(g \odot (1 - \tanh(x W)^2)\right)", TANH_W),
    ("xᵀ (g ⊙ (1 - tanh(x W)²))", TANH_W),
    ("x^T (g ⊙ (1 - tanh(xW)^2))", TANH_W),
    (r"$$\frac{\partial L}{\partial W} = x^{\top} g$$", x.T @ g),
    ("W^T", W.T), ("x^T g", x.T @ g), ("2x", 2 * x), (r"\frac{1}{N} x", x / 4), ("1/N x", x / 4),
    (r"\frac{\partial L}{\partial W_{ij}} = \sum_n x_{ni} g_{nj}", x.T @ g),
    ("∂L/∂W_{ij} = Σ_n x_{ni} g_{nj}", x.T @ g),
    (r"\frac{\partial L}{\partial W_{ji}} = \sum_{n=1}^{N} x_{ni} g_{nj}", (x.T @ g).T),
    ("sum_n x_{ni}", x.sum(axis=0)),
    (r"\sigma(x) \odot (1 - \sigma(x))", sigmoid(x) * (1 - sigmoid(x))),
    ("σ(x) ⊙ (1 − σ(x))", sigmoid(x) * (1 - sigmoid(x))),
    (r"\max(0, x)", np.maximum(0, x)), ("max(0, x)", np.maximum(0, x)), ("|u|", np.abs(u)),
    (r"\left| u \right|", np.abs(u)), (r"|x^\top g|", np.abs(x.T @ g)),
    (r"\operatorname{diag}(u)", np.diag(u)), ("diag(u)", np.diag(u)),
    (r"\det(A) A^{-\top}",
                                                         np.linalg.det(A) * np.linalg.inv(A).T),
    ("det(A) A^{-T}", np.linalg.det(A) * np.linalg.inv(A).T), (r"\operatorname{inv}(A)",
                                                              np.linalg.inv(A)),
    ("A^{-1}", np.linalg.inv(A)), ("A^-1", np.linalg.inv(A)), ("A⁻¹ u", np.linalg.inv(A) @ u),
    ("-A^{-T} u v^T A^{-T}", -np.linalg.inv(A).T @ np.outer(u, v) @ np.linalg.inv(A).T),
    (r"\operatorname{erf}(u)", np.array([erf(t) for t in u])),
    (r"\operatorname{softmax}(x)", softmax_rows(x)), (r"\pi u", np.pi * u), ("π u", np.pi * u),
    ("e^{u}", np.exp(u)), (r"\sqrt{u^2 + 1}", np.sqrt(u ** 2 + 1)), ("u^T A v", u @ A @ v),
    ("u v^T", np.outer(u, v)), ("(A + A^T) u", (A + A.T) @ u), ("A + I", A + np.eye(3)),
    ("2 u^T A", 2 * u @ A), ("np.sum(x)", x.sum()), ("np.matmul(x.T, g)", x.T @ g),
    ("x.transpose() @ g", x.T @ g), ("x.var(axis=0)", x.var(axis=0)),
    ("np.linalg.inv(A).T", np.linalg.inv(A).T),
]


@pytest.mark.parametrize(("text", "value"), READ, ids=[t for t, _ in READ])
def test_common_notations_are_read_as_they_are_meant(text, value):
    formula = read_formula(text, NAMES, sizes=["N"])
    np.testing.assert_allclose(formula(**ARRAYS), value, rtol=1e-12, atol=1e-12)


def test_the_identity_alone_takes_the_size_of_the_gradient():
    formula = read_formula(r"\operatorname{tr}(A) I", NAMES, part="A")
    np.testing.assert_allclose(formula(**ARRAYS), np.trace(A) * np.eye(3))
    with pytest.raises(Ask, match="I alone has no size"):
        read_formula("2 I", NAMES)(**ARRAYS)


def test_an_index_the_right_side_lacks_means_the_same_value_all_along_it():
    formula = read_formula(r"\frac{\partial L}{\partial W_{ij}} = \sum_n x_{ni}", NAMES)
    np.testing.assert_allclose(formula(**ARRAYS), np.repeat(x.sum(0)[:, None], 2, axis=1))


def test_an_indicator_is_a_mask_of_ones_and_zeros():
    formula = read_formula(r"\mathbb{1}[x > 0] \odot x", NAMES)
    np.testing.assert_array_equal(formula(**ARRAYS), np.where(x > 0, x, 0.0))
    formula = read_formula("𝟙[x ≥ 0] ⊙ x", NAMES)
    np.testing.assert_array_equal(formula(**ARRAYS), np.where(x >= 0, x, 0.0))


@pytest.mark.parametrize(("text", "words"), [
    (r"A \cdot A", "· between two arrays can mean a matrix product or an elementwise one"),
    ("A × A", "× between two arrays is not one product"),
    ("A^2", "of a matrix can mean the matrix product A A or each entry to the power 2"),
    ("1/2N x", "can mean 1/(2N) or (1/2)·N"),
    ("|A| A^{-T}", "its determinant or each entry's absolute value"),
    ("u v", "two column vectors side by side"),
    ("x_{ni} g_{nj}", "so their order is known"),
], ids=["cdot", "times", "square of a matrix", "1/2N", "|A|", "two columns", "index order"])
def test_ambiguous_notation_is_asked_about_in_one_sentence(text, words):
    with pytest.raises(Ask) as asked:
        read_formula(text, NAMES, sizes=["N"])(**ARRAYS)
    assert words in str(asked.value) and "\n" not in str(asked.value)


@pytest.mark.parametrize(("text", "words"), [
    ("x W^T", "is a matrix product of shape (4, 3) and shape (2, 3): the inner sizes 3 and 2"),
    (r"\sigma(x)(1 - \sigma(x))", "side by side, which is a matrix product here"),
    ("y + x", "'y', which is none of your inputs"),
    ("1/M x", "sizes={'M': ('A', 0)}"),
    ("x^{-1}", "only a square matrix has an inverse"),
    (r"\frac{\partial L}{\partial W_{ijk}} = \sum_n x_{ni}", "has 3 indices where the gradient "
                                                             "has 2 axes"),
    (r"\frac{\partial L}{\partial W_{i}} = x_{ni} g_{nj}", "index n is on the right but not"),
    (r"\sum_k x_{ni}", "k, which no term after it has"),
    ("x_{nij}", "has 3 indices, but x has 2 axes"),
    ("|x", "do not pair up"),
    ("__import__('os').system('true')", "not allowed"),
    ("x W +", "is not a formula I can read"),
    (r"x^\top +", "is not notation this reader knows"),
], ids=["inner sizes", "side by side", "unknown name", "unnamed size", "inverse of (4, 3)",
        "missing index", "extra index", "sum over nothing", "too many indices", "bars",
        "code", "unfinished", "unfinished LaTeX"])
def test_what_cannot_be_computed_gets_a_sentence(text, words):
    with pytest.raises(FormulaError) as refused:
        read_formula(text, NAMES)(**ARRAYS)
    assert words in str(refused.value)


def test_a_formula_never_runs_code_and_never_makes_a_huge_array():
    big = np.ones(5_000)  # its outer product with itself: 25 million numbers
    assert big.size ** 2 > MAX_ELEMENTS
    with pytest.raises(FormulaError, match="more than"):
        read_formula("u u^T", ["u"])(u=big, g=None)
    ran = []
    with pytest.raises(FormulaError):
        read_formula("(lambda: ran.append(1))()", ["ran"])(ran=ran)
    assert ran == []


def test_a_left_side_naming_another_input_is_refused():
    with pytest.raises(FormulaError, match="the gradient of x, but this formula is for dW"):
        read_formula(r"\frac{\partial L}{\partial x} = g W^\top", NAMES, part="W")


# -- check_derivation reads the whiteboard -----------------------------------------------------
def _least_squares(A, x, b):
    return ((A @ x - b) ** 2).sum()


def _mean_of_products(x, W):
    return (x @ W).sum() / x.shape[0]


@pytest.mark.parametrize(("f", "formulas", "shapes", "sizes", "diagnosis"), [
    (_least_squares, {"x": r"\frac{\partial L}{\partial x} = 2 A^\top (A x - b)"},
     {"A": (5, 3), "x": (3,), "b": (5,)}, None, "correct"),
    (_least_squares, {"x": "Aᵀ (A x − b)"}, {"A": (5, 3), "x": (3,), "b": (5,)}, None,
     "scale"),
    (lambda x, B: x @ B @ x, {"x": r"(B + B^\top) x"}, {"x": (3,), "B": (3, 3)}, None,
     "correct"),
    (lambda X: ag.linalg.slogdet(X).logabsdet, {"X": r"X^{-\top}"}, {"X": (3, 3)}, None,
     "correct"),
    (lambda X: ag.linalg.det(X), {"X": r"\det(X) X^{-1}"}, {"X": (3, 3)}, None, "transpose"),
    (_mean_of_products, {"W": r"\frac{\partial L}{\partial W_{ij}} = \frac{1}{N} \sum_n x_{ni}"},
     {"x": (4, 3), "W": (3, 2)}, {"N": ("x", 0)}, "correct"),
    (_mean_of_products, {"W": r"\frac{\partial L}{\partial W_{ij}} = \sum_n x_{ni}"},
     {"x": (4, 3), "W": (3, 2)}, None, "batch_factor"),
    (lambda x, W: ag.tanh(x @ W), {"W": r"x^\top (g \odot (1 - \tanh^2(x W)))"},
     {"x": (4, 3), "W": (3, 2)}, None, "correct"),
    (lambda x, W: ag.tanh(x @ W), {"W": r"x^\top (g (1 - \tanh^2(x W)))"},
     {"x": (4, 3), "W": (3, 2)}, None, "shapes"),
    (lambda x: (x * x).sum(), {"x": r"x \cdot x"}, {"x": (3, 3)}, None, "ambiguous"),
], ids=["least squares", "a factor 2 left out", "quadratic form", "log det", "det, untransposed",
        "mean, index notation", "mean without 1/N", "tanh layer", "tanh layer side by side",
        "cdot"])
def test_check_derivation_reads_the_whiteboard(f, formulas, shapes, sizes, diagnosis):
    result = check_derivation(f, formulas, shapes, sizes=sizes)
    assert result.diagnosis == diagnosis, result.message
    assert "Traceback" not in result.message


@pytest.mark.parametrize(("sizes", "words"), [
    ({"N": ("y", 0)}, "gives each name an input and one of its axes"),
    ({"N": ("x", 5)}, "gives each name an input and one of its axes"),
    ({"x": ("x", 0)}, "which is an input"),
])
def test_sizes_that_name_no_axis_get_a_sentence(sizes, words):
    result = check_derivation(_mean_of_products, {"W": "x^T 1"}, {"x": (4, 3), "W": (3, 2)},
                              sizes=sizes)
    assert not result.ok and words in result.message and result.diagnosis == "sizes"


def test_the_readmes_whiteboard_examples_pass_as_it_says():
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = re.search(r"```python\n(check_derivation\(.*?\\frac\{\\partial L\}.*?)```", readme,
                      re.S).group(1)
    results = []
    exec(block, {"ag": ag, "check_derivation":  # noqa: S102 - the README's own code
                 lambda *a, **k: results.append(check_derivation(*a, **k))})
    assert len(results) == 2 and all(r.ok for r in results), [r.message for r in results]


# -- what an audit as a learner found (about 400 formulas), each now held -----------------------
B = RNG.standard_normal((3, 3))
MORE = {**ARRAYS, "B": B, "W1": RNG.standard_normal((3, 5))}


@pytest.mark.parametrize(("text", "value"), [
    (r"BA^\top", B @ A.T), (r"\mathbf{B}\mathbf{A}^\top", B @ A.T), ("BAᵀ", B @ A.T),
    (r"uv^\top", np.outer(u, v)), (r"\tanh(x W_1)", np.tanh(x @ MORE["W1"])),
    (r"\tanh(xW_1)", np.tanh(x @ MORE["W1"])),
    (r"\frac{u}{\sqrt{u^2 + 1e-5}}", u / np.sqrt(u ** 2 + 1e-5)),
    ("12u^11", 12 * u ** 11), ("e^{u}^{0.5}", np.exp(u) ** 0.5),
    (r"\frac{\partial \mathcal{L}}{\partial A} = A^{\mathsf{T}}", A.T),
    (r"\nabla_A L = A^{\mathrm{T}}", A.T), ("∇_A L = A⊤", A.T), ("A⁻ᵀ", np.linalg.inv(A).T),
    ("u\u00a0⊙ v", u * v), (r"\bigl(A^\top\bigr) u", A.T @ u), ("u ⊘ v", u / v),
    (r"\sqrt 2 u", np.sqrt(2) * u), ("√2 u", np.sqrt(2) * u),
    ("uᵀ ⊙ x", u * x), ("x + u", x + u), (r"\operatorname{abs}(A)", np.abs(A)),
])
def test_what_the_audit_found_misread_is_read_as_meant(text, value):
    got = read_formula(text, (*NAMES, "B", "W1"), sizes=["N"])(**MORE)
    np.testing.assert_allclose(got, value, rtol=1e-12, atol=1e-12)


def test_index_notation_subtracts_a_summed_term():
    """Layer norm's centring: each g_{ni} minus (1/N) times its row's sum (N = 4 here, the
    rows have 3 entries)."""
    text = r"\frac{\partial L}{\partial x_{ni}} = g_{ni} - \frac{1}{N}\sum_j g_{nj}"
    g_like = RNG.standard_normal((4, 3))
    got = read_formula(text, NAMES, sizes=["N"])(**{**MORE, "g": g_like})
    np.testing.assert_allclose(got, g_like - g_like.sum(axis=1, keepdims=True) / 4)


@pytest.mark.parametrize("text", ["(" * 600 + "x^T g" + ")" * 600, "-" * 1000 + "x^T g",
                                  "x" * 1999, " ".join(["x"] * 990), "$" + "x" * 32 + "q$"])
def test_a_formula_too_long_or_deep_gets_a_sentence_at_once(text):
    result = check_derivation(_tanh_sum, {"W": text}, {"x": (4, 3), "W": (3, 2)})
    assert not result.ok and "Traceback" not in result.message
    assert "RecursionError" not in result.message


def _tanh_sum(x, W):
    return ag.tanh(x @ W).sum()


def test_pythons_form_has_the_size_cap_too():
    with pytest.raises(FormulaError, match="more than"):
        read_formula("np.outer(np.outer(u, u), np.outer(u, u))", ["u"])(u=np.ones(100))
    with pytest.raises(FormulaError, match="more than"):
        read_formula("np.einsum('i,j,k->ijk', u, u, u)", ["u"])(u=np.ones(300))


@pytest.mark.parametrize(("text", "words"), [
    ("x^T dout", "The upstream gradient (what flows in from above) is called g here"),
    (r"x^\top \frac{\partial L}{\partial y}", "on the right, the upstream gradient"),
])
def test_the_upstream_gradient_by_another_name_is_pointed_to_g(text, words):
    with pytest.raises(FormulaError) as refused:
        read_formula(text, NAMES)(**ARRAYS)
    assert words in str(refused.value)
