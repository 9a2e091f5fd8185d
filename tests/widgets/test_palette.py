"""The picture's colours and the stepper's states, read by everyone.

* Every stepper state differs from every other (and from no state at all) in
  something that is not a colour: a line style, a stroke weight, a label style.
* State colours that can meet on one node, or replace one another, stay apart
  (CIE76 colour difference) for normal vision and for simulated protanopia and
  deuteranopia.
* Every text colour of the picture has a WCAG contrast ratio of at least 4.5:1 on
  every fill it can sit on.
* The same two checks hold for the dark theme's colours (``theme.DARK_THEME``), which
  has a colour for every colour a picture uses; a picture shown as an image keeps its
  contrast through the dark theme's filter (``theme.PICTURE_DARK_FILTER``).
* The stepper shows one legend, drawn from the same rules as its picture.

Colour-vision simulation: Machado, Oliveira & Fernandes (2009), "A Physiologically-
based Model for Simulation of Color Vision Deficiency", IEEE TVCG 15(6), matrices for
severity 1.0, applied to linearised sRGB. Colour difference: CIE76 (Euclidean
distance in CIE L*a*b*, D65 white). Contrast: WCAG 2.1 relative luminance.
"""

import itertools
import re
from pathlib import Path

import ipywidgets as w
import numpy as np
import pytest
from sample_programs import broadcast_mask_fanout

import autograd_core as ag
import widgets
from autograd_core import nn
from autograd_core.tools.graph import capture
from widgets import BackwardStepper, GraphView, theme
from widgets.highlight import _SHAPES, LABELS, STATES, STYLES, step_legend
from widgets.render import to_dot

# -- colour science ----------------------------------------------------------------------
# Machado et al. 2009, severity 1.0, on linear RGB.
PROTANOPIA = np.array([[0.152286, 1.052583, -0.204868],
                       [0.114503, 0.786281, 0.099216],
                       [-0.003882, -0.048116, 1.051998]])
DEUTERANOPIA = np.array([[0.367322, 0.860646, -0.227968],
                         [0.280085, 0.672501, 0.047413],
                         [-0.011820, 0.042940, 0.968881]])
VISIONS = {"normal": np.eye(3), "protanopia": PROTANOPIA, "deuteranopia": DEUTERANOPIA}
SRGB_TO_XYZ = np.array([[0.4124, 0.3576, 0.1805],
                        [0.2126, 0.7152, 0.0722],
                        [0.0193, 0.1192, 0.9505]])
D65 = np.array([0.95047, 1.0, 1.08883])

MIN_DELTA_E = 20.0
MIN_CONTRAST = 4.5  # WCAG AA, normal text


