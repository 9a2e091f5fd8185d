"""The answers a graded notebook records, and grading them again outside its kernel.

* The codec keeps arrays (every numeric dtype, 0-d, empty, nan/inf), numbers, strings,
  containers and problems exactly, turns anything else into a sentence, and never
  unpickles.
* ``regrade`` grades records with this process's checks: a right and a wrong G6, a
  question whose grader.check graded another item or nothing, an answer that is not data.
* The sandbox runs a learner's cells again and answers calls on data: what the function
  returns, what it raised (in the lesson's words), and a function that never returns.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

import autograd_core as ag
from widgets.course import sandbox as sandbox_module
from widgets.course.answers import ANSWERS, CELLS, GRADED, Unencodable, decode, encode, read_jsonl
from widgets.course.regrade import regrade
from widgets.course.sandbox import Sandbox
from widgets.exercises.learner import LearnerCodeFailed, call
from widgets.exercises.problems import Problem

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("value", [
    np.arange(6, dtype=np.float32).reshape(2, 3), np.array(2.5), np.zeros((0, 3)),
    np.array([np.nan, np.inf, -np.inf]), np.array([1 + 2j]), np.array([True, False]),
    np.arange(4, dtype=np.int8), np.float64(1.5), np.int64(-3), np.bool_(True),
])
def test_arrays_come_back_exactly(value):
    back = decode(json.loads(json.dumps(encode(value))))
    assert type(back) is type(value) and back.dtype == value.dtype
    assert np.shape(back) == np.shape(value)
    np.testing.assert_array_equal(back, value)


def test_plain_values_and_containers_come_back_exactly():
    value = {"a": (1, 2.5, None, True, "x", ...), "b": [10**30, float("nan"), -math.inf],
             3: {"nested": (np.ones(2),)}}
    back = decode(json.loads(json.dumps(encode(value))))
    assert back["a"] == value["a"] and type(back["a"]) is tuple
    assert back["b"][0] == 10**30 and math.isnan(back["b"][1]) and back["b"][2] == -math.inf
    assert type(back["b"][0]) is int and isinstance(back["b"], list)
    np.testing.assert_array_equal(back[3]["nested"][0], np.ones(2))


def test_a_problem_comes_back_with_its_description_and_arrays():
    problem = Problem("C = A @ B", A=np.ones((2, 3)), n=4)
    back = decode(encode(problem))
    assert isinstance(back, Problem) and back.description == "C = A @ B"
    np.testing.assert_array_equal(back.A, problem.A)
    assert back.n == 4


@pytest.mark.parametrize("value, words", [
    (ag.tensor([1.0]), "a Tensor"), (np.array(["a"], dtype=object), "an array of object"),
    (int, "a type"), (lambda x: x, "a function"),
])
def test_what_is_not_data_is_named(value, words):
    with pytest.raises(Unencodable, match=words):
        encode(value)


def test_a_learners_function_is_recorded_by_name_only_when_asked():
    namespace = {"__name__": "__main__"}
    exec("def mine(x):\n    return x", namespace)
    functions = []
    assert encode([namespace["mine"]], functions) == {
        "$": "list", "items": [{"$": "function", "name": "mine"}]}
    assert functions == ["mine"]
    assert decode({"$": "function", "name": "mine"}, function=str.upper) == "MINE"
    with pytest.raises(Unencodable):
        decode({"$": "function", "name": "mine"})


@pytest.mark.parametrize("data", [
    {"$": "pickle", "data": "gASVAAAAAA=="}, {"$": "ndarray", "dtype": "|O", "shape": [1],
                                             "data": "AAAAAAAAAAA="}])
def test_decoding_never_unpickles(data):
    with pytest.raises((Unencodable, ValueError)):
        decode(data)


# -- regrade, on records written by hand ---------------------------------------------------


def write_records(folder: Path, answers: list[dict], graded: list[dict],
                  cells: list[dict] = ()) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, rows in ((ANSWERS, answers), (GRADED, graded), (CELLS, cells)):
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows) + "not json\n")
    return folder


def g6_record(number: int, function: str) -> dict:
    """A record of ``G6(function)``: the learner's function, kept by its name and the cell
    that defined it (cell 1 of ``G6_CELLS``)."""
    return {"record": number, "exercise": "G6", "check": "gradients", "learner": None,
            "args": [{"$": "function", "name": function}], "kwargs": {}, "cell": 1}


G6_CELLS = [{"cell": 0, "source": "import numpy as np"},
            {"cell": 1, "source": "def right_g6(p):\n"
                                  "    return {'dA': p.G @ p.B.T, 'dB': p.A.T @ p.G}\n"
                                  "def wrong_g6(p):  # dB transposed\n"
                                  "    return {'dA': p.G @ p.B.T, 'dB': p.G.T @ p.A}\n"
                                  "def stepped_g6(p):  # a complex step through the forward\n"
                                  "    def loss(A, B):\n"
                                  "        return ((A @ B) * p.G).sum()\n"
                                  "    def slope(X, f):\n"
                                  "        out = np.zeros(X.shape)\n"
                                  "        for i in np.ndindex(X.shape):\n"
                                  "            E = np.zeros(X.shape, complex)\n"
                                  "            E[i] = 1e-20j\n"
                                  "            out[i] = f(X + E).imag / 1e-20\n"
                                  "        return out\n"
                                  "    return {'dA': slope(p.A, lambda A: loss(A, p.B)),\n"
                                  "            'dB': slope(p.B, lambda B: loss(p.A, B))}"}]


def test_a_complex_step_run_in_the_sandbox_is_refused_as_in_the_kernel(tmp_path, monkeypatch):
    """The sandbox says how a learner's function had its derivative worked out (engine ops,
    a library, complex arithmetic), not only its engine ops: the by-hand rules hold in a
    regrade as they do in the lesson."""
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress"))
    folder = write_records(tmp_path / "answers", [g6_record(1, "stepped_g6")],
                           [{"question": "stepped", "record": 1}], G6_CELLS)
    verdict = regrade(folder, {"stepped": "G6"})["stepped"]
    assert verdict["status"] == "graded" and not verdict["ok"], verdict
    assert "complex numbers" in verdict["feedback"], verdict


def test_regrade_grades_each_question_from_its_graded_record(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress"))
    folder = write_records(tmp_path / "answers", [
        g6_record(1, "right_g6"), g6_record(2, "wrong_g6"),
        {"record": 3, "exercise": "G9", "check": "db", "args": [], "kwargs": {}},
        {"record": 4, "exercise": "B2", "check": "op", "unencodable": "a type"},
    ], [{"question": "right", "record": 1}, {"question": "wrong", "record": 1},
        {"question": "wrong", "record": 2}, {"question": "other_item", "record": 3},
        {"question": "op_class", "record": 4}, {"question": "forged", "record": 99}],
        G6_CELLS)
    verdicts = regrade(folder, {"right": "G6", "wrong": "G6", "other_item": "G6",
                                "never_checked": "G6", "op_class": "B2", "forged": "G6"})
    assert verdicts["right"]["status"] == "graded" and verdicts["right"]["ok"], verdicts
    assert not verdicts["wrong"]["ok"] and "transposed" in verdicts["wrong"]["feedback"]
    assert "Named mistakes: mistake:gradients:dB:transpose" in verdicts["wrong"]["feedback"]
    for question in ("other_item", "never_checked", "forged"):
        assert verdicts[question]["status"] == "unanswered" and not verdicts[question]["ok"]
        assert "run the exercise cell" in verdicts[question]["feedback"]
    assert verdicts["op_class"] == {"status": "kernel_only", "why": "the answer holds a type"}



G11_CELLS = [{"cell": 1, "source": "import numpy as np\nimport autograd_core as ag\n"
                                   "def lin(g, kept):\n"
                                   "    return g @ kept['weight'], g.T @ kept['input'], "
                                   "g.sum(axis=0)\n"
                                   "def tanh_b(g, kept):\n"
                                   "    return (g * (1 - kept['output'] ** 2),)\n"
                                   "def tanh_engine(g, kept):\n"
                                   "    x = ag.tensor(np.arctanh(kept['output']), "
                                   "requires_grad=True)\n"
                                   "    ag.tanh(x).backward(g)\n"
                                   "    return (x.grad.numpy(),)\n"}]


def g11_record(number: int, **pairs) -> dict:
    kwargs = {op: {"$": "tuple", "items": [encode(keeps), {"$": "function", "name": fn}]}
              for op, (keeps, fn) in pairs.items()}
    return {"record": number, "exercise": "G11", "check": "keeps", "learner": None,
            "cell": 1, "args": [], "kwargs": kwargs}


def test_g11s_backwards_are_regraded_in_the_sandbox(tmp_path, monkeypatch):
    """G11's answers are words and functions: the sandbox runs the learner's backward on
    the kept arrays it is handed, and one that asks the engine there is refused too."""
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress"))
    folder = write_records(tmp_path / "answers", [
        g11_record(1, linear=(["input", "weight"], "lin"), tanh=(["output"], "tanh_b")),
        g11_record(2, tanh=(["output"], "tanh_engine")),
        g11_record(3, tanh=(["input"], "tanh_b")),
    ], [{"question": "right", "record": 1}, {"question": "engine", "record": 2},
        {"question": "unkept", "record": 3}], G11_CELLS)
    verdicts = regrade(folder, {"right": "G11", "engine": "G11", "unkept": "G11"})
    assert verdicts["right"]["status"] == "graded" and verdicts["right"]["ok"], verdicts
    assert verdicts["engine"]["status"] == "graded" and not verdicts["engine"]["ok"]
    assert "engine" in verdicts["engine"]["feedback"], verdicts["engine"]
    assert verdicts["unkept"]["status"] == "graded" and not verdicts["unkept"]["ok"]


# -- the sandbox ---------------------------------------------------------------------------

CELLS_RUN = [
    # (the lessons' set-up cells start with a magic that needs a kernel's GUI hook)
    {"cell": 1, "source": "%matplotlib inline\nimport numpy as np\n"
                          "print('to stdout, not the replies')"},
    {"cell": 2, "source": "SCALE = 3\ndef helper(x):\n    return SCALE * x"},
    {"cell": 3, "source": "def mine(x):\n    return helper(np.asarray(x)) + 1\n"
                          "def broken(x):\n    return x.nope\n"
                          "def unfinished(x):\n    raise NotImplementedError\n"
                          "def forever(x):\n    while True:\n        pass\n"
                          "def gives_a_type(x):\n    return int"},
    {"cell": 4, "source": "SCALE = 100  # later cells must not change what record 1 kept"},
    {"cell": 5, "source": "grader.check('G6')  # the grader's cells are not run again"},
]


@pytest.fixture
def box(tmp_path):
    names = ["mine", "broken", "unfinished", "forever", "gives_a_type"]
    sandbox = Sandbox(CELLS_RUN, [{"record": 1, "cell": 3, "names": names}], tmp_path, ROOT)
    yield sandbox
    sandbox.close()


def test_the_sandbox_calls_the_learners_function_on_data(box):
    assert call(box.function(1, "mine"), np.array([1.0, 2.0])).tolist() == [4.0, 7.0]
    with pytest.raises(LearnerCodeFailed, match="AttributeError: 'int' object has no "
                                                "attribute 'nope'.*line 4"):
        call(box.function(1, "broken"), 1, what="broken")
    with pytest.raises(LearnerCodeFailed, match="NotImplementedError: it is not written"):
        call(box.function(1, "unfinished"), 1)
    with pytest.raises(LearnerCodeFailed, match="'missing' is not defined"):
        call(box.function(1, "missing"), 1)


def test_what_cannot_travel_as_data_is_not_graded_outside(box):
    with pytest.raises(sandbox_module.NotRegradable, match="returns a type"):
        box.function(1, "gives_a_type")(1)
    with pytest.raises(sandbox_module.NotRegradable, match="passes a Tensor"):
        box.function(1, "mine")(ag.tensor([1.0]))


def test_a_function_that_never_returns_is_stopped(box, monkeypatch):
    monkeypatch.setattr(sandbox_module, "CALL_SECONDS", 1.0)
    with pytest.raises(LearnerCodeFailed, match="TimeoutError: it did not return within 1 s"):
        call(box.function(1, "forever"), 1)
    assert box.process.poll() is not None  # stopped, not left running


def test_read_jsonl_skips_what_is_not_a_record(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text('{"a": 1}\n[1, 2]\nbroken\n\n{"b": 2}\n')
    assert read_jsonl(path) == [{"a": 1}, {"b": 2}]
    assert read_jsonl(tmp_path / "missing.jsonl") == []


def test_read_jsonl_skips_a_line_nested_too_deep_and_keeps_the_others(tmp_path):
    """json.loads raised RecursionError on such a line, and the whole regrade stopped."""
    path = tmp_path / "a.jsonl"
    deep = '{"x": ' * 100_000 + "1" + "}" * 100_000
    shallow_but_over_the_cap = "[" * 70 + "]" * 70
    path.write_text(f'{{"a": 1}}\n{deep}\n{{"b": {shallow_but_over_the_cap}}}\n{{"c": 3}}\n')
    assert read_jsonl(path) == [{"a": 1}, {"c": 3}]


def test_read_jsonl_reads_nothing_from_what_is_not_a_regular_file(tmp_path):
    assert read_jsonl(tmp_path) == []  # a folder
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    assert read_jsonl(fifo) == []  # a named pipe: refused at once, not waited on
