"""check_derivation: a learner's own derivation checked against the engine.

Each row is a function written with the engine, a right formula (sometimes two, written
differently) and wrong ones made from typical slips, with the diagnosis each must get.
The right formulas are derived here by hand, in NumPy, not read from the engine. The
traps agree with the engine on the shapes the learner gave and must be caught on the
shapes the checker chooses."""

import re

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import autograd_core as ag
from autograd_core.nn import functional as F
from widgets.exercises import check_derivation


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def conv_dw(x, w, g):
    windows = sliding_window_view(x, w.shape[2:], axis=(2, 3))  # n c h w i j
    return np.einsum("nohw,nchwij->ocij", g, windows)


def bn(x):
    return (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5)


def bn_dx(x, g):
    n, xh = x.shape[0], bn(x)
    return (g - g.mean(0) - xh * (g * xh).mean(0)) / np.sqrt(x.var(0) + 1e-5) * (n / n)


def bn_f(x):
    mean = x.mean(dim=0, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=0, keepdim=True)
    return (x - mean) / ag.sqrt(var + 1e-5)


# name: (f, shapes, input, right formulas, {wrong formula: diagnosis})
ROWS = {
    "matmul chain": (
        lambda x, W1, W2: x @ W1 @ W2, {"x": (4, 3), "W1": (3, 5), "W2": (5, 2)}, "W1",
        [lambda x, W1, W2, g: x.T @ g @ W2.T,
         lambda x, W1, W2, g: np.einsum("ni,nk,jk->ij", x, g, W2)],
        {(lambda x, W1, W2, g: -(x.T @ g @ W2.T)): "sign",
         (lambda x, W1, W2, g: x.T @ W2.T): "shape"}),
    "tanh": (
        lambda x: ag.tanh(x), {"x": (3, 4)}, "x",
        [lambda x, g: g * (1 - np.tanh(x) ** 2), lambda x, g: g / np.cosh(x) ** 2],
        {(lambda x, g: 1 - np.tanh(x) ** 2): "missing_upstream"}),
    "softmax cross-entropy": (
        lambda z, t: -(t * F.log_softmax(z, dim=1)).sum() / z.shape[0],
        {"z": (4, 3), "t": (4, 3)}, "z",
        [lambda z, t: (softmax(z) * t.sum(1, keepdims=True) - t) / z.shape[0]],
        {(lambda z, t: softmax(z) * t.sum(1, keepdims=True) - t): "batch_factor"}),
    "batch norm": (
        bn_f, {"x": (5, 3)}, "x",
        [bn_dx],
        {(lambda x, g: g / np.sqrt(x.var(0) + 1e-5)): "differs"}),
    "conv": (
        lambda x, w: F.conv2d(x, w), {"x": (2, 2, 5, 5), "w": (3, 2, 2, 2)}, "w",
        [conv_dw],
        {(lambda x, w, g: -conv_dw(x, w, g)): "sign",
         (lambda x, w, g: 3 * conv_dw(x, w, g)): "scale"}),
    "broadcast add": (
        lambda x, b: x + b, {"x": (4, 3), "b": (3,)}, "b",
        [lambda x, b, g: g.sum(0), lambda x, b, g: np.ones(x.shape[0]) @ g],
        {(lambda x, b, g: g): "missing_broadcast_sum",
         (lambda x, b, g: g.mean(0)): "batch_factor"}),
    "reused input": (
        lambda x: x * ag.sin(x), {"x": (6,)}, "x",
        [lambda x, g: g * (np.sin(x) + x * np.cos(x))],
        {(lambda x, g: g * x * np.cos(x)): "overwrite", (lambda x, g: g * np.sin(x)): "overwrite"}),
    "custom loss": (
        lambda p, t: ((p - t) ** 2).mean(), {"p": (4, 2), "t": (4, 2)}, "p",
        [lambda p, t: 2 * (p - t) / p.size],
        {(lambda p, t: 2 * (t - p) / p.size): "sign", (lambda p, t: (p - t) / p.size): "scale"}),
}


@pytest.mark.parametrize("row", ROWS)
def test_right_formulas_pass_however_they_are_written(row):
    f, shapes, name, rights, _ = ROWS[row]
    for formula in rights:
        result = check_derivation(f, {name: formula}, shapes)
        assert result.ok, result.message


