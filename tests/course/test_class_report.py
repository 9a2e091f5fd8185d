"""The class report (python -m widgets.course report): 32 learners answer G6 and G9 with
typical mistakes planted in known numbers, export their progress, and the report ranks
the mistakes in the planted order, with the shares solved, without names unless asked.

Every learner's answers go through the real checks, so the mistakes' names are the
checks' own diagnoses; the expected counts come from the plan below, not from the
report."""

import csv
import json

import pytest

from widgets import exercises as ex
from widgets.course import __main__ as course_cli
from widgets.course.class_report import summarise, write_report
from widgets.course.report_inputs import read_folder

LEARNERS = 32
# learner number ranges -> the wrong answer they give first
G6_PLAN = {"dB: transpose": range(0, 14), "dA: sign": range(14, 22), "dA: scale": range(22, 25)}
G9_PLAN = {"db: batch factor": range(0, 12), "db: missing broadcast sum": range(12, 17)}
SEES_G6_SOLUTION = range(20, 26)  # then answer right: "solved after the solution"
LEAVES_G6_OPEN = range(10, 14)  # transposed dB and never put it right


def g6_answers(kind):
    """The learner's G6 function: right (kind None), or with the planted mistake."""
    def my_g6(p):
        right = dict(dA=p.G @ p.B.T, dB=p.A.T @ p.G)
        wrong = {"dB: transpose": dict(right, dB=p.G.T @ p.A),
                 "dA: sign": dict(right, dA=-right["dA"]),
                 "dA: scale": dict(right, dA=2 * right["dA"])}
        return right if kind is None else wrong[kind]
    return my_g6


def g9_answer(kind):
    def my_g9(p):
        g = p.G
        return {"db": {None: g.sum(0), "db: batch factor": g.mean(0),
                       "db: missing broadcast sum": g}[kind]}
    return my_g9


def planned(plan, k):
    return next((kind for kind, who in plan.items() if k in who), None)


def export_class(folder, homes, numbers):
    """Learners ``numbers`` work through G6 and G9 as planned, each in a progress home of
    their own under ``homes``, and export their progress to ``folder/learnerNN.json``."""
    with pytest.MonkeyPatch.context() as mp:
        for k in numbers:
            mp.setenv("AUTOGRAD_LESSONS_PROGRESS", str(homes / f"l{k}" / "progress.json"))
            mistake = planned(G6_PLAN, k)
            if mistake:
                assert not ex.G6(g6_answers(mistake)).ok
            if k in SEES_G6_SOLUTION:
                ex.G6.solution()
            if k not in LEAVES_G6_OPEN:
                assert ex.G6(g6_answers(None)).ok
            mistake = planned(G9_PLAN, k)
            if mistake:
                assert not ex.G9(g9_answer(mistake)).ok
            assert ex.G9(g9_answer(None)).ok
            assert ex.export_progress(folder / f"learner{k:02}.json").startswith(
                "Your progress (")


@pytest.fixture(scope="module")
def submissions(tmp_path_factory):
    folder = tmp_path_factory.mktemp("submissions")
    export_class(folder, tmp_path_factory.mktemp("homes"), range(LEARNERS))
    return folder


def test_the_planted_mistakes_come_out_ranked_with_their_counts(submissions):
    learners, skipped = read_folder(submissions)
    assert len(learners) == LEARNERS and skipped == []
    by_item = {s.item: s for s in summarise(learners)}
    g6, g9 = by_item["G6"], by_item["G9"]
    assert [(m, len(who)) for m, who in g6.ranked_mistakes()] == [
        (m, len(who)) for m, who in sorted(G6_PLAN.items(), key=lambda kv: -len(kv[1]))]
    assert [(m, len(who)) for m, who in g9.ranked_mistakes()] == [
        (m, len(who)) for m, who in G9_PLAN.items()]
    assert (g6.tried, g6.solved) == (LEARNERS, LEARNERS - len(LEAVES_G6_OPEN))
    assert g6.after_solution == len(set(SEES_G6_SOLUTION) - set(LEAVES_G6_OPEN))
    assert (g9.tried, g9.solved) == (LEARNERS, 0)  # db right, the shape part not asked
    # partly solved: some part right, not all (G6's dA for those who left dB transposed,
    # G9's db for everyone); every learner who tried is in exactly one group
    assert (g6.partly, g9.partly) == (len(LEAVES_G6_OPEN), LEARNERS)
    assert (g6.not_solved, g9.not_solved) == (0, 0)
    assert g9.median_tries == 1  # 17 of 32 made one wrong try, 15 none
    assert set(by_item) == {"G6", "G9"}


