"""T2, T4 and T5 (lesson 09) end in a law the learner writes, tried on cases the check draws
when it runs: the shortcuts that solved the old, thin versions (counts copied from the
skeleton, central differences filled in, a depth-9 number measured beside the experiment), a
flipped verdict, and the engine's own values handed in no longer solve them; each slip the
items name is named. Expected values are worked out here by hand (the Jacobian's shape, the
rules one level of nesting runs, the calculus of the central difference's two errors).
"""

import math

import numpy as np
import pytest

# each test records into a file of its own (autouse), and what "seen" means: as the rules'
from test_teaching_rules import _own_progress, seen  # noqa: F401, E402

import autograd_core as ag
from autograd_core.func import grad, jacfwd, jacrev
from autograd_core.tools.counting import count_ops
from widgets import exercises as ex
from widgets.exercises.tracking import status
from widgets.exercises.true_false_experiments import modes as checks
from widgets.lessons import modes, symbolic


def verdict_false(item, experiment):
    return ex.registry()[item](verdict=False, because="x", experiment=experiment)


# -- T2: the passes of each mode, as a law of the shapes ---------------------------------------

G = ag.Generator(2)
W, V, C = ag.randn(16, 32, generator=G), ag.randn(32, generator=G), ag.randn(32, generator=G)


def by_hand_passes(input_shape, output_shape):
    """A Jacobian has one column per input number and one row per output number: forward
    mode fills a column per pass, reverse mode a row per sweep."""
    return math.prod(input_shape), math.prod(output_shape)


def by_hand_fewer(input_shape, output_shape):
    fwd, rev = by_hand_passes(input_shape, output_shape)
    return "jacfwd" if fwd < rev else "jacrev" if rev < fwd else "same"


def lesson_counts(shapes=True):
    """The lesson's counting loop filled in: a wide, a tall and a matrix-input function."""
    runs, sweeps = [], []

    def counted(f):
        def run(x):
            runs.append(1)
            out = f(x)
            out.register_hook(lambda g: sweeps.append(1))
            return out
        return run

    functions = [(counted(lambda x: ag.tanh(W @ x).sum()), ag.randn(32, generator=G)),
                 (counted(lambda t: ag.tanh(t * V + C)), ag.randn(1, generator=G))]
    if shapes:
        functions.append((counted(lambda m: ag.tanh(m @ V[:4])), ag.randn(3, 4, generator=G)))
    counts = []
    for f, at in functions:
        runs.clear()
        jacfwd(f)(at)
        fwd = len(runs)
        sweeps.clear()
        jacrev(f)(at)
        counts.append({"function": f, "at": at, "jacfwd_passes": fwd,
                       "jacrev_passes": len(sweeps)})
    return counts


def t2(passes=by_hand_passes, fewer=by_hand_fewer):
    def experiment():
        return {"counted": lesson_counts(), "passes": passes, "fewer": fewer}
    return experiment


def test_t2_a_law_worked_out_from_the_jacobians_shape_is_solved():
    result = verdict_false("T2", t2())
    assert result.ok, result.message
    assert status("T2") == "solved"


def test_t2_the_old_counts_alone_no_longer_solve_it():
    def old():  # the old cell filled in: two counts each for a wide and a tall function
        wide, tall = lesson_counts(shapes=False)
        return {"wide": wide, "tall": tall}
    result = verdict_false("T2", old)
    assert not result.ok and "'counted', 'passes' and 'fewer'" in result.message
    assert status("T2") != "solved"


def test_t2_a_flipped_verdict_is_not_solving():
    ex.T2(verdict=True, because="x", experiment=t2())
    result = ex.T2(verdict=False, because="x", experiment=t2())
    assert result.diagnosis == "elimination" and status("T2") != "solved"


def test_t2_a_law_that_runs_the_engine_on_the_drawn_shape_is_no_prediction():
    def measured(input_shape, output_shape):  # the engine's own Jacobian, read for counts
        def f(x):
            return x.sum() * ag.tensor(np.ones(output_shape))
        jacobian = jacrev(f)(ag.tensor(np.ones(input_shape)))
        return (math.prod(jacobian.shape[len(output_shape):]),
                math.prod(jacobian.shape[:len(output_shape)]))
    result = verdict_false("T2", t2(passes=measured))
    assert not result.ok and "runs the engine when the check calls it" in result.message
    assert status("T2") != "solved"


def test_t2_a_table_of_the_counted_shapes_is_no_law():
    known = {((32,), ()): (32, 1), ((1,), (32,)): (1, 32), ((3, 4), (3,)): (12, 3)}
    result = verdict_false("T2", t2(passes=lambda i, o: known[(tuple(i), tuple(o))]))
    assert not result.ok and "raised KeyError" in result.message


