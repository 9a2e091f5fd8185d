"""The forward-pass lesson's objectives L1–L9: the learner predicts what the engine
shows (op order, parameter counts, masks, running statistics, bytes saved, what
checkpointing and instrumentation report), and the check runs it."""

from __future__ import annotations

import contextlib
import inspect
from functools import lru_cache, partial

import numpy as np

import autograd_core as ag
from autograd_core import nn
from autograd_core.tools.graph import capture, saved_bytes
from autograd_core.tools.instrument import instrument

from .. import gate
from ..feedback import words
from ..feedback.context import Mistake
from ..feedback.result import Result
from ..lessons.checkpointing import checkpointed_step, checkpointing, sqrt_segments
from ..lessons.graphs import _branchy_program, _define_by_run
from ..lessons.memory import memory_breakdown
from ..lessons.report import Report
from . import engine_watch, laws, learner
from .array_answers import Gradients, gradients
from .exercise import Exercise, register
from .parts import answers
from .predictions import Fact, check_fact, predicting
from .problems import Problem, problem_for, rng

# -- L1: a residual block -------------------------------------------------------------------


def _wider_block_run() -> ag.Tensor:
    """The 8 -> 16 block L1 asks about, run on a batch."""
    block = nn.ResidualBlock(8, 16, linear=True, dtype=np.float64, generator=ag.Generator(71))
    return block(ag.tensor(rng(71).standard_normal((4, 8))))


def _residual_facts() -> dict:
    """What the engine shows about ResidualBlock (linear variant, float64): the ops the
    8 -> 16 block records, in order, and each block's parameter count."""
    gen = ag.Generator(71)
    same = nn.ResidualBlock(8, 8, linear=True, dtype=np.float64, generator=gen)
    wider = nn.ResidualBlock(8, 16, linear=True, dtype=np.float64, generator=gen)

    def count(m):
        return sum(p.numel() for p in m.parameters())

    x = ag.tensor(rng(71).standard_normal((4, 8)))
    return {
        "ops_with_projection": [op.op for op in capture(wider(x)).ops],
        "parameters_same": count(same),
        "parameters_wider": count(wider),
    }


def _parameter_mistakes(n_in: int, n_out: int) -> list[Mistake]:
    """The miscounts of a linear residual block n_in -> n_out, each named. Counted here from
    the layers' sizes (fc1 and fc2 bias-free, two batch norms, a bias-free projection only
    when the widths differ), not from the engine."""
    projection = n_in * n_out if n_in != n_out else 0
    right = n_in * n_out + 2 * n_out + n_out * n_out + 2 * n_out + projection
    block = f"the {n_in} → {n_out} block"

    def wrong(delta: int, says: str, code: str) -> Mistake:
        return Mistake(np.array(float(right + delta)), says, "", code)

    found = [wrong(2 * n_out, f"For {block} you gave fc1 and fc2 a bias each; these linears "
                              "have none, since the batch norm after each would subtract it "
                              "again.", "linear_bias"),
             wrong(4 * n_out, f"For {block} you counted batch norm's running mean and "
                              "variance: they are statistics it keeps, not parameters it "
                              "learns.", "running_statistics")]
    if projection:
        found += [wrong(-projection, f"For {block} your shortcut has no parameters. Can x "
                                     "with its width be added to F(x) as it is?",
                        "missing_projection"),
                  wrong(n_out, f"For {block} you have one number too many per output "
                               "feature: neither the + that merges the paths nor the "
                               "bias-free projection holds any.", "merge_or_projection_bias")]
    else:
        found += [wrong(n_in * n_out, f"For {block} you counted a projection on the shortcut. "
                                      "When x and F(x) have the same shape, what has the "
                                      "shortcut to compute?", "needless_projection"),
                  wrong(n_out, f"For {block} you have one number too many per feature: what "
                               "would a plain + have to learn?", "merge_parameters")]
    return found


def _l1_facts() -> dict[str, Fact]:
    """What the engine shows, one fact per prediction of ``L1(ops_wider=[...],
    parameters_same=..., parameters_wider=...)``."""
    facts = _residual_facts()
    return {
        "ops_wider": Fact(facts["ops_with_projection"], "F(x) runs first, one op per layer; "
                          "then the shortcut's projection runs on x, and an add merges the "
                          "two paths.", "sequence"),
        "parameters_same": Fact(float(facts["parameters_same"]), "Two bias-free linears and "
                                "two batch norms (a scale and a shift per feature); the "
                                "identity shortcut and the + add nothing.", "number",
                                {"mistakes": _parameter_mistakes(8, 8)},
                                what="a number of parameters"),
        "parameters_wider": Fact(float(facts["parameters_wider"]), "F's layers at width 16, "
                                 "plus the bias-free projection 8 → 16 the shortcut needs; "
                                 "the + adds nothing.", "number",
                                 {"mistakes": _parameter_mistakes(8, 16)},
                                 what="a number of parameters"),
    }


register(Exercise("L1", "prediction", {"trace": predicting(_l1_facts)}))
engine_watch.asks_about("L1", _wider_block_run, shown_by="record")  # its ops: L1's first part


# -- L2: merge by concatenation ------------------------------------------------------------


L2_WIDTHS = (3, 2)  # the columns of a and b; other widths are another problem (a lesson's demo)


