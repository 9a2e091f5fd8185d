"""Several kernels recording progress at once lose nothing (the store of
widgets/exercises/store.py: one append-only file per kernel, merged when read).

Each writer here is a separate Python process, as a second open lesson is a second
kernel. The expected totals are counted from what the writers were told to do, not from
the store."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from widgets.exercises import journal, store

ROOT = Path(__file__).resolve().parents[2]
WRITERS = 4
UPDATES = 250

# One writer: UPDATES updates, each a part of its own item W<k> and one more miss of the
# item every writer shares (a count all of them change at once).
WRITER = """
import sys
from widgets.exercises import store
k, n = int(sys.argv[1]), int(sys.argv[2])
sys.stdin.readline()  # wait until every writer has started
for i in range(n):
    def mine(entry, i=i):
        entry["parts"][f"c:{i}"] = {"ok": True, "ever": True}
    def shared(entry):
        entry["misses"]["shared"] = entry["misses"].get("shared", 0) + 1
    store.update(f"W{k}", mine)
    store.update("SHARED", shared)
print(" ".join(store.notices()))
"""

READ = """
import json
from widgets.exercises import store
print(json.dumps(store.read_all()))
"""


def env_for(path: Path) -> dict:
    env = {**os.environ, "AUTOGRAD_LESSONS_PROGRESS": str(path)}
    env.pop("PYTEST_CURRENT_TEST", None)
    return env


def read_in_another_process(path: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", READ], cwd=ROOT, env=env_for(path),
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


@pytest.fixture
def progress_file(tmp_path, monkeypatch):
    path = tmp_path / "progress.json"
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(path))
    store.notices()
    return path


def test_four_kernels_writing_at_once_lose_no_update(progress_file):
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(k), str(UPDATES)],
                                cwd=ROOT, env=env_for(progress_file), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for k in range(WRITERS)]
    for w in writers:  # start them together
        w.stdin.write("go\n")
        w.stdin.flush()
    outputs = [w.communicate(timeout=300) for w in writers]
    assert [w.returncode for w in writers] == [0] * WRITERS, outputs
    assert all(out.strip() == "" for out, _ in outputs), outputs  # no sentence: all saved
    items = read_in_another_process(progress_file)
    for k in range(WRITERS):
        assert sorted(items[f"W{k}"]["parts"]) == sorted(f"c:{i}" for i in range(UPDATES))
    assert items["SHARED"]["misses"]["shared"] == WRITERS * UPDATES
    files = list(store.journal_folder(progress_file).iterdir())
    assert len(files) == WRITERS  # one file per kernel


def test_an_earlier_progress_file_is_the_starting_point_and_is_never_rewritten(
        progress_file):
    earlier = {"version": 1, "items": {
        "G6": {"parts": {"g:dA": {"ok": True, "ever": True}}, "solved": None,
               "solution_seen": "2026-01-01T10:00:00Z", "misses": {"tries:": 2}}}}
    progress_file.write_text(json.dumps(earlier))
    text = progress_file.read_bytes()
    store.update("G6", lambda e: e["parts"].update({"g:dB": {"ok": True, "ever": True}}))
    store.update("G6", lambda e: e["misses"].update({"tries:": e["misses"]["tries:"] + 1}))
    g6 = read_in_another_process(progress_file)["G6"]
    assert sorted(g6["parts"]) == ["g:dA", "g:dB"]
    assert g6["solution_seen"] == "2026-01-01T10:00:00Z"
    assert g6["misses"] == {"tries:": 3}
    assert progress_file.read_bytes() == text


def test_a_line_still_being_written_waits_and_a_broken_line_is_kept_and_reported(
        progress_file):
    store.update("G2", lambda e: e["misses"].update({"tries:": 1}))
    folder = store.journal_folder(progress_file)
    other = folder / "another-kernel.jsonl"
    whole = json.dumps({"t": 1.0, "item": "G3", "miss": "tries:", "by": 4}) + "\n"
    other.write_text(whole[:20])  # a kernel is half-way through a line
    assert store.read_item("G3")["misses"] == {}
    assert store.notices() == []  # not an error: the line is not finished
    with other.open("a") as f:
        f.write(whole[20:] + "not json at all\n" + json.dumps({"t": 2.0, "item": 5}) + "\n")
    assert store.read_item("G3")["misses"] == {"tries:": 4}
    sentences = store.notices()
    assert len(sentences) == 2 and all("another-kernel.jsonl" in s for s in sentences)
    assert "not json at all" in other.read_text()  # kept in its file
    assert store.read_item("G2")["misses"] == {"tries:": 1}


def test_an_unwritable_location_keeps_progress_and_writes_it_once_it_can(
        tmp_path, monkeypatch):
    blocker = tmp_path / "home"
    blocker.write_text("")  # a file where the folder should be
    path = blocker / "progress.json"
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(path))
    store.notices()
    store.update("G6", lambda e: e["misses"].update({"tries:": 1}))
    sentences = store.notices()
    assert len(sentences) == 1 and "could not be saved" in sentences[0]
    assert store.read_item("G6")["misses"] == {"tries:": 1}  # kept for the session
    blocker.unlink()  # the location can be written again
    store.update("G6", lambda e: e["misses"].update({"tries:": 2}))
    assert store.notices() == []
    assert read_in_another_process(path)["G6"]["misses"] == {"tries:": 2}


def test_a_reset_hides_every_kernels_progress_and_the_earlier_file(progress_file):
    progress_file.write_text(json.dumps({"version": 1, "items": {"G1": {"solved": "x"}}}))
    subprocess.run([sys.executable, "-c", WRITER, "0", "3"], input="go\n", cwd=ROOT,
                   env=env_for(progress_file), check=True, capture_output=True, text=True)
    assert set(read_in_another_process(progress_file)) == {"G1", "W0", "SHARED"}
    store.reset()
    assert read_in_another_process(progress_file) == {}
    store.update("G2", lambda e: e["misses"].update({"tries:": 1}))
    assert set(read_in_another_process(progress_file)) == {"G2"}
    assert progress_file.exists()  # hidden, not deleted


def test_merging_is_the_same_in_any_order_of_files():
    """Counts add up and 'ever' stays right whichever kernel's file is read first; a
    part's latest answer is the later one in time."""
    a = [{"t": 1.0, "item": "G6", "part": "g:dA", "ok": True, "ever": True},
         {"t": 3.0, "item": "G6", "miss": "tries:", "by": 1}]
    b = [{"t": 2.0, "item": "G6", "part": "g:dA", "ok": False, "ever": False},
         {"t": 4.0, "item": "G6", "miss": "tries:", "by": 2},
         {"t": 5.0, "item": "G6", "first": {"solution_seen": "later"}},
         {"t": 0.5, "item": "G6", "first": {"solution_seen": "earlier"}}]
    one, other = journal.merge({}, a + b), journal.merge({}, b + a)
    assert one == other
    assert one["G6"]["parts"]["g:dA"] == {"ok": False, "ever": True}
    assert one["G6"]["misses"] == {"tries:": 3}
    assert one["G6"]["solution_seen"] == "earlier"


def test_a_learner_exports_what_every_kernel_recorded(progress_file, tmp_path):
    from widgets.exercises import export_progress

    subprocess.run([sys.executable, "-c", WRITER, "1", "2"], input="go\n", cwd=ROOT,
                   env=env_for(progress_file), check=True, capture_output=True, text=True)
    store.update("G2", lambda e: e.update(solved="2026-12-02T12:00:00Z"))
    sentence = export_progress(tmp_path / "hand-in.json")
    assert sentence == f"Your progress (1 item solved) was written to {tmp_path / 'hand-in.json'}."
    data = json.loads((tmp_path / "hand-in.json").read_text())
    assert set(data["items"]) == {"W1", "SHARED", "G2"}
    assert data["items"]["SHARED"]["misses"] == {"shared": 2}
    assert data["learner"] is None  # no name unless the learner chose one
    blocked = export_progress(tmp_path / "no such folder" / "x.json")
    assert blocked.startswith("Your progress could not be written to ")
