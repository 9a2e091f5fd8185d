"""The class report from otter's grades: 32 learners submit G6 and G9 with typical mistakes
planted in known numbers, the lesson's real checks grade every answer in this process,
and each learner's grades are written as otter's ``results.json`` (one folder per
submission, as ``otter run`` leaves them). The report ranks the planted mistakes in the
planted order, with the shares solved; a folder mixing exported progress and graded
submissions works; a malformed ``results.json`` is left out with a sentence.

Otter grades one submission once: a learner's submitted answer is their planted mistake,
or right. The expected counts come from the plans, not from the report."""

import csv
import json
import statistics
from pathlib import Path
from textwrap import indent

import pytest
from test_class_report import (
    G6_PLAN,
    G9_PLAN,
    LEARNERS,
    LEAVES_G6_OPEN,
    SEES_G6_SOLUTION,
    export_class,
    g6_answers,
    g9_answer,
    planned,
)

from widgets import exercises as ex
from widgets.course import __main__ as course_cli
from widgets.course.class_report import summarise, write_report
from widgets.course.graded_feedback import question_feedback
from widgets.course.lesson import graded_cells, read_lesson
from widgets.course.otter_results import exercise_of, is_otter_results, items_from_results
from widgets.course.report_inputs import read_folder

LESSON = Path(__file__).resolve().parents[2] / "notebooks" / "05_matmul_mlp.ipynb"
# question (as lesson 05's export names its exercise cells) -> exercise, check, points
QUESTIONS = {"G6": ("G6", "gradients", 2), "G9": ("G9", "db", 1),
             "G9_unbroadcast": ("G9", "unbroadcast", 0.5)}
# a sum_to that averages the copies' gradients where the engine sums them
UNBROADCAST_PLAN = {"sum_to: averaged": range(5, 15)}
PLANS = {"G6": G6_PLAN, "G9": G9_PLAN, "G9_unbroadcast": UNBROADCAST_PLAN}


def submitted(question, k):
    """The planted mistake in learner ``k``'s submitted answer to ``question`` (None: right)."""
    return planned(PLANS[question], k)


def answer(question, mistake):
    """The answers of ``question``'s check, positional and by name: right, or with the
    planted mistake (G6's and G9's db: the learner's function of the problem)."""
    if question == "G6":
        return (g6_answers(mistake),), {}
    if question == "G9":
        return (g9_answer(mistake),), {}
    return (), {"sum_to": averaged_sum_to if mistake else sum_to}


def _broadcast_axes(g, shape):
    """By hand: the axes broadcasting added in front of ``shape``, then those it stretched."""
    added = g.ndim - len(shape)
    return tuple(range(added)) + tuple(added + i for i, n in enumerate(shape)
                                       if n == 1 and g.shape[added + i] > 1)


def sum_to(g, shape):
    return g.sum(axis=_broadcast_axes(g, shape), keepdims=True).reshape(shape)


def averaged_sum_to(g, shape):
    return g.mean(axis=_broadcast_axes(g, shape), keepdims=True).reshape(shape)


def otter_output(question, feedback, ok):
    """A question's output as otter 7 writes it (``TestFile.summary``); a wrong answer's
    holds the assertion's message, the check's feedback."""
    if ok:
        return f"{question} results: All test cases passed!"
    failed = f"❌ Test case failed\nAssertionError: \n{feedback}"
    case = f"{question} - 1 result:\n" + indent(failed, "    ")
    return f"{question} results:\n" + indent(case, "    ")


def graded_entry(question, k):
    """Learner ``k``'s answer to ``question`` run through the real check (its function
    itself, so nothing is recorded) and graded as otter's results.json holds it."""
    exercise, check, points = QUESTIONS[question]
    raw = getattr(ex, exercise)._checks[check]  # the check function, unrouted
    args, kwargs = answer(question, submitted(question, k))
    result = raw(*args, **kwargs)
    assert result.ok == (submitted(question, k) is None)
    return {"name": question, "score": points if result.ok else 0, "max_score": points,
            "visibility": "visible",
            "output": otter_output(question, question_feedback(check, result), result.ok)}


def results_json(k):
    """Learner ``k``'s whole results.json: otter's summary first (no score), then every
    question."""
    tests = [graded_entry(q, k) for q in QUESTIONS]
    summary = {"name": "Public Tests", "visibility": "visible", "status": "failed",
               "output": "\n\n".join(t["output"] for t in tests)}
    return {"tests": [summary, *tests], "score": sum(t["score"] for t in tests)}


