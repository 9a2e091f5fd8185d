"""Shared test setup: make the helper modules of tests/ (strategies.py and the op
table in test_op_gradients.py) importable whatever pytest's import mode is, and keep
the lessons' exercise progress in memory: nbval's kernels inherit the variable, so
every run starts from a fresh lesson and no learner's progress file is read or written;
and a learner name set in the environment is dropped, so the lessons draw the shared
problems their stored outputs show."""

import os
import sys
from pathlib import Path

os.environ["AUTOGRAD_LESSONS_PROGRESS"] = ":memory:"
os.environ.pop("AUTOGRAD_LESSONS_LEARNER", None)  # stored lessons use the shared problems

TESTS = str(Path(__file__).resolve().parent)
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)
