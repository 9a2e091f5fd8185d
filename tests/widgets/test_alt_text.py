"""Text alternatives of the project's pictures, and the named step controls, without a
browser: what a screen reader is given is computed from the graph, not hard-coded."""

from __future__ import annotations

import numpy as np
from sample_programs import broadcast_mask_fanout as program

import autograd_core as ag
from widgets import BackwardStepper, GraphView, draw
from widgets.alt_text import alt_metadata, graph_alt
from widgets.controls import StepControls
from widgets.step_player import StepPlayer


def test_a_drawn_graph_says_how_many_ops_and_tensors_it_shows():
    y, *_ = program()
    view = GraphView(y)
    ops, tensors = len(view.graph.ops), len(view.graph.tensors)
    picture = draw(y)
    data, metadata = picture._repr_mimebundle_()
    assert data == {"image/svg+xml": picture.data}
    assert metadata == alt_metadata(picture.alt, "image/svg+xml")
    assert picture.alt == f"Computational graph: {ops} ops, {tensors} tensors"
    view.close()


def test_a_collapsed_module_is_named_in_the_text_alternative():
    ag.manual_seed(0)
    model = ag.nn.Sequential(ag.nn.Linear(3, 4), ag.nn.ReLU(), ag.nn.Linear(4, 1))
    loss = model(ag.tensor(np.ones((2, 3)))).sum()
    assert "1 module drawn as one box" in graph_alt(draw(loss, collapse=("0",)).data)
    assert "module" not in graph_alt(draw(loss).data)


def test_a_views_stored_picture_carries_its_text_alternative():
    y, *_ = program()
    stepper = BackwardStepper(y)
    data, metadata = stepper._repr_mimebundle_()
    alt = metadata["image/svg+xml"]["alt"]
    assert alt.startswith(data["text/plain"]) and graph_alt(stepper.svg) in alt
    stepper.close()


def test_the_step_player_keeps_its_value_inside_the_steps_and_drives_the_controls():
    player = StepPlayer(4, what="op")
    player.value = 9
    assert player.value == 4
    player.value = -2
    assert player.value == 0
    controls = StepControls(5, what="op")
    controls.player.value = 3  # the slider dragged, or one play tick
    assert controls.value == 3 and controls.label.value == "3 / 5"
    controls.go(7)
    assert controls.player.value == 5 and controls.play is controls.slider is controls.player
    controls.close()
