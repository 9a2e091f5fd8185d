"""G11: what linear, tanh, relu and add must keep, and a backward that reads only that.

The old G11 took four sets of words, which ``capture(...).ops[i].saved`` gives away; now
each op is a pair (the words, a backward ``backward(g, kept)``) that the check runs on
three shapes with only the arrays named. The shortcuts: the old words alone, a backward
that asks the engine, one that reads an array it did not keep, one that hard-codes the
lesson's first shapes; the mistakes named in the learner's terms (keeping more than
needed, too little, a wrong rule, relu's float input where booleans do); and the right
answer written the intended way. Gradients here are worked out by hand with NumPy.
"""

import numpy as np
import pytest

import autograd_core as ag
from autograd_core.nn import functional
from widgets import exercises as ex
from widgets.exercises import reset_progress, store
from widgets.exercises.tracking import status


@pytest.fixture(autouse=True)
def _own_progress(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))
    reset_progress()
    ex.forget_results()


def linear_backward(g, kept):  # out = x @ W.T + b: by hand, one entry at a time
    x, w = kept["input"], kept["weight"]
    return g @ w, g.T @ x, g.sum(axis=0)


def tanh_backward(g, kept):
    return (g * (1 - kept["output"] ** 2),)


def relu_backward(g, kept):
    return (g * kept["mask"],)


def add_backward(g, kept):
    return g, g


RIGHT = dict(linear=(["input", "weight"], linear_backward), tanh=(["output"], tanh_backward),
             relu=(["mask"], relu_backward), add=([], add_backward))


def part(result, name):
    found = [p for p in result.parts if p.name == name] or (
        [result] if result.name == name else [])
    assert found, repr(result)
    return found[0]


def test_the_right_pairs_solve_it():
    result = ex.G11(**RIGHT)
    assert result.ok, repr(result)
    assert status("G11") == "solved"


@pytest.mark.parametrize("nothing", [[], (), set(), "nothing", None])
def test_add_keeping_nothing_is_said_in_the_forms_learners_type(nothing):
    assert ex.G11(add=(nothing, add_backward)).ok


def test_the_old_words_alone_no_longer_solve_it():
    old = dict(linear={"input", "weight"}, tanh={"output"}, relu={"mask"}, add=set())
    result = ex.G11(**old)
    assert not result.ok and all(p.diagnosis == "type" for p in result.parts), repr(result)
    assert status("G11") != "solved"
    for text in ("input, weight", "output", "mask", "nothing"):  # typed as text, too
        assert not ex.G11(tanh=text).ok


def test_a_backward_that_asks_the_engine_is_refused():
    def tanh_by_the_engine(g, kept):  # the engine's tanh backward, from the kept output
        x = ag.tensor(np.arctanh(kept["output"]), requires_grad=True)
        ag.tanh(x).backward(g)
        return (x.grad.numpy(),)

    def linear_by_the_engine(g, kept):
        x, w = (ag.tensor(kept[k], requires_grad=True) for k in ("input", "weight"))
        b = ag.tensor(np.zeros(len(kept["weight"])), requires_grad=True)
        functional.linear(x, w, b).backward(g)
        return x.grad.numpy(), w.grad.numpy(), b.grad.numpy()

    for op, answer in (("tanh", (["output"], tanh_by_the_engine)),
                       ("linear", (["input", "weight"], linear_by_the_engine))):
        result = ex.G11(**{op: answer})
        assert not result.ok and result.diagnosis == "uses_engine", repr(result)
    assert status("G11") != "solved"


def test_reading_an_array_not_kept_is_named():
    def tanh_from_input(g, kept):
        return (g * (1 - np.tanh(kept["input"]) ** 2),)

    result = ex.G11(tanh=(["output"], tanh_from_input))
    assert not result.ok and result.diagnosis == "read_unkept", repr(result)
    assert "kept['input']" in result.message and "'output'" in result.message
    assert "Traceback" not in repr(result) and "KeyError" not in result.message

    def linear_without_the_weight(g, kept):  # keeping too little
        return linear_backward(g, kept)

    short = ex.G11(linear=(["input"], linear_without_the_weight))
    assert short.diagnosis == "read_unkept" and "kept['weight']" in short.message


def test_the_lessons_shapes_built_in_are_caught():
    """A backward that returns the first problem's answer is right there only."""
    gen = np.random.default_rng(0)
    fixed = gen.standard_normal((3, 4))

    def tanh_fixed(g, kept):
        return (fixed,) if g.shape != (3, 4) else tanh_backward(g, kept)

    result = ex.G11(tanh=(["output"], tanh_fixed))
    assert not result.ok and "but not on" in result.message, repr(result)


@pytest.mark.parametrize("op, answer, code, words", [
    # keeping more than needed: an array never read, or one the engine's op does without
    ("tanh", (["input", "output"], tanh_backward), "kept_unread", "kept['input']"),
    ("linear", (["input", "weight", "bias"], linear_backward), "kept_unread", "kept['bias']"),
    ("tanh", (["input"], lambda g, k: (g / np.cosh(k["input"]) ** 2,)), "keeps_more",
     "tanh"),
    ("tanh", (["input", "output"], lambda g, k: (g * (1 - k["output"] ** 2)
                                                 + 0 * k["input"],)), "keeps_more", "less"),
    ("add", (["a"], lambda g, k: (g + 0 * k["a"], g)), "keeps_more", "'a'"),
    # relu's float input (or output), where booleans do: a memory point
    ("relu", (["input"], lambda g, k: (g * (k["input"] > 0),)), "keeps_more", "1 byte"),
    ("relu", (["output"], lambda g, k: (g * (k["output"] > 0),)), "keeps_more", "1 byte"),
    # a wrong rule
    ("relu", (["mask"], lambda g, k: (g * ~k["mask"],)), "mask_flipped", "other way round"),
    ("tanh", (["output"], lambda g, k: (g * (1 - np.tanh(k["output"]) ** 2),)), "tanh_twice",
     "tanh of the output again"),
    ("add", ([], lambda g, k: (g / 2, g / 2)), "shared", "all of g"),
    ("add", ([], lambda g, k: (g, -g)), "sign", "db"),
    ("linear", (["input", "weight"], lambda g, k: (g @ k["weight"], k["input"].T @ g,
                                                   g.sum(axis=0))), "transpose", "dweight"),
    ("linear", (["input", "weight"], lambda g, k: (g @ k["weight"], g.T @ k["input"],
                                                   g.mean(axis=0))), "batch_mean", "dbias"),
])
def test_each_mistake_is_named_in_the_learners_terms(op, answer, code, words):
    result = ex.G11(**{op: answer})
    assert not result.ok and result.diagnosis == code, repr(result)
    assert words in result.message, result.message
    assert status("G11") == "in progress"


def test_no_reply_states_a_gradient():
    """Feedback names the mistake, never the engine's numbers."""
    def tanh_off(g, kept):
        return (g * (1 - kept["output"] ** 2) * 1.1,)

    result = ex.G11(tanh=(["output"], tanh_off))
    out = np.tanh(np.random.default_rng(111).standard_normal((3, 4)))
    assert not result.ok
    for value in (1 - out ** 2).ravel():
        assert f"{value:.3f}" not in repr(result)


def test_a_placeholder_is_not_a_try():
    def not_yet(g, kept):
        return None

    result = ex.G11(linear=(..., not_yet), tanh=(["..."], not_yet), relu=([...], not_yet),
                    add=([], not_yet))
    assert all(p.diagnosis == "none" for p in result.parts), repr(result)
    assert status("G11") == "not started" and store.read_item("G11")["misses"] == {}