def linear(colour: str) -> np.ndarray:
    """``#rrggbb`` as linear RGB in [0, 1]."""
    c = np.array([int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def lab(rgb: np.ndarray) -> np.ndarray:
    """Linear RGB -> CIE L*a*b* (D65)."""
    xyz = SRGB_TO_XYZ @ rgb / D65
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def delta_e(a: str, b: str, vision: str = "normal") -> float:
    """CIE76 difference between two colours as seen with ``vision``."""
    m = VISIONS[vision]
    return float(np.linalg.norm(lab(np.clip(m @ linear(a), 0, 1))
                                - lab(np.clip(m @ linear(b), 0, 1))))


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two colours (1 to 21)."""
    la, lb = (float(linear(c) @ [0.2126, 0.7152, 0.0722]) for c in (a, b))
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def test_the_colour_helpers_agree_with_known_values():
    assert delta_e("#000000", "#ffffff") == pytest.approx(100.0, abs=0.01)
    assert delta_e("#ff0000", "#00ff00") == pytest.approx(170.6, abs=0.1)  # CIE76 reference
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)  # WCAG's limit grey


@pytest.mark.parametrize("vision", ["protanopia", "deuteranopia"])
def test_the_simulations_lose_red_green_and_keep_greys_and_blue_yellow(vision):
    for grey in ("#000000", "#777777", "#ffffff"):
        assert delta_e(grey, grey, vision) == 0
        assert np.allclose(VISIONS[vision] @ linear(grey), linear(grey), atol=1e-5)
    assert delta_e("#ff0000", "#00ff00", vision) < delta_e("#ff0000", "#00ff00") / 2
    assert delta_e("#0000ff", "#ffff00", vision) > 150


# -- (a) every state has a cue that is not a colour ----------------------------------------
HEX = re.compile(r"#[0-9a-fA-F]{6}")
PART = {_SHAPES: "node", ">path": "edge", ">polygon": "arrowhead"}


def cues(state: str) -> frozenset[tuple[str, str, str]]:
    """(part, property, value) of a state's rules with every colour value blanked:
    what is left to tell it by for someone who cannot tell its colours."""
    out = set()
    for category in STATES[state][2]:
        inner, declarations = STYLES[category]
        rules = [(PART[inner], declarations)]
        if category in LABELS:
            rules.append(("label", LABELS[category]))
        for part, text in rules:
            for declaration in text.split(";"):
                prop, value = declaration.split(":")
                if prop == "fill" and part == "arrowhead":  # the edge's colour again
                    continue
                out.add((part, prop, "colour" if HEX.fullmatch(value) else value))
    out -= {(part, prop, "colour") for part, prop, _ in list(out)}  # a colour alone
    return frozenset(out)


NO_STATE = "(no state)"


@pytest.mark.parametrize("a, b", list(itertools.combinations([*STATES, NO_STATE], 2)))
def test_two_states_differ_in_more_than_colour(a, b):
    ca = cues(a) if a != NO_STATE else frozenset()
    cb = cues(b) if b != NO_STATE else frozenset()
    assert ca != cb, f"{a} and {b} differ only in colour: {sorted(ca)}"


@pytest.mark.parametrize("category", list(STYLES))
def test_an_outline_rule_sets_the_whole_outline(category):
    """Two outline states on one node: one wins whole, never a mix of two."""
    props = {d.split(":")[0] for d in STYLES[category][1].split(";")}
    outline = {"stroke", "stroke-width", "stroke-dasharray", "stroke-linecap"}
    if props & (outline - {"stroke"}):
        assert outline <= props, (category, sorted(outline - props))


@pytest.mark.parametrize("state", list(STATES))
def test_every_category_of_the_states_is_styled(state):
    for category in STATES[state][2]:
        assert category in STYLES


# -- (b) state colours stay apart for every vision -----------------------------------------
OUTLINES = {"current": theme.CURRENT, "upstream": theme.UPSTREAM, "sent": theme.SENT,
            "released": theme.RELEASED, "saved border": theme.SAVED}
STATE_FILLS = {"current": theme.CURRENT_FILL, "done": theme.DONE_FILL,
               "has-grad": theme.HAS_GRAD_FILL, "read": theme.READ}
KIND_FILL = {kind: fill for kind, (fill, _border, _style) in theme.KIND_STYLE.items()}
# The fill a state fill replaces on the nodes it applies to: the change must show.
REPLACES = {
    "current": {"op": theme.OP_FILL},
    "done": {"op": theme.OP_FILL},
    "has-grad": {k: KIND_FILL[k] for k in ("leaf", "intermediate", "output")},
    "read": {**KIND_FILL, "made and saved": theme.SAVED_FILL},
}
PAIRS = (
    [(f"outline {a}", ca, f"outline {b}", cb)
     for (a, ca), (b, cb) in itertools.combinations(OUTLINES.items(), 2)]
    + [("plain edge", theme.EDGE, "outline sent", theme.SENT)]
    + [(f"fill {a}", ca, f"fill {b}", cb)
       for (a, ca), (b, cb) in itertools.combinations(STATE_FILLS.items(), 2)]
    + [(f"fill {state}", STATE_FILLS[state], f"{name} fill", fill)
       for state, bases in REPLACES.items() for name, fill in bases.items()]
)


@pytest.mark.parametrize("vision", list(VISIONS))
@pytest.mark.parametrize("a, colour_a, b, colour_b", PAIRS,
                         ids=[f"{a} vs {b}" for a, _, b, _ in PAIRS])
def test_state_colours_stay_apart(a, colour_a, b, colour_b, vision):
    difference = delta_e(colour_a, colour_b, vision)
    assert difference >= MIN_DELTA_E, f"{a} {colour_a} vs {b} {colour_b}: {difference:.1f}"


@pytest.mark.parametrize("colour", [theme.ORANGE, theme.SKY_BLUE, theme.BLUISH_GREEN,
                                    theme.YELLOW, theme.BLUE, theme.VERMILLION,
                                    theme.REDDISH_PURPLE, theme.BLACK])
def test_the_palette_is_okabe_ito(colour):
    assert colour in {"#e69f00", "#56b4e9", "#009e73", "#f0e442", "#0072b2", "#d55e00",
                      "#cc79a7", "#000000"}


# -- (c) every text reads on every fill --------------------------------------------------
TEXTS = {"label": theme.ON_FILL, "id and edge label": theme.MUTED,
         "saved by": theme.SAVED_TEXT, "module": theme.MODULE_BORDER}
FILLS = {"card": theme.WHITE, **{f"{k} kind": f for k, f in KIND_FILL.items()},
         "op": theme.OP_FILL, "made and saved": theme.SAVED_FILL,
         "module box": theme.MODULE_FILL, **{f"{k} state": f for k, f in STATE_FILLS.items()}}


THEMES = {"light": lambda colour: colour, "dark": theme.DARK_THEME.__getitem__}


@pytest.mark.parametrize("shown", list(THEMES))
@pytest.mark.parametrize("fill", list(FILLS))
@pytest.mark.parametrize("text", list(TEXTS))
def test_every_text_colour_reads_on_every_fill(text, fill, shown):
    text_colour, fill_colour = THEMES[shown](TEXTS[text]), THEMES[shown](FILLS[fill])
    ratio = contrast(text_colour, fill_colour)
    assert ratio >= MIN_CONTRAST, (
        f"{shown}: {text} {text_colour} on {fill} {fill_colour}: {ratio:.2f}")


@pytest.mark.parametrize("vision", list(VISIONS))
@pytest.mark.parametrize("a, colour_a, b, colour_b", PAIRS,
                         ids=[f"{a} vs {b}" for a, _, b, _ in PAIRS])
def test_state_colours_stay_apart_in_the_dark_theme(a, colour_a, b, colour_b, vision):
    dark_a, dark_b = theme.DARK_THEME[colour_a], theme.DARK_THEME[colour_b]
    difference = delta_e(dark_a, dark_b, vision)
    assert difference >= MIN_DELTA_E, f"{a} {dark_a} vs {b} {dark_b}: {difference:.1f}"


# A picture shown as an image has no step states: its fills are the card's, the kinds',
# an op's, a saved note's and a collapsed module's.
STATIC_FILLS = {name: fill for name, fill in FILLS.items() if not name.endswith(" state")}


@pytest.mark.parametrize("fill", list(STATIC_FILLS))
@pytest.mark.parametrize("text", list(TEXTS))
def test_an_image_keeps_its_contrast_through_the_dark_filter(text, fill):
    shown = theme.through_picture_filter
    ratio = contrast(shown(TEXTS[text]), shown(STATIC_FILLS[fill]))
    assert ratio >= MIN_CONTRAST, f"{text} on {fill} through the filter: {ratio:.2f}"


def test_a_figures_text_reads_through_the_dark_filter():
    """matplotlib's text and axes are black on white, the memory view's marks grey."""
    card = theme.through_picture_filter("#ffffff")
    assert contrast(theme.through_picture_filter("#000000"), card) >= 7
    assert contrast(theme.through_picture_filter("#6c757d"), card) >= 3  # a line, not text
    assert contrast(card, "#111111") < 1.1  # about JupyterLab's dark background


def test_the_dark_filter_computed_here_is_what_chromium_draws():
    """Pixels Debian's Chromium 156 drew through ``filter: invert(0.93) hue-rotate(180deg)``, read
    from a screenshot: white, the label grey and four colours of the palette."""
    drawn = {"#ffffff": (18, 18, 18), "#212529": (203, 206, 210), "#e69f00": (155, 94, 0),
             "#f0e442": (67, 57, 0), "#0072b2": (75, 173, 228), "#009e73": (29, 164, 128)}
    for colour, rgb in drawn.items():
        got = theme.through_picture_filter(colour)
        channels = [int(got[i:i + 2], 16) for i in (1, 3, 5)]
        assert all(abs(c - r) <= 1 for c, r in zip(channels, rgb)), (colour, got, rgb)


def test_the_extension_uses_the_filter_checked_here():
    extension = (Path(widgets.__file__).parent / "labextension" / "static" / "remoteEntry.js")
    assert f"filter: {theme.PICTURE_DARK_FILTER};" in extension.read_text()


def rich_dots() -> list[str]:
    """DOT text with every kind of node: modules, a collapsed box, a note of ops not
    drawn, a mask saved by relu, a constant, the legend."""
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    model[2].weight.requires_grad_(False)
    graph = capture((model(ag.ones((2, 3))) * 2.0).sum())
    y = capture(broadcast_mask_fanout()[0])
    return [to_dot(graph), to_dot(graph, collapse=("0",)), to_dot(y, ops=[(2, 5)]),
            to_dot(y, show_values=True)]


def test_the_picture_uses_only_the_text_colours_and_fills_checked_above():
    texts, fills = set(), set()
    for dot in rich_dots():
        texts |= set(re.findall(r'(?:fontcolor|labelfontcolor)="(#\w+)"', dot))
        texts |= set(re.findall(r'<font [^>]*color="(#\w+)"', dot))
        fills |= set(re.findall(r'(?:fillcolor|bgcolor)="(#\w+)"', dot))
    assert texts and texts <= set(TEXTS.values()), texts - set(TEXTS.values())
    assert fills and fills <= set(FILLS.values()), fills - set(FILLS.values())
    assert 'node [fontname="Helvetica", fontsize=11, fontcolor="' in rich_dots()[0]
    styled = {v for _, d in STYLES.values() for v in HEX.findall(d)
              if f"fill:{theme.paint(v)}" in d and ">polygon" not in _}
    assert styled and styled <= set(FILLS.values()), styled - set(FILLS.values())


def test_the_dark_theme_has_a_colour_for_every_colour_a_picture_uses():
    """Every colour of the rendered pictures, the step styles and the legend is swapped
    in the dark theme: by a rule on the SVG's attribute, or through ``paint``."""
    from widgets.svg import to_svg

    used = set()
    for dot in rich_dots():
        used |= set(re.findall(r'(?:fill|stroke)="(#\w+|white)"', to_svg(dot)))
    legend = step_legend()
    used |= set(re.findall(r'(?:fill|stroke)="(#\w+)"', legend))
    assert {"#ffffff", "#212529", "white"} <= used
    assert used <= set(theme.DARK_THEME), used - set(theme.DARK_THEME)
    css = theme.dark_theme_css()
    for colour in used:
        dark = theme.DARK_THEME[colour]
        assert f'[fill="{colour}"]{{fill:{dark}}}' in css
        assert f'[stroke="{colour}"]{{stroke:{dark}}}' in css
    painted = {v for _, d in STYLES.values() for v in HEX.findall(d)
               if theme.paint(v) in d} | set(re.findall(r"var\(--ag-\w+,(#\w+)\)", legend))
    assert painted == {v for _, d in STYLES.values() for v in HEX.findall(d)} | {"#ffffff"}
    for colour in painted:
        assert f"--ag-{colour[1:]}:{theme.DARK_THEME[colour]}" in css
    # no colour of a step style or of the legend's card is written without paint()
    assert not re.search(r"(?<![,-])#[0-9a-f]{6}(?!,)", " ".join(d for _, d in STYLES.values()))


# -- (d) one legend ------------------------------------------------------------------------
def html_widgets(widget):
    """Every HTML widget inside ``widget``."""
    if isinstance(widget, w.HTML):
        yield widget
    for child in getattr(widget, "children", ()):
        yield from html_widgets(child)


def test_the_stepper_shows_one_legend_and_its_picture_none():
    stepper = BackwardStepper(broadcast_mask_fanout()[0])
    assert 'class="node legend"' not in stepper.svg and "legend [" not in stepper.dot
    legends = [h for h in html_widgets(stepper) if "ag-legend" in h.value]
    assert len(legends) == 1
    assert legends[0].value == step_legend()


def test_the_tracer_shows_one_legend_in_its_own_words_and_its_picture_none():
    from widgets import ForwardTracer
    from widgets.highlight import TRACE_STATES

    tracer = ForwardTracer(broadcast_mask_fanout()[0])
    assert 'class="node legend"' not in tracer.svg
    legends = [h for h in html_widgets(tracer) if "ag-legend" in h.value]
    assert len(legends) == 1
    assert all(words in legends[0].value for words, _, _ in TRACE_STATES.values())
    assert "gradient sent" not in legends[0].value  # a forward pass sends none
    tracer.close()


def test_the_graph_view_keeps_its_legend_in_the_picture():
    view = GraphView(broadcast_mask_fanout()[0])
    assert 'class="node legend"' in view.svg


@pytest.mark.parametrize("state", list(STATES))
def test_the_legend_draws_each_state_with_the_pictures_rules(state):
    legend = step_legend()
    words, _node, categories = STATES[state]
    assert words in legend
    for category in categories:
        assert f'style="{STYLES[category][1]}"' in legend
        if category in LABELS:
            assert LABELS[category] in legend


@pytest.mark.parametrize("kind", list(theme.KIND_STYLE))
def test_the_legend_shows_each_tensor_kind(kind):
    fill, border, _style = theme.KIND_STYLE[kind]
    legend = step_legend()
    assert theme.KIND_TEXT[kind] in legend
    assert f'fill="{fill}" stroke="{border}"' in legend
