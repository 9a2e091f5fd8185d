"""GraphCanvas without a browser: what it sends, what it accepts back, what it frees.
(Its drawing, pan, zoom and clicks are tested in Chromium: tests/browser/test_browser_canvas.py.)"""

from __future__ import annotations

import gc
import weakref

import ipywidgets as w

from widgets.canvas import STEP_KEYS, GraphCanvas

SVG = '<svg width="10pt" height="10pt" viewBox="0 0 10 10"><g id="op0" class="node op"/></svg>'


def test_restyle_sends_css_and_focus_together_without_the_picture():
    canvas = GraphCanvas(SVG)
    sent = []
    canvas.comm.send = lambda data, buffers=None: sent.append(data)  # what goes to the page
    canvas.restyle("#x :is(#op0){fill:red}", focus="op0")
    assert len(sent) == 1  # one message, both traits
    state = sent[0]["state"]
    assert state == {"css": "#x :is(#op0){fill:red}", "focus": "op0"}
    canvas.restyle("", None)
    assert canvas.focus == "" and canvas.css == ""
    assert canvas.svg == SVG


def test_set_svg_replaces_the_picture_and_can_turn_fit_off():
    canvas = GraphCanvas(SVG)
    canvas.set_svg("<svg/>", fit=False)
    assert canvas.svg == "<svg/>" and canvas.fit is False
    canvas.set_svg(SVG)
    assert canvas.fit is False  # unchanged unless asked


def test_every_canvas_has_its_own_container_id():
    ids = {GraphCanvas(SVG).container_id for _ in range(20)}
    assert len(ids) == 20 and all(i.startswith("ag") and i.isalnum() for i in ids)


def test_step_keys_reach_the_callbacks_and_nothing_else_does():
    canvas = GraphCanvas(SVG)
    got = []
    canvas.on_key(got.append)
    for key in STEP_KEYS:
        canvas._handle_custom_msg({"event": "key", "key": key}, [])
    for junk in ({"event": "key", "key": "Delete"}, {"event": "key"}, {"event": "click"},
                 {"key": "ArrowRight"}, "ArrowRight", None, {"event": "key", "key": ["p"]}):
        canvas._handle_custom_msg(junk, [])
    assert got == list(STEP_KEYS)


def test_a_closed_canvas_leaves_the_registry_and_drops_its_callbacks():
    canvas = GraphCanvas(SVG)
    model_id = canvas.model_id
    holder = []
    canvas.on_key(holder.append)
    ref = weakref.ref(canvas)
    canvas.close()
    assert model_id not in w.widgets.widget._instances
    assert canvas._key_callbacks == []
    del canvas
    gc.collect()
    assert ref() is None
