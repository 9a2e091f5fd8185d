"""The capstone's two tasks (lesson 12), the course's own items C1 and C2.

* :mod:`.checkpoint_plan`: C1, a checkpoint plan for the capstone's CNN that fits a memory
  budget and a limit on recomputation, measured with the engine;
* :mod:`.planted_bug`: C2, a residual CNN with one planted gradient bug to localise and
  repair.
"""

from .checkpoint_plan import BATCH, BUDGET, MAX_EXTRA_WORK, N_MODULES, PlanRun, PlanTask
from .planted_bug import (
    SNIPPET,
    BugHunt,
    Residual,
    Swish,
    SwishOp,
    bug_hunt,
    bug_hunt_model,
)

__all__ = [
    "PlanTask", "PlanRun", "BugHunt", "BUDGET", "MAX_EXTRA_WORK", "BATCH", "N_MODULES",
    "SwishOp", "Swish", "Residual", "bug_hunt_model",
    "bug_hunt", "SNIPPET",
]
