"""T3 and T7 (lessons 02 and 04): what the engine records, and what it keeps for backward.

T3: trying to close a cycle in the recorded graph; T7: backward without the forward values
an op saved.
"""

from __future__ import annotations

import autograd_core as ag
from autograd_core.tools.graph import Graph, capture, topological_order

from ... import gate
from ...feedback import words
from .. import learner
from ..true_false import Flaw, Watch, count, numbers, raised, same

# -- T3: trying to close a cycle in the engine -----------------------------------------------


def _ops_behind(graph: Graph) -> dict[str, set]:
    """For each tensor of ``graph``, the ops it depends on (its producer included): capture
    of a graph ending at that tensor would hold exactly these."""
    producer = {t.id: t.producer for t in graph.tensors}
    inputs = {o.id: o.inputs for o in graph.ops}
    behind: dict[str, set] = {}

    def ops_of(tensor: str) -> set:
        if tensor not in behind:
            op = producer.get(tensor)
            behind[tensor] = set() if op is None else {op}.union(
                *(ops_of(i) for i in inputs[op] if i != tensor))
        return behind[tensor]

    for op in graph.ops:  # in execution order, so the recursion stays shallow
        ops_of(op.output)
    return behind


def measure_t3(data: dict, watch: Watch) -> bool:
    """A recorded graph where an op's output went back into the same kind of op, a real order
    of it, and the op count of the recorded graph after each pass of the loop; then always
    False: an order means no cycle."""
    graph, order, sizes = data["graph"], data["order"], data["sizes"]
    if not isinstance(graph, Graph):
        raise Flaw(f"'graph' should be what capture(h) returns; it is {words.short(graph, 40)}.")
    if len(graph.ops) < 2:
        raise Flaw(f"Your graph records {len(graph.ops)} op(s): feed h back into the op that "
                   "computes it a few times in a loop, then capture h.")
    behind = _ops_behind(graph)
    kinds = {o.id: o.op for o in graph.ops}
    if not any(kinds[p] == o.op for o in graph.ops for i in o.inputs
               for p in behind.get(i, ())):
        raise Flaw("In your graph no op's output goes back, directly or through others, into "
                   "the same kind of op, which is where a cycle would have to close: feed h "
                   "back into the op that made it.")
    nodes = [o.id for o in graph.ops] + [t.id for t in graph.tensors]
    if not isinstance(order, list | tuple) or sorted(map(str, order)) != sorted(nodes):
        raise Flaw("'order' should list every node of your graph once, ops and tensors: "
                   "ask topological_order about the graph's node ids and edges.")
    place = {str(n): i for i, n in enumerate(order)}
    late = [(a, b) for a, b in graph.edges if place[a] > place[b]]
    if late:
        raise Flaw(f"'order' puts {late[0][1]} before {late[0][0]}, which feeds it: it is not "
                   "an order of your graph. Ask topological_order for one.")
    if not isinstance(sizes, list | tuple) or len(sizes) < 3:
        raise Flaw("'sizes' should be a list with one count per pass of your loop, at least "
                   "three passes: len(capture(h).ops) after each.")
    sizes = [count(s, f"sizes[{i}]") for i, s in enumerate(sizes)]
    if sizes[-1] != len(graph.ops):
        raise Flaw("The last of your 'sizes' is not the number of ops in 'graph': count "
                   "len(capture(h).ops) after each pass, the last one included.")
    possible = {len(ops) for ops in behind.values()}
    wrong = [i for i, s in enumerate(sizes) if s not in possible]
    steps = {b - a for a, b in zip(sizes, sizes[1:])}  # every pass runs the same ops
    if wrong or len(steps) != 1 or min(steps) <= 0:
        at = f" (sizes[{wrong[0]}])" if wrong else ""
        raise Flaw(f"Your 'sizes'{at} are not the op counts capture gives after each pass of "
                   "your loop: capture h inside the loop, after each time you feed it back.")
    return False  # every pass recorded new ops, and every edge points forward: no cycle