def test_t2_is_tried_on_shapes_drawn_anew_at_every_check():
    asked = []

    def passes(input_shape, output_shape):
        asked.append((tuple(input_shape), tuple(output_shape)))
        return by_hand_passes(input_shape, output_shape)

    for _ in range(4):
        assert verdict_false("T2", t2(passes=passes)).ok
    own = {((32,), ()), ((1,), (32,)), ((3, 4), (3,))}
    drawn = [shapes for shapes in asked if shapes not in own]
    assert len(set(drawn)) > 4  # not one fixed set of shapes a table could hold
    # among them, shapes where forward mode makes fewer passes (the claim's counterexample)
    assert any(math.prod(i) < math.prod(o) for i, o in drawn)
    assert any(len(i) == 2 for i, _ in drawn) and any(o == () for _, o in drawn)


@pytest.mark.parametrize("passes, fewer, words", [
    (lambda i, o: by_hand_passes(i, o)[::-1], by_hand_fewer, "wrong way round"),
    (lambda i, o: (i[0] if i else 1, o[0] if o else 1), by_hand_fewer,
     "length of the input shape"),
    (lambda i, o: (math.prod(i), math.prod(o) + 1), by_hand_fewer, "one more sweep"),
    (by_hand_passes, lambda i, o: "jacrev", "not the mode your own 'passes' gives fewer"),
    (lambda i, o: (math.prod(i), 1), by_hand_fewer, "gives jacrev one sweep"),
    (lambda i, o: (math.prod(i), math.prod(o) + 5), by_hand_fewer, "not the number of sweeps"),
])
def test_t2_a_slip_in_the_law_is_named(passes, fewer, words):
    result = verdict_false("T2", t2(passes=passes, fewer=fewer))
    assert not result.ok and words in result.message, result.message
    assert status("T2") != "solved"


# -- T4: the engine's rules and the formula's size, as laws of the depth -------------------------

# One level of x -> tanh(x*x + x) records a mul, an add and a tanh: 3 backward rules.
RULES_PER_LEVEL = 3


def measured_to(deepest=7):
    depths, ops, nodes = list(range(1, deepest + 1)), [], []
    for d in depths:
        x = ag.tensor(0.3, requires_grad=True)
        with count_ops() as counts:
            modes.nested(x, d).backward()
        ops.append(counts.backward.ops)
        nodes.append(symbolic.tree_size(symbolic.derivative(d)))
    return depths, ops, nodes


def t4(ops_at=None, nodes_at=None, deepest=7):
    def experiment():
        depths, ops, nodes = measured_to(deepest)
        left = [n / 2 ** d for n, d in zip(nodes, depths)]  # the doubling divided out
        step = left[-1] - left[-2]                           # what is left: a straight line
        return {"depths": depths, "backward_ops": ops, "formula_nodes": nodes,
                "ops_at": ops_at or (lambda d: RULES_PER_LEVEL * d),
                "nodes_at": nodes_at or (lambda d: (left[-1] + step * (d - depths[-1])) * 2 ** d)}
    return experiment


def test_t4_laws_found_by_reading_the_growth_are_solved():
    result = verdict_false("T4", t4())
    assert result.ok, result.message


def test_t4_the_old_depth_9_numbers_no_longer_solve_it():
    def old():  # measured to depth 6, then two numbers for depth 9
        depths, ops, nodes = measured_to(6)
        return {"depths": depths, "backward_ops": ops, "formula_nodes": nodes,
                "ops_at_9": RULES_PER_LEVEL * 9, "nodes_at_9": 35583}
    result = verdict_false("T4", old)
    assert not result.ok and "'ops_at' and 'nodes_at'" in result.message
    assert status("T4") != "solved"


def test_t4_depth_9_measured_directly_is_no_law():
    """The old leak: depth 9 measured beside the experiment, its numbers handed in as what
    the laws give. They give the same at every depth, and the check asks other depths."""
    x = ag.tensor(0.3, requires_grad=True)
    with count_ops() as counts:
        modes.nested(x, 9).backward()
    at_9 = counts.backward.ops, symbolic.tree_size(symbolic.derivative(9))
    result = verdict_false("T4", t4(ops_at=lambda d: at_9[0], nodes_at=lambda d: at_9[1]))
    assert not result.ok and "at depth 1, which you measured" in result.message
    assert status("T4") != "solved"


