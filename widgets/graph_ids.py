"""The ids of a graph's parts that every view shares: nodes, notes, edges, modules.

``autograd_core.tools.graph.capture`` names op and tensor nodes (``op3``, ``t5``). The
views add a few parts of their own: a note node for an array an op made and saved
(relu's mask), an edge per op input, a box per module. Their ids are built here,
from the capture's ids only, so the picture (``widgets.render``), the replayed
sweep and the highlights agree on them without the data code importing the
picture code.

>>> saved_node_id("op2", "mask"), edge_id("op2", 0), module_node_id("encoder.fc1")
('op2_mask', 'e_op2_0', 'm_encoder_fc1')
"""

from __future__ import annotations

import re

from autograd_core.tools.graph import Graph, SavedInfo

__all__ = ["saved_node_id", "holder_id", "saved_targets", "module_node_id", "edge_id",
           "saved_edge_id", "output_edge_id"]


def saved_node_id(op_id: str, name: str) -> str:
    """The id of the note node for an array ``op_id`` made itself and saved as ``name``."""
    return f"{op_id}_{name}"


def holder_id(saved: SavedInfo) -> str:
    """The node that shows a saved tensor: the tensor's own node when the op saved one
    of its inputs or its output, else the op's saved-note node."""
    return saved.tensor if saved.tensor is not None else saved_node_id(saved.op, saved.name)


def saved_targets(graph: Graph) -> dict[tuple[str, str], str]:
    """(op id, saved name) -> the node that holds it (``holder_id``), for every save."""
    return {(s.op, s.name): holder_id(s) for s in graph.saved}


def module_node_id(path: str) -> str:
    """The id of a module's cluster (or of its box, when collapsed)."""
    return "m_" + re.sub(r"\W", "_", path)


def edge_id(op_id: str, index: int) -> str:
    """The id of the edge that carries input ``index`` into ``op_id``."""
    return f"e_{op_id}_{index}"


def box_edge_id(source: str, target: str) -> str:
    """The id of the one edge drawn between two nodes when at least one of them is a
    collapsed module's box (every edge the box hides between them becomes this one)."""
    return f"e_{source}_{target}"


def saved_edge_id(op_id: str, name: str) -> str:
    """The id of the dashed edge from ``op_id`` to the note of an array it saved."""
    return f"e_{op_id}_{name}"


def output_edge_id(op_id: str) -> str:
    """The id of the edge from ``op_id`` to its output tensor."""
    return f"e_{op_id}_out"