def write_graded(folder, numbers):
    """Write ``folder/learnerNN/results.json`` for every learner in ``numbers``."""
    for k in numbers:
        (folder / f"learner{k:02}").mkdir()
        (folder / f"learner{k:02}" / "results.json").write_text(json.dumps(results_json(k)))


def wrong_questions(item, k):
    return sum(submitted(q, k) is not None for q, (exercise, _, _) in QUESTIONS.items()
               if exercise == item)


def ranked(counts):
    """Mistake -> learners as the report ranks them: most learners first, ties by name."""
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("graded")
    write_graded(folder, range(LEARNERS))
    return folder


def test_the_questions_are_those_the_lesson_export_grades():
    cells = {c.question: c.exercise for c in graded_cells(read_lesson(LESSON))}
    assert {q: cells.get(q) for q in QUESTIONS} == {q: e for q, (e, _, _) in QUESTIONS.items()}
    assert all(check in getattr(ex, e).checks for e, check, _ in QUESTIONS.values())
    assert [exercise_of(q) for q in ("G6", "G9_unbroadcast", "G10_2", "G1", "G1x", "q1",
                                     "Public Tests")] == ["G6", "G9", "G10", "G1", None,
                                                          None, None]


def test_otter_results_are_told_from_other_json():
    assert is_otter_results(results_json(0)) and is_otter_results({"tests": []})
    assert not any(map(is_otter_results, [{"items": {}}, {"tests": "G6"}, {"tests": [1]},
                                          {"tests": [{"score": 1}]}, [1, 2], None]))


def test_one_results_file_reads_as_progress_items():
    mistake = "mistake:check:dx:transpose"
    items, unread = items_from_results({"tests": [
        {"name": "Public Tests", "output": "Named mistakes: mistake:other:dy:sign"},
        {"name": "G7", "score": 0, "max_score": 1, "output": f"x\nNamed mistakes: {mistake}"},
        {"name": "G7_2", "score": 0, "max_score": 1, "output": f"  Named mistakes: {mistake}"},
        {"name": "G10_2", "score": 1, "max_score": 1, "output": "G10_2 results: All passed"},
        {"name": "G5", "score": 0, "max_score": 0, "output": f"Named mistakes: {mistake}"},
        {"name": "G9", "score": "full", "max_score": 1, "output": ""},
        {"name": "q1", "score": 0, "max_score": 1, "output": ""}]})
    assert set(items) == {"G7", "G10", "G5"}  # G9's one question has no numeric score
    assert unread == ["question 'G9' (its score is not a number)"]
    g7, g10, g5 = (items[i] for i in ("G7", "G10", "G5"))
    assert g7["misses"] == {"tries:": 2, mistake: 1}  # once per learner, 2 wrong questions
    assert (g7["solved"], g7["after_solution"], sorted(g7["parts"])) == (False, False,
                                                                         ["G7", "G7_2"])
    assert (g10["solved"], g10["misses"], bool(g10["parts"])) == (True, {"tries:": 0}, True)
    assert not g5["solved"]  # 0 of 0 points, but its output names a mistake
    with pytest.raises(ValueError, match="no graded question is named after an exercise"):
        items_from_results({"tests": [{"name": "q1", "score": 1, "max_score": 1}]})
    with pytest.raises(ValueError, match="'G6' has a score of 'full'"):
        items_from_results({"tests": [{"name": "G6", "score": "full", "max_score": 1}]})


def test_graded_mistakes_come_out_ranked_with_their_counts(graded):
    learners, skipped = read_folder(graded)
    assert skipped == [] and [(x.name, x.graded) for x in learners] == [
        (f"learner{k:02}", True) for k in range(LEARNERS)]
    by_item = {s.item: s for s in summarise(learners)}
    assert set(by_item) == {"G6", "G9"}
    g6, g9 = by_item["G6"], by_item["G9"]
    assert [(m, len(who)) for m, who in g6.ranked_mistakes()] == ranked(
        {m: len(who) for m, who in G6_PLAN.items()})
    assert [(m, len(who)) for m, who in g9.ranked_mistakes()] == ranked(
        {m: len(who) for m, who in {**G9_PLAN, **UNBROADCAST_PLAN}.items()})
    for s in (g6, g9):
        right = [k for k in range(LEARNERS) if wrong_questions(s.item, k) == 0]
        assert (s.tried, s.solved, s.after_solution) == (LEARNERS, len(right), 0)
        assert s.tries == [wrong_questions(s.item, k) for k in range(LEARNERS)]
        assert s.median_tries == statistics.median(s.tries)
    assert g9.solved == LEARNERS - len(set(range(0, 17)) | set(range(5, 15)))  # 15
    assert max(g9.tries) == 2  # at most its two graded questions