def l2_problem(widths: tuple = L2_WIDTHS) -> Problem:
    """out = cat([a, b], dim=1) with a (2, 3), b (2, 2) and G = dL/dout (``widths``: the
    columns of a and of b, 1 to 6 each, draw another problem)."""
    try:
        na, nb = (int(w) for w in widths)
        ok = (len(tuple(widths)) == 2 and all(not isinstance(w, bool) and w == int(w)
                                              for w in widths) and 1 <= na <= 6 and 1 <= nb <= 6)
    except Exception:  # noqa: BLE001 - anything that is not two small counts
        ok = False
    if not ok:
        raise ValueError(f"L2 has widths (columns of a, columns of b) of 1 to 6 each, not "
                         f"{words.short(widths, 40)}.")
    g = rng(72) if (na, nb) == L2_WIDTHS else rng(720 + 10 * na + nb)
    return Problem("Two branches merged by concatenation (as in an Inception block): "
                   f"out = cat([a, b], dim=1) with a (2, {na}) and b (2, {nb}); G = dL/dout "
                   f"(2, {na + nb}). Find da and db.", a=g.standard_normal((2, na)),
                   b=g.standard_normal((2, nb)), G=g.standard_normal((2, na + nb)))


def _l2_engine(p: Problem) -> dict:
    a, b = ag.tensor(p.a, requires_grad=True), ag.tensor(p.b, requires_grad=True)
    ag.cat([a, b], dim=1).backward(p.G)
    return {"da": a.grad, "db": b.grad}


def _l2_context(p: Problem, right: dict) -> dict:
    # a slice from the other end, named without saying where the right one sits: said on
    # another problem (a demonstration), that would be every problem's layout
    na, nb = p.a.shape[1], p.b.shape[1]
    return {k: dict(of=k[1], mistakes=[Mistake(wrong, f"Your {k} is a slice of G of the right "
                                               f"size, but not {k[1]}'s: which columns of out "
                                               f"did {k[1]}'s values fill in the forward "
                                               "pass?", "", "wrong_slice")])
            for k, wrong in (("da", p.G[:, -na:]), ("db", p.G[:, :nb]))}


_check_l2 = gradients(Gradients(
    "L2", ("da", "db"), l2_problem, _l2_engine, _l2_context, options={"widths": L2_WIDTHS},
    form=("my_l2", "p")),
    """``L2(my_l2)``: your ``my_l2(p) -> {"da": ..., "db": ...}`` on ``L2.problem()``, the
    concatenation; ``widths=`` runs it on ``L2.problem(widths)`` (a lesson's demo).""")


# L2's other merges: a gate, a pool and a reuse, each with its own upstream gradient.
def l2_merges_problem() -> Problem:
    """The three other motifs of L2, each with its upstream gradient: a gate
    y = sigmoid(u) * h (u, h, G_gate: (4,)), a pooling merge y = max over three branches
    (the rows of ``branches``, (3, 4); G_pool (4,)), and a reuse y = tanh(x * w) * w (x, w,
    G_reuse: (3,))."""
    g = rng(721)
    branches = g.standard_normal((3, 4))
    return Problem("Three more merges, each with its upstream gradient. Gate: y = sigmoid(u) * "
                   "h, G_gate = dL/dy; find du. Pool: y = max(branches, axis=0), the "
                   "elementwise max of three branches (the rows), G_pool = dL/dy; find "
                   "d_branches. Reuse: y = tanh(x * w) * w, w used twice, G_reuse = dL/dy; "
                   "find dw.", u=g.standard_normal(4), h=g.standard_normal(4),
                   G_gate=g.standard_normal(4), branches=branches,
                   G_pool=g.standard_normal(4), x=g.standard_normal(3),
                   w=g.standard_normal(3), G_reuse=g.standard_normal(3))


def _l2_merge_grads(q: Problem) -> dict[str, np.ndarray]:
    """The engine's gradients for the three merges."""
    u = ag.tensor(q.u, requires_grad=True)
    (ag.sigmoid(u) * ag.tensor(q.h)).backward(q.G_gate)
    branches = ag.tensor(q.branches, requires_grad=True)
    branches.max(axis=0).backward(q.G_pool)
    w = ag.tensor(q.w, requires_grad=True)
    (ag.tanh(ag.tensor(q.x) * w) * w).backward(q.G_reuse)
    return {"du": u.grad.numpy(), "d_branches": branches.grad.numpy(), "dw": w.grad.numpy()}


def _l2_merge_mistakes(q: Problem) -> dict[str, list[Mistake]]:
    s = 1 / (1 + np.exp(-q.u))
    winner = q.branches == q.branches.max(axis=0)
    t = np.tanh(q.x * q.w)
    return {
        "du": [Mistake(q.G_gate * q.h, "You sent the gradient through the product but stopped "
                       "there: u reaches y through the sigmoid as well, so its slope belongs "
                       "in the chain.", "", "missing_activation_derivative"),
               Mistake(q.G_gate * s, "That is the gradient of the other factor, h: the "
                       "product rule gives each factor the other one.", "", "other_factor")],
        "d_branches": [
            Mistake(np.broadcast_to(q.G_pool / 3, q.branches.shape), "A max does not share "
                    "its gradient: the whole of it goes to the branch that won, at each "
                    "entry.", "", "averaged_paths"),
            Mistake(np.broadcast_to(q.G_pool, q.branches.shape), "Every branch got the whole "
                    "gradient, but only the branch that holds the max reaches y at that "
                    "entry.", "", "all_paths"),
            Mistake(np.where(winner, 0.0, q.G_pool), "You sent the gradient to the branches "
                    "that lost; it goes to the winner.", "", "wrong_branch")],
        "dw": [Mistake(q.G_reuse * t, "That is the gradient of w's second use only (the "
                       "factor outside the tanh): w is used twice, and the two uses add up.",
                       "", "one_path"),
               Mistake(q.G_reuse * q.w * (1 - t ** 2) * q.x, "That is the gradient of w's "
                       "first use only (inside the tanh): w is used twice, and the two uses "
                       "add up.", "", "one_path")],
    }


