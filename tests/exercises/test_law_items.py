"""G1 (lesson 04), L6 (lesson 08) and L8 (lesson 10) ask for a law, which the check runs
without the engine on cases it draws when it runs and measures there. The shortcuts that
solved the old predictions (running the lesson's fixed set-up, or a copy, and reading the
answer off) no longer solve them: the set-up's measurement handed back is wrong on the drawn
cases, and a law that measures instead of predicting is refused. Each slip the items name is
named, every malformed law gets a sentence, and the right laws, worked out by hand
(``laws_by_hand``), solve them."""

import numpy as np
import pytest
from laws_by_hand import (
    ARRAY,
    BLOCK_MACS,
    LAYER,
    RIGHT,
    YES_NO,
    distinct_masks,
    float32_sums,
    kept_bytes,
    kept_bytes_frozen_ignored,
    kept_bytes_frozen_not_recorded,
    kept_bytes_under_no_grad_too,
    peak_checkpointed,
)

# each test records into a file of its own (autouse), and what "seen" means: as the rules'
from test_teaching_rules import _own_progress, seen  # noqa: F401

import autograd_core as ag
from autograd_core import nn
from widgets import exercises as ex
from widgets.exercises import laws, store
from widgets.exercises.tracking import status
from widgets.lessons.checkpointing import checkpointed_step

SEEDS = range(6)  # the check's draws, seeded: each seed is another set of cases


@pytest.fixture(params=SEEDS)
def drawn(request, monkeypatch):
    """The check's cases drawn from a seeded generator (the check itself draws unseeded)."""
    monkeypatch.setattr(laws, "draw", np.random.default_rng(request.param))
    return request.param


def diagnoses(result) -> dict:
    return {p.name: p.diagnosis for p in result.parts or (result,)}


def said(result) -> str:
    return "\n".join([result.message, *(p.message for p in result.parts)])


@pytest.mark.parametrize("item", sorted(RIGHT))
def test_the_right_laws_by_hand_solve_the_item(item, drawn):
    result = ex.registry()[item](**RIGHT[item])
    assert result.ok, repr(result)
    assert "drawn at check time" in said(result)
    assert status(item) == "solved" and not seen(item)


def test_the_cases_are_drawn_anew_at_every_check():
    asked = []

    def remember(depth, segments):
        asked.append((depth, segments))
        return peak_checkpointed(depth, segments)

    for _ in range(4):
        assert ex.L8(peak_checkpointed=remember).ok
    assert len(set(asked)) > 3  # no fixed list of stacks a table could learn


# -- the lesson's set-up, run and read off, is not a law ------------------------------------


def _lesson_masks() -> int:
    """L6's old set-up measured: modules a, b with Generator(7), three calls each, then one
    call with Generator(8)."""
    ones = ag.ones(32)
    a, b, c = (nn.Dropout(0.5, generator=ag.Generator(s)) for s in (7, 7, 8))
    return len({tuple(m(ones).numpy() != 0) for m in (a, a, a, b, b, b, c)})


def _lesson_sums() -> tuple[float, float]:
    """L6's old sums measured by the engine: 1e8 and eight ones, in both orders."""
    def add(values):
        total = ag.tensor(np.float32(values[0]))
        for v in values[1:]:
            total = total + ag.tensor(np.float32(v))
        return float(total.item())

    numbers = [1e8] + [1.0] * 8
    return add(numbers), add(numbers[::-1])


def test_l6_the_lessons_set_up_measured_and_handed_back_is_wrong(drawn):
    masks, sums = _lesson_masks(), _lesson_sums()
    result = ex.L6(distinct_masks=lambda seeds, calls: masks,
                   float32_sums=lambda big, ones: sums)
    assert not result.ok and status("L6") != "solved"
    assert not any(p.ok for p in result.parts)


def test_l8_the_lessons_stack_measured_and_handed_back_is_wrong(drawn):
    step = checkpointed_step(depth=16, segments=4)  # measuring it is seeing L8's answer
    assert seen("L8")
    result = ex.L8(gradients_identical=True, peak_checkpointed=lambda n, k: step.peak,
                   recompute_macs=lambda n, k: step.recompute_macs)
    assert not result.ok
    assert [p.ok for p in result.parts] == [True, False, False]


def test_g1_the_experiments_bytes_handed_back_are_wrong(drawn):
    report = ex.G1.experiment()  # recorded: seeing G1's answer
    kept = report.data["saved_bytes_recording"]
    result = ex.G1(kept_bytes=lambda w, d, b, frozen, no_grad: 0 if no_grad else kept, **YES_NO)
    assert not result.ok and diagnoses(result)["kept_bytes"] != "none"


def _g1_by_engine(width, depth, batch, frozen, no_grad):
    from autograd_core.nn import functional as F
    from autograd_core.tools.graph import saved_bytes

    h = ag.tensor(np.ones((batch, width)))
    for i in range(depth):
        h = ag.tanh(F.linear(h, ag.tensor(np.ones((width, width)) * 0.1,
                                          requires_grad=i not in frozen)))
    return 0 if no_grad else saved_bytes(h.sum())


@pytest.mark.parametrize("item, answers", [
    ("G1", dict(kept_bytes=_g1_by_engine)),
    ("L6", dict(distinct_masks=lambda seeds, calls: len({
        tuple(nn.Dropout(0.5, generator=ag.Generator(s))(ag.ones(8)).numpy() != 0)
        for s in seeds}) * calls)),
    ("L8", dict(peak_checkpointed=lambda n, k: checkpointed_step(depth=n, segments=k).peak)),
], ids=["G1", "L6", "L8"])
def test_a_law_that_measures_the_case_instead_is_refused(item, answers):
    result = ex.registry()[item](**answers)
    assert not result.ok
    assert set(diagnoses(result).values()) == {"uses_engine"}
    assert "predict from its arguments alone" in said(result)


