"""Lesson 15's items (A1–A3): the engine's expected values against formulas written here
(attention's backward in NumPy, the bytes a block keeps counted by hand from the shapes
its ops save), the worked solutions solve, every mistake builder is named by its check,
a function with the lesson's sizes built in fails on a later case, a function that
measures with the engine is told to predict, and the recomputation plan's limits admit
the selective plan only."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from solutions import words

import autograd_core as ag
from widgets import exercises as ex
from widgets.exercises import reset_progress
from widgets.exercises.attention.backward import _attention_mistakes, _engine_gradients
from widgets.exercises.attention.recompute_plan import MAX_EXTRA_WORK, MAX_PEAK
from widgets.exercises.attention.saved_bytes import _byte_mistakes
from widgets.exercises.attention.saved_bytes import _measured_bytes as measured_bytes
from widgets.exercises.tracking import status
from widgets.lessons.transformer import PARTS, korthikanti_bytes, recompute_step


@pytest.fixture(autouse=True)
def _own_progress(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))
    reset_progress()


def solution(item: str, name: str):
    scope = {"np": np, "ag": ag}
    exec(words(item)["solution"].strip().split("\n\n")[0], scope)
    return scope[name]


def reference_attention_backward(q, k, v, d_out):
    """Attention's backward through the full softmax Jacobian, row by row (a different
    route from the vectorised solution)."""
    t, d = q.shape
    scale = 1 / np.sqrt(d)
    scores = q @ k.T * scale
    dq, dk, dv = np.zeros_like(q), np.zeros_like(k), np.zeros_like(v)
    for i in range(t):
        s = scores[i, : i + 1]
        w = np.exp(s - s.max())
        w /= w.sum()
        dv[: i + 1] += np.outer(w, d_out[i])
        dw = v[: i + 1] @ d_out[i]
        jacobian = np.diag(w) - np.outer(w, w)
        ds = jacobian @ dw
        dq[i] = scale * ds @ k[: i + 1]
        dk[: i + 1] += scale * np.outer(ds, q[i])
    return dq, dk, dv


def test_the_engines_attention_gradients_match_a_row_by_row_jacobian():
    g = np.random.default_rng(3)
    for t, d in ((1, 2), (5, 4), (9, 3)):
        arrays = [g.standard_normal((t, d)) for _ in range(4)]
        for got, want in zip(_engine_gradients(*arrays), reference_attention_backward(*arrays)):
            np.testing.assert_allclose(got, want, atol=1e-12)


def test_a1_solution_solves_and_each_slip_is_named():
    assert ex.A1(solution("A1", "attention_backward")).ok
    g = np.random.default_rng(150)
    q, k, v, d_out = (g.standard_normal((5, 4)) for _ in range(4))
    mistakes = _attention_mistakes(q, k, v, d_out)
    for code in ("elementwise", "unscaled", "transposed", "unmasked"):
        def slipped(q_, k_, v_, d_, code=code):
            return tuple(next(m.candidate for m in _attention_mistakes(q_, k_, v_, d_)[name]
                              if m.code == code) for name in ("dq", "dk", "dv"))
        result = ex.A1.check(slipped)
        assert not result.ok
        diagnoses = {p.diagnosis for p in result.parts}
        assert code in diagnoses, (code, diagnoses)
    assert {m.code for m in mistakes["dv"]} >= {"transposed", "unmasked"}


def test_a1_reads_malformed_answers_with_a_sentence():
    assert "three arrays" in ex.A1.check(lambda q, k, v, d: q).message
    assert ex.A1.check(lambda q, k, v, d: None).diagnosis == "none"
    result = ex.A1.check(lambda q, k, v, d: ag.tensor(q).sum())
    assert result.diagnosis == "uses_engine"
    raised = ex.A1.check(lambda q, k, v, d: 1 / 0)
    assert not raised.ok and "ZeroDivisionError" in raised.message


def hand_count(b, s, h, a):
    """What one block keeps, from the shapes its ops save, each buffer once (float32)."""
    values = {
        "ln1 x̂, ln2 x̂": 2 * b * s * h, "ln1 1/std, ln2 1/std": 2 * b * s,
        "projections' shared input": b * s * h, "q, k": 2 * b * s * h,
        "softmax weights (read by the second matmul too)": a * s * s * b, "v": b * s * h,
        "out-projection input": b * s * h, "fc input": b * s * h,
        "gelu input": 4 * b * s * h, "proj input": 4 * b * s * h,
    }
    return 4 * sum(values.values())


@pytest.mark.parametrize("sizes", [(2, 16, 32, 4), (1, 7, 8, 2), (3, 24, 48, 6), (2, 48, 32, 8)])
def test_the_measured_bytes_match_the_hand_count(sizes):
    assert measured_bytes(*sizes) == hand_count(*sizes)


def test_the_published_formula_is_what_the_lesson_says():
    # Korthikanti et al. (2023), eq. 2: sbh(34 + 5as/h) bytes, 16-bit values.
    s, b, h, a = 2048, 1, 12288, 96
    assert korthikanti_bytes(s, b, h, a) == s * b * h * (34 + 5 * a * s // h)


def test_a2_solution_solves_and_each_slip_is_named():
    assert ex.A2(solution("A2", "block_bytes")).ok
    for mistake in _byte_mistakes(2, 16, 32, 4):
        def wrong(b, s, h, a, code=mistake.code):
            return int(next(m.candidate for m in _byte_mistakes(b, s, h, a) if m.code == code))
        result = ex.A2.check(wrong)
        assert not result.ok and result.diagnosis == mistake.code, (mistake.code, result)


def test_a2_draws_its_later_sizes_at_every_check():
    """A table of the engine's measurements at sizes fixed in advance (the lesson's and
    the three the check used to name) fails: the later sizes are drawn at each check, and
    the right formula holds on every draw."""
    fixed = [(2, 16, 32, 4), (2, 48, 32, 4), (2, 16, 32, 8), (3, 24, 48, 2)]
    table = {sizes: measured_bytes(*sizes) for sizes in fixed}

    def from_table(b, s, h, a):
        return table.get((b, s, h, a), 0)

    results = [ex.A2.check(from_table) for _ in range(3)]
    assert not any(r.ok for r in results)
    assert all(ex.A2(solution("A2", "block_bytes")).ok for _ in range(5))


def test_a2_catches_the_lessons_sizes_built_in_and_measuring():
    built_in = measured_bytes(2, 16, 32, 4)
    result = ex.A2.check(lambda b, s, h, a: built_in)
    assert not result.ok and "built into it" in result.message

    def measures(b, s, h, a):
        x = ag.randn(b, s, h, dtype=ag.float32)
        return float(x.sum().item()) * 0 + 1
    assert ex.A2.check(measures).diagnosis == "uses_engine"
    for odd in (lambda *a: "64bsh", lambda *a: True, lambda *a: [1, 2]):
        message = ex.A2.check(odd).message
        assert message and "Traceback" not in message


def all_plans():
    singles = [frozenset(c) for r in range(len(PARTS) + 1)
               for c in itertools.combinations(PARTS, r)]
    return list(itertools.product(singles, repeat=2))


def test_a3_limits_admit_the_selective_plan_only():
    fitting = []
    for plan in all_plans():
        run = recompute_step(plan)
        if (run.peak <= MAX_PEAK * run.plain.peak
                and run.extra_forward_work <= MAX_EXTRA_WORK and run.same_gradients()):
            fitting.append(plan)
    assert fitting == [(frozenset({"attention_core"}), frozenset({"attention_core"}))]


def test_a3_solution_solves_and_its_feedback_names_the_part():
    assert ex.A3([["attention_core"], ["Attention_Core"]]).ok
    over = ex.A3.check([["attention_core"], []])
    memory = next(p for p in over.parts if p.name == "memory")
    assert not over.ok and memory.diagnosis == "over_budget" and "84%" in memory.message
    heavy = ex.A3.check([["block"], ["block"]])
    assert "block" in next(p.message for p in heavy.parts if p.name == "recompute")
    for bad, words_ in ((None, "placeholder"), ("attention_core", "one list"),
                        ([["attention_core"]], "2 blocks"), ([["core"], []], "not a part"),
                        ([[], []], "recomputes nothing"), (["mlp", []], "in a list")):
        message = ex.A3.check(bad).message
        assert words_ in message, (bad, message)


def test_every_plan_recomputes_with_identical_gradients():
    # Checkpointing repeats the same ops on the same values: the same bits, whatever
    # is recomputed (a checkpoint's copy of a gradient keeps its memory layout).
    for plan in all_plans()[::7]:
        assert recompute_step(plan).same_gradients(), plan


def test_a1_finite_differences_are_not_a_closed_form():
    """Issue #39: dq, dk, dv by central differences of a NumPy forward (each entry nudged)
    agree with the engine to about 1e-10: right numbers, but not the derivation A1 asks for."""
    def forward(q, k, v):
        t, d = q.shape
        s = np.where(np.tril(np.ones((t, t), dtype=bool)), q @ k.T / np.sqrt(d), -np.inf)
        w = np.exp(s - s.max(axis=1, keepdims=True))
        return (w / w.sum(axis=1, keepdims=True)) @ v

    def by_differences(q, k, v, d_out, h=1e-6):
        grads = []
        for i in range(3):
            args = [q, k, v]
            grad = np.zeros_like(args[i])
            for idx in np.ndindex(grad.shape):
                up, down = [a.copy() for a in args], [a.copy() for a in args]
                up[i][idx] += h
                down[i][idx] -= h
                grad[idx] = np.sum((forward(*up) - forward(*down)) * d_out) / (2 * h)
            grads.append(grad)
        return tuple(grads)

    result = ex.A1.check(by_differences)
    assert not result.ok and result.diagnosis == "not_closed_form", repr(result)


# -- what a measurement answers is read from what the engine ran -----------------------------


def _tries() -> int:
    from widgets.exercises import store

    return store.read_item("A3")["misses"].get("tries:", 0)


def _step(model):
    from widgets.lessons import transformer as T
    from widgets.lessons.checkpointing import measure_step

    tokens, targets = T._memory_batch()
    return measure_step(model, tokens, loss=T._next_token_loss(targets))


def test_checkpoint_core_set_by_hand_is_a_try_not_a_lesson_plan():
    """The audit's route: the lesson's plan of nothing, then each block's attention core
    checkpointed by hand, measured. The engine re-ran the cores: a try, and it measures the
    answer, so seven of them end past the budget."""
    from widgets.lessons import transformer as T

    for _ in range(7):
        model = T.TinyGPT(32, 4, 2, context=64, generator=ag.Generator(7)).plan([[], []])
        for block in model.blocks:
            block.attn.checkpoint_core = True
        _step(model)
    assert _tries() == 7
    assert ex.A3([["attention_core"], ["attention_core"]]).ok
    assert status("A3") == "solved after seeing the solution"


def test_a_renamed_copy_of_the_block_is_still_the_gpt():
    from autograd_core import nn
    from widgets.lessons import transformer as T

    class Block(nn.TransformerBlock):
        recompute = frozenset()
        forward = T.GPTBlock.forward
        branches = T.GPTBlock.branches

    plans = list(itertools.product([frozenset(), frozenset({"attention_core"}),
                                    frozenset({"mlp"}), frozenset({"block"})], repeat=2))
    for plan in plans:
        model = T.TinyGPT(32, 4, 2, context=64, generator=ag.Generator(7))
        model.blocks = nn.Sequential(*[Block(32, 4, generator=ag.Generator(7)) for _ in plan])
        for block, parts in zip(model.blocks, plan):
            block.recompute = parts
            block.attn.checkpoint_core = "attention_core" in parts
        _step(model)
    # all but the lesson's two plans, whose measurements lesson 15 shows
    assert _tries() == len(plans) - 2
    assert ex.A3([["attention_core"], ["attention_core"]]).ok
    assert status("A3") == "solved after seeing the solution"


def test_the_lessons_own_plans_count_nothing_and_other_layouts_are_not_a3():
    from widgets.lessons import transformer as T

    T.recompute_step([[], []])
    T.recompute_step([["block"], ["block"]])
    _step(T._memory_gpt([["block"], ["block"]]))
    assert _tries() == 0
    # a GPT of another width is another problem (a lesson may measure one freely)
    _step(T.TinyGPT(16, 4, 2, context=64, generator=ag.Generator(7)).plan(
        [["attention_core"], []]))
    assert _tries() == 0
    _step(T._memory_gpt([["mlp"], []]))
    assert _tries() == 1
