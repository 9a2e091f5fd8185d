"""Honest progress: an item is solved only when every part is right; a demonstration never
changes the learner's result; progress survives a kernel restart in small files (one
append-only file per kernel; a corrupt earlier file gives a sentence and is kept); solved
and "solved after seeing the solution" differ; a lesson nobody has worked on shows a fresh
start."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from solutions import solution_text
from test_exercises_derivations import conv_backward, mlp_right

from widgets import exercises as ex
from widgets.exercises import Progress, forget_results, last_results, progress, store
from widgets.exercises.tracking import LESSONS, status

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def progress_file(tmp_path, monkeypatch):
    """Progress goes to this test's own file, never to a learner's home directory."""
    path = tmp_path / "progress.json"
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(path))
    store.notices()  # start without sentences left over from another test
    forget_results()  # and without another test's last results in this kernel
    return path


def g6_right(p):
    """G6's derivation as the learner writes it: a function of the problem, in NumPy."""
    return dict(dA=p.G @ p.B.T, dB=p.A.T @ p.G)


def g9_right(p):
    return {"db": p.G.sum(0)}


# -- every part, and only then -----------------------------------------------------------------


def test_one_right_part_of_several_is_not_a_solved_item():
    def only(part):
        return lambda p: {part: mlp_right(p)[0][part]}

    progress_ = Progress("G5", title="Lesson 5")
    assert ex.G5(only("dW2")).ok  # the check itself: one part, right
    text = repr(progress_)
    assert "in progress: 1 of 3 parts right" in text
    assert "all" not in text.lower().split() and not progress_.complete
    ex.G5(only("db2"))
    assert not progress_.complete
    ex.G5(only("delta1"))  # parts checked in separate calls add up
    assert progress_.complete and "all 1 exercises solved" in repr(progress_)


def test_every_check_of_an_item_is_needed():
    ex.G9(g9_right)
    assert status("G9") == "in progress"
    ex.G9.run("unbroadcast", _sum_to)
    assert status("G9") == "solved"


def _sum_to(g, shape):
    """By hand: sum the axes broadcasting added in front and those it stretched from 1."""
    added = g.ndim - len(shape)
    stretched = tuple(added + i for i, n in enumerate(shape) if n == 1 and g.shape[added + i] > 1)
    return g.sum(axis=tuple(range(added)) + stretched, keepdims=True).reshape(shape)


def test_a_wrong_part_beside_a_right_one_does_not_count_the_wrong_one():
    ex.G6(lambda p: {"dA": g6_right(p)["dA"], "dB": g6_right(p)["dB"] * 2})
    assert status("G6") == "in progress"
    ex.G6(lambda p: {"dB": g6_right(p)["dB"]})
    assert status("G6") == "solved"


def test_a_later_wrong_check_does_not_undo_a_solved_item():
    ex.G6(g6_right)
    ex.G6(lambda p: {"dA": np.zeros((2, 3))})
    assert status("G6") == "solved"
    assert "your last check" not in repr(Progress("G6"))


# -- demonstrations ----------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["method", "keyword", "function"])
def test_a_demonstration_never_changes_the_learners_result(how):
    def my_g7(p):
        dx, dw, _ = conv_backward(p.x, p.w, p.G, p.stride, p.padding)
        return {"dx": dx, "dw": dw}

    def unrotated(p):
        return {"dx": conv_backward(p.x, p.w[..., ::-1, ::-1], p.G, p.stride, p.padding)[0]}

    assert ex.G7(my_g7).ok and status("G7") == "in progress"  # strided: a part too
    mine = ex.G7(my_g7, stride=2, padding=1)
    assert mine.ok and status("G7") == "solved"
    other = {"stride": 1, "padding": 1}  # a demonstration runs on another problem
    shown = {"method": lambda: ex.G7.demo(unrotated, **other),
             "keyword": lambda: ex.G7(unrotated, demo=True, **other),
             "function": lambda: ex.demo("G7", unrotated, **other)}[how]()
    assert shown.diagnosis == "unrotated_kernel"
    assert "demonstration" in repr(shown) and "not recorded" in repr(shown)
    assert status("G7") == "solved"
    assert last_results()["G7"] is mine  # what the autograder grades is untouched


def test_a_demonstration_on_an_untouched_item_leaves_a_fresh_start():
    ex.L8.demo(gradients_identical=False)
    ex.demo("E3", log_slope=lambda z: -np.abs(z))
    assert status("L8") == "not started" and status("E3") == "not started"
    assert "L8" not in last_results()


def test_a_demonstrated_wrong_prediction_does_not_count_as_a_try():
    for _ in range(3):
        shown = ex.L8.demo(gradients_identical=False)
        assert "engine shows" not in repr(shown)
    first = ex.L8(gradients_identical=False)  # the learner's own first try
    assert "engine shows" not in repr(first)


