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
from ..true_false import Flaw, Watch, count, raised

# -- T3: trying to close a cycle in the engine -----------------------------------------------


def measure_t3(data: dict, watch: Watch) -> bool:
    """A recorded graph where an op's output went back into the same kind of op, and a real order
    of it; then always False: an order means no cycle."""
    graph, order = data["graph"], data["order"]
    if not isinstance(graph, Graph):
        raise Flaw(f"'graph' should be what capture(h) returns; it is {words.short(graph, 40)}.")
    if len(graph.ops) < 2:
        raise Flaw(f"Your graph records {len(graph.ops)} op(s): feed h back into the op that "
                   "computes it a few times (h = h * w in a loop), then capture h.")
    producer = {t.id: t.producer for t in graph.tensors}
    kinds = {o.id: o.op for o in graph.ops}
    if not any(kinds.get(producer.get(i)) == o.op for o in graph.ops for i in o.inputs):
        raise Flaw("In your graph no op's output goes back into the same kind of op, which is "
                   "where a cycle would have to close: feed h back, h = h * w, a few times.")
    nodes = [o.id for o in graph.ops] + [t.id for t in graph.tensors]
    if not isinstance(order, list | tuple) or sorted(map(str, order)) != sorted(nodes):
        raise Flaw("'order' should list every node of your graph once, ops and tensors: "
                   "topological_order(node ids, graph.edges).")
    place = {str(n): i for i, n in enumerate(order)}
    late = [(a, b) for a, b in graph.edges if place[a] > place[b]]
    if late:
        raise Flaw(f"'order' puts {late[0][1]} before {late[0][0]}, which feeds it: it is not "
                   "an order of your graph. Ask topological_order for one.")
    return False  # an order where every edge points forward: no cycle


@gate.answers("T3")
def reference_t3() -> dict:
    """h fed back into the op that computes it three times; the recorded graph and an order."""
    w = ag.tensor(0.9, requires_grad=True)
    h = ag.tensor(1.0, requires_grad=True)
    for _ in range(3):
        h = h * w                               # feed h back into the op that computes it
    graph = capture(h)
    order = topological_order([op.id for op in graph.ops], graph.edges)
    return {"graph": graph, "order": order}



# -- T7: backward without the forward values ---------------------------------------------------


def measure_t7(data: dict, watch: Watch) -> bool:
    """Bytes an op of the experiment saved, and the error a backward raised after release;
    supported: backward needs them."""
    saved = count(data["saved_bytes"], "saved_bytes")
    error = raised(data["error"], "error")
    recorded = [b for _, b in watch.saved]
    if saved not in recorded and saved != sum(recorded):
        raise Flaw("'saved_bytes' is not what an op of your experiment saved for its backward: "
                   "read it from the sigmoid's node (saved_bytes(y)) before any backward.")
    if not isinstance(error, RuntimeError) or "freed" not in str(error):
        raise Flaw(f"The error you caught is not about released saved tensors: it is "
                   f"{learner.describe(error)[:120]}. Run backward a second time, after the "
                   "first one released what sigmoid saved.")
    return saved > 0


@gate.answers("T7")
def reference_t7() -> dict:
    """What sigmoid saves, and what a second backward does once it is released."""
    from autograd_core.tools.graph import saved_bytes

    x = ag.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    y = ag.sigmoid(x)
    kept = saved_bytes(y)                        # what sigmoid's forward saved
    y.sum().backward()                           # reads it, then releases it
    try:
        y.sum().backward()                       # again, without it
        error = None
    except RuntimeError as caught:
        error = caught
    return {"saved_bytes": kept, "error": error}

