"""What a learner who does not see the picture gets from the views, tested without a
browser: the step's sentence (live region and description), the table view, and the
inspector that opens over the picture only when a node is selected."""

from __future__ import annotations

import re

import numpy as np
from sample_programs import broadcast_mask_fanout as program

import autograd_core as ag
from widgets import BackwardStepper, GraphView
from widgets.graph_table import TABLE_ROWS, graph_table, replay_table
from widgets.live import live
from widgets.panels import step_sentence
from widgets.summary import summarize


def rows(html_text: str, caption: str) -> list[list[str]]:
    """The body rows (cell texts) of the table with that caption start."""
    table = html_text.split(f"<caption>{caption}", 1)[1].split("</table>", 1)[0]
    return [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
            for row in re.findall(r"<tr>(.*?)</tr>", table, re.S) if "<td" in row]


def tensor_rows(stepper) -> dict[str, list[str]]:
    """The stepper's table view's tensor rows, by tensor id."""
    return {r[0]: r for r in rows(stepper.picture.table, f"{len(stepper.graph.tensors)} tensors")}


def test_each_step_is_one_sentence_naming_the_op_what_it_reads_and_where_it_sends():
    y, *_ = program()
    stepper = BackwardStepper(y)
    replay = stepper.replay
    assert stepper.picture.announcement == step_sentence(replay, 0)
    assert f"{len(replay)} steps" in stepper.picture.announcement
    for k in range(1, len(replay) + 1):
        stepper.step = k
        said = stepper.picture.announcement
        step = replay.step(k)
        op = replay.ops[step.op]
        assert said.startswith(f"Step {k} of {len(replay)}: {op.op} ({step.op})"), said
        assert said.count(".") == 1 + said.count(".grad") and said.endswith(".")
        for sent in step.sent:
            assert sent.tensor in said
        for name in step.reads:
            assert name in said
        if not step.reads:
            assert "no saved tensors" in said
    stepper.close()


def test_in_predict_mode_the_sentence_does_not_give_the_gradients_away():
    y, *_ = program()
    stepper = BackwardStepper(y, predict=True)
    stepper.next()
    said = stepper.picture.announcement
    assert "(predict them)" in said
    assert not re.search(r"\d\.\d", said)  # names and counts only, never a value
    stepper.close()


def test_the_table_follows_the_stepper_with_each_tensors_gradient_so_far():
    y, x, w, b = program()
    stepper = BackwardStepper(y)
    assert stepper.picture.table == ""  # filled only once the learner opens it
    stepper.picture.table_open = True
    tid = stepper.graph.id_of(w)
    tensors = tensor_rows(stepper)
    assert tensors[tid][-1] == "nothing yet"
    stepper.last()
    tensors = tensor_rows(stepper)
    assert summarize(w.grad.numpy()) in tensors[tid][-1]  # what backward() left
    ops = rows(stepper.picture.table, f"{len(stepper.graph.ops)} ops")
    assert [r[0] for r in ops] == [o.id for o in sorted(stepper.graph.ops, key=lambda o: o.order)]
    stepper.close()


def test_the_table_hides_a_gradient_the_learner_must_still_predict():
    y, *_ = program()
    stepper = BackwardStepper(y, predict=True)
    stepper.picture.table_open = True
    stepper.next()
    sent = stepper.replay.step(1).sent[0]
    tensors = tensor_rows(stepper)
    assert tensors[sent.tensor][-1].startswith("<b>?</b>")
    stepper.reveal()
    stepper._tabulate()
    tensors = tensor_rows(stepper)
    assert summarize(sent.total) in tensors[sent.tensor][-1]
    stepper.close()


def test_a_graph_views_table_lists_every_op_and_tensor_with_saved_bytes():
    x = ag.tensor(np.ones((3, 4)), requires_grad=True, name="x")
    y = (x * x).sum()
    view = GraphView(y)
    view.picture.table_open = True
    table = view.picture.table
    assert "gradient so far" not in table  # nothing has run backward
    ops = rows(table, "2 ops")
    assert [r[1] for r in ops] == ["mul", "sum"]
    assert "96 B" in ops[0][4]  # mul saved x (3x4 float64) for each of its inputs
    assert rows(table, "3 tensors")[0][1] == "x"
    view.close()


def test_a_huge_graph_table_stops_at_its_row_limit_and_says_how_many_more():
    x = ag.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(TABLE_ROWS + 5):
        y = y * 1.0
    table = graph_table(live(y, "table").graph)
    assert len(rows(table, f"{TABLE_ROWS + 5:,} ops")) == TABLE_ROWS + 1
    assert "and 5 more ops" in table


def test_the_inspector_opens_over_the_picture_only_for_a_selected_node():
    y, x, *_ = program()
    stepper = BackwardStepper(y)
    assert stepper.picture.detail == ""
    leaf = stepper.graph.id_of(x)
    stepper.picture.selected = leaf
    assert f"tensor <code>{leaf}" in stepper.picture.detail
    stepper.picture.selected = ""  # Escape, or the panel's close button
    assert stepper.picture.detail == ""
    assert replay_table(stepper.replay, 0).startswith("<div class='ag-graph-table'>")
    stepper.close()
