"""Stored lesson outputs read the same on every machine: no absolute path in any of them.

A traceback or warning that names ``/home/…/autograd_core/sweep/engine.py:167`` tells a learner
about the machine that ran the lesson, not about their code, and changes whenever the
engine's lines move. The lessons show errors with ``widgets.tracebacks.short_tracebacks``
(the message and the learner's own line); this test fails if any stored output of any
lesson (text, HTML, SVG, tracebacks) contains an absolute file path.
"""

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))

ANSI = re.compile(r"\x1b\[[0-9;]*m")
# A POSIX path of two or more folders ending in a file name (/home/me/x/engine.py:167,
# /tmp/ipykernel_1/2.py), or a Windows drive path (C:\Users\...). URLs (http://…/svg) are
# not paths: the character before the first slash is a letter or a slash there.
ABSOLUTE_PATH = re.compile(
    r"(?<![\w:/.<>-])/(?:[\w.+~@-]+/)+[\w.+~@-]+\.\w+"
    r"|\b[A-Za-z]:\\(?:[\w .+~@-]+\\)+"
)


def absolute_paths(text: str) -> list[str]:
    """The absolute file paths in ``text`` (after removing terminal colours)."""
    return ABSOLUTE_PATH.findall(ANSI.sub("", text))


def known_paths() -> list[str]:
    """Paths of this machine that must never show: the clone and the Python environment."""
    return [str(ROOT), sys.prefix, sys.base_prefix]


@pytest.mark.parametrize("text, found", [
    ("File /work/main/autograd_core/sweep/engine.py:167, in backward", True),
    ("\x1b[32m/home/ana/venv/lib/python3.11/site-packages/numpy/core/fromnumeric.py\x1b[0m", True),
    ("/tmp/ipykernel_4242/3141592653.py:3: UserWarning", True),
    (r"C:\Users\ana\lesson\engine.py", True),
    ('<svg xmlns="http://www.w3.org/2000/svg"><g id="a/b"></g></svg>', False),
    ("Cell In[5], line 1\n----> 1 loss.backward()", False),
    ("dW2 / dW1 = 0.5 and x/y.sum", False),
])
def test_the_path_finder(text, found):
    assert bool(absolute_paths(text)) == found


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_no_stored_output_contains_an_absolute_path(lesson):
    nb = json.loads(lesson.read_text())
    problems = []
    for index, cell in enumerate(nb["cells"]):
        for output in cell.get("outputs", []):
            text = json.loads(json.dumps(output))  # every string of the output, SVG included
            flat = "\n".join(_strings(text))
            found = absolute_paths(flat) + [p for p in known_paths() if p in flat]
            if found:
                problems.append(f"cell {index} ({output['output_type']}): {found[0]}")
    assert not problems, (
        f"{lesson.name}: stored outputs name paths of the machine that ran them:\n"
        + "\n".join(problems)
        + "\nShow errors with widgets.tracebacks.short_tracebacks() (every lesson's setup "
          "cell does), then run python scripts/regenerate_notebooks.py " + lesson.name)


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # not \t, \n, \r


def _texts(nb: dict):
    """(where, text) of every cell source and every stored text, HTML or SVG output."""
    for i, cell in enumerate(nb["cells"]):
        yield f"cell {i} source", "".join(cell["source"])
        for output in cell.get("outputs", []):
            yield f"cell {i} output", "".join(output.get("text", ""))
            for kind in ("text/plain", "text/html", "image/svg+xml"):
                yield f"cell {i} {kind}", "".join(output.get("data", {}).get(kind, ""))


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_no_lesson_text_holds_a_stray_control_character(lesson):
    """A lost escape (a vertical tab where `\\v` was meant) shows as a box or nothing;
    terminal colours in stored tracebacks are the one control sequence allowed."""
    nb = json.loads(lesson.read_text(encoding="utf-8"))
    found = [(where, repr(m.group())) for where, text in _texts(nb)
             for m in CONTROL.finditer(ANSI.sub("", text))]
    assert not found, found


def test_one_sample_batch_norm_is_not_called_zero_over_zero():
    """With ε in the denominator, one sample normalises to exactly 0, not 0/0."""
    text = (ROOT / "notebooks" / "08_batchnorm_dropout.ipynb").read_text(encoding="utf-8")
    assert "0/0" not in text and "0 / 0" not in text