def test_demo_of_a_named_check():
    shown = ex.G9.demo(lambda g, shape: g, check="unbroadcast")
    assert not shown.ok and status("G9") == "not started"


# -- a fresh start ---------------------------------------------------------------------------


def test_placeholders_leave_a_fresh_start():
    """What a lesson's exercise cells hold before the learner works on them."""
    ex.G5(lambda p: {"dW2": None, "db2": None, "delta1": None})
    ex.G6(None)
    ex.G14.run("batch", training=None, evaluation=None)
    ex.G10.run("fix", None)
    ex.S2(lambda w, steps, micro: None)
    ex.S3(lambda x, n: None)
    ex.W3(None)
    ex.T3(None, None)
    ex.G8(None)
    ex.G9.run("unbroadcast", lambda g, shape: None)
    ex.E4(lambda a, t: None)

    from autograd_core.recording.node import Function

    class NotWritten(Function):
        @staticmethod
        def forward(ctx, x):
            raise NotImplementedError

        @staticmethod
        def backward(ctx, g):
            raise NotImplementedError

    ex.W4(NotWritten)
    text = repr(Progress("G5", "G14", "G10", "S2", "S3", "W3", "T3", "G8", "W4",
                         title="Lesson"))
    assert text.startswith("Lesson: nothing checked yet (9 exercises).")
    assert "failed" not in text and "✘" not in text and "0 of" not in text


# -- solved, and solved after seeing the solution ------------------------------------------------


def test_solved_after_seeing_the_solution_is_recorded_differently():
    assert ex.G6.solution  # asking for it is recorded
    ex.G6(g6_right)
    ex.G2(_g2_right)
    assert status("G6") == "solved after seeing the solution"
    assert status("G2") == "solved"
    assert ex.G2.solution  # seen after solving: still solved
    assert status("G2") == "solved"
    text = repr(Progress("G6", "G2", title="L"))
    assert "2 of 2 solved (1 after seeing the solution)" in text
    assert "all" not in text.split(":")[1].split()


def _g2_right(p):
    tie = 0.5 * (p.a == p.b)
    return dict(da=p.G * ((p.a > p.b) + tie), db=p.G * ((p.b > p.a) + tie), dx=p.G * (p.x > 0))


def test_result_solution_and_reveal_are_recorded():
    p = ex.G13.problem()
    result = ex.G13(lambda q: {"grad_sum": 3 * q.grad_tok})
    assert status("G13") == "in progress"
    assert str(int(p.mask.sum())) not in result.message
    result.solution()
    assert store.read_item("G13")["solution_seen"]
    ex.E4.reveal()
    assert store.read_item("E4")["solution_seen"]


def test_a_prediction_is_revealed_after_a_second_wrong_try_and_recorded():
    first = ex.L7(saved_10=5)
    assert "engine shows" not in repr(first) and "8000" not in repr(first)
    second = ex.L7(saved_10=7)
    assert "the engine shows 8000" in repr(second)
    ex.L7(saved_10=8000, saved_20=16000)
    assert status("L7") == "solved after seeing the solution"


def test_reveals_count_per_prediction():
    p = ex.L5.problem()
    first = ex.L5(dropout_eval=p.z * (1 - p.p))
    assert first.diagnosis == "eval_scaled"
    with_batch_stats = (p.z - p.x.mean(0)) / np.sqrt(p.x.var(0) + 1e-5)
    other = ex.L5(batchnorm_eval=with_batch_stats)  # another prediction's first try
    assert other.diagnosis == "momentum" and "engine shows" not in repr(other)


# -- the file ----------------------------------------------------------------------------------


def test_progress_survives_a_kernel_restart(progress_file):
    env = {**os.environ, "AUTOGRAD_LESSONS_PROGRESS": str(progress_file)}
    env.pop("PYTEST_CURRENT_TEST", None)
    solve = ("from widgets import exercises as ex; p = ex.G6.problem(); "
             "ex.G6(lambda p: {'dA': p.G @ p.B.T, 'dB': p.A.T @ p.G}); "
             "ex.G9(lambda p: {'db': p.G.sum(0)})")
    read = "from widgets.exercises import Progress; print(Progress('G6', 'G9', 'G5'))"
    subprocess.run([sys.executable, "-c", solve], check=True, cwd=ROOT, env=env)
    out = subprocess.run([sys.executable, "-c", read], check=True, cwd=ROOT, env=env,
                         capture_output=True, text=True).stdout
    assert "1 of 3 solved; 1 in progress" in out
    assert "G6 (M) · Gradients of C = A B (solved)" in out
    journal = progress_file.with_name("progress.journal")
    lines = [json.loads(line) for f in journal.iterdir() for line in f.read_text().splitlines()]
    assert any(e.get("item") == "G6" and "solved" in e.get("first", {}) for e in lines)
    assert not progress_file.exists()  # only an earlier version wrote progress.json


