"""A3: what to recompute within a byte budget.

The lesson's memory GPT (two blocks, context 64; ``lessons.transformer.MEMORY_SHAPE``)
trains one step. The learner names, for each block, the parts to recompute
(``lessons.transformer.PARTS``: the attention core, the whole attention branch, the
MLP, the whole block), ``A3([["..."], ["..."]])``, so that the step's peak of bytes held
for backward is at most ``MAX_PEAK`` of the plain step's and at most ``MAX_EXTRA_WORK``
of a forward pass is recomputed, with gradients identical to the plain step's. The
check measures the plan with the engine and says, about that plan, how far over each
limit it is and which part costs the most; it never names a plan that fits.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ... import gate
from ...feedback.result import Result
from ...lessons.transformer import MEMORY_SHAPE, PARTS, RecomputeRun, plain_step, recompute_step
from ..exercise import Exercise, register
from ..parts import answers

MAX_PEAK = 0.70        # of the plain step's peak bytes held for backward
MAX_EXTRA_WORK = 0.30  # recomputed multiply-adds, as a fraction of one forward pass
N_BLOCKS = MEMORY_SHAPE["layers"]
# Plans measured or checked before one fits: a few to reason from; the 256 plans of two
# blocks, looped over, are a search.
TRIES = 6


def plan_problem(plan) -> str | None:
    """A sentence saying what is wrong with how ``plan`` is written, or None."""
    if plan is None or plan is Ellipsis:
        return ("plan is still a placeholder, so there is nothing to check yet: replace it "
                f"with one list of part names per block, such as {[['mlp'], []]}.")
    if isinstance(plan, str | bytes) or not isinstance(plan, Iterable):
        return (f"plan is {type(plan).__name__} {plan!r:.40}; it should be a list with one "
                f"list of part names per block ({N_BLOCKS} blocks).")
    plan = list(plan)
    if len(plan) != N_BLOCKS:
        return (f"plan has {len(plan)} entr{'y' if len(plan) == 1 else 'ies'}; the model has "
                f"{N_BLOCKS} blocks: give one list of part names for each (an empty list "
                "recomputes nothing in that block).")
    for i, parts in enumerate(plan):
        if isinstance(parts, str):
            return (f"block {i}'s entry is the string {parts!r}; put it in a list, "
                    f"[{parts!r}], so several parts can be named.")
        if not isinstance(parts, Iterable):
            return (f"block {i}'s entry is {type(parts).__name__} {parts!r:.30}; it should "
                    "be a list of part names.")
        for part in parts:
            if not isinstance(part, str) or part.strip().lower() not in PARTS:
                return (f"block {i} names {part!r}, which is not a part of a block; the "
                        f"parts are {', '.join(map(repr, PARTS))}.")
    return None


def _normalised(plan) -> list[frozenset]:
    return [frozenset(p.strip().lower() for p in parts) for parts in plan]


@dataclass(frozen=True)
class RecomputeTask:
    """A3's problem: the limits, and a way to measure any plan the way the check does."""

    max_peak: float = MAX_PEAK
    max_extra_work: float = MAX_EXTRA_WORK

    def measure(self, plan) -> RecomputeRun | str:
        """One training step of the memory GPT with ``plan``, measured (peak, recomputed
        work, gradients). Each measurement counts as one of A3's tries (see ``TRIES``;
        ``recompute_step`` counts it)."""
        problem = plan_problem(plan)
        if problem is not None:
            return problem[:1].upper() + problem[1:]
        return recompute_step(_normalised(plan))

    def __repr__(self) -> str:
        m = MEMORY_SHAPE
        plain = plain_step()
        return (f"Recomputation plan for the memory GPT ({m['layers']} blocks, batch "
                f"{m['batch']}, context {m['seq']}, width {m['hidden']}, {m['heads']} heads, "
                f"float32): at most {self.max_peak:.0%} of the plain step's peak "
                f"({plain.peak:,} bytes held for backward), at most {self.max_extra_work:.0%} "
                "of a forward pass recomputed, gradients identical. Parts: "
                f"{', '.join(PARTS)}. Measure a plan with .measure(plan).")


def _memory_part(run: RecomputeRun) -> Result:
    share = run.peak / run.plain.peak
    if share <= MAX_PEAK:
        return Result(True, f"Peak {run.peak:,} bytes held for backward, {share:.0%} of the "
                            f"plain step's: within {MAX_PEAK:.0%}.", name="memory")
    return Result(False, f"Peak {run.peak:,} bytes held for backward, {share:.0%} of the plain "
                         f"step's {run.plain.peak:,}: over the limit of {MAX_PEAK:.0%}.",
                  name="memory", diagnosis="over_budget",
                  hint="Which arrays are largest at this context length (section 3's table, "
                       "scaled to s = 64)? A block that recomputes nothing keeps all of them.")


def _work_part(run: RecomputeRun) -> Result:
    work = run.extra_forward_work
    if work <= MAX_EXTRA_WORK:
        return Result(True, f"Recomputes {work:.0%} of a forward pass: within the limit of "
                            f"{MAX_EXTRA_WORK:.0%}.", name="recompute")
    heavy = sorted({p for parts in run.plan for p in parts if p != "attention_core"})
    message = f"Recomputes {work:.0%} of a forward pass: over the limit of {MAX_EXTRA_WORK:.0%}."
    if heavy:
        message += (f" Your plan re-runs {' and '.join(heavy)}, which include"
                    f"{'s' if len(heavy) == 1 else ''} the block's linear layers, where most "
                    "of its multiply-adds are.")
    return Result(False, message, name="recompute", diagnosis="too_much_work",
                  hint="Count the multiply-adds of each part (count_ops around it): a "
                       "checkpoint pays for every op inside it.")


def _gradient_part(run: RecomputeRun) -> Result:
    if run.same_gradients():
        return Result(True, "Gradients identical to the plain step's, bit for bit.",
                      name="gradients")
    return Result(False, f"The gradients differ from the plain step's by up to "
                         f"{run.step.grad_difference(run.plain):.1e}.", name="gradients",
                  diagnosis="gradients_differ")


@answers("memory", "recompute", "gradients")
def _check_a3(plan=None) -> Result:
    """``A3(plan)``: one list of part names per block (``lessons.transformer.PARTS``),
    measured on one training step of the memory GPT.

    >>> _check_a3([["mlp"], []]).parts[0].name                  # doctest: +SKIP
    'memory'
    """
    problem = plan_problem(plan)
    if problem is not None:  # a placeholder is no attempt ("none"); a slip is a format one
        return Result(False, problem[:1].upper() + problem[1:],
                      diagnosis="none" if plan is None or plan is Ellipsis else "format",
                      hint=f"Write the plan as [[parts of block 0], [parts of block 1]], each "
                           f"part one of {', '.join(map(repr, PARTS))}.")
    parts = _normalised(plan)
    if not any(parts):
        plain = plain_step()
        return Result(False, f"Your plan recomputes nothing: that is the plain step, peak "
                             f"{plain.peak:,} bytes held for backward.", diagnosis="no_plan",
                      hint="Name at least one part of one block, and measure what it changes.")
    with gate.quietly():  # the check records this try itself
        run = recompute_step(parts)
    return Result.combine([_memory_part(run), _work_part(run), _gradient_part(run)])


register(Exercise("A3", "prediction", {"plan": _check_a3}, problem=RecomputeTask, tries=TRIES))
