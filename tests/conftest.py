"""Shared test setup: make the helper modules of tests/ (strategies.py and the op
table in test_op_gradients.py) importable whatever pytest's import mode is."""

import sys
from pathlib import Path

TESTS = str(Path(__file__).resolve().parent)
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)
