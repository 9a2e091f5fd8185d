"""A2: the bytes one transformer block keeps for backward, as a formula.

The learner writes ``block_bytes(b, s, h, a)``: what one of the engine's GPT blocks
(float32, no dropout) keeps for backward on a (b, s, h) input with ``a`` heads,
parameters left out. The check runs it on the lesson's sizes and on others drawn at
check time, in NumPy only (a function that measures with the engine is told to predict
instead), and compares with the engine's own count (``block_saves``), naming the usual
slips: the published formula used as it is, the attention term without its heads, the
softmax weights counted twice, 2-byte values, layer norm's per-row statistics left out,
the weights counted in.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ... import gate
from ...feedback import words
from ...feedback.check import check_gradient
from ...feedback.context import Mistake
from ...feedback.result import Result
from ...lessons.transformer import TABLE_SIZES, block_saves, korthikanti_bytes
from .. import problems
from ..exercise import Exercise, register
from ..function_cases import Derivation, deriving
from ..problems import Problem

LESSON_SIZES = TABLE_SIZES  # (b, s, h, a): the lesson's table


@lru_cache(maxsize=16)
def _measured_bytes(b: int, s: int, h: int, a: int) -> int:
    """What the engine's block keeps for backward at these sizes, measured: A2's answer
    (the check's own measurement, not recorded as help)."""
    with gate.quietly():
        return block_saves(b, s, h, a).total


def _byte_mistakes(b: int, s: int, h: int, a: int) -> list[Mistake]:
    """Answers with one thing wrong, each named (built from the pieces of the count, not
    from the engine's measurement)."""
    per_token = 64 * s * b * h          # the float32 arrays of b·s rows of h (or 4h) values
    scores = 4 * a * s * s * b          # the softmax weights, one (s, s) map per head
    stats = 8 * s * b                   # layer norm's 1/std per row, twice
    return [
        Mistake(np.array(korthikanti_bytes(s, b, h, a)), "Your count is the published "
                "formula as it is: it counts 2-byte values, dropout masks and dropout's "
                "outputs; this block keeps float32 arrays and has no dropout.",
                "Go through the table op by op: what does each keep here?", "published"),
        Mistake(np.array(korthikanti_bytes(s, b, h, a, 4)), "Your count scales the published "
                "formula to 4-byte values, but this block has no dropout: no masks, and the "
                "second matmul reads the softmax's own output.",
                "Which of the formula's terms come from dropout?", "published_float32"),
        Mistake(np.array(per_token + 4 * s * s * b + stats), "Your attention term does not "
                "grow with the number of heads: each head keeps its own (s, s) weights.",
                "Look at the softmax's saved shape in the table.", "no_heads"),
        Mistake(np.array(per_token + 2 * scores + stats), "You counted the softmax weights "
                "twice: the matmul after it saves the very same array, one buffer.",
                "The table shows 0 bytes for one of the two.", "weights_twice"),
        Mistake(np.array(per_token + scores), "Your count leaves out layer norm's per-row "
                "statistics (small, but kept: one value per row, for each of the two "
                "layer norms).", "Look at the layer norms' rows of the table.", "no_stats"),
        Mistake(np.array((per_token + scores + stats) // 2), "Your count uses 2 bytes a "
                "value; the engine's block is float32.", "A float32 value is 4 bytes.",
                "two_bytes"),
        Mistake(np.array(per_token + scores + stats + _weights(h)), "Your count includes the "
                "weights; they are alive whether or not anything is recorded, and the table "
                "leaves them out.", "Count activations only.", "weights"),
    ]


def _weights(h: int) -> int:
    # the block's parameters in float32: 4 h×h projections, h×4h and 4h×h, biases, norms
    return 4 * (4 * h * h + 4 * h + 8 * h * h + 5 * h + 4 * h)


def _case(b: int, s: int, h: int, a: int):
    return (b, s, h, a), np.array(_measured_bytes(b, s, h, a)), {
        "mistakes": _byte_mistakes(b, s, h, a)}


def _compare(out, expected, ctx) -> Result:
    if isinstance(out, bool) or not isinstance(out, int | float | np.integer | np.floating
                                               | np.ndarray):
        return Result(False, f"Your block_bytes returns {words.a_type(out)}; it should "
                             "return a number of bytes.", name="bytes", diagnosis="type")
    return check_gradient(np.asarray(out, dtype=np.float64), expected.astype(np.float64),
                          name="bytes", reference="the engine's measured bytes", atol=0.0,
                          rtol=1e-9, **ctx)


def _longer_context():
    """(2, s, 32, 4) with a context s drawn at check time, longer than the lesson's 16."""
    return _case(2, int(problems.rng(151).integers(17, 65)), 32, 4)


def _more_heads():
    """(2, 16, h, a) with 8 or 16 heads of 2 to 4 values each, drawn at check time."""
    draw = problems.rng(152)
    a = int(draw.choice([8, 16]))
    return _case(2, 16, a * int(draw.integers(2, 5)), a)


def _other_sizes():
    """Every size drawn at check time (thousands of combinations): a batch, a context,
    heads and a width they divide."""
    draw = problems.rng(153)
    a = int(draw.choice([1, 2, 3, 6]))
    return _case(int(draw.integers(1, 7)), int(draw.integers(4, 41)),
                 a * int(draw.choice([4, 8, 12, 16])), a)


# a count of bytes, exact: closed_form's precision test has nothing to add. The sizes
# after the lesson's are drawn at every check, so a table of earlier measurements (or of
# sizes a feedback sentence named) does not carry over.
_check_a2 = deriving(Derivation("block_bytes", (
    ("the lesson's sizes (b, s, h, a) = (2, 16, 32, 4)", lambda: _case(*LESSON_SIZES)),
    ("a longer context, drawn at check time", _longer_context),
    ("more heads, drawn at check time", _more_heads),
    ("other sizes, all drawn at check time", _other_sizes)),
    _compare, right="your formula predicts what the engine keeps.", label="bytes",
    closed_form=False),
    """``A2(block_bytes)``: your ``block_bytes(b, s, h, a)`` predicts the bytes one GPT
    block (float32, no dropout) keeps for backward, parameters left out; checked against
    the engine's measurement at the lesson's sizes and at three others drawn at check
    time (a longer context, more heads, other sizes).""")


def bytes_problem() -> Problem:
    """A2's sizes: the lesson's table."""
    b, s, h, a = LESSON_SIZES
    return Problem("One GPT block (float32, no dropout) on a (b, s, h) input with a heads; "
                   "the lesson's table is at these sizes.", b=b, s=s, h=h, a=a)


register(Exercise("A2", "derivation", {"closed_form": _check_a2}, problem=bytes_problem))
