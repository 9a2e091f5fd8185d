"""Lesson 15, a transformer's training memory (A1–A3): attention's backward written by
the learner, the bytes a block saves predicted as a formula, and a recomputation plan
chosen within a byte budget.

* :mod:`.backward`: A1, dq, dk and dv of causal attention, in NumPy;
* :mod:`.saved_bytes`: A2, the bytes one block keeps for backward as a function of batch,
  context, width and heads;
* :mod:`.recompute_plan`: A3, which parts of each block to recompute.

Every expected value is the engine's: its gradient of ``scaled_dot_product_attention``,
the bytes its saved tensors hold, the peak and the recomputed multiply-adds it measures.

>>> from widgets import exercises
>>> exercises.A1(attention_backward)                       # doctest: +SKIP
"""

from . import saved_bytes  # noqa: F401 - registers A2
from .backward import with_slip
from .recompute_plan import RecomputeTask

__all__ = ["with_slip", "RecomputeTask"]