def _l2_merge_context(q: Problem, right: dict) -> dict:
    of = {"du": "u", "d_branches": "branches", "dw": "w"}
    return {k: dict(of=of[k], mistakes=found) for k, found in _l2_merge_mistakes(q).items()}


_check_l2_merges = gradients(Gradients(
    "L2", ("du", "d_branches", "dw"), l2_merges_problem, _l2_merge_grads, _l2_merge_context,
    form=("my_l2_merges", "p"), call='L2.run("merges", my_l2_merges)'),
    """``L2.run("merges", my_l2_merges)``: your ``my_l2_merges(p) -> {"du": ...,
    "d_branches": ..., "dw": ...}`` on ``L2.problem(merges=True)``: the gradient through a
    gate, a max over branches, and a reused weight.""")
_check_l2_merges.__name__ = _check_l2_merges.__qualname__ = "check_l2_merges"


def l2_problems(widths: tuple = L2_WIDTHS, merges: bool = False) -> Problem:
    """``L2.problem()``: the concatenation (``widths=`` another one, for a lesson's demo);
    ``L2.problem(merges=True)``: the gate, the pool and the reuse."""
    return l2_merges_problem() if merges else l2_problem(widths)


register(Exercise("L2", "derivation", {"gradients": _check_l2, "merges": _check_l2_merges},
                  problem=l2_problems))


# -- L3: define-by-run -------------------------------------------------------------------------


def _l3_facts() -> dict[str, Fact]:
    """What the engine shows, one fact per prediction of ``L3(ops_positive=...,
    ops_negative=...)``: how many ops each input records."""
    pos, neg = _define_by_run((2.5, -0.5))
    why = "The graph is a record of what ran: one mul, then one tanh per whole unit of |x|."
    return {"ops_positive": Fact(len(pos.ops), why, "number"),
            "ops_negative": Fact(len(neg.ops), why, "number")}


register(Exercise("L3", "prediction", {"ops": predicting(_l3_facts)}))
# recording the program for x = 2.5 shows its ops (x = -0.5's, one mul and one tanh, is the
# shape of too many other graphs to watch)
engine_watch.asks_about("L3", _branchy_program, shown_by="record")


# -- L4: the program is not the values -------------------------------------------------------


def _two_runs() -> dict:
    """The same model (with dropout, training) on two inputs, and twice on one input."""
    gen = ag.Generator(74)
    model = nn.Sequential(nn.Linear(4, 6, dtype=np.float64, generator=gen), nn.Tanh(),
                          nn.Dropout(0.5, generator=gen))
    g = rng(74)
    x1, x2 = ag.tensor(g.standard_normal((3, 4))), ag.tensor(g.standard_normal((3, 4)))
    runs = [model(x) for x in (x1, x2, x1)]
    ops = [[op.op for op in capture(r).ops] for r in runs]
    return {"same_structure": ops[0] == ops[1],
            "same_values": bool(np.array_equal(runs[0].numpy(), runs[1].numpy())),
            "same_mask_same_input": bool(np.array_equal(runs[0].numpy() != 0,
                                                        runs[2].numpy() != 0)),
            "ops": ops[0]}


def _l4_facts() -> dict[str, Fact]:
    """What the engine shows, one fact per prediction of ``L4(same_structure=..., same_values=...,
    same_mask_same_input=...)``."""
    facts = _two_runs()
    why = {"same_structure": "The program (the ops) is the same for any input of this shape.",
           "same_values": "The activations are values of one execution: other input, other "
                          "values.",
           "same_mask_same_input": "Each call draws a fresh dropout mask, even on the same "
                                   "input."}
    return {k: Fact(facts[k], v) for k, v in why.items()}


register(Exercise("L4", "prediction", {"predict": predicting(_l4_facts)}))


def _l4_model_run() -> ag.Tensor:
    """One run of the model L4 asks about: Linear → Tanh → Dropout, in training mode."""
    model = nn.Sequential(nn.Linear(4, 6, dtype=np.float64), nn.Tanh(), nn.Dropout(0.5))
    return model(ag.tensor(np.ones((3, 4))))


engine_watch.asks_about("L4", _l4_model_run, shown_by="record")  # two runs: the answer


# -- L5: training and evaluation run different functions ------------------------------------------


L5_BATCH = 8  # the exercise's batch; another batch size is another problem


def l5_problem(batch_size: int = L5_BATCH) -> Problem:
    """Dropout(p=0.25); one training batch x of 8 samples for a fresh BatchNorm1d(3), then
    two new samples z in evaluation (``batch_size``: another training batch of 2 to 32
    draws another problem)."""
    if (not isinstance(batch_size, int) or isinstance(batch_size, bool)
            or not 2 <= batch_size <= 32):
        raise ValueError(f"L5 has batches of 2 to 32 samples, not {batch_size!r}.")
    g = rng(75) if batch_size == L5_BATCH else rng(750 + batch_size)
    return Problem("Dropout(p=0.25) on ones(1000) in training, then the same module in "
                   "eval() on z; BatchNorm1d(3) (γ = 1, β = 0, running mean 0 and running "
                   "variance 1, momentum 0.1, eps 1e-5) after ONE training batch x, then in "
                   "eval() on z. Predict a kept unit's value in training, dropout's output "
                   "on z in evaluation, and batch norm's output on z in evaluation.",
                   x=g.standard_normal((batch_size, 3)) * 1.5 + 2,
                   z=g.standard_normal((2, 3)) + 2, p=0.25)