def test_the_report_of_graded_work_says_what_wrong_tries_mean(graded, tmp_path):
    page = write_report(read_folder(graded)[0], tmp_path / "out")
    text = page.read_text()
    solved_g6 = sum(submitted("G6", k) is None for k in range(LEARNERS))
    assert f'alt="G6: of {LEARNERS} learners who tried it, {solved_g6} solved it without' in text
    assert f"{LEARNERS} of them from otter's grades" in text and "wrong questions" in text
    assert "dB: transpose: 14 learners" in text and "sum_to: averaged: 10 learners" in text
    assert "learner0" not in text  # no names unless asked
    solved_g9 = sum(wrong_questions("G9", k) == 0 for k in range(LEARNERS))
    rows = list(csv.DictReader((tmp_path / "out" / "report.csv").open()))
    assert [(r["item"], r["solved"], r["solved_after_solution"]) for r in rows] == [
        ("G6", str(solved_g6), "0"), ("G9", str(solved_g9), "0")]
    assert rows[1]["commonest_mistakes"] == ("db: batch factor (12); sum_to: averaged (10); "
                                             "db: missing broadcast sum (5)")


def test_a_mixed_folder_is_read_and_bad_results_are_left_out(tmp_path, capsys):
    folder, evens, odds = tmp_path / "in", range(0, LEARNERS, 2), range(1, LEARNERS - 2, 2)
    folder.mkdir()
    export_class(folder, tmp_path / "homes", evens)  # learnerNN.json: exported progress
    write_graded(folder, odds)  # learnerNN/results.json
    last = LEARNERS - 1  # and one graded submission's results at the top
    (folder / f"learner{last:02}.json").write_text(json.dumps(results_json(last)))
    bad = {"broken": json.dumps({"tests": [{"name": "G6", "score": "full", "max_score": 1}]}),
           "garbled": '{"tests": [', "other": json.dumps({"tests": [{"name": "q1", "score": 1,
                                                                      "max_score": 1}]})}
    for name, text in bad.items():
        (folder / name).mkdir()
        (folder / name / "results.json").write_text(text)
    (folder / "odd-one").mkdir()
    (folder / "odd-one" / "notes.json").write_text("[]")  # not results.json: not read
    before = {p: p.read_bytes() for p in folder.rglob("*.json")}

    learners, skipped = read_folder(folder)
    graded_ones = {*odds, last}
    assert sorted(x.name for x in learners if x.graded) == [f"learner{k:02}" for k in
                                                            sorted(graded_ones)]
    assert len(learners) == LEARNERS
    assert skipped == [
        "broken/results.json was left out: it is otter results the report cannot read "
        "(question 'G6' has a score of 'full' out of '1', not numbers).",
        skipped[1], "other/results.json was left out: it is otter results the report cannot "
        "read (no graded question is named after an exercise of the course; its tests: q1).",
    ] and skipped[1].startswith("garbled/results.json was left out: it is not an exported "
                                "progress file or otter results (")
    by_item = {s.item: s for s in summarise(learners)}
    g6, g9 = by_item["G6"], by_item["G9"]
    assert [(m, len(who)) for m, who in g6.ranked_mistakes()] == ranked(
        {m: len(who) for m, who in G6_PLAN.items()})  # made first, or submitted: counted
    assert [(m, len(who)) for m, who in g9.ranked_mistakes()] == ranked(
        {m: len(who) for m, who in G9_PLAN.items()}
        | {m: len(set(who) & graded_ones) for m, who in UNBROADCAST_PLAN.items()})
    solved = ([k for k in evens if k not in LEAVES_G6_OPEN]
              + [k for k in graded_ones if submitted("G6", k) is None])
    assert (g6.tried, g6.solved) == (LEARNERS, len(solved))
    assert g6.after_solution == len(set(SEES_G6_SOLUTION) & set(evens) - set(LEAVES_G6_OPEN))
    assert g9.solved == sum(wrong_questions("G9", k) == 0 for k in graded_ones)
    assert {p: p.read_bytes() for p in folder.rglob("*.json")} == before  # never changed

    assert course_cli.main(["report", str(folder), str(tmp_path / "out")]) == 0
    out = capsys.readouterr()
    assert f"Report on {LEARNERS} learners" in out.out
    assert "broken/results.json was left out" in out.err
    assert "garbled/results.json was left out" in (tmp_path / "out" / "report.html").read_text()
