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

JupyterLab's dark theme draws the same picture in :data:`DARK_THEME`'s colours: a
dark card, light text, dark fills and bright outlines, each of the same hue as its
light counterpart, held to the same contrast and colour-difference checks. The
picture's SVG keeps its light colours; :func:`dark_theme_css` swaps them in the
browser when the theme is dark, and the step highlights name their colours through
:func:`paint`, so one picture serves both themes (and an exported one is light).

A picture a notebook shows as an image (``draw()``'s SVG, a matplotlib figure) cannot
be restyled from outside: in the dark theme the lessons' extension shows it through
:data:`PICTURE_DARK_FILTER`, which turns its white card dark and its dark text light
and keeps each hue. :func:`through_picture_filter` computes what the filter makes of a
colour, so the contrast checks hold there too. (These pictures have no step states,
whose colours a filter would bring too close together.)
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
GAP_BORDER = "#6c757d"  # the note that stands for ops left out of the picture ...
GAP_EDGE = "#adb5bd"  # ... and the dashed edges into and out of it

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

# The dark theme: each colour above -> the one drawn in its place. Found by a search
# over lightness and saturation at each colour's own hue, for the checks of
# tests/widgets/test_palette.py (every text on every fill at least 4.5:1, state colours
# at least 20 apart for every vision) with some margin.
DARK_THEME: dict[str, str] = {
    WHITE: "#1e1e1e",  # the card; ops, constants and intermediates
    "white": "#1e1e1e",  # Graphviz's own background
    BLACK: "#ffffff",  # the current op's outline
    ON_FILL: "#e9ecef",
    MUTED: "#d0d5da",
    SAVED_TEXT: "#ffc670",
    MODULE_BORDER: "#f2c4e1",
    EDGE: "#8b9297",
    OP_BORDER: "#ced4da",
    BLUE: "#56b4e9",
    ORANGE: "#e69f00",
    BLUISH_GREEN: "#14f190",
    KIND_STYLE["leaf"][0]: "#132b3c",
    KIND_STYLE["frozen parameter"][0]: "#3a3a3a",
    KIND_STYLE["frozen parameter"][1]: "#a6a6a6",
    KIND_STYLE["constant"][1]: "#8c8c8c",
    KIND_STYLE["intermediate"][1]: "#b3b3b3",
    KIND_STYLE["output"][0]: "#113b2b",
    SAVED_FILL: "#2a1f09",
    MODULE_FILL: "#44213a",
    GAP_BORDER: "#a3acb5",
    GAP_EDGE: "#6c757d",
    CURRENT_FILL: "#422b0f",
    READ: "#585303",
    RELEASED: "#6b6b6b",
    DONE_FILL: "#525252",
    HAS_GRAD_FILL: "#194e7f",
}

# What a picture is drawn in, in the page: the graph views' pictures and overviews, and
# the legends' samples.
_PICTURES = ":is(.ag-canvas-stage, .ag-canvas-mini, .ag-legend)"
_DARK = 'body[data-jp-theme-light="false"]'


def paint(colour: str) -> str:
    """``colour`` in a CSS rule, as the dark theme can swap it (a custom property with
    the light colour as its fallback, so an exported picture, or one outside
    JupyterLab, stays light).

    >>> paint("#0072b2")
    'var(--ag-0072b2,#0072b2)'
    """
    return f"var(--ag-{colour.lstrip('#')},{colour})"


def dark_theme_css() -> str:
    """The style sheet that draws every picture in :data:`DARK_THEME`'s colours when
    JupyterLab's theme is dark: the custom properties :func:`paint` names, and a rule
    per colour for the SVG's own ``fill`` and ``stroke`` attributes (CSS wins over an
    attribute; a step's highlight rules are more specific still, and name their
    colours through :func:`paint`)."""
    names = ";".join(f"--ag-{light.lstrip('#')}:{dark}"
                     for light, dark in DARK_THEME.items() if light.startswith("#"))
    rules = [f"{_DARK}{{{names}}}"]
    for light, dark in DARK_THEME.items():
        for part in ("fill", "stroke"):
            rules.append(f'{_DARK} {_PICTURES} [{part}="{light}"]{{{part}:{dark}}}')
    return "\n".join(rules) + "\n"


# A CSS filter for pictures shown as images: colours inverted (93 %: white becomes
# #121212, near JupyterLab's dark background) and their hue turned back by 180°.
PICTURE_DARK_FILTER = "invert(0.93) hue-rotate(180deg)"
_INVERT = 0.93
# CSS's hue-rotate(180deg) matrix (Filter Effects Module Level 1, feColorMatrix
# "hueRotate" with cos = -1, sin = 0); browsers apply it to the sRGB values as they are.
_HUE_ROTATE_180 = ((-0.574, 1.430, 0.144),
                   (0.426, 0.430, 0.144),
                   (0.426, 1.430, -0.856))


def through_picture_filter(colour: str) -> str:
    """``colour`` as :data:`PICTURE_DARK_FILTER` shows it.

    >>> through_picture_filter("#ffffff"), through_picture_filter("#212529")
    ('#121212', '#cbced2')
    """
    channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    inverted = [_INVERT * (1 - c) + (1 - _INVERT) * c for c in channels]
    rotated = (sum(m * c for m, c in zip(row, inverted)) for row in _HUE_ROTATE_180)
    return "#" + "".join(f"{round(min(1.0, max(0.0, c)) * 255):02x}" for c in rotated)
