"""L2 (lesson 02), L9 and S2 (lesson 11), S6 (lesson 03), W1 (lesson 02) and W2 (lesson 09)
make the learner produce the answer: the shortcuts that solved the old, thin versions (the
tokens they accepted, a stored output that named the answer, the engine's own value or
helper handed back, a flipped verdict) no longer solve them, and a right answer produced
the intended way does. Expected values are worked out here by hand (NumPy), never read
from the checks."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from test_feedback_malformed import _locate_returning
from test_true_false_experiments import w2_right

import autograd_core as ag
from autograd_core.tools.graph import CycleError, topological_order
from autograd_core.tools.instrument import instrument
from widgets import exercises as ex
from widgets.exercises import store
from widgets.exercises.exercise import forget_results
from widgets.exercises.tracking import status
from widgets.exercises.true_false import Law, Rule, check_rule

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


@pytest.fixture(autouse=True)
def _own_progress_file(tmp_path, monkeypatch):
    """Progress goes to this test's own file, never to a learner's home directory."""
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))
    forget_results()


def said(result) -> str:
    return "\n".join([result.message, *(p.message for p in result.parts)])


def diagnoses(result) -> dict:
    return {p.name: p.diagnosis for p in (result.parts or (result,))}


def stored_outputs(lesson: str) -> str:
    nb = json.loads(next(NOTEBOOKS.glob(f"{lesson}_*.ipynb")).read_text())
    return json.dumps([c.get("outputs", []) for c in nb["cells"]], ensure_ascii=False)


def seen(item: str) -> bool:
    return store.read_item(item)["solution_seen"] is not None


# -- L2: no stored output names the layout; the check still wants the slices --------------------


def test_l2_no_stored_output_of_lesson_02_names_where_the_columns_sit():
    outputs = stored_outputs("02")
    assert not re.search(r"values sit in the (first|last)", outputs)
    assert not re.search(r"(first|last) \d+ columns?", outputs)


def test_l2_a_slice_from_the_wrong_end_is_named_without_the_right_end():
    result = ex.L2(lambda p: {"da": p.G[:, -3:], "db": p.G[:, :2]})
    assert diagnoses(result) == {"da": "wrong_slice", "db": "wrong_slice"}
    assert not re.search(r"\b(first|last)\b", said(result)), said(result)
    assert status("L2") == "in progress"


def test_l2_the_engines_backward_on_the_own_problem_is_seeing_the_answer():
    p = ex.L2.problem()
    a, b = ag.tensor(p.a, requires_grad=True), ag.tensor(p.b, requires_grad=True)
    ag.cat([a, b], dim=1).backward(p.G)
    assert seen("L2")
    # its arrays, handed back by a function, are right on the learner's problem only
    da, db = a.grad.numpy(), b.grad.numpy()
    result = ex.L2(lambda q: {"da": da, "db": db})
    assert not result.ok and set(diagnoses(result).values()) == {"not_from_problem"}
    assert status("L2") != "solved"


def test_l2_slices_worked_out_by_hand_and_the_merges_solve_it():
    def my_l2_merges(q):
        s = 1 / (1 + np.exp(-q.u))
        winner = q.branches == q.branches.max(axis=0)
        t = np.tanh(q.x * q.w)
        return {"du": q.G_gate * q.h * s * (1 - s),
                "d_branches": np.where(winner, q.G_pool, 0.0),
                "dw": q.G_reuse * (t + q.w * (1 - t ** 2) * q.x)}

    assert ex.L2(lambda p: {"da": p.G[:, :3], "db": p.G[:, 3:]}).ok
    assert status("L2") == "in progress"
    assert ex.L2.run("merges", my_l2_merges).ok
    assert status("L2") == "solved"


# -- L9: hooks of your own on every module; the op reasoned from tanh's range --------------------


# a right locate(model, x): hooks of its own on every module, the first non-finite output's path
locate_by_hooks = _locate_returning(str)


def locate_by_instrument(model, x):
    """The engine's instrument does it all; one dummy hook of the learner's to look busy."""
    handle = model.register_forward_hook(lambda m, i, o: None)
    try:
        return instrument(model, x).first_nonfinite
    finally:
        handle.remove()


def locate_one_hook_then_by_hand(model, x):
    """One hook of the learner's, on the model only; each module run by hand."""
    handle = model.register_forward_hook(lambda m, i, o: None)
    out, first = x, None
    for path, module in model.named_children():
        out = module(out)
        if first is None and not np.all(np.isfinite(out.numpy())):
            first = path
    model(x)
    handle.remove()
    return first


