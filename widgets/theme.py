"""Colours and shapes shared by the static picture (DOT), its legend and the
stepper's highlight styles, so that all three always agree."""

from __future__ import annotations

FONT = "Helvetica"

# Tensor kinds (TensorInfo.kind) -> fill colour, border colour, border style.
KIND_STYLE: dict[str, tuple[str, str, str]] = {
    "leaf": ("#cfe2ff", "#084298", "solid"),
    "frozen parameter": ("#e2e3e5", "#6c757d", "dashed"),
    "constant": ("#ffffff", "#adb5bd", "dotted"),
    "intermediate": ("#ffffff", "#495057", "solid"),
    "output": ("#d1e7dd", "#0f5132", "solid"),
}
KIND_TEXT = {
    "leaf": "leaf (requires grad)",
    "frozen parameter": "frozen parameter (no grad)",
    "constant": "constant",
    "intermediate": "intermediate",
    "output": "output",
}
OP_FILL, OP_BORDER = "#f8f9fa", "#343a40"
SAVED = "#fd7e14"  # border of a tensor kept for backward, and text of its mark
SAVED_FILL = "#ffe5d0"  # a tensor an op made for itself and saved (e.g. relu's mask)
MODULE_BORDER = "#6f42c1"

# The stepper's highlights (CSS, applied over the picture above).
CURRENT = "#d63384"  # the op being visited
UPSTREAM = "#fd7e14"  # the tensor whose gradient (the upstream g) the op receives
READ = "#ffc107"  # saved tensors the op's backward reads
SENT = "#198754"  # edges and tensors that receive a gradient at this step
DONE_FILL = "#e9ecef"  # ops already visited
HAS_GRAD_FILL = "#9ec5fe"  # leaves whose .grad holds something
ON_FILL = "#212529"  # text on any of the light fills above, in the light and dark themes
