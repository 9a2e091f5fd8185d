"""G4 (lesson 02) asks for the sweep's rule as a function, ``backward_order(ops, loss)``, run on
the lesson's graph and on graphs drawn per learner, listed in no particular order: the old
answer (four op names, the reverse of the forward order) and "reverse the list" no longer
solve it, the engine's own order-makers inside the function are refused, any order that keeps
the rule is right, and each mistake is named by the learner's own op names. Right orders are
worked out here, from the (name, inputs) pairs alone."""

import pytest
from learners import LEARNERS

# each test records into a file of its own (autouse), and what "seen" means: as the rules'
from test_teaching_rules import _own_progress, seen  # noqa: F401, E402

import autograd_core as ag
from autograd_core.tools.graph import backward_steps, topological_order
from widgets import exercises as ex
from widgets.exercises.tracking import status

LESSON = [("tanh", ("mul",)), ("sum", ("add",)), ("mul", ("x", "w")), ("add", ("mul", "tanh"))]



def reached(ops, loss) -> set:
    """The ops a walk back from the loss, along what each op read, meets."""
    reads = dict(ops)
    found, stack = set(), [loss]
    while stack:
        name = stack.pop()
        if name in reads and name not in found:
            found.add(name)
            stack += reads[name]
    return found


def kahn(ops, loss, *, pick=lambda ready: ready.pop()):
    """By hand: count each reached op's reached readers (once per reader), place the loss,
    and after each op placed take one off each op it read; ``pick`` chooses among the ready."""
    reads = {name: set(inputs) for name, inputs in ops}
    live = reached(ops, loss)
    waiting = {name: sum(name in reads[r] for r in live) for name in live}
    order, ready = [], [loss]
    while ready:
        name = pick(ready)
        order.append(name)
        for value in reads[name] & live:
            waiting[value] -= 1
            if waiting[value] == 0:
                ready.append(value)
    return order


def keeps_the_rule(order, ops, loss) -> bool:
    reads, at = dict(ops), {n: i for i, n in enumerate(order)}
    return (set(order) == reached(ops, loss) and len(order) == len(set(order))
            and all(at[r] < at[n] for r in order for n in reads[r] if n in at))


def cases():
    """What the check runs the learner's function on: ((ops, loss), the engine's order)."""
    return [(args, engine) for args, engine, _ in
            (make() for _, make in ex.G4._checks["order"].derivation.cases)]


# -- right answers -----------------------------------------------------------------------


@pytest.mark.parametrize("learner", LEARNERS, indirect=True)
def test_a_kahn_style_function_written_by_hand_solves_it(learner):
    result = ex.G4(kahn)
    assert result.ok, repr(result)
    assert status("G4") == "solved" and not seen("G4")


@pytest.mark.parametrize("learner", LEARNERS, indirect=True)
def test_the_drawn_graphs_have_what_the_question_promises(learner):
    """Fan-out, a value one op reads twice, an op the loss does not use, listed neither as
    they ran nor backwards; the engine visits exactly the ops the walk back reaches."""
    assert cases()[0][0] == (LESSON, "sum")  # the graph lesson 02 shows, as it shows it
    drawn = cases()[1:]
    assert len(drawn) >= 3
    for (ops, loss), engine in drawn:
        live = reached(ops, loss)
        assert set(engine) == live and keeps_the_rule(engine, ops, loss)
        assert live < {n for n, _ in ops}, "no op the loss does not use"
        reads = dict(ops)
        assert any(len(set(i)) < len(i) for n, i in ops if n in live), "no value read twice"
        assert any(sum(v in reads[r] for r in live) >= 2 for v in live), "no fan-out"
        listed = [n for n, _ in ops if n in live]
        assert not keeps_the_rule(listed, ops, loss)
        assert not keeps_the_rule(listed[::-1], ops, loss)


def test_a_right_order_other_than_the_engines_solves_it():
    """The engine visits newest first; a first-come order differs on a drawn graph and is
    right as well."""
    def first_come(ops, loss):
        return kahn(ops, loss, pick=lambda ready: ready.pop(0))

    assert any(first_come(*args) != engine for args, engine in cases())
    result = ex.G4(first_come)
    assert result.ok, repr(result)


# -- the old answer and the shortcuts ------------------------------------------------------


def test_the_old_list_answer_no_longer_solves_it():
    old = ex.G4(order=["sum", "add", "tanh", "mul"])
    assert not old.ok and old.diagnosis == "unknown_name", repr(old)
    built_in = ex.G4(lambda ops, loss: ["sum", "add", "tanh", "mul"])
    assert not built_in.ok and "but not on" in built_in.message, repr(built_in)
    assert status("G4") != "solved"


@pytest.mark.parametrize("drop_unused", [False, True])
def test_reversing_the_list_it_is_given_does_not_solve_it(drop_unused):
    def reverse(ops, loss):
        live = reached(ops, loss) if drop_unused else {n for n, _ in ops}
        return [n for n, _ in reversed(ops) if n in live]

    result = ex.G4(reverse)
    assert not result.ok and result.diagnosis == "before_consumer", repr(result)
    assert "'add' before 'sum'" in result.message  # LESSON reversed: add, mul, sum, tanh


