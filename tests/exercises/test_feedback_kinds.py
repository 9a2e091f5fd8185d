"""Feedback names the kind of mistake in the learner's terms, never the fix or the value:
a malformed number prediction is a sentence naming the quantity asked (not "the
gradient") and not a counted try; "an int", not "a int"; a shape message names what the
caller compares (a Hessian, a step's weights, a z), not "the gradient"; a hint about a
slip points where to look, it does not hand over the fixing code."""

import re

import numpy as np
import pytest

import autograd_core as ag
from widgets import exercises as ex
from widgets.exercises import reset_progress, store
from widgets.exercises.exercise import registry
from widgets.exercises.tracking import FORMAT_SLIPS, TRIES
from widgets.feedback import words


@pytest.fixture(autouse=True)
def _own_progress(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))
    reset_progress()
    ex.forget_results()


def _number_facts():
    """(exercise, check, prediction, fact) for every number-kind Fact of every item."""
    found = []
    for item_id, exercise in sorted(registry().items()):
        for check, fn in exercise._checks.items():
            facts = getattr(fn, "facts", None)
            measured = facts() if facts is not None else None
            if not isinstance(measured, dict):
                continue
            found += [(item_id, check, name, fact) for name, fact in measured.items()
                      if fact.kind == "number"]
    return found


NUMBER_FACTS = _number_facts()
MALFORMED = {"a list of two": [1, 2], "one in a list": [[0.5]], "text": "None",
             "a word": "lots"}


def snippet_function(exercise, name):
    """The function defined by an exercise's buggy snippet (as test_exercises_spot)."""
    scope = {"np": np, "ag": ag}
    exec(exercise.snippet, scope)  # noqa: S102 - our own snippet text
    return scope[name]


def _part(result, name):
    return next((p for p in result.parts if p.name == name), result)


def test_the_number_facts_are_found():
    assert {"L1", "L5", "L7", "W6"} <= {f[0] for f in NUMBER_FACTS}  # G1, L6, L8: laws


@pytest.mark.parametrize("malformed", MALFORMED.values(), ids=list(MALFORMED))
@pytest.mark.parametrize("item_id, check, name, fact", NUMBER_FACTS,
                         ids=[f"{f[0]}-{f[2]}" for f in NUMBER_FACTS])
def test_a_malformed_number_is_a_sentence_and_never_a_try(item_id, check, name, fact,
                                                          malformed):
    exercise = registry()[item_id]
    for _ in range(3):  # three malformed answers: not one of them moves toward a reveal
        result = _part(exercise.run(check, **{name: malformed}), name)
        assert not result.ok
        assert result.diagnosis in FORMAT_SLIPS, (result.diagnosis, result.message)
        assert "gradient" not in result.message, result.message
        assert result.message.startswith(f"{name} should be "), result.message
        what = getattr(fact, "what", "")  # the quantity asked, where the fact names it
        if what:
            assert what in result.message
        assert "engine shows" not in result.message and "Try again" not in result.message
    entry = store.read_item(item_id)
    assert entry["solution_seen"] is None
    assert not entry["misses"].get(f"{check}:{name}") and not entry["misses"].get(TRIES)


@pytest.mark.parametrize("item_id, name, what", [
    ("L8", "peak_checkpointed", "a number of bytes"), ("L7", "saved_10", "number of bytes"),
    ("W6", "w_neg_grad_negative", "a number"), ("L1", "parameters_same", "parameters")])
def test_the_sentence_names_the_quantity_asked(item_id, name, what):
    message = _part(registry()[item_id](**{name: [1, 2]}), name).message
    assert what in message and "gradient" not in message, message


def test_w6_text_for_an_unvisited_gradient_is_not_a_try():
    for _ in range(3):
        result = _part(ex.W6(w_neg_grad="None"), "w_neg_grad")
        assert result.diagnosis == "type" and "str ('None')" in result.message
    entry = store.read_item("W6")
    assert entry["solution_seen"] is None and not entry["misses"].get("predict:w_neg_grad")


@pytest.mark.parametrize("noun, written", [("int", "an int"), ("str", "a str"),
                                           ("ellipsis", "an ellipsis"), ("list", "a list"),
                                           ("object", "an object"), ("uint8", "a uint8")])
def test_the_article_fits_the_noun(noun, written):
    assert words.a(noun) == written


def test_a_yes_no_given_a_number_reads_an_int():
    message = _part(ex.L8(gradients_identical=5), "gradients_identical").message
    assert "an int (5)" in message and "a int" not in message


# -- shape messages name what the caller compares ---------------------------------------

@pytest.mark.parametrize("item_id, answer, says, never", [
    ("D4", lambda w, g, H: w[:2], "the Newton step's weights", ("gradient",)),
    ("D2", lambda X, W, u, y: np.zeros((3, 2)), "Hessian", ("gradient",)),
    ("H3", lambda logits, y: [[0.0]], "(1, 1)", ("a single number",)),
])
def test_a_shape_message_names_what_is_compared(item_id, answer, says, never):
    result = registry()[item_id](answer)
    messages = " ".join([result.message, *(p.message for p in result.parts)])
    assert says in messages, messages
    assert not any(word in messages for word in never), messages


# -- hints point where to look, they do not hand over the fix ------------------------------

CODE = re.compile(r"[A-Za-z_][\w.]*\([^)]*\)|\b\w+(\.\w+)+\s*=|=\s*None"
                  r"|^(Call|Set|Use|Replace|Add|Subtract) ")  # code, or an order to fix


def _hints(result):
    return [p._hint for p in (result.parts or (result,)) if not p.ok and p._hint]


@pytest.mark.parametrize("item_id, check, name", [
    ("S2", "fixed", "step_gradients"), ("S6", "fixed", "gradients"),
    ("G10", "fix", "embedding_backward")])
def test_a_buggy_snippets_hint_is_a_nudge_not_code(item_id, check, name):
    exercise = registry()[item_id]
    hints = _hints(exercise.run(check, snippet_function(exercise, name)))
    assert hints
    for hint in hints:
        assert not CODE.search(hint), hint


def test_g10s_overwrite_hint_is_a_nudge_not_code():
    def my_g10(p):
        dw = np.zeros_like(p.W)
        dw[p.ids] = p.G  # the overwrite
        return {"dW": dw}

    result = _part(ex.G10(my_g10), "dW")
    assert result.diagnosis == "overwrite" and result._hint
    assert not CODE.search(result._hint), result._hint
