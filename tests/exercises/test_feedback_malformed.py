"""Every call a learner can make gets a sentence of at most a few hundred characters, never
a traceback: every check of every item, with every answer name, given malformed answers
(None, '', 'abc', a ragged list, a dict, a lambda, a set, an array of strings, a Tensor, a
10⁷-element array, nan, a bool), by name and by position; misspelled names; positional
calls. And the audit's defects, each with the test that would have caught it."""

import inspect

import numpy as np
import pytest

import autograd_core as ag
from widgets import exercises as ex
from widgets.exercises.tracking import parts_of

MAX = 600  # characters of one message (Result.MAX_MESSAGE)


@pytest.fixture(autouse=True)
def _own_progress_file(tmp_path, monkeypatch):
    """Progress goes to this test's own file, never to a learner's home directory."""
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))


HUGE = np.zeros(10 ** 7)
MALFORMED = {
    "None": None, "empty text": "", "text": "abc", "ragged list": [[1, 2], [3]],
    "dict": {"a": 1}, "lambda": lambda: 1, "set": {1, 2}, "array of strings": np.array(["a"]),
    "Tensor": ag.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True),
    "10⁷ entries": HUGE, "nan": float("nan"), "bool": True,
}


def answer_names(exercise, check: str) -> list[str]:
    """The names a check takes (declared for multi-part items, else its signature)."""
    if parts_of(exercise, check):
        return list(parts_of(exercise, check))
    fn = exercise.checks[check]
    params = inspect.signature(fn).parameters.values()
    return [p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def assert_a_sentence(result, label):
    assert isinstance(result, ex.Result), f"{label}: {type(result)}"
    messages = [result.message, *(p.message for p in result.parts)]
    assert all(isinstance(m, str) and 0 < len(m) <= MAX for m in messages), \
        f"{label}: {[len(m) for m in messages]}"
    assert result.diagnosis != "check_error", f"{label} reached the safety net: {result!r}"
    assert "Traceback" not in repr(result)
    assert " at 0x" not in repr(result), f"{label}: a memory address makes outputs unstable"


@pytest.mark.parametrize("label", MALFORMED)
def test_the_predict_mode_check_answers_malformed_input(label):
    """check_predicted_gradient is what BackwardStepper.predict calls."""
    expected = np.array([0.25, -1.5])
    assert_a_sentence(ex.check_predicted_gradient(MALFORMED[label], expected), label)
    assert not ex.check_predicted_gradient(MALFORMED[label], expected).ok


@pytest.mark.parametrize("exercise_id", ex.QUESTION_BANK_IDS)
def test_every_check_answers_malformed_input_with_a_short_sentence(exercise_id):
    exercise = ex.registry()[exercise_id]
    for check in exercise.checks:
        names = answer_names(exercise, check)
        for label, bad in MALFORMED.items():
            assert_a_sentence(exercise.run(check, bad), f"{exercise_id}.{check}({label})")
            for name in names:
                assert_a_sentence(exercise.run(check, **{name: bad}),
                                  f"{exercise_id}.{check}({name}={label})")


@pytest.mark.parametrize("exercise_id", ex.QUESTION_BANK_IDS)
def test_odd_calls_get_a_sentence(exercise_id):
    exercise = ex.registry()[exercise_id]
    calls = {
        "three positional": lambda: exercise(1, 2, 3),
        "misspelled name": lambda: exercise(anwser=1),
        "unknown check": lambda: exercise.run("no such check", 1),
        "positional and named": lambda: exercise(1, anwser=2),
    }
    for label, call in calls.items():
        result = call()
        assert_a_sentence(result, f"{exercise_id} {label}")
        assert not result.ok


# -- the audit's defects ---------------------------------------------------------------------


def test_one_answer_items_take_their_answer_by_position():
    """G9, W5, E4, E5 raised TypeError positionally although help() shows it."""

    def flat_points(a, t):  # by hand: 2(a·w² − t)·2a·w = 0 at w = 0 and where a·w² = t
        return [0.0] + ([np.sqrt(t / a), -np.sqrt(t / a)] if t / a > 0 else [])

    assert ex.G9(lambda q: {"db": q.G.sum(0)}).ok  # the Gradients kind: a function

    def my_w5(q):  # the Gradients kind: a function; by hand, σ' = σ(1 − σ)
        s = 1 / (1 + np.exp(-q.z))
        return {"dz": q.G * s * (1 - s)}

    assert ex.W5(my_w5).ok
    assert ex.W5.run("layers", 6).ok  # W5's other check: its one answer by position
    assert ex.E4(flat_points).ok
    assert ex.E5(lambda q: {"dW": q.x.T @ ((q.t @ q.W) * (1 - q.h ** 2)) + q.t.T @ q.h}).ok
    assert "flat_points" in str(inspect.signature(ex.E4.checks["flat_points"]))  # help()


def test_g5_by_position_says_it_takes_one_function():
    result = ex.G5(1, 2, 3)
    assert result.diagnosis == "call" and "at most 1 answer by position" in result.message
    arrays = ex.G5(np.ones((4, 5)))  # an array where its function goes
    assert arrays.diagnosis == "call" and '"dW2": ...' in arrays.message


@pytest.mark.parametrize("call, words", [
    (lambda: ex.T1(verdict=True, becuase="they agree"), "did you mean 'because'"),
    (lambda: ex.T8(verdict=False, because="sum", experment=print), "did you mean 'experiment'"),
    (lambda: ex.S1(grads=lambda x, y: (x, y)), "by position"),
    (lambda: ex.W3(opp=object), "by position"),
    (lambda: ex.G2(print, sise=8), "'sise' (did you mean 'size'?)"),
    (lambda: ex.G2(lambda p: {"DA": 1.0}), "'DA' (did you mean 'da'?)"),
])
def test_a_misspelled_keyword_gets_a_sentence(call, words):
    result = call()
    assert not result.ok and result.diagnosis == "unknown_name"
    assert words in result.message, result.message


@pytest.mark.parametrize("exercise_id, name", [
    ("G11", "tanh"), ("L1", "ops_wider"), ("L1", "parameters_same"),
    ("G1", "kept_bytes"), ("L9", "first_nonfinite_op"), ("W6", "w_pos_grad"),
    ("E1", "grad_zero"), ("L5", "batchnorm_eval"), ("L6", "float32_sums"),
    ("L8", "peak_checkpointed"),
])
@pytest.mark.parametrize("bad", [np.array(["a", "b"]), ag.tensor([1.0, 2.0]), HUGE,
                                 np.array([1.0, 2.0])],
                         ids=["strings", "Tensor", "10⁷", "array"])
def test_malformed_predictions_get_a_sentence(exercise_id, name, bad):
    """`got == list(...)` in predictions.py raised on these."""
    assert_a_sentence(ex.registry()[exercise_id](**{name: bad}), f"{exercise_id} {name}")


def test_a_huge_answer_is_not_echoed():
    """A 10⁷-element answer to G9 returned a 30-million-character message; so may a sum_to
    or a shapes function that returns one."""
    for bad in (HUGE, list(range(10 ** 5)), tuple(range(10 ** 5)), "1," * 10 ** 6):
        assert len(repr(ex.G9.run("unbroadcast", lambda g, shape, bad=bad: bad))) < 1000
        assert len(repr(ex.G9(lambda q, b=bad: {"db": b}))) < 1000
        assert len(repr(ex.G8(lambda x_shape, units, bad=bad: {
            "dx": bad, "dW": bad, "db": bad, "db_axes": bad}))) < 1000
        assert len(repr(ex.E4(lambda a, t, bad=bad: bad))) < 1000


def test_g14_without_eps_is_named_not_rounded_away():
    """"you have 1.278, the engine has 1.278"."""
    def my_g14(p):
        inv = 1 / np.sqrt(p.x.var(0))
        xhat = (p.x - p.x.mean(0)) * inv
        d = p.G * p.gamma
        return {"dx": inv * (d - d.mean(0) - xhat * (d * xhat).mean(0))}

    result = ex.G14(my_g14)
    assert result.diagnosis == "missing_eps" and "ε" in result.message
    assert "engine has" not in result.message


def test_a_close_answer_is_called_close_not_shown():
    e = np.array([1.2781, -0.5, 2.25])
    result = ex.check_gradient(e * (1 + 1e-5), e)
    assert result.diagnosis == "values" and "close (within 1%)" in result.message
    assert "1.278" not in result.message


def _locate_returning(as_index):
    """A right L9 locate(model, x) that gives a module's path as ``as_index(path)``."""
    def locate(model, x):
        found = []

        def watch(path):
            def hook(module, inputs, output):
                if not found and not np.all(np.isfinite(output.numpy())):
                    found.append(path)
            return hook

        hooked = [m.register_forward_hook(watch(p)) for p, m in model.named_modules() if p]
        model(x)
        for h in hooked:
            h.remove()
        return as_index(found[0]) if found else None
    return locate


@pytest.mark.parametrize("as_index", [str, int, np.int64], ids=["text", "int", "np.int64"])
def test_l9_accepts_the_module_index_as_a_number_or_text(as_index):
    """A top-level module's path '2' may come back as the number 2."""
    assert ex.L9(locate=_locate_returning(as_index)).ok


def test_l9_does_not_accept_a_bool_for_an_index():
    assert not ex.L9(locate=_locate_returning(lambda path: True)).ok


def test_every_message_is_capped():
    long = ex.Result(False, "x" * 10 ** 6)
    assert len(long.message) <= MAX