def test_t4_a_law_that_runs_the_engine_at_the_drawn_depth_is_no_prediction():
    def measured(depth):
        x = ag.tensor(0.3, requires_grad=True)
        with count_ops() as counts:
            modes.nested(x, depth).backward()
        return counts.backward.ops
    result = verdict_false("T4", t4(ops_at=measured))
    assert not result.ok and "runs the engine when the check calls it" in result.message


def test_t4_sympy_cannot_measure_the_drawn_depth():
    def written_out(depth):
        return symbolic.tree_size(symbolic.derivative(depth))
    result = verdict_false("T4", t4(nodes_at=written_out))
    assert not result.ok and "too deep to write out with sympy" in result.message


def test_t4_a_table_of_depths_sympy_can_reach_is_no_law():
    depths, ops, nodes = measured_to(10)
    table = dict(zip(depths, nodes))
    result = verdict_false("T4", t4(nodes_at=table.__getitem__))
    assert not result.ok and "raised KeyError" in result.message


def test_t4_is_tried_at_depths_drawn_anew_far_beyond_sympy():
    asked = []

    def nodes_at(depth):
        asked.append(depth)
        return (15 * depth + 4) * 2 ** (depth - 1)
    for _ in range(5):
        assert verdict_false("T4", t4(nodes_at=nodes_at)).ok
    deep = {d for d in asked if d > symbolic.MAX_DEPTH}
    assert len(deep) >= 2 and min(deep) >= 40


@pytest.mark.parametrize("laws, words", [
    (dict(nodes_at=lambda d: 6975 * 2.0 ** (d - 7)), "doubles with every level"),
    (dict(nodes_at=lambda d: 6975 * (6975 / 3007) ** (d - 7)), "same factor at every level"),
    (dict(ops_at=lambda d: RULES_PER_LEVEL * d + 1), "not what the engine runs"),
    (dict(ops_at=lambda d: 3 * 2 ** d), "the way the formula grows"),
])
def test_t4_a_slip_in_a_law_is_named(laws, words):
    result = verdict_false("T4", t4(**laws))
    assert not result.ok and words in result.message, result.message


def test_t4_a_flipped_verdict_is_not_solving():
    ex.T4(verdict=True, because="x", experiment=t4())
    ex.T4(verdict=False, because="x", experiment=t4())
    assert status("T4") != "solved"


def test_t4_the_checks_sizes_are_sympys_and_the_engines():
    """The check knows the formula's size without sympy (a closed form) and counts the
    engine's rules itself; both against what sympy and one level's three rules give."""
    depths, ops, nodes = measured_to(10)
    assert [checks._formula_nodes(d) for d in depths] == nodes
    assert ops == [RULES_PER_LEVEL * d for d in depths]
    assert checks._engine_ops(321) == RULES_PER_LEVEL * 321
    assert checks.T4_DEEPEST == symbolic.MAX_DEPTH


# -- T5: the best step and the least error of a central difference -----------------------------


def f(t):
    return ag.tanh(t) * ag.exp(t)


X0 = 0.7


def by_calculus_step(f0, f3, eps):
    """error(h) = h²·f3/6 + eps·f0/h; its slope h·f3/3 − eps·f0/h² is zero at this h."""
    return (3 * eps * f0 / f3) ** (1 / 3)


def by_calculus_error(f0, f3, eps):
    h = by_calculus_step(f0, f3, eps)
    return h * h * f3 / 6 + eps * f0 / h


def t5(best_step=by_calculus_step, least_error=by_calculus_error):
    def experiment():
        x = ag.tensor(X0, requires_grad=True)
        f(x).backward()
        hs = [10.0 ** -k for k in range(1, 13)]
        with ag.no_grad():
            slopes = [(f(ag.tensor(X0 + h)).item() - f(ag.tensor(X0 - h)).item()) / (2 * h)
                      for h in hs]
        return {"function": f, "at": X0, "grad": x.grad, "h": hs, "slopes": slopes,
                "best_step": best_step, "least_error": least_error}
    return experiment


def test_t5_the_balance_worked_out_is_solved():
    result = verdict_false("T5", t5())
    assert result.ok, result.message


def half_rounding_step(f0, f3, eps):
    """Rounding taken as ε·|f|/(2h) (each value off by ε/2 at most): h·f3/3 = eps·f0/(2h²)."""
    return (1.5 * eps * f0 / f3) ** (1 / 3)


def half_rounding_error(f0, f3, eps):
    h = half_rounding_step(f0, f3, eps)
    return h * h * f3 / 6 + eps * f0 / (2 * h)


def equal_errors_step(f0, f3, eps):
    """The two errors set equal instead of the slope zero: h²·f3/6 = eps·f0/h."""
    return (6 * eps * f0 / f3) ** (1 / 3)