@pytest.mark.parametrize("row", ROWS)
def test_each_slip_is_named(row):
    f, shapes, name, _, wrongs = ROWS[row]
    for formula, code in wrongs.items():
        result = check_derivation(f, {name: formula}, shapes)
        assert not result.ok
        if code == "differs":  # no special name: any diagnosis but "correct"
            assert result.diagnosis not in (None, "correct"), result.message
        elif code == "shape":
            assert "shape" in result.message, result.message
        else:
            assert result.diagnosis == code, (code, result.diagnosis, result.message)


def test_the_engines_values_are_never_printed():
    """Replies quote shapes and sizes, never a value: no number with a decimal point."""
    for row in ROWS.values():
        f, shapes, name, _, wrongs = row
        for formula in wrongs:
            text = repr(check_derivation(f, {name: formula}, shapes, seed=3))
            assert not re.search(r"\d\.\d", text), text


# -- traps: right on the learner's own shapes, wrong in general ---------------------------


def test_a_transpose_on_a_square_matrix_is_caught():
    f = lambda x, W: (x @ W) ** 2  # noqa: E731
    wrong = lambda x, W, g: ((2 * (x @ W) * g).T @ x)  # noqa: E731  (dW transposed)
    result = check_derivation(f, {"W": wrong}, {"x": (3, 3), "W": (3, 3)})
    assert not result.ok and result.diagnosis == "transpose"
    assert "square" in result.message


def test_a_factor_of_n_at_n_equal_to_one_is_caught_on_another_batch():
    f, _, name, rights, wrongs = ROWS["softmax cross-entropy"]
    shapes = {"z": (1, 3), "t": (1, 3)}  # a batch of one: dividing by N changes nothing
    (forgot_n,) = wrongs
    z, t = np.random.default_rng(1).standard_normal((2, 1, 3))
    assert np.allclose(forgot_n(z, t), rights[0](z, t))  # a trap: right on these shapes
    result = check_derivation(f, {name: forgot_n}, shapes)
    assert not result.ok and result.diagnosis == "batch_factor"
    assert "First seen on shapes" in result.message and "z (1, 3)" not in result.message
    assert check_derivation(f, {name: rights[0]}, shapes).ok


def test_a_missing_path_that_vanishes_on_the_given_shapes_is_caught():
    """With a bias of size 1 the broadcast sum over the batch is a no-op only while the
    batch is 1: the formula that skips it is right on the learner's shapes alone."""
    f = lambda x, b: (x * b).sum()  # noqa: E731
    skips_the_sum = lambda x, b: x[0]  # noqa: E731  right only for a batch of 1
    shapes = {"x": (1, 3), "b": (3,)}
    x = np.random.default_rng(2).standard_normal((1, 3))
    assert np.allclose(skips_the_sum(x, None), x.sum(0))  # a trap: right on these shapes
    result = check_derivation(f, {"b": skips_the_sum}, shapes)
    assert not result.ok and "First seen on shapes" in result.message
    assert check_derivation(f, {"b": lambda x, b: x.sum(0)}, shapes).ok


# -- every malformed input gets a sentence -----------------------------------------------