@gate.answers("T3")
def _reference_t3() -> dict:
    """h fed back into the op that computes it four times; the recorded graph after each pass,
    and an order of the last."""
    w = ag.tensor(0.9, requires_grad=True)
    h = ag.tensor(1.0, requires_grad=True)
    sizes = []
    for _ in range(4):
        h = ag.tanh(h * w)                      # feed h back into the ops that compute it
        sizes.append(len(capture(h).ops))       # how big the record is now
    graph = capture(h)
    order = topological_order([op.id for op in graph.ops], graph.edges)
    return {"graph": graph, "order": order, "sizes": sizes}


# -- T7: backward without the forward values ---------------------------------------------------


def _sweep_of(grad, watch: Watch, skip=None):
    """The (sweep, leaf) whose gradient sent to that leaf is ``grad`` (not in the sweep
    ``skip``), or None."""
    for sweep in watch.sweeps:
        if sweep is skip:
            continue
        for leaf in sweep.leaves():
            if same(grad, sweep.total(leaf)):
                return sweep, leaf
    return None


def measure_t7(data: dict, watch: Watch) -> bool:
    """Bytes an op of the experiment saved, two gradients from two backward passes that
    started from the same upstream gradient at different inputs, and the error a backward
    raised after release; supported: backward needs them (something saved, and the same g
    gives different gradients at different forward values)."""
    saved = count(data["saved_bytes"], "saved_bytes")
    grads = data["grads"]
    if not isinstance(grads, list | tuple) or len(grads) != 2:
        raise Flaw(f"'grads' should be two gradients, [first, second], one from each backward "
                   f"pass; it is {words.short(grads, 40)}.")
    first, second = (numbers(g, f"grads[{i}]") for i, g in enumerate(grads))
    error = raised(data["error"], "error")
    recorded = [b for _, b in watch.saved]
    if saved not in recorded and saved != sum(recorded):
        raise Flaw("'saved_bytes' is not what an op of your experiment saved for its backward: "
                   "read it from the sigmoid's output (saved_bytes(y)) before any backward.")
    found = _sweep_of(first, watch)
    if found is None:
        raise Flaw("grads[0] is not a gradient any of your backward passes sent to a leaf: "
                   "return the input's .grad after its own backward.")
    sweep_a, leaf_a = found
    found = _sweep_of(second, watch, skip=sweep_a)
    if found is None:
        if _sweep_of(second, watch) is not None:
            raise Flaw("Both of your gradients come from the same backward pass: run one "
                       "backward per input, each on a fresh leaf.")
        raise Flaw("grads[1] is not a gradient any of your backward passes sent to a leaf: "
                   "return the input's .grad after its own backward.")
    sweep_b, leaf_b = found
    if not same(sweep_a.seed, sweep_b.seed):
        raise Flaw("Your two backward passes started from different upstream gradients, so "
                   "they cannot tell what else backward reads: give both the same g.")
    if same(leaf_a.numpy(), leaf_b.numpy()):
        raise Flaw("Your two backward passes ran at the same input: change the forward values "
                   "(the input), keep the upstream gradient, and compare.")
    if not isinstance(error, RuntimeError) or "freed" not in str(error):
        raise Flaw(f"The error you caught is not about released saved tensors: it is "
                   f"{learner.describe(error)[:120]}. Run a backward again once the first one "
                   "has released what sigmoid saved.")
    return saved > 0 and not same(first, second)


@gate.answers("T7")
def _reference_t7() -> dict:
    """What sigmoid saves; the same upstream gradient at two inputs; and what a second
    backward does once the saved values are released."""
    from autograd_core.tools.graph import saved_bytes

    grads = []
    for values in ([-2.0, 0.0, 3.0], [1.0, 1.0, 1.0]):
        x = ag.tensor(values, requires_grad=True)
        y = ag.sigmoid(x)
        kept = saved_bytes(y)                    # what sigmoid's forward saved
        y.backward(ag.ones(3))                   # the same upstream gradient each time
        grads.append(x.grad)
    try:
        y.backward(ag.ones(3))                   # again, without what it saved
        error = None
    except RuntimeError as caught:
        error = caught
    return {"saved_bytes": kept, "grads": grads, "error": error}
