"""The true/false protocol's parts: the Watch that sees what the engine did while a learner's
experiment ran (the evidence every T/W1/W2 check relies on), the readers of measured values,
the one-line reason, and the old letter picks. The items themselves, with experiments
written by a learner, are in test_true_false_experiments.py."""

import numpy as np
import pytest

import autograd_core as ag
from autograd_core.func import jacfwd, jacrev, jvp
from autograd_core.recording.node import observing
from widgets import exercises as ex
from widgets.exercises.true_false import Flaw, Watch, count, numbers, raised, reason_problem
from widgets.exercises.true_false_experiments import _CLAIMS


@pytest.fixture(autouse=True)
def _own_progress_file(tmp_path, monkeypatch):
    """Progress goes to this test's own file, never to a learner's home directory."""
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))


# -- the Watch ---------------------------------------------------------------------------------


@pytest.mark.parametrize("n_in, n_out", [(1, 5), (4, 1), (3, 2)])
def test_the_watch_counts_jacfwd_and_jacrev_passes(n_in, n_out):
    w = ag.tensor(np.linspace(-1, 1, n_in * n_out).reshape(n_out, n_in))

    def f(x):
        return ag.tanh(w @ x)

    x = ag.tensor(np.linspace(0.1, 0.5, n_in))
    with observing(Watch()) as forward:
        jacfwd(f)(x)
    with observing(Watch()) as reverse:
        jacrev(f)(x)
    assert forward.jvp_passes == n_in and not forward.sweeps
    assert len(reverse.sweeps) == n_out and reverse.jvp_passes == 0
    assert all(s.ops == ["tanh", "matmul"] for s in reverse.sweeps)


def test_the_watch_tells_backward_calls_apart():
    a = ag.tensor([1.0, 2.0], requires_grad=True)
    old = (a * 3).sum()  # recorded first, swept last
    b = ag.tensor(0.5, requires_grad=True)
    new = ag.exp(b) * b
    with observing(Watch()) as watch:
        new.backward(retain_graph=True)
        new.backward(gradient=2.0)  # the same graph again
        old.backward()
        y = ag.tanh(a).sum()
        z = y * y
        z.backward(retain_graph=True)
        y.backward()  # a sweep that starts inside the graph of the previous one
    assert [s.ops for s in watch.sweeps] == [["mul", "exp"], ["mul", "exp"], ["sum", "mul"],
                                            ["mul", "sum", "tanh"], ["sum", "tanh"]]
    assert [float(s.seed) for s in watch.sweeps] == [1.0, 2.0, 1.0, 1.0, 1.0]


def test_the_watch_sees_what_each_leaf_gets_along_each_edge():
    x = ag.tensor([0.5, -1.0], requires_grad=True)
    with observing(Watch()) as watch:
        (x * x + ag.exp(x)).sum().backward()
    (sweep,) = watch.sweeps
    parts = sweep.to(x)
    assert len(parts) == 3  # x * x sends along two edges, exp along one
    assert np.allclose(sweep.total(x), x.grad.numpy())
    assert np.allclose(sorted(map(tuple, parts)), sorted([tuple(x.numpy())] * 2
                                                         + [tuple(np.exp(x.numpy()))]))


def test_the_watch_undoes_broadcasting_like_the_engine():
    b = ag.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with observing(Watch()) as watch:
        (ag.ones(4, 3) * b).sum().backward()
    assert np.allclose(watch.sweeps[0].total(b), b.grad.numpy())


def test_the_watch_records_what_each_op_saved():
    x = ag.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    with observing(Watch()) as watch:
        ag.sigmoid(x)
        with ag.no_grad():
            ag.sigmoid(x)  # nothing recorded, nothing saved
    assert watch.saved == [("sigmoid", 24)]


def test_the_watch_counts_jvp_calls():
    with observing(Watch()) as watch:
        for k in range(3):
            jvp(ag.tanh, (ag.tensor([0.1, 0.2]),), (ag.tensor(np.eye(2)[k % 2]),))
    assert watch.jvp_passes == 3


# -- reading measured values -------------------------------------------------------------------


@pytest.mark.parametrize("value", ["abc", None, {"a": 1}, np.array(["a"]), [[1, 2], [3]],
                                   np.zeros(10**7), lambda: 1, True])
def test_numbers_that_are_not_numbers_get_a_sentence(value):
    with pytest.raises(Flaw, match="'grad' should be numbers"):
        numbers(value, "grad")


def test_numbers_accept_tensors_arrays_lists_and_numbers():
    for value in (ag.tensor([1.0, 2.0]), np.array([1, 2]), [1.0, 2.0]):
        assert numbers(value, "x").tolist() == [1.0, 2.0]
    assert numbers(3, "x").shape == ()
    with pytest.raises(Flaw, match="NaN or inf"):
        numbers([1.0, np.nan], "x")


@pytest.mark.parametrize("value", [True, 2.0, -1, "3", None])
def test_a_count_is_a_whole_number(value):
    with pytest.raises(Flaw, match="should be a count"):
        count(value, "passes")


def test_an_error_must_have_been_raised():
    with pytest.raises(Flaw, match="no error was caught"):
        raised(None, "error")
    with pytest.raises(Flaw, match="should be the error"):
        raised(RuntimeError("made, never raised"), "error")
    try:
        raise RuntimeError("really raised")
    except RuntimeError as error:
        assert raised(error, "error") is error


# -- the one-line reason -----------------------------------------------------------------------


T8 = next(c for c in _CLAIMS if c.id == "T8")


@pytest.mark.parametrize("because, code", [
    ("x.grad is the sum of the contributions", None),
    ("cats can code", None),  # not graded: a word list cannot tell a reason from a guess
    ("", None), ("...", None), (None, None),  # none is needed
    ("sum " * 100, "reason_format"), (["a", "list"], "reason_format"),
])
def test_a_reason_is_one_line_of_text_and_is_not_graded(because, code):
    problem = reason_problem(T8, because)
    assert (problem is None) if code is None else (problem.diagnosis == code)
    if problem is not None:
        assert "sum" not in problem.message.lower()  # the concept is not handed over


# -- old calls ---------------------------------------------------------------------------------


@pytest.mark.parametrize("call", [lambda: ex.check("T9", False, "a"), lambda: ex.T3(True, "(c)"),
                                  lambda: ex.T1(verdict=True, because="B")])
def test_an_old_letter_pick_is_told_what_the_item_wants_now(call):
    result = call()
    assert not result.ok and result.diagnosis == "call"
    assert "no longer takes a letter" in result.message and "experiment=" in result.message


def test_the_question_shows_what_the_experiment_returns():
    text = repr(ex.T8)
    assert '"grad"' in text and '"contributions"' in text and "experiment=" in text
    assert "(a)" not in text  # no justifications to pick from
