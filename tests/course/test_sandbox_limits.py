"""The grading sandbox's limits: a submission that takes too much memory, processor time
or processes gets a sentence in its feedback, and the grading machine is left alone.

Each test lowers one limit far below what the function asks for, with a control under
the same limit that stays within it, so a limit that is not applied fails the test (the
machine has far more memory, time and processes than the function asks for).
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest

from widgets.course import sandbox as sandbox_module
from widgets.course.sandbox import Sandbox
from widgets.exercises.learner import LearnerCodeFailed, call

ROOT = Path(__file__).resolve().parents[2]

CELLS = [
    {"cell": 1, "source": "import numpy as np\nimport subprocess, sys"},
    {"cell": 2, "source": (
        "def allocate(gib):\n"
        "    return float(np.ones(int(gib * 2**27)).sum())\n"  # gib GiB of float64
        "def spin(seconds):\n"
        "    end = __import__('time').process_time() + seconds\n"
        "    while __import__('time').process_time() < end:\n"
        "        pass\n"
        "    return seconds\n"
        "def start(n):\n"
        "    procs = [subprocess.Popen([sys.executable, '-c', 'pass']) for _ in range(n)]\n"
        "    return sum(p.wait() for p in procs)\n")},
]
NAMES = ["allocate", "spin", "start"]


def sandbox(tmp_path, monkeypatch, **limits) -> Sandbox:
    monkeypatch.setattr(sandbox_module, "LIMITS",
                        dataclasses.replace(sandbox_module.Limits(), **limits))
    return Sandbox(CELLS, [{"record": 1, "cell": 2, "names": NAMES}], tmp_path, ROOT)


def test_memory_beyond_the_limit_is_a_sentence_and_the_sandbox_goes_on(tmp_path, monkeypatch):
    box = sandbox(tmp_path, monkeypatch, memory_bytes=2 * 2**30)
    try:
        assert call(box.function(1, "allocate"), 0.25) == 0.25 * 2**27  # within the limit
        with pytest.raises(LearnerCodeFailed, match=r"MemoryError: it needed more memory "
                                                    r"than the grader allows \(2 GiB in all\)"):
            call(box.function(1, "allocate"), 3)  # 3 GiB: the machine has it, the limit not
        assert call(box.function(1, "allocate"), 0.25) == 0.25 * 2**27  # still serving
    finally:
        box.close()


def test_processor_time_beyond_the_limit_is_a_sentence_before_the_wall_clock(tmp_path,
                                                                              monkeypatch):
    box = sandbox(tmp_path, monkeypatch, call_cpu_seconds=2)
    monkeypatch.setattr(sandbox_module, "CALL_SECONDS", 60.0)
    try:
        assert call(box.function(1, "spin"), 0.2) == 0.2
        started = time.monotonic()
        with pytest.raises(LearnerCodeFailed, match=r"TimeoutError: it used more than 2 s of "
                                                    r"processor time, the grader's limit"):
            call(box.function(1, "spin"), 30)
        assert time.monotonic() - started < 15  # the CPU limit, not the 60 s wall clock
        assert call(box.function(1, "spin"), 0.2) == 0.2  # the next call has its own time
    finally:
        box.close()


def test_processes_beyond_the_limit_are_refused_with_a_sentence(tmp_path, monkeypatch):
    box = sandbox(tmp_path, monkeypatch, processes=3)
    try:
        assert call(box.function(1, "start"), 2) == 0  # two processes: within the limit
        with pytest.raises(LearnerCodeFailed, match=r"PermissionError: the grader lets a "
                                                    r"submission start at most 3 processes"):
            call(box.function(1, "start"), 20)
    finally:
        box.close()


def test_a_process_started_through_ctypes_is_refused_too(tmp_path, monkeypatch):
    cells = [*CELLS, {"cell": 3, "source": (
        "def fork_by_ctypes():\n"
        "    import ctypes\n"
        "    return ctypes.CDLL(None).fork\n")}]
    monkeypatch.setattr(sandbox_module, "LIMITS", sandbox_module.Limits())
    box = Sandbox(cells, [{"record": 1, "cell": 3, "names": ["fork_by_ctypes"]}], tmp_path,
                  ROOT)
    try:
        with pytest.raises(LearnerCodeFailed, match="does not let a submission start "
                                                    "processes through ctypes"):
            call(box.function(1, "fork_by_ctypes"))
    finally:
        box.close()