MALFORMED = {
    "a formula that raises": (lambda x: ag.tanh(x).sum(), {"x": lambda x: 1 / 0},
                              {"x": (3,)}, "raised ZeroDivisionError"),
    "a formula of the wrong shape": (lambda x: ag.tanh(x).sum(), {"x": lambda x: x[:2]},
                                     {"x": (3,)}, "shape"),
    "a formula that is not a function": (lambda x: ag.tanh(x).sum(), {"x": 0.5},
                                         {"x": (3,)}, "should be a function"),
    "f computed with NumPy": (lambda x: np.tanh(x.numpy()).sum(), {"x": lambda x: x},
                              {"x": (3,)}, "not an engine tensor"),
    "f detached from its inputs": (lambda x: x.detach().sum(), {"x": lambda x: x},
                                   {"x": (3,)}, "not connected"),
    "f that cannot run on the shapes": (lambda x, W: (x @ W).sum(), {"W": lambda x, W: x},
                                        {"x": (2, 3), "W": (4, 5)}, "could not run"),
    "a formula with no shape": (lambda x: x.sum(), {"y": lambda x: x}, {"x": (3,)},
                                "no shape"),
    "a bad shape": (lambda x: x.sum(), {"x": lambda x: x}, {"x": (3, 0)}, "positive sizes"),
    "no formulas": (lambda x: x.sum(), {}, {"x": (3,)}, "dict of your derivations"),
    "a placeholder": (lambda x: x.sum(), {"x": "..."}, {"x": (3,)}, "still a placeholder"),
    "None": (lambda x: x.sum(), {"x": None}, {"x": (3,)}, "still a placeholder"),
    "a function returning None": (lambda x: x.sum(), {"x": lambda x: None}, {"x": (3,)},
                                  "nothing to check yet"),
    "f not a function": (3, {"x": lambda x: x}, {"x": (3,)}, "should be a function"),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_malformed_input_gets_a_sentence(case):
    f, formulas, shapes, words = MALFORMED[case]
    result = check_derivation(f, formulas, shapes)
    assert not result.ok and words in result.message, result.message
    assert "Traceback" not in result.message


# -- the derivation as text, read without eval ----------------------------------------------


TEXT_RIGHT = {
    "tanh layer": (lambda x, W: ag.tanh(x @ W), {"x": (4, 3), "W": (3, 2)},
                   {"W": "x.T @ (g * (1 - tanh(x @ W)**2))", "x": "(g * (1 - tanh(x@W)^2)) @ W.T"}),
    "relu": (lambda x: ag.relu(x), {"x": (6,)}, {"x": "g * (x > 0)"}),
    "bias": (lambda x, b: x + b, {"x": (4, 3), "b": (3,)}, {"b": "g.sum(axis=0)"}),
    "loss": (lambda p, t: ((p - t) ** 2).mean(), {"p": (4, 2), "t": (4, 2)},
             {"p": "2 * (p - t) / 8", "t": "-2 · (p - t) / 8"}),
    "sigmoid": (lambda z: ag.sigmoid(z), {"z": (5,)},
                {"z": "g * sigmoid(z) * (1 - np.sigmoid(z))"}),
}


@pytest.mark.parametrize("row", TEXT_RIGHT)
def test_right_formulas_as_text_pass(row):
    f, shapes, formulas = TEXT_RIGHT[row]
    if row == "loss":  # 8 is the number of entries: right on these shapes only, so the
        result = check_derivation(f, formulas, shapes)  # checker's other shapes catch it
        assert not result.ok and result.diagnosis in ("scale", "batch_factor")
        formulas = {"p": "2 * (p - t) / p.size", "t": "-2 * (p - t) / (t.shape[0] * t.shape[1])"}
    result = check_derivation(f, formulas, shapes)
    assert result.ok, result.message


def test_a_text_formula_without_g_is_named_as_missing_the_upstream_gradient():
    result = check_derivation(lambda x, W: ag.tanh(x @ W),
                              {"W": "x.T @ (1 - tanh(x @ W)**2)"}, {"x": (4, 3), "W": (3, 2)})
    assert not result.ok and result.diagnosis == "missing_upstream"


@pytest.mark.parametrize("text, words", [
    ("__import__('os').system('true')", ".system is not allowed"),
    ("x.__class__", "is not allowed"),
    ("open('f')", "is not a function I know"),
    ("np.load('a')", "is not one of the functions"),
    ("x +", "not a formula I can read"),
    ("y * g", "none of your inputs"),
    ("lambda: 1", "Lambda is not allowed"),
    ("'text'", "is not a number"),
    ("x == 1", "A comparison in a formula"),
    ("9 ** 9 ** 9", "raised OverflowError"),
])
def test_text_the_reader_refuses_gets_a_sentence(text, words):
    result = check_derivation(lambda x: x.sum(), {"x": text}, {"x": (3,)})
    assert not result.ok and words in result.message, result.message


def test_a_path_left_out_is_named_by_the_op_it_runs_through():
    result = check_derivation(lambda x, y: (x * y + ag.sin(x)).sum(), {"x": "y"},
                              {"x": (3,), "y": (3,)})
    assert not result.ok and result.diagnosis == "overwrite"
    assert "the path through sin is lost" in result.message


def test_a_missing_path_that_is_zero_on_the_given_shapes_is_caught():
    """With one column, x.sum(1) - x is zero, so the second term's path sends nothing: a
    formula without it is right on (4, 1) and wrong as soon as x has two columns."""
    def f(x, W):
        return (x @ W).sum() + ((x.sum(dim=1, keepdim=True) - x) ** 2).sum()

    without_it = lambda x, W: np.ones_like(x) * W.sum(1)  # noqa: E731
    shapes = {"x": (4, 1), "W": (1, 3)}
    x = np.random.default_rng(3).standard_normal((4, 1))
    assert np.allclose(((x.sum(1, keepdims=True) - x) ** 2), 0)  # a trap: the path is zero
    result = check_derivation(f, {"x": without_it}, shapes)
    assert not result.ok and "axis of size 1 made longer" in result.message, result.message


# -- never a traceback: what used to escape as NumPy's or Python's own words (issue #41) ----
def _tanh_sum(x, W):
    return ag.tanh(x @ W).sum()


TANH_SHAPES = {"x": (4, 3), "W": (3, 2)}


def _fails_after(calls: int):
    """An f that runs ``calls`` times, then raises (as f does when a later draw gives
    labels out of range)."""
    ran = [0]

    def f(x):
        ran[0] += 1
        if ran[0] > calls:
            raise IndexError("index 3 is out of bounds for axis 0 with size 3")
        return (x * x).sum()
    return f


@pytest.mark.parametrize(("f", "formulas", "shapes", "options", "words", "code"), [
    (_fails_after(4), {"x": "2*x"}, {"x": (3,)}, {},
     "f raised IndexError on shapes x (3,), draw 2", "f"),
    (_tanh_sum, {"W": "x.T @ g"}, TANH_SHAPES, {}, "no g to multiply by", "scalar_upstream"),
    (_tanh_sum, {"W": lambda x, W, g: x.T @ g}, TANH_SHAPES, {}, "no g to multiply by",
     "scalar_upstream"),
    (_tanh_sum, {"W": lambda x, W: x @ (1 - np.tanh(x @ W) ** 2)}, TANH_SHAPES, {},
     "a matrix product (@) whose inner sizes 3 and 4 differ", "shapes"),
    (_tanh_sum, {"W": "x @ (1 - tanh(x @ W)**2)"}, TANH_SHAPES, {},
     "`x @ (1 - tanh(x @ W) ** 2)` is a matrix product (@) of shapes (4, 3) and (4, 2)",
     "shapes"),
    (_tanh_sum, {"W": lambda x, W: x.T * (1 - np.tanh(x @ W) ** 2)}, TANH_SHAPES, {},
     "an elementwise operation between shapes (3, 4) and (4, 2), which do not line up",
     "shapes"),
    (_tanh_sum, {"W": "x.T @ (1 - tanh(x @ W)**2)"}, TANH_SHAPES, {"draws": 0},
     "a whole number of at least 1", "draws"),
    (_tanh_sum, {"W": "x.T @ (1 - tanh(x @ W)**2)"}, TANH_SHAPES, {"draws": 2.5},
     "a whole number of at least 1", "draws"),
], ids=["later draw", "g of a scalar (text)", "g of a scalar (function)", "@ sizes",
        "@ sizes (text)", "broadcast", "draws=0", "draws=2.5"])
def test_what_used_to_escape_gets_one_sentence(f, formulas, shapes, options, words, code):
    result = check_derivation(f, formulas, shapes, **options)
    assert not result.ok and words in result.message and result.diagnosis == code
    assert "gufunc" not in result.message and "Traceback" not in result.message


def test_sizes_given_as_numpy_integers_are_read_as_sizes():
    result = check_derivation(_tanh_sum, {"W": "x.T @ (1 - tanh(x @ W)**2)"},
                              {"x": (np.int64(4), np.int32(3)), "W": (3, 2)},
                              draws=np.int64(2))
    assert result.ok and "2 random draws" in result.message