def equal_errors_error(f0, f3, eps):
    return 2 * eps * f0 / equal_errors_step(f0, f3, eps)


@pytest.mark.parametrize("best_step, least_error", [
    (half_rounding_step, half_rounding_error), (equal_errors_step, equal_errors_error)])
def test_t5_other_honest_constants_are_right_on_every_draw(best_step, least_error):
    for _ in range(10):
        result = verdict_false("T5", t5(best_step, least_error))
        assert result.ok, result.message


def test_t5_the_old_central_differences_alone_no_longer_solve_it():
    def old():
        data = t5()()
        return {k: data[k] for k in ("function", "at", "grad", "h", "slopes")}
    result = verdict_false("T5", old)
    assert not result.ok and "'best_step' and 'least_error'" in result.message
    assert status("T5") != "solved"


def test_t5_the_numbers_measured_on_the_lessons_function_are_no_law():
    """The engine's gradient and the lesson's own sweep of h give a best step and a least
    error for this f; handed in as what the laws give, they do not follow another f or ε."""
    x = ag.tensor(X0, requires_grad=True)
    f(x).backward()
    hs = 10.0 ** -np.arange(1, 13, 0.25)
    with ag.no_grad():
        errors = [abs((f(ag.tensor(X0 + h)).item() - f(ag.tensor(X0 - h)).item()) / (2 * h)
                      - x.grad.item()) for h in hs]
    k = int(np.argmin(errors))
    result = verdict_false("T5", t5(lambda *a: hs[k], lambda *a: errors[k]))
    assert not result.ok and "does not change with ε" in result.message
    assert status("T5") != "solved"


def test_t5_a_law_that_runs_the_engine_is_no_prediction():
    def measured(f0, f3, eps):  # sweeps h on a function of the engine's with these numbers
        c = (f3 / f0) ** (1 / 3)
        g = grad(lambda t: f0 * ag.exp(c * t))(ag.tensor(0.0)).item()
        hs = 10.0 ** -np.arange(1, 14, 0.25)
        errors = [abs(f0 * (np.exp(c * h) - np.exp(-c * h)) / (2 * h) - g) for h in hs]
        return float(hs[int(np.argmin(errors))])
    result = verdict_false("T5", t5(best_step=measured))
    assert not result.ok and "runs the engine when the check calls it" in result.message


def test_t5_a_flipped_verdict_is_not_solving():
    ex.T5(verdict=True, because="x", experiment=t5())
    ex.T5(verdict=False, because="x", experiment=t5())
    assert status("T5") != "solved"


@pytest.mark.parametrize("laws, words", [
    (dict(best_step=lambda f0, f3, eps: (eps * f0 / f3) ** 0.5), "square root of ε"),
    (dict(least_error=lambda f0, f3, eps: eps * f0), "shrinks like ε itself"),
    (dict(best_step=lambda f0, f3, eps: (3 * eps) ** (1 / 3)), "does not change with |f'''"),
    (dict(least_error=lambda f0, f3, eps: by_calculus_error(f0, f3, eps) / 100),
     "too small by more than a factor 6"),
    (dict(least_error=lambda f0, f3, eps: (eps * f0 * f3) ** 0.5), "to the power 0.50"),
])
def test_t5_a_slip_in_the_balance_is_named(laws, words):
    result = verdict_false("T5", t5(**laws))
    assert not result.ok and words in result.message, result.message


def test_t5_no_step_gets_near_the_engines_agreement():
    """The verdict's evidence, measured here without the check: over 400 steps from 1e-1 to
    1e-13, the central difference never gets within 1e-12 of the exact derivative of
    tanh(x)·e^x at 0.7, which the engine's gradient meets to rounding; and the calculus'
    least error says the same."""
    exact = (1 - np.tanh(X0) ** 2 + np.tanh(X0)) * np.exp(X0)
    x = ag.tensor(X0, requires_grad=True)
    f(x).backward()
    assert abs(x.grad.item() - exact) <= 4 * np.finfo(float).eps * exact
    hs = 10.0 ** -np.linspace(1, 13, 400)
    slopes = (np.tanh(X0 + hs) * np.exp(X0 + hs) - np.tanh(X0 - hs) * np.exp(X0 - hs)) / (2 * hs)
    assert np.abs(slopes - exact).min() > 1e-12
    f3 = abs(grad(grad(grad(f)))(ag.tensor(X0)).item())
    assert by_calculus_error(abs(f(ag.tensor(X0)).item()), f3, np.finfo(float).eps) > 1e-11
