"""No learner's file can stop the class report, and the report is safe to open anywhere.

Hypothesis fills a submissions folder with files of every kind beside one good learner:
random JSON values, progress files and otter results with fields of every type, random
bytes, deep nesting. The report must read the good learner whole, say something about
each file it leaves out or reads in part, and never raise. Special files (a named pipe,
links that loop) are tried by name; the CSV is read back to check that no cell starts a
spreadsheet formula; matplotlib's backend is the same after the report as before.
"""

from __future__ import annotations

import csv
import json
import os

import matplotlib
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from time_limit import at_most

from widgets.course.class_report import summarise, write_report
from widgets.course.report_inputs import read_folder

scalars = (st.none() | st.booleans() | st.integers() | st.integers(10**300, 10**400)
           | st.floats() | st.text(max_size=12))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                           max_leaves=20)
RECORD_FIELDS = ["parts", "misses", "solved", "solution_seen", "after_solution", "help_seen",
                 "after_help"]
records = st.dictionaries(st.sampled_from(RECORD_FIELDS), json_values, max_size=5)
progress_files = st.fixed_dictionaries({"items": st.dictionaries(
    st.sampled_from(["G6", "G9", "B1", "X"]), records | json_values, max_size=4)},
    optional={"learner": json_values})
test_entries = st.fixed_dictionaries({"name": st.sampled_from(["G6", "G9_2", "q1", "B1"])},
                                     optional={"score": json_values, "max_score": json_values,
                                               "output": json_values})
otter_files = st.fixed_dictionaries({"tests": st.lists(test_entries | json_values, max_size=4)})
file_texts = (json_values.map(json.dumps) | progress_files.map(json.dumps)
              | otter_files.map(json.dumps) | st.integers(65, 3000).map(lambda n: "[" * n)
              | st.binary(max_size=40).map(lambda b: b.decode("latin-1")))

GOOD = {"learner": "good", "items": {"G6": {
    "parts": {"g:dA": {"ok": True, "ever": True}, "g:dB": {"ok": True, "ever": True}},
    "misses": {"tries:": 1, "mistake:gradients:dB:transpose": 1},
    "solved": "2026-12-06T10:00:00Z", "solution_seen": None}}}


def hostile_folder(tmp_path_factory, texts: list[str]):
    """A submissions folder: the good learner, and each text as a file at the top and as
    a ``results.json`` one folder down."""
    folder = tmp_path_factory.mktemp("submissions")
    (folder / "good.json").write_text(json.dumps(GOOD))
    for k, text in enumerate(texts):
        (folder / f"other{k}.json").write_text(text)
        (folder / f"sub{k}").mkdir()
        (folder / f"sub{k}" / "results.json").write_text(text)
    return folder


@given(texts=st.lists(file_texts, max_size=5))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_files_beside_a_good_learner_neither_raise_nor_lose_it(tmp_path_factory, texts):
    learners, said = read_folder(hostile_folder(tmp_path_factory, texts))
    good = [x for x in learners if x.name == "good"]
    assert len(good) == 1 and good[0].items["G6"] == {**GOOD["items"]["G6"]}
    assert all(isinstance(sentence, str) and sentence.endswith(".") for sentence in said)
    g6 = next(s for s in summarise(learners) if s.item == "G6")
    assert g6.solved >= 1 and "dB: transpose" in dict(g6.ranked_mistakes())


@given(texts=st.lists(file_texts, max_size=5))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_report_is_written_whatever_the_files(tmp_path_factory, texts):
    """Fewer examples: each draws the charts of every lesson tried, light and dark."""
    learners, said = read_folder(hostile_folder(tmp_path_factory, texts))
    page = write_report(learners, tmp_path_factory.mktemp("out"), skipped=said)
    assert page.read_text().count("<h1>") == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this system")
def test_a_named_pipe_and_looping_links_are_left_out_with_a_sentence(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "good.json").write_text(json.dumps(GOOD))
    os.mkfifo(folder / "pipe.json")
    (folder / "a.json").symlink_to(folder / "b.json")
    (folder / "b.json").symlink_to(folder / "a.json")
    (folder / "sub").mkdir()
    (folder / "sub" / "results.json").symlink_to(folder / "sub" / "results.json")
    with at_most(20):
        learners, said = read_folder(folder)
    assert [x.name for x in learners] == ["good"]
    assert said[0].startswith("a.json was left out:") and "could not be opened" in said[0]
    assert said[1].startswith("b.json was left out:")
    assert said[2].startswith("pipe.json was left out:") and "not a regular file" in said[2]
    assert said[3].startswith("sub/results.json was left out:")


def test_a_learners_file_with_fields_of_the_wrong_type_is_read_in_part(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    bad = {"items": {"G6": {**GOOD["items"]["G6"], "misses": ["tries:", 3]},
                     "G9": {"parts": {"db": {"ok": True, "ever": True}}, "misses": "x"},
                     "B1": "a string", "G4": {"misses": {"tries:": 10**400}}}}
    (folder / "ann.json").write_text(json.dumps(bad))
    (folder / "deep.json").write_text("{" * 40 + '"a": 1' + "}" * 40)  # 40 deep, not JSON
    (folder / "deeper.json").write_text("[" * 70 + "]" * 70)
    learners, said = read_folder(folder)
    ann, = learners
    assert ann.items["G6"]["misses"] == {} and ann.items["G6"]["solved"]
    assert ann.items["G9"]["parts"] == {"db": {"ok": True, "ever": True}}
    assert said == [
        "ann.json was read in part, leaving out 'misses' of item 'G6'; 'misses' of item "
        "'G9'; item 'B1' and 1 more.",
        said[1], "deeper.json was left out: it is not an exported progress file or otter "
        "results (it is nested more than 64 levels deep)."]
    assert said[1].startswith("deep.json was left out: it is not an exported progress file "
                              "or otter results (it is not JSON")


def test_no_csv_cell_starts_a_spreadsheet_formula(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    planted = {"tries:": 1, "mistake:check:=HYPERLINK(\"http://x\"):a": 1,
               "mistake:check:+cmd|' /C calc'!A0:b": 1, "mistake:check:@SUM(1):c": 1}
    record = {**GOOD["items"]["G6"], "misses": planted}
    (folder / "eve.json").write_text(json.dumps({"items": {"G6": record}}))
    write_report(read_folder(folder)[0], tmp_path / "out")
    rows = list(csv.reader((tmp_path / "out" / "report.csv").open(encoding="utf-8")))
    cells = [cell for row in rows for cell in row]
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")]
    mistakes = rows[1][-1]
    assert mistakes.startswith("'") and "HYPERLINK" in mistakes  # kept, as text


def test_the_report_leaves_matplotlibs_backend_as_it_was(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "good.json").write_text(json.dumps(GOOD))
    before = matplotlib.get_backend()
    try:
        matplotlib.use("svg")
        write_report(read_folder(folder)[0], tmp_path / "out")
        assert matplotlib.get_backend() == "svg"
    finally:
        matplotlib.use(before)
    assert (tmp_path / "out" / "lesson_05.png").stat().st_size > 1000
    assert (tmp_path / "out" / "lesson_05_dark.png").stat().st_size > 1000
