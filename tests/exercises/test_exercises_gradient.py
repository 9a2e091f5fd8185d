"""check_gradient: right answers pass, each diagnosable mistake is named, malformed
answers get a sentence (never a traceback), and nothing the learner passed, nor the
engine's graph, is changed by a check."""

import re

import numpy as np
import pytest

import autograd_core as ag
from widgets.exercises import Mistake, Result, check_gradient


@pytest.fixture(autouse=True)
def _own_progress_file(tmp_path, monkeypatch):
    """Progress goes to this test's own file, never to a learner's home directory."""
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))

RNG = np.random.default_rng(0)
E = RNG.standard_normal((3, 4))  # a non-square reference gradient
SQUARE = RNG.standard_normal((4, 4))  # not symmetric
N = 8
UP = RNG.standard_normal((3, 4)) + 2.0  # an upstream gradient with no zeros
FPRIME = 1 - np.tanh(RNG.standard_normal((3, 4))) ** 2
OTHER = 1 - np.tanh(RNG.standard_normal((3, 4))) ** 2
P1, P2, P3 = (RNG.standard_normal((3, 4)) for _ in range(3))
NAIVE = RNG.standard_normal((3, 4))


# (label, answer, expected, context, diagnosis code)
DIAGNOSES = [
    ("correct", E, E, {}, "correct"),
    ("correct within float64 rounding", E * (1 + 1e-12), E, {}, "correct"),
    ("transpose, non-square (a shape error)", E.T, E, {}, "transpose"),
    ("transpose, square (passes a shape check)", SQUARE.T, SQUARE, {}, "transpose"),
    ("sign", -E, E, {}, "sign"),
    ("summed where the loss averaged", N * E, E, {"batch_size": N}, "batch_factor"),
    ("divided by N once too often", E / N, E, {"batch_size": N}, "batch_factor"),
    ("constant factor 2", 2 * E, E, {}, "scale"),
    ("missing upstream", E / UP, E, {"upstream": UP}, "missing_upstream"),
    ("missing activation derivative", E / FPRIME, E, {"activation_derivative": FPRIME},
     "missing_activation_derivative"),
    ("activation derivative of the wrong layer", E / FPRIME * OTHER, E,
     {"activation_derivative": FPRIME, "wrong_derivatives": {"f'(z2)": OTHER}},
     "wrong_activation_derivative"),
    ("missing broadcast sum", np.stack([E, 2 * E, -2 * E]), E, {}, "missing_broadcast_sum"),
    ("missing broadcast sum over a batch", np.tile(E.sum(0) / N, (N, 1)), E.sum(0), {},
     "missing_broadcast_sum"),
    ("keepdims shape", E.sum(0, keepdims=True), E.sum(0), {}, "reshape"),
    ("overwrite: only path 2", P2, P1 + P2, {"paths": [P1, P2]}, "overwrite"),
    ("overwrite: only path 1 of three", P1, P1 + P2 + P3, {"paths": [P1, P2, P3]}, "overwrite"),
    ("missing one path of three", P1 + P3, P1 + P2 + P3, {"paths": [P1, P2, P3]}, "overwrite"),
    ("averaged the paths", (P1 + P2) / 2, P1 + P2, {"paths": [P1, P2]}, "averaged_paths"),
    ("batch norm through x̂ only", NAIVE, E, {"naive": NAIVE}, "batchnorm_naive"),
    ("a known mistake", E + 1, E, {"mistakes": [Mistake(E + 1, "named", code="mine")]}, "mine"),
    ("all zeros", np.zeros_like(E), E, {}, "zeros"),
    ("should be zero", E, np.zeros_like(E), {}, "should_be_zero"),
    ("truncated to integers", np.trunc(E * 3).astype(int), E * 3, {}, "integer"),
    ("transposed and N times too large", N * SQUARE.T, SQUARE, {"batch_size": N},
     "transpose+batch_factor"),
    ("N times too large and the wrong derivative", N * E / FPRIME * OTHER, E,
     {"batch_size": N, "activation_derivative": FPRIME, "wrong_derivatives": {"f'": OTHER}},
     "batch_factor+wrong_activation_derivative"),
    ("single value wrong", np.where(np.arange(12).reshape(3, 4) == 5, 9.0, E), E, {}, "values"),
    ("a scalar where an array is expected", 1.5, E, {}, "scalar"),
    ("an array where a scalar is expected", np.array([1.0, 2.0]), np.float64(3.0), {},
     "missing_reduction"),
    ("unrelated shape", np.ones((5, 7)), E, {}, "shape"),
]


@pytest.mark.parametrize("label, answer, expected, context, code", DIAGNOSES,
                         ids=[d[0] for d in DIAGNOSES])
def test_diagnosis(label, answer, expected, context, code):
    result = check_gradient(answer, expected, name="dW", **context)
    assert result.diagnosis == code, repr(result)
    assert result.ok == (code == "correct")
    text = repr(result)
    assert text.startswith(("✔ dW:", "✘ dW:")), text
    assert "Traceback" not in text