def _l5_engine(p: Problem) -> tuple[float, np.ndarray, np.ndarray]:
    """(a kept unit's value in training, dropout's and batch norm's outputs on p.z in
    evaluation), as the engine computes them."""
    drop = nn.Dropout(p.p, generator=ag.Generator(75))
    kept = drop(ag.ones(1000)).numpy()
    drop.eval()
    dropped = drop(ag.tensor(p.z)).numpy()
    bn = nn.BatchNorm1d(3, dtype=np.float64)
    bn(ag.tensor(p.x))  # training mode: the batch's statistics, and the buffers move
    bn.eval()
    return float(kept[kept != 0][0]), dropped, bn(ag.tensor(p.z)).numpy()


def _l5_mistakes(p: Problem) -> tuple[list[Mistake], list[Mistake]]:
    """The slips this item names: on dropout's evaluation output, and on batch norm's."""
    z, x, eps, m = p.z, p.x, 1e-5, 0.1
    drop = [Mistake(z * (1 - p.p), "You scaled by 1 − p at evaluation: that is the other "
                    "convention, where training does not scale. Here training already "
                    "scaled the kept units.", "", "eval_scaled"),
            Mistake(z / (1 - p.p), "You applied training's scale of the kept units at "
                    "evaluation too: nothing is dropped there, so what would a scale "
                    "correct?", "", "eval_scaled")]

    def norm(mean, var):
        return (z - mean) / np.sqrt(var + eps)

    running_mean, unbiased, biased = m * x.mean(0), x.var(0, ddof=1), x.var(0)
    bn = [Mistake(norm(z.mean(0), z.var(0)), "You normalised z with its own statistics: that "
                  "is training mode. In eval() batch norm uses its running estimates.", "",
                  "training_mode"),
          Mistake(norm(x.mean(0), x.var(0)), "You normalised with the training batch's own "
                  "statistics: the running estimates have moved only a fraction momentum "
                  "of the way to them after one batch.", "", "momentum"),
          Mistake(norm(x.mean(0), unbiased), "You normalised with the training batch's own "
                  "statistics: the running estimates have moved only a fraction momentum "
                  "of the way to them after one batch.", "", "momentum"),
          Mistake(norm(running_mean, 1.0), "Your running mean is right, but the running "
                  "variance moves too: from 1, a fraction momentum toward the batch's "
                  "variance.", "", "variance_not_moved"),
          Mistake(norm(running_mean, m * unbiased), "Your running variance starts from 0: "
                  "it starts at 1.", "", "variance_start"),
          Mistake(norm(running_mean, (1 - m) + m * biased), "Your running variance uses the "
                  "batch variance divided by N: the running estimate takes the unbiased one, "
                  "divided by N − 1.", "", "biased_variance")]
    return drop, bn


def _l5_facts(batch_size: int = L5_BATCH) -> dict[str, Fact] | Result:
    """What the engine shows, one fact per prediction of ``L5(kept_value=...,
    dropout_eval=..., batchnorm_eval=...)`` for ``L5.problem()``; ``batch_size=`` for a
    prediction about ``L5.problem(batch_size)``."""
    p = problem_for("L5", l5_problem, batch_size=batch_size)
    if isinstance(p, Result):
        return p
    kept, dropped, normed = _l5_engine(p)
    drop_slips, bn_slips = _l5_mistakes(p)
    facts = {
        "kept_value": Fact(kept, "Kept units are scaled by 1/(1 − p) so that the expected "
                           "value is unchanged.", "number"),
        "dropout_eval": Fact(dropped, "In evaluation dropout is the identity: training's "
                             "scaling already kept each unit's expected value.", "number",
                             {"mistakes": drop_slips}),
        "batchnorm_eval": Fact(normed, "In evaluation batch norm uses its running estimates: "
                               "running = (1 − momentum)·running + momentum·batch statistic, "
                               "from mean 0 and variance 1, with the unbiased batch variance.",
                               "number", {"mistakes": bn_slips}),
    }
    return facts


register(Exercise("L5", "prediction", {"predict": predicting(_l5_facts, options=("batch_size",))},
                  problem=l5_problem))
engine_watch.forward_shows("L5")  # the layers run on L5's own x and z give its answer


# -- L6: reproducibility ---------------------------------------------------------------------


def _seeded_masks(units: int = 32) -> list[tuple[bool, ...]]:
    """The seven masks of L6's experiment, in order: Dropout(0.5) modules a and b, each with
    its own Generator(7), called three times each on ones(units), then one call of a module
    with Generator(8)."""
    ones = ag.ones(units)
    a, b, c = (nn.Dropout(0.5, generator=ag.Generator(s)) for s in (7, 7, 8))
    return [tuple(module(ones).numpy() != 0) for module in (a, a, a, b, b, b, c)]