# -- each slip the items name is named, never with the value --------------------------------


def _peak_with(inputs, layers_of):
    return lambda n, k: inputs(k) * ARRAY + layers_of(n, k) * LAYER


def _last(n, k):
    return n - (n // k) * (k - 1)


SLIPS = [
    ("G1", "kept_bytes", kept_bytes_frozen_ignored, "frozen_ignored"),
    ("G1", "kept_bytes", kept_bytes_frozen_not_recorded, "frozen_not_recorded"),
    ("G1", "kept_bytes", kept_bytes_under_no_grad_too, "no_grad_keeps"),
    ("G1", "kept_bytes", lambda w, d, b, f, ng: 0 if ng else kept_bytes(w, d, b, f, ng)
     + 8 * w * w * (d > len(f) and min(set(range(d)) - set(f)) < d), "first_weight"),
    ("G1", "kept_bytes", lambda w, d, b, f, ng: kept_bytes(w, d, b, f, ng) // 2,
     "bytes_per_value"),
    ("L6", "distinct_masks", lambda seeds, calls: len(set(seeds)), "seed_fixes_one_mask"),
    ("L6", "distinct_masks", lambda seeds, calls: 1, "seed_fixes_one_mask"),
    ("L6", "distinct_masks", lambda seeds, calls: len(seeds) * calls, "same_seed_differs"),
    ("L6", "float32_sums", lambda big, ones: (big + ones, big + ones), "exact_sum"),
    ("L6", "float32_sums", lambda big, ones: (float(np.float32(big + ones)),) * 2,
     "rounded_once"),
    ("L6", "float32_sums", lambda big, ones: (float(np.float32(big)),) * 2, "rounded_away"),
    ("L8", "peak_checkpointed", lambda n, k: 3 * n * ARRAY - ARRAY, "plain_peak"),
    ("L8", "peak_checkpointed", _peak_with(lambda k: k - 1, _last), "batch_counted"),
    ("L8", "peak_checkpointed", _peak_with(lambda k: k, _last), "last_segment_input"),
    ("L8", "peak_checkpointed", _peak_with(lambda k: k - 2, lambda n, k: n // k),
     "even_segments"),
    ("L8", "peak_checkpointed", _peak_with(lambda k: k - 2, lambda n, k: 1), "one_layer"),
    ("L8", "recompute_macs", lambda n, k: n * BLOCK_MACS, "all_segments"),
    ("L8", "recompute_macs", lambda n, k: (n // k) * BLOCK_MACS, "one_segment"),
    ("L8", "recompute_macs", lambda n, k: (n // k) * (k - 1) * 32 * 64 * 64, "matmul_only"),
    ("L8", "recompute_macs", lambda n, k: 0, "no_recompute"),
]


@pytest.mark.parametrize("item, part, law, code", SLIPS,
                         ids=[f"{s[0]}-{s[3]}-{i}" for i, s in enumerate(SLIPS)])
def test_each_named_slip_is_named_and_its_value_never_said(item, part, law, code, drawn):
    result = ex.registry()[item](**{part: law})
    assert not result.ok and diagnoses(result) == {part: code}, repr(result)
    message = said(result)
    assert len(message.split(". ")) >= 2  # which case, then what the slip gets wrong
    for value in (512, 8192, 24576, 137216, 114688, 1646592, 100000008):
        assert f"{value}" not in message.replace(" ", "")


def test_g1_the_first_weight_slip_is_named_on_a_plain_training_pass(drawn):
    def first_weight(w, d, b, frozen, no_grad):  # every recorded linear keeps its weight
        first = next((i for i in range(d) if i not in frozen), d)
        r = 0 if no_grad else d - first
        return 8 * ((r + 1) * b * w + r * w * w) if r else 0

    assert diagnoses(ex.G1(kept_bytes=first_weight)) == {"kept_bytes": "first_weight"}


# -- malformed laws: a sentence each, never a try -------------------------------------------


MALFORMED = {"a number": 114688, "text": "lots", "a list": [1, 2],
             "gives text": lambda *a: "lots", "gives None": lambda *a: None,
             "raises": lambda *a: 1 / 0, "wrong arguments": lambda: 3,
             "gives NaN": lambda *a: float("nan")}


@pytest.mark.parametrize("label", MALFORMED)
@pytest.mark.parametrize("item, part", [("G1", "kept_bytes"), ("L6", "distinct_masks"),
                                        ("L6", "float32_sums"), ("L8", "peak_checkpointed"),
                                        ("L8", "recompute_macs")])
def test_a_malformed_law_gets_a_sentence(item, part, label):
    result = ex.registry()[item](**{part: MALFORMED[label]})
    assert not result.ok
    for message in said(result).splitlines():
        assert message and "Traceback" not in message and len(message) < 400
    assert not seen(item)


def test_a_placeholder_law_is_not_an_attempt():
    ex.L8(peak_checkpointed=lambda n, k: ..., recompute_macs=None)
    ex.L6(distinct_masks=...)
    ex.G1(kept_bytes=None)
    for item in ("L8", "L6", "G1"):
        assert status(item) == "not started" and store.read_item(item)["misses"] == {}


def test_the_checks_own_measurements_record_nothing():
    ex.L8(peak_checkpointed=peak_checkpointed, recompute_macs=lambda n, k: 0)
    ex.L6(distinct_masks=distinct_masks, float32_sums=float32_sums)
    ex.G1(kept_bytes=kept_bytes)
    assert not any(seen(i) for i in ("L8", "L6", "G1"))
