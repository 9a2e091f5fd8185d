"""Colours and shapes shared by the static picture (DOT), its legends and the
stepper's highlight styles, so that all of them always agree.

Every colour that carries meaning comes from the Okabe–Ito palette (Okabe & Ito,
"Color Universal Design", 2008), chosen to stay apart for viewers with protanopia
or deuteranopia, or is a light tint of one of its colours (fills), or a grey. No
state is told by colour alone: ``widgets.highlight`` gives each one a line style,
a stroke weight or a label style too. The picture sits on a light card in every
JupyterLab theme, so text here is dark and fills are light: every text colour
has a contrast ratio of at least 4.5:1 (WCAG AA) on every fill it can sit on
(checked by ``tests/widgets/test_palette.py``).
"""

from __future__ import annotations

FONT = "Helvetica"

# The Okabe–Ito palette.
ORANGE, SKY_BLUE, BLUISH_GREEN, YELLOW = "#e69f00", "#56b4e9", "#009e73", "#f0e442"
BLUE, VERMILLION, REDDISH_PURPLE, BLACK = "#0072b2", "#d55e00", "#cc79a7", "#000000"
WHITE = "#ffffff"


def tint(colour: str, amount: float) -> str:
    """``colour`` mixed with white: ``amount`` 1 is the colour, 0 is white.

    >>> tint("#0072b2", 0.5)
    '#80b8d8'
    """
    channels = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return "#" + "".join(f"{round(255 - (255 - c) * amount):02x}" for c in channels)


# Text. ON_FILL is every label's colour (and the text on the stepper panels' state
# backgrounds); MUTED is for ids and edge labels; both are dark enough for the
# darkest fill below.
ON_FILL = "#212529"
MUTED = "#444a50"

# Tensor kinds (TensorInfo.kind) -> fill colour, border colour, border style.
KIND_STYLE: dict[str, tuple[str, str, str]] = {
    "leaf": (tint(BLUE, 0.1), BLUE, "solid"),
    "frozen parameter": ("#e6e6e6", "#737373", "dashed"),
    "constant": (WHITE, "#999999", "dotted"),
    "intermediate": (WHITE, "#4d4d4d", "solid"),
    "output": (tint(BLUISH_GREEN, 0.2), BLUISH_GREEN, "solid"),
}
KIND_TEXT = {
    "leaf": "leaf (requires grad)",
    "frozen parameter": "frozen parameter (no grad)",
    "constant": "constant",
    "intermediate": "intermediate",
    "output": "output",
}
OP_FILL, OP_BORDER = WHITE, "#343a40"
EDGE = "#495057"
SAVED = ORANGE  # border of a tensor kept for backward (and of an op's own saved note)
SAVED_TEXT = "#663b00"  # its "saved by op3 (16 B)" line: a dark orange that reads on any fill
SAVED_FILL = tint(ORANGE, 0.3)  # a tensor an op made for itself and saved (relu's mask)
MODULE_BORDER = "#6a2d54"  # a dark reddish purple: module clusters' border and label
MODULE_FILL = tint(REDDISH_PURPLE, 0.2)  # a collapsed module's box

# The stepper's states (CSS over the picture above; see widgets.highlight for the
# line and label style that goes with each colour).
CURRENT = BLACK  # outline of the op being visited ...
CURRENT_FILL = tint(VERMILLION, 0.4)  # ... and its fill
UPSTREAM = BLUE  # the tensor whose gradient (the upstream g) the op receives
READ = YELLOW  # fill of the saved tensors the op's backward reads
SENT = BLUISH_GREEN  # edges and tensors that receive a gradient at this step
RELEASED = "#555555"  # outline of a saved tensor backward has let go of
DONE_FILL = "#c4c4c4"  # ops already visited
HAS_GRAD_FILL = tint(SKY_BLUE, 0.7)  # tensors whose gradient has arrived