def test_a_failed_write_is_cut_off_kept_for_the_session_and_written_later(progress_file):
    ex.G6(g6_right)
    journal = progress_file.with_name("progress.journal")
    (first,) = journal.iterdir()
    before = first.read_bytes()

    import widgets.exercises.journal as journal_module

    original = journal_module.os.write

    def half(fd, data):  # the disk fills up halfway through the line
        original(fd, data[:len(data) // 2])
        raise OSError(28, "No space left on device")

    journal_module.os.write = half
    try:
        result = ex.G2(_g2_right)
    finally:
        journal_module.os.write = original
    assert result.ok and "could not be saved" in result.message
    assert first.read_bytes() == before  # what was written of the line was cut off
    assert status("G2") == "solved"  # kept for this session
    ex.G9(g9_right)  # a try; its write takes the held-back events too
    env = {**os.environ, "AUTOGRAD_LESSONS_PROGRESS": str(progress_file)}
    env.pop("PYTEST_CURRENT_TEST", None)
    read = ("from widgets.exercises.tracking import status; "
            "print(status('G6'), status('G2'), status('G9'), sep=',')")
    out = subprocess.run([sys.executable, "-c", read], check=True, cwd=ROOT, env=env,
                         capture_output=True, text=True).stdout.strip()
    assert out == "solved,solved,in progress"


def test_a_corrupt_earlier_file_gives_a_sentence_and_is_kept(progress_file):
    progress_file.write_text('{"version": 1, "items": {"G6": {"solved": "yes"')  # cut off
    text = repr(Progress("G6", title="Lesson 5"))
    assert "could not be read" in text and "fresh one was started" in text
    kept = [p for p in progress_file.parent.iterdir() if ".corrupt-" in p.name]
    assert len(kept) == 1 and kept[0].read_text().startswith('{"version": 1')
    result = ex.G6(g6_right)  # checks go on
    assert result.ok and status("G6") == "solved"


@pytest.mark.parametrize("content", ["[1, 2, 3]", "null", '{"items": 5}', "\x00\x01"])
def test_any_unreadable_content_is_a_sentence(progress_file, content):
    progress_file.write_text(content)
    assert "could not be read" in repr(progress())


def test_an_unwritable_location_keeps_progress_for_the_session(tmp_path, monkeypatch):
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(blocker / "progress.json"))
    result = ex.G6(g6_right)
    assert result.ok and "could not be saved" in result.message
    assert status("G6") == "solved"


def test_under_pytest_without_a_location_nothing_is_written_to_home(tmp_path, monkeypatch):
    monkeypatch.delenv("AUTOGRAD_LESSONS_PROGRESS")
    monkeypatch.setenv("HOME", str(tmp_path))
    ex.G6(g6_right)
    assert store.location() is None
    assert not (tmp_path / ".autograd-lessons").exists()


def test_the_default_location_is_in_the_learners_home(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("AUTOGRAD_LESSONS_PROGRESS", "PYTEST_CURRENT_TEST")}
    env["HOME"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-c", "from widgets.exercises import store; "
                          "print(store.location())"], check=True, cwd=ROOT, env=env,
                         capture_output=True, text=True).stdout.strip()
    assert out == str(tmp_path / ".autograd-lessons" / "progress.json")


# -- the overview ------------------------------------------------------------------------------


def test_the_overview_lists_every_lesson():
    notebooks = sorted(p.name[:2] for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert set(notebooks) <= set(LESSONS), "a lesson is missing from progress.LESSONS"
    covered = {i for _, ids in LESSONS.values() for i in ids}
    assert covered == set(ex.EXERCISE_IDS)  # every exercise, the course's own included
    ex.G6(g6_right)
    text = repr(progress())
    for number, (title, _) in LESSONS.items():
        assert f"{number} {title}" in text
    assert "05 Matmul and the MLP: 1 of 6 solved." in text
    total = sum(len(ids) for _, ids in LESSONS.values())  # an item in two lessons counts twice
    assert f"1 of {total} lesson exercises solved." in text
    assert "nothing checked yet" in text
    assert progress()._repr_html_().startswith("<div")


def test_memory_only_mode_for_nbval_and_regeneration(monkeypatch, tmp_path):
    """AUTOGRAD_LESSONS_PROGRESS=:memory: keeps progress in the kernel only: each lesson
    runs from a fresh start and nothing is written (what nbval and the script set)."""
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", ":memory:")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert store.location() is None
    store.reset()  # the kernel's memory: other tests of this process read G6's skeleton
    ex.G6(g6_right)
    assert status("G6") == "solved"
    assert list(tmp_path.iterdir()) == []


def test_the_widgets_solution_button_is_recorded():
    pytest.importorskip("ipywidgets")
    w = ex.G6.widget(lambda: g6_right)
    w.solution_button.click()
    w.check_button.click()
    assert status("G6") == "solved after seeing the solution"


def test_tools_read_the_solution_without_recording():
    assert "B.T" in solution_text(ex.G6)
    assert store.read_item("G6")["solution_seen"] is None