def _float32_sums(big: float = 1e8, ones: int = 8) -> tuple[float, float]:
    """L6's two sums, added one at a time by the engine in float32: ``big`` then ``ones``
    times 1.0 (front to back), and the ones first, then ``big`` (back to front)."""
    def add(values):
        total = ag.tensor(np.float32(values[0]))
        for v in values[1:]:
            total = total + ag.tensor(np.float32(v))
        return float(total.item())

    numbers = [big] + [1.0] * ones
    return add(numbers), add(numbers[::-1])


def _l6_cases() -> tuple[list, list]:
    """(seeds, calls) and (big, ones) drawn now. Masks: three modules on two seeds, then five
    on three, called a few times each (4 to 8 masks, then 9 to 15: no one count fits both).
    Sums: a big number where float32 numbers are 8 apart and one where they are 16 apart
    (the ones are lost one at a time), and one below 2**24 (every sum exact), each with a
    count of ones that is not a multiple of the spacing."""
    d = laws.draw
    a, b, c = (int(s) for s in d.choice(np.arange(1, 60), size=3, replace=False))
    masks = [([a, b, a], int(d.integers(2, 5))),
             ([int(s) for s in d.permutation([c, c, b, c, a])], int(d.integers(3, 6)))]
    sums = []
    for e in d.permutation([26, 27]):  # spacing 2**(e - 23) between 2**e and 2**(e + 1)
        e = int(e)
        big = float(2 ** e + 2 ** (e - 20) * int(d.integers(1, 2 ** 10)))
        sums.append((big, int(d.integers(1, 2 ** (e - 22))) * 2 ** (e - 23)
                     + int(d.integers(1, 3))))
    sums.append((float(d.integers(2, 10 ** 6)), int(d.integers(3, 40))))
    return masks, sums


def _measured_masks(seeds, calls: int) -> float:
    """The distinct dropout masks among ``calls`` calls of a Dropout(0.5) module per seed,
    each with its own generator, on ones(64) (the engine, here)."""
    ones = ag.ones(64)
    masks = set()
    for seed in seeds:
        module = nn.Dropout(0.5, generator=ag.Generator(int(seed)))
        masks.update(tuple(module(ones).numpy() != 0) for _ in range(calls))
    return float(len(masks))


_L6_MASK_SLIPS = (
    laws.Slip(lambda seeds, calls: float(len(set(seeds))), "you counted one mask per seed: a "
              "generator is a stream, and each call continues where the last one stopped.",
              "seed_fixes_one_mask"),
    laws.Slip(lambda seeds, calls: 1.0, "a seed does not fix one mask for every call: each "
              "call draws new numbers from the stream.", "seed_fixes_one_mask"),
    laws.Slip(lambda seeds, calls: float(len(seeds) * calls), "two modules whose generators "
              "start from the same seed: does the first call of one draw other numbers than "
              "the first call of the other?", "same_seed_differs"),
)

_L6_SUM_SLIPS = (
    laws.Slip(lambda big, ones: (big + ones, big + ones), "you added exactly: in float32 every "
              "addition's result is rounded to the nearest float32 number.", "exact_sum"),
    laws.Slip(lambda big, ones: (float(np.float32(big)), float(np.float32(big))), "added first, "
              "the ones make a whole number exactly: is big plus that number lost as well?",
              "rounded_away"),
    laws.Slip(lambda big, ones: (float(np.float32(big + ones)),) * 2, "you rounded only the "
              "final sum, as if the order did not matter: front to back, each 1.0 is added "
              "to the big number and rounded on its own.", "rounded_once"),
)


def _l6_where_masks(seeds, calls) -> str:
    return f"for seeds {list(seeds)} called {calls} times each"


def _l6_where_sums(big, ones) -> str:
    return f"for big = {big:.10g} and {ones} ones"


@laws.takes_laws("distinct_masks", "float32_sums")
@answers("distinct_masks", "float32_sums")
def _check_l6(distinct_masks=None, float32_sums=None) -> Result:
    """``L6(distinct_masks=law, float32_sums=law)``: ``distinct_masks(seeds, calls)``, the
    number of different masks when a Dropout(0.5) module with its own Generator(seed) for each
    seed is called ``calls`` times; ``float32_sums(big, ones)``, (big then ``ones`` 1.0s, the
    ones then big) added one at a time in float32. Each is tried on cases drawn now."""
    if distinct_masks is None and float32_sums is None:
        return Result(False, "Nothing to check yet: pass your two laws, "
                             "L6(distinct_masks=your_function, float32_sums=your_function).",
                      diagnosis="none")
    masks, sums = _l6_cases()
    parts = []
    if distinct_masks is not None:
        parts.append(laws.check_law(
            "distinct_masks", distinct_masks, masks, _measured_masks, _L6_MASK_SLIPS,
            gives="a count of masks", where=_l6_where_masks,
            hint="which calls draw the same numbers from a generator's stream.",
            solved="Your law counts the masks the engine draws"))
    if float32_sums is not None:
        parts.append(laws.check_law(
            "float32_sums", float32_sums, sums, _float32_sums, _L6_SUM_SLIPS,
            gives="two numbers, (front_to_back, back_to_front)", where=_l6_where_sums,
            hint="how far apart float32 numbers are near big, and what each addition "
                 "rounds to.", solved="Your law gives the engine's float32 sums in both orders"))
    return Result.combine(parts)


register(Exercise("L6", "prediction", {"predict": _check_l6}))


# -- L7: forward values dominate memory ----------------------------------------------------------