def test_l9_a_locate_that_calls_instrument_is_refused():
    result = ex.L9(locate=locate_by_instrument)
    assert not result.ok and diagnoses(result) == {"locate": "library"}
    assert "instrument" in said(result)


def test_l9_a_locate_that_hooks_only_the_model_is_refused():
    result = ex.L9(locate=locate_one_hook_then_by_hand)
    assert not result.ok and diagnoses(result) == {"locate": "unwatched_modules"}


@pytest.mark.parametrize("old", ["log", "sqrt"])
def test_l9_the_old_answer_and_the_obvious_guess_are_wrong(old):
    """The old item's answer was 'log' (a module called Log); now the log is there but stays
    finite, and the op that makes the NaN is one the learner finds from tanh's range."""
    result = ex.L9(first_nonfinite_op=old)
    assert not result.ok and "pow" not in said(result)


def test_l9_two_wrong_guesses_show_the_op_and_count_as_seen():
    ex.L9(first_nonfinite_op="log")
    shown = ex.L9(first_nonfinite_op="div")
    assert "pow" in said(shown) and seen("L9")
    assert ex.L9(locate=locate_by_hooks, first_nonfinite_op="pow").ok
    assert status("L9") == "solved after seeing the solution"


def test_l9_the_op_worked_out_from_the_range_of_tanh():
    """tanh ∈ (−1, 1): log(x + 1.5) sees (0.5, 2.5), finite; x ** 0.5 of a negative is NaN."""
    x = np.tanh(np.linspace(-3, 3, 13))
    with np.errstate(invalid="ignore"):
        assert np.isfinite(np.log(x + 1.5)).all() and np.isnan(x ** 0.5).any()
    assert ex.L9(locate=locate_by_hooks, first_nonfinite_op="pow").ok
    assert status("L9") == "solved"


# -- S2: the reset between steps, and each micro-batch's share of the batch mean -----------------


