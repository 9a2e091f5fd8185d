"""No file in a learner's progress folder can stop their progress from being read.

The journal and an earlier ``progress.json`` are the learner's own files: edited by hand,
cut off by a sync tool, or replaced by anything. Hypothesis writes random JSON values
(and random bytes, deep nesting, event-shaped values with fields of every type) beside
real events, and the store must read every real event and say what it skipped, without
raising and without losing another item's record. Special files (a named pipe, a link
that loops) are tried by name.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from time_limit import at_most

from widgets.exercises import store
from widgets.exercises.journal import Journal, clean_items, merge

# -- what hypothesis writes -------------------------------------------------------------
scalars = (st.none() | st.booleans() | st.integers() | st.integers(10**300, 10**400)
           | st.floats() | st.text(max_size=12))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                           max_leaves=20)
FIELDS = ["t", "item", "part", "ok", "ever", "miss", "by", "first", "set", "reset"]
event_like = st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=6)
deep = st.integers(65, 5000).map(lambda n: "[" * n + "]" * n)
lines = (json_values.map(json.dumps) | event_like.map(json.dumps) | deep
         | st.binary(max_size=40).map(lambda b: b.decode("latin-1")))

KEPT = "G6"  # the item the real events are about: no junk may change its record


def junk_is_about_kept(value: object) -> bool:
    """Whether a junk value could legitimately change G6 (mentions it, or resets)."""
    return isinstance(value, dict) and (value.get("item") == KEPT or "reset" in value)


REAL = [{"t": 1.0, "item": KEPT, "part": "g:dA", "ok": False, "ever": False},
        {"t": 2.0, "item": KEPT, "miss": "tries:", "by": 1},
        {"t": 3.0, "item": KEPT, "part": "g:dA", "ok": True, "ever": True},
        {"t": 4.0, "item": KEPT, "first": {"solved": "2026-12-06T10:00:00Z"}},
        {"t": 5.0, "item": KEPT, "set": {"after_solution": False}}]
EXPECTED = merge({"items": {}}, REAL)[KEPT]


def _parsed(line: str) -> object:
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


@given(junk=st.lists(lines, max_size=8), where=st.integers(0, 5))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_junk_lines_beside_real_events_neither_raise_nor_change_the_record(
        tmp_path_factory, junk, where):
    junk = [line.replace("\n", " ") for line in junk if not junk_is_about_kept(_parsed(line))]
    folder = tmp_path_factory.mktemp("journal")
    real = [json.dumps(e) for e in REAL]
    mixed = real[:where] + junk + real[where:]
    (folder / "kernel-a.jsonl").write_text("".join(line + "\n" for line in mixed))
    (folder / "kernel-b.jsonl").write_text("".join(line + "\n" for line in junk))
    journal = Journal(folder)
    journal.refresh()
    items = merge({"items": {}}, journal.events())
    assert items[KEPT] == EXPECTED
    assert all(isinstance(sentence, str) for sentence in journal.skipped)


@given(items=json_values)
@settings(max_examples=150, deadline=None)
def test_an_earlier_progress_file_of_any_shape_keeps_its_good_records(items):
    good = {"parts": {"g:dA": {"ok": True, "ever": True}}, "misses": {"tries:": 2},
            "solved": "2026-12-06T10:00:00Z", "solution_seen": None}
    base = {KEPT: good, **(items if isinstance(items, dict) else {"X1": items})}
    base[KEPT] = good
    kept, dropped = clean_items(base)
    assert all(isinstance(clause, str) for clause in dropped)
    merged = merge({"items": kept}, [])
    assert merged[KEPT] == {**good}
    for record in merged.values():  # every record has the shape the checks read
        assert isinstance(record["parts"], dict) and isinstance(record["misses"], dict)


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv(store.ENV, str(tmp_path / "progress.json"))
    store._STORES.clear()
    store.notices()
    yield tmp_path
    store._STORES.clear()
    store.notices()


def test_an_earlier_file_with_fields_of_the_wrong_type_is_read_in_part_and_said(home):
    (home / "progress.json").write_text(json.dumps({"items": {
        KEPT: {"parts": [1, 2], "misses": {"tries:": 1}, "solved": None},
        "G9": "not a record", "G10": {"misses": {"tries:": "two"}}}}))
    record = store.read_item(KEPT)
    assert record["misses"] == {"tries:": 1} and record["parts"] == {}
    sentence, = store.notices()
    assert "'parts' of item 'G6'" in sentence and "item 'G9'" in sentence
    assert "'misses' of item 'G10'" in sentence and "left as it is" in sentence
    assert json.loads((home / "progress.json").read_text())["items"]["G9"] == "not a record"


def test_a_deeply_nested_earlier_file_is_set_aside_not_fatal(home):
    (home / "progress.json").write_text("[" * 100000 + "]" * 100000)
    assert store.read_all() == {}
    sentence, = store.notices()
    assert "nested more than" in sentence and ".corrupt-" in sentence


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this system")
def test_a_named_pipe_in_place_of_a_file_is_not_waited_on(home):
    folder = store.journal_folder(home / "progress.json")
    folder.mkdir()
    os.mkfifo(folder / "pipe.jsonl")
    os.mkfifo(home / "progress.json")
    with at_most(10):
        store.update(KEPT, lambda e: e["misses"].update({"tries:": 1}))
        assert store.read_item(KEPT)["misses"] == {"tries:": 1}
    said = " ".join(store.notices())
    assert "pipe.jsonl in the progress folder was not read" in said
    assert "not a regular file" in said


def test_links_that_loop_are_said_once_and_left_alone(home):
    folder = store.journal_folder(home / "progress.json")
    folder.mkdir()
    (folder / "a.jsonl").symlink_to(folder / "b.jsonl")
    (folder / "b.jsonl").symlink_to(folder / "a.jsonl")
    (home / "progress.json").symlink_to(home / "progress.json")
    store.update(KEPT, lambda e: e["misses"].update({"tries:": 1}))
    store.update(KEPT, lambda e: e["misses"].update({"tries:": 2}))
    assert store.read_item(KEPT)["misses"] == {"tries:": 2}
    said = store.notices()
    assert sum("a.jsonl" in s for s in said) == 1 and sum("b.jsonl" in s for s in said) == 1
    assert any("progress.json could not be read" in s for s in said)
    assert Path(os.readlink(folder / "a.jsonl")).name == "b.jsonl"  # left as they were


def test_an_event_whose_fields_have_the_wrong_type_is_skipped_and_said(home):
    folder = store.journal_folder(home / "progress.json")
    folder.mkdir()
    bad = [{"t": 1, "item": KEPT, "set": {"parts": [1]}},  # would replace the parts
           {"t": 2, "item": KEPT, "set": {"misses": "x"}},
           {"t": 3, "item": KEPT, "first": {"solved": ["list"]}},
           {"t": 4, "item": KEPT, "miss": "tries:", "by": True},
           {"t": float("nan"), "item": KEPT, "miss": "tries:", "by": 1},
           {"t": 5, "item": KEPT, "part": "p", "ok": 1, "ever": 0},
           {"t": 10**400, "item": KEPT, "miss": "tries:", "by": 1},  # no float holds it
           {"t": 5, "item": KEPT, "miss": "tries:", "by": 10**400}]
    good = {"t": 6, "item": KEPT, "miss": "tries:", "by": 3}
    (folder / "other.jsonl").write_text("".join(json.dumps(e) + "\n" for e in [*bad, good]))
    assert store.read_item(KEPT)["misses"] == {"tries:": 3}
    assert sum("is not a progress event" in s for s in store.notices()) == len(bad)


def test_a_kernel_keeps_the_progress_location_it_first_used(tmp_path, monkeypatch):
    """Issue #39's third audit: in a kernel, pointing $AUTOGRAD_LESSONS_PROGRESS at memory,
    reading a solution there and pointing it back left the learner's progress clean. A
    kernel (here a plain Python process, as a notebook's is) keeps its first location."""
    import subprocess
    import sys

    path = tmp_path / "progress.json"
    script = (
        "import os\n"
        "from widgets import exercises as ex\n"
        "from widgets.exercises import store\n"
        "store.read_all()\n"                                  # progress used: the location is set
        "os.environ['AUTOGRAD_LESSONS_PROGRESS'] = ':memory:'\n"
        "str(ex.S6.solution)\n"                               # read in a store made for it
        f"os.environ['AUTOGRAD_LESSONS_PROGRESS'] = {str(path)!r}\n"
        "print(store.notices())\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["AUTOGRAD_LESSONS_PROGRESS"] = str(path)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "changed after this kernel first used its progress" in done.stdout
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(path))
    assert store.read_item("S6")["solution_seen"], "the solution read elsewhere was lost"