def _engine_topological(ops, loss):
    edges = [(i, n) for n, inputs in ops for i in inputs]
    order = topological_order([n for n, _ in ops], edges)
    names = reached(ops, loss)
    return [n for n in reversed(order) if n in names]


def _engine_sweep(ops, loss):
    reads, values, made = dict(ops), {}, {}

    def value(name):
        if name not in values:
            if name in reads:
                values[name] = sum((value(i) for i in reads[name]), ag.tensor(0.0))
                made[values[name].grad_fn] = name
            else:
                values[name] = ag.tensor(1.0, requires_grad=True)
        return values[name]

    return [made[s.node] for s in backward_steps(value(loss)) if s.node in made]


@pytest.mark.parametrize("fn", [_engine_topological, _engine_sweep],
                         ids=["topological_order", "backward_steps"])
def test_a_function_that_asks_the_engine_for_the_order_is_refused(fn):
    result = ex.G4(fn)
    assert not result.ok and result.diagnosis == "uses_engine", repr(result)
    assert "Traceback" not in repr(result)
    assert status("G4") != "solved"


def test_the_engines_order_handed_back_is_refused():
    engine = dict((tuple(map(tuple, args[0])), order) for args, order in cases())

    def handed_back(ops, loss):
        ag.tensor(1.0) * 2.0  # what looking it up in the engine runs
        return engine[tuple(map(tuple, ops))]

    result = ex.G4(handed_back)
    assert not result.ok and result.diagnosis == "uses_engine", repr(result)


# -- each mistake, named by the learner's own op names ----------------------------------------


def _on_lesson(order):
    return lambda ops, loss: order if loss == "sum" else kahn(ops, loss)


@pytest.mark.parametrize("order, code, words", [
    (["sum", "add", "mul", "tanh"], "before_consumer", "'mul' before 'tanh'"),
    (["sum", "mul", "add", "tanh"], "before_consumer", "'mul' before 'add'"),
    (["sum", "add", "tanh"], "missing", "leaves out 'mul'"),
    (["sum", "add", "tanh", "tanh", "mul"], "twice", "'tanh' 2 times"),
    (["mul", "tanh", "add", "sum"], "forward", "forward"),
    (["sum", "add", "tanh", "mul", "x"], "unknown_name_in_order", "leaf"),
    (["sum", "add", "tanh", "mul", "relu"], "unknown_name_in_order", "not the name of any op"),
    ([1, 2, 3, 4], "type", "not an op's name"),
    ("sum add tanh mul", "type", "not a list"),
    ({"sum", "add", "tanh", "mul"}, "type", "not a list"),
])
def test_each_mistake_on_the_lessons_graph_is_named(order, code, words):
    result = ex.G4(_on_lesson(order))
    assert not result.ok and result.diagnosis == code, repr(result)
    assert words in result.message, result.message
    assert "['sum', 'add', 'tanh', 'mul']" not in result.message  # never the answer


def test_an_op_the_loss_does_not_use_is_named(cases_as_listed):
    """Every op ordered by its readers, unused ones too: right on the lesson's graph (it has
    none), and on a drawn graph the op named is one the walk back from the loss misses."""
    def everything(ops, loss):
        tops = [n for n, _ in ops if not any(n in i for _, i in ops)]
        order = []
        for top in tops:
            order += [n for n in kahn(ops, top) if n not in order]
        return order

    result = ex.G4(everything)
    assert not result.ok and result.diagnosis == "not_reached", repr(result)
    assert "Right on the lesson's graph" in result.message
    (ops, loss), _ = cases()[1]
    named = result.message.split("your order visits '")[1].split("'")[0]
    assert named in {n for n, _ in ops} - reached(ops, loss)


def test_waiting_for_a_reader_the_sweep_never_visits_is_named():
    """Counting an unused op among the readers: the op it read never becomes ready."""
    def counts_unused_readers(ops, loss):
        reads = {name: set(inputs) for name, inputs in ops}
        waiting = {n: sum(n in reads[r] for r in reads) for n in reads}
        order, ready = [], [loss]
        while ready:
            name = ready.pop()
            order.append(name)
            for value in reads[name] & set(reads):
                waiting[value] -= 1
                if waiting[value] == 0:
                    ready.append(value)
        return order

    result = ex.G4(counts_unused_readers)
    assert not result.ok and result.diagnosis == "missing", repr(result)
    assert "but not on" in result.message


def test_code_that_raises_or_returns_none_gets_a_sentence():
    assert ex.G4(lambda ops, loss: None).diagnosis == "none"
    raised = ex.G4(lambda ops, loss: ops[99])
    assert not raised.ok and "IndexError" in raised.message and "Traceback" not in repr(raised)
    assert ex.G4(None).diagnosis == "none"
    assert status("G4") != "solved"
