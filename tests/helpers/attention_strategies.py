"""Inputs for the op table's rows of ``F.scaled_dot_product_attention``: each strategy
draws ``(inputs, params)``, which op_table.py turns into an ``Example``.

Query (*batch, L, E), key (*kbatch, S, E) and value (*kbatch, S, Ev), where the key's
batch dims broadcast against the query's (fewer dims or size-1 ones), and a mask:

* ``"bool"``: True = attend, drawn freely, so some rows are masked entirely (PyTorch
  gives them weights 0, and so output 0 and gradient 0);
* ``"float"``: a fourth leaf added to the scores (it gets a gradient), of a shape that
  broadcasts to (*batch, L, S);
* ``"causal"``: ``is_causal=True`` with L and S drawn independently (top-left aligned);
* ``"gqa"``: 4-D inputs whose key and value have a divisor of the query's heads
  (test_attention.py: PyTorch's GQA path has no forward mode nor double backward, so
  it is no row of the table).

Softmax is smooth everywhere, so any real values will do; sometimes a custom scale
(negative too).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from strategies import MAX_SIDE, arrays, shapes


def _side(draw, low: int = 1) -> int:
    return draw(st.integers(low, MAX_SIDE))


def _broadcast_to(draw, shape: tuple) -> tuple:
    """A shape that broadcasts to ``shape``: some leading dims dropped (never the last
    two: PyTorch 2.13 refuses a mask of fewer than two dims on 4-d inputs, while it
    takes one on 3-d inputs, and the engine takes both), some sizes 1."""
    kept = shape[draw(st.integers(0, max(len(shape) - 2, 0))):]
    return tuple(draw(st.sampled_from([s, 1])) for s in kept)


@st.composite
def attention_inputs(draw, mask: str | None = None):
    """(q, k, v[, float mask]) and the keyword arguments of the call."""
    params = {}
    if mask == "gqa":
        kv_heads = draw(st.sampled_from([1, 2]))
        heads = kv_heads * draw(st.integers(1, 2))
        n = _side(draw)
        batch, k_batch = (n, heads), (n, kv_heads)
        params["enable_gqa"] = True
    else:
        batch = draw(shapes(0, 2))
        k_batch = _broadcast_to(draw, batch)
    length, source, e, ev = (_side(draw) for _ in range(4))
    inputs = (draw(arrays(batch + (length, e))), draw(arrays(k_batch + (source, e))),
              draw(arrays(k_batch + (source, ev))))
    scores = batch + (length, source)
    if mask == "bool":
        params["attn_mask"] = draw(hnp.arrays(np.bool_, _broadcast_to(draw, scores)))
    elif mask == "float":
        inputs += (draw(arrays(_broadcast_to(draw, scores))),)
    elif mask == "causal":
        params["is_causal"] = True
    if draw(st.booleans()):
        params["scale"] = draw(st.sampled_from([0.5, -1.25, 2.0]))
    return inputs, params