def _tanh_chain(n: int, size: int = 100) -> ag.Tensor:
    """A chain of ``n`` tanh ops on a float64 vector of ``size`` (L7's question)."""
    h = ag.tensor(rng(77).standard_normal(size), requires_grad=True)
    for _ in range(n):
        h = ag.tanh(h)
    return h


def _chain_saved_bytes(n: int, size: int = 100) -> int:
    """Bytes saved by a chain of ``n`` tanh ops on a float64 vector of ``size``."""
    return saved_bytes(_tanh_chain(n, size))


def _l7_facts() -> dict[str, Fact]:
    """What the engine shows, one fact per prediction of ``L7(saved_10=..., saved_20=...)``: bytes
    saved by 10 and by 20 tanh on 100 float64."""
    why = "Each tanh keeps its output: 100 float64 values = 800 bytes per op."
    return {
        "saved_10": Fact(_chain_saved_bytes(10), why, "number", what="a whole number of bytes"),
        "saved_20": Fact(_chain_saved_bytes(20), why, "number", what="a whole number of bytes")}


register(Exercise("L7", "prediction", {"bytes": predicting(_l7_facts)},
                  experiment=memory_breakdown))
for _n in (10, 20):  # recording either chain, and reading what it holds, is the answer
    engine_watch.asks_about("L7", partial(_tanh_chain, _n), shown_by="record")


# -- L8: checkpointing -----------------------------------------------------------------------


# One SwishBlock of width 64 on a batch of 32: the matmul, the bias, σ and the product.
L8_LAYER_MACS = 32 * 64 * 64 + 32 * 64 + 2 * 32 * 64
L8_ARRAY, L8_LAYER = 32 * 64 * 4, 3 * 32 * 64 * 4  # one float32 activation; a layer's three


L8_MATMUL_MACS = 32 * 64 * 64  # the matmul's part of a layer's multiply-adds


@lru_cache(maxsize=1)
def _l8_steps():
    """The plain and the 4-segment step of the 16-layer stack, measured once (seeded: the
    same for every learner)."""
    with gate.quietly():  # L8's own check
        return tuple(checkpointed_step(depth=16, segments=k) for k in (1, sqrt_segments(16)))


@lru_cache(maxsize=16)
def _l8_measured(depth: int, segments: int) -> tuple[float, float]:
    """(peak bytes kept for backward, recomputed multiply-adds) of one checkpointed step of
    the Swish stack, measured by the engine here."""
    with gate.quietly():  # L8's own check
        step = checkpointed_step(depth=depth, segments=segments)
    return float(step.peak), float(step.recompute_macs)


def _l8_cases() -> list[tuple[int, int]]:
    """(depth, segments) drawn now: a depth the segments divide, one they do not (the last
    segment takes the layers left over), and a stack with no checkpoint at all."""
    d = laws.draw
    k = int(d.integers(2, 5))
    even = (k * int(d.integers(2, 5)), k)
    k = int(d.integers(2, 5))
    size = int(d.integers(2, 4))
    uneven = (k * size + int(d.integers(1, size)) if size > 1 else k * size + 1, k)
    return [even, uneven, (int(d.integers(3, 9)), 1)][::1 if d.random() < 0.5 else -1]


def _l8_layout(n: int, k: int) -> tuple[int, int]:
    """(layers of each checkpointed segment, layers of the last one): the split
    checkpoint_sequential makes."""
    size = n // k
    return size, n - size * (k - 1)


def _l8_peak_slips() -> tuple[laws.Slip, ...]:
    b, L = L8_ARRAY, L8_LAYER

    def peak(n, k, inputs, layers):
        return float(inputs * b + layers * L)

    return (
        laws.Slip(lambda n, k: float(3 * n * b - b) if k > 1 else None, "that is the plain "
                  "step's peak: the checkpointed segments keep only their inputs during the "
                  "forward pass.", "plain_peak"),
        laws.Slip(lambda n, k: peak(n, k, k - 1, _l8_layout(n, k)[1]), "you counted the input "
                  "batch, which is left out: it is alive anyway.", "batch_counted"),
        laws.Slip(lambda n, k: peak(n, k, k, _l8_layout(n, k)[1]), "you counted an input for "
                  "the last segment too: it is not checkpointed, and its first layer's saved "
                  "input is already among its layers' arrays.", "last_segment_input"),
        laws.Slip(lambda n, k: peak(n, k, k - 2, 0) if k > 1 else None, "you counted only "
                  "the checkpoints' inputs: at the peak one segment's layers are recorded "
                  "too.", "no_segment"),
        laws.Slip(lambda n, k: peak(n, k, k - 2, 1) if k > 1 else None, "one layer at a time "
                  "is not what is rebuilt: a whole segment is recorded again before its "
                  "sweep.", "one_layer"),
        laws.Slip(lambda n, k: peak(n, k, k - 2, _l8_layout(n, k)[0]), "your segments all "
                  "have n // k layers, but checkpoint_sequential gives the last one the layers "
                  "left over, and it is the one recorded at the end of the forward pass.",
                  "even_segments"),
    )


