"""``python -m widgets.course``: course tools for instructors.

    python -m widgets.course export --otter notebooks/05_matmul_mlp.ipynb OUT/
    python -m widgets.course export --otter notebooks/05_matmul_mlp.ipynb OUT/ \\
        --points G5=3 --points G12=2 --default-points 1 --force
    python -m widgets.course report SUBMISSIONS/ OUT/ [--names]
    python -m widgets.course student-build OUT/

A problem with the input (no such lesson, a folder already holding an export, a
malformed ``--points``, otter-grader missing) is reported in one sentence, exit code 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .lesson import LessonError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m widgets.course",
        description="Course tools: turn a lesson into a graded assignment; report what "
                    "a class got wrong.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    export = commands.add_parser(
        "export", help="write a lesson's student notebook and its autograder",
        description="Write LESSON's student notebook (OUT/student/) and its autograder "
                    "(OUT/autograder/autograder.zip). Each exercise cell is graded by the "
                    "lesson's own check.")
    export.add_argument("--otter", action="store_true",
                        help="export for otter-grader (the only format for now)")
    export.add_argument("lesson", type=Path, help="a lesson, e.g. notebooks/05_matmul_mlp.ipynb")
    export.add_argument("out", type=Path, help="the folder to write student/ and autograder/ in")
    export.add_argument("--points", action="append", metavar="ITEM=N", default=[],
                        help="points for an item (G5=3, split over its exercise cells) or "
                             "one question (G9_unbroadcast=0.5); repeat for more")
    export.add_argument("--default-points", type=float, default=1.0, metavar="N",
                        help="points of every other item (default 1)")
    export.add_argument("--force", action="store_true",
                        help="replace an earlier export in OUT")
    report = commands.add_parser(
        "report", help="what a class got wrong, from exported progress or otter's grades",
        description="Read every exported progress file (*.json, from "
                    "exercises.export_progress()) and every otter-grader results.json "
                    "(FOLDER/*.json, or FOLDER/*/results.json, one folder per submission) "
                    "in FOLDER and write OUT/report.html, OUT/report.csv and a chart per "
                    "lesson: per item the share solved, solved after the solution, median "
                    "wrong tries (for graded submissions: wrong questions), and the named "
                    "mistakes ranked by how many learners made them.")
    report.add_argument("folder", type=Path,
                        help="a folder of exported progress files and/or otter results.json")
    report.add_argument("out", type=Path, help="the folder to write the report in")
    report.add_argument("--names", action="store_true",
                        help="list beside each mistake the learners who made it "
                             "(left out unless asked)")
    build = commands.add_parser(
        "student-build", help="a wheel for a graded class: no worked solutions",
        description="Build the package's wheel with no worked solutions and no skeletons "
                    "in the exercises' words (hints kept), and the requirements line a "
                    "hub image installs it with, into OUT. Self-study installs keep them.")
    build.add_argument("out", type=Path, help="the folder to write the wheel in")
    return parser


def _report(args) -> int:
    from .class_report import counted, write_report
    from .report_inputs import read_folder

    if not args.folder.is_dir():
        return _fail(f"{args.folder} is not a folder of exported progress files or otter "
                     "results.")
    learners, skipped = read_folder(args.folder)
    for sentence in skipped:
        print(sentence, file=sys.stderr)
    if not learners:
        return _fail(f"{args.folder} holds no exported progress file (*.json from "
                     "exercises.export_progress()) or otter results.json.")
    try:
        page = write_report(learners, args.out, names=args.names, skipped=skipped)
    except OSError as error:
        return _fail(f"could not write the report: {error.strerror or error} "
                     f"({error.filename or args.out}).")
    print(f"Report on {counted(len(learners), 'learner')}: {page} (and report.csv beside it)")
    return 0


def _student_build(args) -> int:
    from .student_build import student_build

    try:
        print(student_build(args.out))
    except LessonError as error:
        return _fail(str(error))
    except OSError as error:
        return _fail(f"could not write the student build: {error.strerror or error} "
                     f"({error.filename or args.out}).")
    return 0


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "report":
        return _report(args)
    if args.command == "student-build":
        return _student_build(args)
    if args.command != "export":
        parser.print_help()
        return 0 if argv is None or not argv else 2
    if not args.otter:
        return _fail("choose the export format: add --otter (otter-grader, the only one so far).")
    try:
        from .otter_export import export_otter, parse_points

        done = export_otter(args.lesson, args.out, points=parse_points(args.points),
                            default_points=args.default_points, force=args.force)
    except LessonError as error:
        return _fail(str(error))
    except OSError as error:
        return _fail(f"could not write the export: {error.strerror or error} "
                     f"({error.filename or args.out}).")
    student = done.student_notebook.parent
    print(f"Exported {done.lesson.name}: {len(done.questions)} graded exercise cells, "
          f"{done.total_points:g} points.")
    for q in done.questions:
        print(f"  {q.name:<16} {q.points:g} pt  (lesson cell {q.cell})")
    if not done.questions:
        print("  (no cell of this lesson is tagged 'exercise': the autograder grades nothing)")
    print(f"Hand out:  {student}/  (the notebook and its tests/ folder)")
    print(f"Grade:     otter run -a {done.autograder_zip} SUBMISSION.zip   "
          "(or upload the zip to Gradescope)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