def test_the_report_has_a_table_a_chart_and_a_csv_and_no_names(submissions, tmp_path):
    learners, _ = read_folder(submissions)
    page = write_report(learners, tmp_path / "out")
    text = page.read_text()
    assert "dB: transpose: 14 learners" in text and "db: batch factor: 12 learners" in text
    assert text.index("dB: transpose") < text.index("dA: sign") < text.index("dA: scale")
    assert "learner0" not in text  # no names unless asked
    assert (tmp_path / "out" / "lesson_05.png").stat().st_size > 1000
    alone = LEARNERS - len(LEAVES_G6_OPEN) - len(SEES_G6_SOLUTION)
    assert (f'alt="G6: of {LEARNERS} learners who tried it, {alone} solved it without help, '
            f'0 with the skeleton, {len(SEES_G6_SOLUTION)} after the solution, '
            f'{len(LEAVES_G6_OPEN)} partly, 0 not; G9: of {LEARNERS} learners who tried it, 0 '
            f'solved it without help, 0 with the skeleton, 0 after the solution, {LEARNERS} '
            f'partly, 0 not"') in text
    # the table counts the same groups: solved 28 of 32, 6 of them after the solution
    assert "<td>28 of 32 (88 %)</td><td>6</td><td>0</td><td>4 of 32 (12 %)</td>" in text
    assert "1 items" not in text and "1 learners" not in text
    rows = list(csv.DictReader((tmp_path / "out" / "report.csv").open()))
    assert [r["item"] for r in rows] == ["G6", "G9"]
    assert rows[0]["commonest_mistakes"] == "dB: transpose (14); dA: sign (8); dA: scale (3)"
    named = write_report(learners, tmp_path / "named", names=True).read_text()
    assert "learner00" in named


def test_the_command_reports_and_names_bad_input_in_a_sentence(submissions, tmp_path, capsys):
    (tmp_path / "in").mkdir()
    for f in submissions.iterdir():
        (tmp_path / "in" / f.name).write_bytes(f.read_bytes())
    (tmp_path / "in" / "notes.json").write_text(json.dumps([1, 2]))
    assert course_cli.main(["report", str(tmp_path / "in"), str(tmp_path / "out")]) == 0
    out = capsys.readouterr()
    assert f"Report on {LEARNERS} learners" in out.out
    assert "notes.json was left out: it is not an exported progress file" in out.err
    assert course_cli.main(["report", str(tmp_path / "nowhere"), str(tmp_path / "o")]) == 2
    assert "is not a folder of exported progress files" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert course_cli.main(["report", str(tmp_path / "empty"), str(tmp_path / "o")]) == 2
    assert "holds no exported progress file" in capsys.readouterr().err
    (tmp_path / "one").mkdir()
    first = sorted(submissions.iterdir())[0]
    (tmp_path / "one" / first.name).write_bytes(first.read_bytes())
    assert course_cli.main(["report", str(tmp_path / "one"), str(tmp_path / "o1")]) == 0
    assert "Report on 1 learner: " in capsys.readouterr().out
    assert "The work of 1 learner; " in (tmp_path / "o1" / "report.html").read_text()


def test_solved_with_the_skeleton_is_counted_apart_from_solved_alone(tmp_path):
    """Reading an item's skeleton is help: the report counts it as its own group, as it
    counts seeing the solution, never as solved without help."""
    helped = {"alone": (), "skeleton": ("skeleton",), "solution": ("solution",),
              "both": ("skeleton", "solution")}  # the solution is the stronger help
    (tmp_path / "in").mkdir()
    with pytest.MonkeyPatch.context() as mp:
        for name, help_read in helped.items():
            mp.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / name / "progress.json"))
            for what in help_read:
                assert getattr(ex.G6, what)
            assert ex.G6(g6_answers(None)).ok
            assert ex.export_progress(tmp_path / "in" / f"{name}.json").startswith(
                "Your progress (1 item solved)")
    learners, _ = read_folder(tmp_path / "in")
    (g6,) = summarise(learners)
    assert (g6.tried, g6.solved, g6.after_solution, g6.with_skeleton, g6.alone) == (
        4, 4, 2, 1, 1)
    page = write_report(learners, tmp_path / "out").read_text()
    assert ("G6: of 4 learners who tried it, 1 solved it without help, 1 with the skeleton, "
            "2 after the solution, 0 partly, 0 not") in page
    assert "<td>4 of 4 (100 %)</td><td>2</td><td>1</td>" in page
    (row,) = csv.DictReader((tmp_path / "out" / "report.csv").open())
    assert (row["solved"], row["solved_with_skeleton"], row["solved_after_solution"]) == (
        "4", "1", "2")