def _l8_recompute_slips() -> tuple[laws.Slip, ...]:
    macs = L8_LAYER_MACS
    return (
        laws.Slip(lambda n, k: float(n * macs), "you rebuilt every segment: the last one is "
                  "not checkpointed, so its activations were kept.", "all_segments"),
        laws.Slip(lambda n, k: float(_l8_layout(n, k)[0] * macs), "backward rebuilds one "
                  "segment at a time, but every checkpointed segment is rebuilt once.",
                  "one_segment"),
        laws.Slip(lambda n, k: float(_l8_layout(n, k)[0] * (k - 1) * L8_MATMUL_MACS), "you "
                  "counted the matmuls only: the bias, σ and the product are multiply-adds "
                  "too.", "matmul_only"),
        laws.Slip(lambda n, k: float((n - _l8_layout(n, k)[0]) * macs), "the segment that is "
                  "not rebuilt is the last one, with the layers left over: which segments are "
                  "checkpointed?", "wrong_segment_left"),
        laws.Slip(lambda n, k: 0.0, "nothing recomputed would mean nothing was dropped: where "
                  "do a checkpointed segment's activations come from during backward?",
                  "no_recompute"),
    )


def _l8_where(n: int, k: int) -> str:
    return f"for {n} layers in {k} segment{'s' if k > 1 else ''}"


def _l8_gradients_fact() -> Fact:
    plain, sqrt = _l8_steps()
    return Fact(sqrt.grad_difference(plain) == 0, "Recomputation repeats the same arithmetic "
                "on the same values.")


@laws.takes_laws("peak_checkpointed", "recompute_macs")
@answers("gradients_identical", "peak_checkpointed", "recompute_macs")
def _check_l8(gradients_identical=None, peak_checkpointed=None, recompute_macs=None) -> Result:
    """``L8(gradients_identical=..., peak_checkpointed=law, recompute_macs=law)``: whether a
    checkpointed step's gradients keep every bit, and two laws of the Swish stack (width 64,
    batch 32, float32) in ``segments`` segments by checkpoint_sequential:
    ``peak_checkpointed(depth, segments)``, the peak of bytes kept for backward (the batch
    and the parameters not counted), and ``recompute_macs(depth, segments)``, the forward
    multiply-adds run again during backward. The laws are tried on stacks drawn now."""
    if gradients_identical is None and peak_checkpointed is None and recompute_macs is None:
        return Result(False, "Nothing to check yet: pass your answer and your two laws, "
                             "L8(gradients_identical=..., peak_checkpointed=your_function, "
                             "recompute_macs=your_function).", diagnosis="none")
    parts = []
    if gradients_identical is not None:
        parts.append(check_fact("gradients_identical", gradients_identical,
                                _l8_gradients_fact()))
    cases = _l8_cases()
    if peak_checkpointed is not None:
        parts.append(laws.check_law(
            "peak_checkpointed", peak_checkpointed, cases, lambda n, k: _l8_measured(n, k)[0],
            _l8_peak_slips(), gives="a number of bytes", where=_l8_where,
            hint="what is alive at the end of the forward pass, and while backward rebuilds "
                 "one segment.", solved="Your law gives the engine's peak"))
    if recompute_macs is not None:
        parts.append(laws.check_law(
            "recompute_macs", recompute_macs, cases, lambda n, k: _l8_measured(n, k)[1],
            _l8_recompute_slips(), gives="a number of multiply-adds", where=_l8_where,
            hint="which segments are rebuilt during backward, and how many layers they hold.",
            solved="Your law gives the multiply-adds the engine runs again"))
    return Result.combine(parts)


register(Exercise("L8", "prediction", {"predict": _check_l8}, experiment=checkpointing))


# -- L9: instrument before guessing ------------------------------------------------------------


class Log(nn.Module):
    """log of every entry: NaN for a negative input."""

    def forward(self, x):
        return ag.log(x)


class Ratio(nn.Module):
    """log(x + 1.5) / x ** 0.5, entry by entry: four ops, two of which could make a NaN on
    some input; which one does on tanh's outputs is L9's second question."""

    def forward(self, x):
        return ag.log(x + 1.5) / x ** 0.5


L9_OPS = ("linear", "tanh", "add", "log", "pow", "div")  # the ops the exercise's model runs


def _l9_models() -> list[tuple[str, nn.Module, ag.Tensor]]:
    """The exercise's model, whose third module makes the first NaN (one of Ratio's ops, on
    tanh's outputs), and two more the learner's function is run on: one whose very first
    module takes a log of the raw batch, and one with nothing non-finite at all. Each with
    its batch, under a description that names the model, never its answer."""
    gen = ag.Generator(79)
    exercise = nn.Sequential(nn.Linear(4, 6, dtype=np.float64, generator=gen), nn.Tanh(),
                             Ratio(), nn.Linear(6, 2, dtype=np.float64, generator=gen))
    early = nn.Sequential(Log(), nn.Linear(4, 3, dtype=np.float64, generator=gen), nn.Tanh())
    clean = nn.Sequential(nn.Linear(4, 3, dtype=np.float64, generator=gen), nn.Tanh(),
                          nn.Linear(3, 2, dtype=np.float64, generator=gen))
    x = ag.tensor(rng(79).standard_normal((5, 4)))
    return [("the exercise's model", exercise, x),
            ("a model that takes the log of the raw batch first", early, x),
            ("a model with no log at all", clean, x)]


def _instrumentation():
    """The engine's instrumentation of the exercise's model on its batch."""
    _, model, x = _l9_models()[0]
    with np.errstate(invalid="ignore", divide="ignore"):
        return instrument(model, x)