# (label, answer, words the sentence must contain, diagnosis code)
MALFORMED = [
    ("None", None, "None", "none"),
    ("a string", "dA = G @ B.T", "text", "text"),
    ("a list of strings", [["1", "2"]], "text", "text"),
    ("a ragged list", [[1.0, 2.0], [3.0]], "different lengths", "ragged"),
    ("a dict", {"dA": E}, "dict", "type"),
    ("a function", lambda: E, "function", "type"),
    ("booleans", E > 0, "True/False", "bool"),
    ("complex numbers", E + 1j, "complex", "complex"),
    ("objects", np.array([object(), object()]), "not numbers", "type"),
    ("NaN", np.where(E > 0, np.nan, E), "NaN", "nonfinite"),
    ("inf", np.where(E > 0, np.inf, E), "inf", "nonfinite"),
    ("the wrong shape", np.ones((2, 2)), "shape", "shape"),
    ("a scalar", 0.5, "single number", "scalar"),
]


@pytest.mark.parametrize("label, answer, words, code", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_answers_get_a_sentence(label, answer, words, code):
    result = check_gradient(answer, E, name="dA")
    assert not result.ok
    assert result.diagnosis == code, repr(result)
    assert words in result.message
    assert result.message[0].isupper()


@pytest.mark.parametrize("answer", [E.tolist(), E.astype(np.float32), ag.tensor(E),
                                    ag.tensor(E, requires_grad=True) * 1.0],
                         ids=["list", "float32", "Tensor", "Tensor in a graph"])
def test_accepted_forms_of_a_right_answer(answer):
    assert check_gradient(answer, E).ok


def test_integer_array_matching_integer_gradient_is_accepted():
    assert check_gradient(np.array([[1, 2], [3, 4]]), np.array([[1.0, 2.0], [3.0, 4.0]])).ok


def test_integer_note_when_fractions_matter():
    result = check_gradient(np.array([1, 2, 3]), np.array([1.0, 2.0, 4.5]))
    assert not result.ok and "integer dtype" in result.message


@pytest.mark.parametrize("dtype, error, ok", [
    (np.float64, 1e-9, True), (np.float64, 1e-4, False),
    (np.float32, 1e-6, True), (np.float32, 1e-2, False),
    (np.float16, 1e-3, True),
])
def test_tolerance_follows_the_dtype(dtype, error, ok):
    answer = (E * (1 + error)).astype(dtype)
    assert check_gradient(answer, E).ok == ok


def test_tolerance_scales_with_the_size_of_the_gradient():
    tiny = E * 1e-9
    assert not check_gradient(tiny * 1.01, tiny).ok
    assert check_gradient(tiny * (1 + 1e-9), tiny).ok


def test_checks_never_mutate_the_answer_or_the_expected_arrays():
    answer, expected = (E.T * 2).copy(), E.copy()
    answer.flags.writeable = False
    expected.flags.writeable = False
    before = answer.copy(), expected.copy()
    check_gradient(answer, expected, batch_size=2, upstream=UP, paths=[P1, P2],
                   activation_derivative=FPRIME, naive=NAIVE)
    assert np.array_equal(answer, before[0]) and np.array_equal(expected, before[1])


def test_checks_never_touch_the_engines_graph():
    x = ag.tensor(E, requires_grad=True)
    y = ag.tanh(x) * 3
    check_gradient(y, y, name="y")  # answer and expected both graph-attached tensors
    check_gradient(ag.tanh(x), y)
    assert x.grad is None, "a check ran backward"
    y.sum().backward()  # the saved tensors are still there
    assert np.allclose(x.grad.numpy(), 3 * (1 - np.tanh(E) ** 2))


def test_unknown_context_key_is_an_authoring_error():
    with pytest.raises(TypeError, match="unknown context"):
        check_gradient(E, E, batchsize=3)


# -- Result: feedback, hints on request, never "all passed" while something failed -------------


def test_hint_only_on_request():
    hidden = check_gradient(E.T, E, name="dA")
    shown = check_gradient(E.T, E, name="dA", hint=True)
    assert "Hint:" not in repr(hidden) and ".hint()" in repr(hidden)
    assert "Hint:" in repr(shown)
    assert str(hidden.hint()) in repr(shown)


def test_combined_result_never_says_all_while_a_part_failed():
    good, bad = check_gradient(E, E, name="a"), check_gradient(-E, E, name="b")
    mixed = Result.combine([good, bad], title="X")
    assert not mixed.ok and not re.search(r"\ball\b", repr(mixed), re.IGNORECASE)
    assert "1 of 2" in repr(mixed)
    assert "All 2 parts correct" in repr(Result.combine([good, good], title="X"))


def test_html_feedback_is_escaped_and_matches_the_text():
    result = check_gradient("<script>", E, name="dA")
    html = result._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "✘" in html


def test_feedback_is_deterministic():
    assert repr(check_gradient(E.T * 3, E)) == repr(check_gradient(E.T * 3, E))


@pytest.mark.torch
def test_a_pytorch_tensor_is_read():
    torch = pytest.importorskip(
        "torch", reason="PyTorch is not installed: answers given as torch tensors are not "
        "tested (install it with: pip install -e '.[torch]')")
    assert check_gradient(torch.tensor(E), E).ok
    needs_grad = torch.tensor(E, requires_grad=True)
    assert check_gradient(needs_grad * 2, 2 * E).ok
    assert needs_grad.grad is None