def _loop(w, steps, micro, *, reset="step", scale="share", whole=False, one_sweep=False):
    """A learner's step_gradients, right or with one of the slips."""
    grads = []
    for x, t in steps:
        if reset == "step":
            w.grad = None
        if whole:
            ((x @ w - t) ** 2).mean().backward()
            grads.append(w.grad.numpy().copy())
            continue
        total, count = None, -(-len(x) // micro)
        for start in range(0, len(x), micro):
            if reset == "micro":
                w.grad = None
            xs, ts = x[start:start + micro], t[start:start + micro]
            loss = ((xs @ w - ts) ** 2).mean()
            loss = loss * {"share": len(xs) / len(x), "none": 1.0, "equal": 1 / count}[scale]
            if one_sweep:
                total = loss if total is None else total + loss
            else:
                loss.backward()
        if one_sweep:
            total.backward()
        grads.append(w.grad.numpy().copy())
    return grads


def gradient_per_batch(w, batches):
    """The old S2's fix: a reset before each batch's backward."""
    grads = []
    for x, t in batches:
        w.grad = None
        ((x @ w - t) ** 2).mean().backward()
        grads.append(w.grad.numpy().copy())
    return grads


@pytest.mark.parametrize("slip, kwargs, code", [
    ("the old one-line fix: a reset only", dict(scale="none"), "sum_of_means"),
    ("no reset, right shares", dict(reset=None), "not_reset"),
    ("a reset per micro-batch", dict(reset="micro"), "last_only"),
    ("every micro-batch weighed alike", dict(scale="equal"), "mean_of_means"),
])
def test_s2_each_slip_is_named(slip, kwargs, code):
    result = ex.S2(lambda w, steps, micro: _loop(w, steps, micro, **kwargs))
    assert not result.ok, slip
    found = set(diagnoses(result).values())
    assert code in found, (slip, found)
    assert status("S2") == "in progress"


def test_s2_the_old_fix_no_longer_fits():
    result = ex.S2(gradient_per_batch)
    assert not result.ok and result.diagnosis == "raised"
    assert "Traceback" not in repr(result)


@pytest.mark.parametrize("kwargs, code", [
    (dict(whole=True), "whole_batch"),            # the engine on the whole batch at once
    (dict(one_sweep=True), "sweeps_per_micro_batch"),  # every micro-batch's graph kept
])
def test_s2_the_whole_batch_or_one_sweep_per_step_is_refused(kwargs, code):
    result = ex.S2(lambda w, steps, micro: _loop(w, steps, micro, **kwargs))
    assert not result.ok and result.diagnosis == code


def test_s2_the_right_values_without_the_micro_batches_are_refused():
    """The gradient of the mean over each whole batch, worked out in NumPy: right values,
    but no micro-batch went through the engine."""
    def by_numpy(w, steps, micro):
        w0 = w.numpy()
        return [2 * x.numpy().T @ (x.numpy() @ w0 - t.numpy()) / len(t.numpy())
                for x, t in steps]

    result = ex.S2(by_numpy)
    assert not result.ok and result.diagnosis == "sweeps_per_micro_batch"


def test_s2_reset_once_per_step_and_shares_solve_it():
    assert ex.S2(lambda w, steps, micro: _loop(w, steps, micro)).ok
    assert status("S2") == "solved"


# -- S6: predict each sweep's reach, then no rule twice ------------------------------------------


def s6_one_sweep(w1, wa, wb, x):
    h = ag.tanh(x @ w1)
    (((h @ wa) ** 2).sum() + ag.tanh(h @ wb).sum()).backward()
    return w1.grad.numpy(), wa.grad.numpy(), wb.grad.numpy()


def s6_recomputed(w1, wa, wb, x):
    """Each head with a shared layer of its own, one backward each: no retain_graph, and
    the shared layer's work done twice."""
    ((ag.tanh(x @ w1) @ wa) ** 2).sum().backward()
    ag.tanh(ag.tanh(x @ w1) @ wb).sum().backward()
    return w1.grad.numpy(), wa.grad.numpy(), wb.grad.numpy()


def s6_one_head(w1, wa, wb, x):
    """The old one-line fix, one backward, from the head the old snippet had."""
    h = ag.tanh(x @ w1)
    ((h @ wa) ** 2).sum().backward()
    return w1.grad.numpy(), wa.grad.numpy(), np.zeros((3, 2))


def s6_without_retain(w1, wa, wb, x):
    h = ag.tanh(x @ w1)
    ((h @ wa) ** 2).sum().backward()
    ag.tanh(h @ wb).sum().backward()           # the shared layer's saved tensors are gone
    return w1.grad.numpy(), wa.grad.numpy(), wb.grad.numpy()


@pytest.mark.parametrize("fn, part, code", [
    (s6_recomputed, "passes", "extra_passes"),
    (s6_one_head, "dwb", None),
])
def test_s6_two_sweeps_or_one_head_is_not_the_fix(fn, part, code):
    result = ex.S6(fn)
    assert not result.ok
    if code:
        assert diagnoses(result)[part] == code
    else:
        assert diagnoses(result)[part] != "correct"


def test_s6_dropping_retain_graph_gets_a_sentence():
    result = ex.S6(s6_without_retain)
    assert not result.ok and result.diagnosis == "raised"
    assert "Traceback" not in repr(result)


def test_s6_the_engines_gradients_handed_back_without_a_sweep_are_refused():
    from widgets.exercises.spot_error import _s6_leaves, _s6_losses

    leaves = _s6_leaves()
    sum(_s6_losses(*leaves.values())).backward()
    right = tuple(leaves[k].grad.numpy() for k in ("w1", "wa", "wb"))
    result = ex.S6(lambda *args: right)
    assert not result.ok and diagnoses(result)["passes"] == "no_sweep"


@pytest.mark.parametrize("guess", [
    dict(pass_1_reaches={"w1", "wa", "wb"}, pass_2_reaches={"w1", "wa", "wb"}),  # "all"
    dict(pass_1_reaches={"wa"}, pass_2_reaches={"wb"}),                          # heads only
    dict(pass_1_reaches={"w1", "wa", "x"}, pass_2_reaches={"w1", "wb", "x"}),    # x too
    dict(rules_run_twice=0), dict(rules_run_twice=5),
])
def test_s6_wrong_predictions_are_wrong(guess):
    result = ex.S6.run("predict", **guess)
    assert not result.ok
    assert "{w1, wa}" not in said(result) and "counts 2" not in said(result)


def test_s6_predicted_from_the_graph_and_fixed_solves_it():
    """From La the sweep goes sum, pow, matmul (h @ wa), then tanh and matmul (x @ w1): it
    reaches wa and w1. From Lb: sum, tanh, matmul (h @ wb), then the same two. x requires
    no gradient. The ops on both ways back: the shared tanh and matmul."""
    assert ex.S6.run("predict", pass_1_reaches={"w1", "wa"}, pass_2_reaches="wb, w1",
                     rules_run_twice=2).ok
    assert ex.S6(s6_one_sweep).ok
    assert status("S6") == "solved"


# -- W1: the graph must let 'unplaced' decide something; the reason is never graded --------------


def w1_experiment(edges, closing, unplaced):
    def experiment():
        try:
            result = topological_order(sorted({n for e in edges for n in e}),
                                       [*edges, closing])
        except CycleError as error:
            result = error
        return {"edges": list(edges), "closing_edge": closing, "result": result,
                "unplaced": set(unplaced)}
    return experiment


CHAIN = [("x", "mul"), ("mul", "y"), ("y", "add"), ("add", "z"), ("z", "out")]


@pytest.mark.parametrize("closing, unplaced, words", [
    (("out", "x"), {"x", "mul", "y", "add", "z", "out"}, "cannot tell"),   # all one cycle
    (("out", "mul"), {"mul", "y", "add", "z", "out"}, "lies on the cycle itself"),
])
def test_w1_a_graph_the_cycle_swallows_decides_nothing(closing, unplaced, words):
    """Closing the chain end to start makes every node unplaced and on the cycle: 'all of
    them' is then right without working anything out."""
    result = ex.W1(verdict=False, because="no order", experiment=w1_experiment(
        CHAIN, closing, unplaced))
    assert not result.ok and result.diagnosis == "experiment"
    assert words in result.message


@pytest.mark.parametrize("unplaced", [{"mul", "y", "add", "z"},                 # the cycle
                                      {"x", "mul", "y", "add", "z", "out"}])     # everything
def test_w1_unplaced_must_be_worked_out(unplaced):
    reason = "a cycle has no topological order, so nodes downstream wait forever"  # keywords
    result = ex.W1(verdict=False, because=reason,
                   experiment=w1_experiment(CHAIN, ("z", "mul"), unplaced))
    assert not result.ok and result.diagnosis == "experiment"


def test_w1_worked_out_by_hand_solves_it_whatever_the_reason_says():
    """z -> mul closes mul, y, add, z; out waits for z; x waits for nothing."""
    result = ex.W1(verdict=False, because="cats can code",
                   experiment=w1_experiment(CHAIN, ("z", "mul"),
                                            {"mul", "y", "add", "z", "out"}))
    assert result.ok and "\u201ccats can code\u201d" in result.message
    assert status("W1") == "solved"


# -- W2: the reason is a law, checked at sizes drawn at each check -----------------------------


w2_experiment = w2_right  # a 12-weight network, the passes of each mode counted


def passes(n, m):
    """A jvp gives one column of the m × n Jacobian, a backward one row."""
    return {"forward": n, "reverse": m}


@pytest.mark.parametrize("because, code", [
    ("one backward pass instead of one pass per parameter", "reason_format"),  # the old text
    ("cats can code", "reason_format"),
    (lambda n, m: {"forward": 48, "reverse": 1}, "reason"),  # the lesson's counts, as a table
    (lambda n, m: {"forward": n, "reverse": 1}, "reason"),   # true for a loss only
    (lambda n, m: {"forward": m, "reverse": n}, "reason"),   # swapped
    (lambda n, m: {"forward": n, "reverse": m + 1}, "reason"),  # the forward pass counted
])
def test_w2_the_old_reason_and_wrong_laws_do_not_solve_it(because, code):
    result = ex.W2(verdict=True, because=because, experiment=w2_experiment)
    assert not result.ok and result.diagnosis == code
    assert not re.search(r"\b(true|false)\b", said(result), re.IGNORECASE)
    assert "return {\"forward\": n" not in said(result)


@pytest.mark.parametrize("verdict", [True, False])
def test_w2_a_missing_or_wrong_law_says_the_same_whatever_the_verdict(verdict):
    """The law is checked before the verdict, so what it says tells nothing of the verdict."""
    missing = ex.W2(verdict=verdict, because="...", experiment=w2_experiment)
    wrong = ex.W2(verdict=verdict, because=lambda n, m: {"forward": 1, "reverse": 1},
                  experiment=w2_experiment)
    assert missing.diagnosis == "none" and wrong.diagnosis == "reason"
    other = ex.W2(verdict=not verdict, because="...", experiment=w2_experiment)
    assert other.message == missing.message


def test_w2_a_table_of_one_checks_sizes_fails_at_the_next():
    """The sizes are drawn afresh at every check: a rule that only knows the sizes of one
    check is wrong at another's."""
    from widgets.exercises.why_items import W2_RULE

    first = W2_RULE.draw(np.random.default_rng(1))
    table = {args: passes(*args) for args in first}
    assert check_rule(W2_RULE, lambda n, m: table[(n, m)], np.random.default_rng(1)) is None
    later = check_rule(W2_RULE, lambda n, m: table.get((n, m), {"forward": 0, "reverse": 0}),
                       np.random.default_rng(2))
    assert later is not None and later.diagnosis == "reason"


def test_w2_a_flipped_verdict_with_the_right_law_counts_as_seen():
    assert ex.W2(verdict=False, because=passes, experiment=w2_experiment).diagnosis \
        == "wrong_verdict"
    result = ex.W2(verdict=True, because=passes, experiment=w2_experiment)
    assert result.ok and result.diagnosis == "elimination"
    assert status("W2") == "solved after seeing the solution"


def test_w2_the_law_worked_out_from_rows_and_columns_solves_it():
    result = ex.W2(verdict=True, because=passes, experiment=w2_experiment)
    assert result.ok and "passes(n, m) holds" in result.message
    assert status("W2") == "solved"


# -- the Rule machinery, on a law of its own ------------------------------------------------------


SQUARES = Rule("area(a, b)", "the area and the perimeter of an a × b rectangle",
               right={"area": Law(lambda a, b: a * b), "perimeter": Law(lambda a, b: 2 * (a + b))},
               counts={"area": "the area", "perimeter": "the perimeter"},
               draw=lambda g: [(int(g.integers(2, 9)), int(g.integers(10, 20)))
                               for _ in range(3)],
               wrong={"perimeter": (Law(lambda a, b: a + b, "Half the perimeter: each side "
                                                             "comes twice.", "half"),)})


@pytest.mark.parametrize("law, verdict", [
    (lambda a, b: {"area": a * b, "perimeter": 2 * a + 2 * b}, None),
    (lambda a, b: {"area": a * b, "perimeter": a + b}, "Half the perimeter"),
    (lambda a, b: {"area": 12, "perimeter": 2 * (a + b)}, "stays 12"),
    (lambda a, b: {"area": a * b + 1, "perimeter": 2 * (a + b)}, "is not the area at a = "),
    (lambda a, b: {"area": float(a * b), "perimeter": 2 * (a + b)}, "whole numbers"),
    (lambda a: {}, "raised TypeError"),
    ("a line of text", "not a line of text"),
])
def test_a_rule_is_held_against_its_law_and_named(law, verdict):
    result = check_rule(SQUARES, law, np.random.default_rng(0))
    if verdict is None:
        assert result is None
    else:
        assert result is not None and verdict in result.message, result.message


def test_w1_a_search_over_the_unplaced_nodes_counts_as_seeing_the_solution():
    """Issue #39's fourth audit: a fixed experiment and a loop over the subsets of its nodes
    for 'unplaced' solved W1 at the 30th check. Past W1's 12 wrong checks, a right one is
    "solved after seeing the solution"."""
    from itertools import combinations

    from autograd_core.tools.graph import CycleError, topological_order

    edges = [("x", "mul"), ("mul", "y"), ("y", "add"), ("add", "z"), ("z", "out")]
    nodes = sorted({n for e in edges for n in e})
    for size in range(len(nodes) + 1):
        for unplaced in combinations(nodes, size):
            def experiment(unplaced=frozenset(unplaced)):
                try:
                    result = topological_order(nodes, edges + [("z", "mul")])
                except CycleError as error:
                    result = error
                return {"edges": edges, "closing_edge": ("z", "mul"), "result": result,
                        "unplaced": set(unplaced)}
            if ex.W1(verdict=False, because="...", experiment=experiment).ok:
                assert status("W1") == "solved after seeing the solution"
                return
    raise AssertionError("no subset of the nodes was accepted")