@gate.answers("L9")
def instrumented() -> Report:
    """The instrumentation table of one batch: one row per module call."""
    table = _instrumentation()
    op = table.first_nonfinite_op
    rows = [(r.path or "(model)", r.module, r.shape, r.min, r.max, r.nonfinite)
            for r in table.rows]
    where = (f"op {op.op!r} in module {op.module!r} made {op.nonfinite} non-finite values "
             "from finite inputs" if op else "no op made a non-finite value")
    return Report("Forward hooks at every module boundary, one batch",
                  f"First non-finite output: module {table.first_nonfinite!r}; {where}.",
                  ("module", "type", "output shape", "min", "max", "non-finite"), rows,
                  data={"table": table})


_INSTRUMENT_FILE = inspect.getsourcefile(instrument)


@contextlib.contextmanager
def _hooks_registered():
    """The forward hooks registered on any module while the block runs, as a list of
    (module, hook) pairs."""
    registered: list = []
    original = nn.Module.register_forward_hook

    def spy(module, hook):
        registered.append((module, hook))
        return original(module, hook)

    nn.Module.register_forward_hook = spy
    try:
        yield registered
    finally:
        nn.Module.register_forward_hook = original


def _yours(hook) -> bool:
    """Whether a hook was written by the learner (not instrument()'s own)."""
    code = getattr(hook, "__code__", None)
    return code is None or code.co_filename != _INSTRUMENT_FILE


def _locate_part(locate) -> Result:
    """The learner's ``locate(model, x)``, run on the exercise's model and two others."""
    if locate is None or locate is Ellipsis:
        return Result(False, "locate is still a placeholder: write a function locate(model, x) "
                             "that returns the path of the first module whose output holds a "
                             "non-finite value (None if none does).", name="locate",
                      diagnosis="none")
    if not callable(locate):
        return Result(False, f"locate should be your function locate(model, x); it is "
                             f"{words.short(locate, 40)}.", name="locate", diagnosis="type")
    for description, model, x in _l9_models():
        with _hooks_registered() as hooks, np.errstate(invalid="ignore", divide="ignore"):
            try:  # instrument() is the engine's answer to the item: the hooks are yours
                found = learner.without(locate, model, x, forbidden=("instrument",),
                                        what="locate")
            except learner.LearnerCodeFailed as exc:
                return learner.failed(exc, name="locate")
        watched = {id(m) for m, h in hooks if _yours(h)}
        if not watched:
            return Result(False, "Your function found its answer without a forward hook of "
                                 "its own: register one on each module "
                                 "(module.register_forward_hook(fn)), look at the output it "
                                 "is called with, and remove it afterwards.", name="locate",
                          diagnosis="no_hooks")
        unwatched = [f"'{path}' ({type(m).__name__})" for path, m in model.named_modules()
                     if path and id(m) not in watched]
        if unwatched:
            more = f" and {len(unwatched) - 1} more" if len(unwatched) > 1 else ""
            return Result(False, f"On {description}, your function put no hook of its own on "
                                 f"module {unwatched[0]}{more}"
                                 ": each module's output is seen only by a hook on that "
                                 "module, so register one on every module "
                                 "model.named_modules() gives.", name="locate",
                          diagnosis="unwatched_modules")
        left = [path or "(model)" for path, m in model.named_modules() if m._forward_hooks]
        if left:
            return Result(False, f"Your hooks are still registered after your function "
                                 f"returned (on {len(left)} of the modules): hooks stay "
                                 "until removed, so keep each handle and call "
                                 "handle.remove().", name="locate", diagnosis="hooks_left")
        with np.errstate(invalid="ignore", divide="ignore"):
            want = instrument(model, x).first_nonfinite
        if isinstance(found, int | np.integer) and not isinstance(found, bool):
            found = str(int(found))  # 2 for module '2'
        if found is not want and found != want:
            return Result(False, f"On {description}, your function returned "
                                 f"{words.short(found, 30)}, which is not the first module "
                                 "whose output holds a non-finite value: look at each "
                                 "output in the order the modules ran.", name="locate",
                          diagnosis="wrong_module")
    return Result(True, "Your hooks find the first module with a non-finite output, on the "
                        "exercise's model and on two others, and leave no hook behind.",
                  name="locate")


def _l9_op_fact() -> Fact:
    """The op (one level below the module) that made the first non-finite value."""
    op = _instrumentation().first_nonfinite_op
    return Fact(op.op if op else None, "Tanh's outputs lie between -1 and 1, about half of "
                "them negative: log(x + 1.5) sees values between 0.5 and 2.5 and stays "
                "finite, the power 0.5 of a negative number is NaN, and the division only "
                "passes those on.", choices=L9_OPS)


@answers("locate", "first_nonfinite_op")
def _check_l9(locate=None, first_nonfinite_op=None) -> Result:
    """``L9(locate=your_function, first_nonfinite_op=...)``: a function that instruments a
    model with forward hooks and returns the path of its first module with a non-finite
    output, and the op (one level down) that made the exercise's model's first NaN."""
    if locate is None and first_nonfinite_op is None:
        return Result(False, "Nothing to check yet: pass your function and your prediction, "
                             "L9(locate=your_function, first_nonfinite_op=...).",
                      diagnosis="none")
    parts = []
    if locate is not None:
        parts.append(_locate_part(locate))
    if first_nonfinite_op is not None:
        parts.append(check_fact("first_nonfinite_op", first_nonfinite_op, _l9_op_fact()))
    return Result.combine(parts)


register(Exercise("L9", "prediction", {"locate": _check_l9}, experiment=instrumented))
