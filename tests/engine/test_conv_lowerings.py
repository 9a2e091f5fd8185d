"""Each way conv2d's backward can run gives the naive loops' gradients.

``ops/conv.py`` picks its lowering by shape: stride-1 layers whose output has at most
twice the input's channels gather (the input gradient as a full convolution of g),
the others scatter (fold); either builds its columns a few images at a time. The
hypothesis tests in test_nn_functional.py draw small layers, which gather or fold by
their stride and fit in one chunk; these cases pin the rest: a stride-1 layer that
folds because it widens, several chunks per call, and each input frozen in turn.
"""

from __future__ import annotations

import numpy as np
import pytest
from reference_layers import conv2d_backward

import autograd_core as ag
from autograd_core.nn import functional as F
from autograd_core.ops import conv

LAYERS = {  # name: (in channels, out channels, stride, padding, dilation, groups)
    "gathers": (4, 6, (1, 1), (1, 1), (1, 1), 1),
    "gathers, dilated and grouped": (4, 4, (1, 1), (2, 1), (2, 1), 2),
    "folds: widens 4x at stride 1": (2, 8, (1, 1), (1, 1), (1, 1), 1),
    "folds: stride 2": (3, 4, (2, 2), (1, 0), (1, 1), 1),
    "folds: padding past the kernel": (2, 2, (1, 1), (3, 3), (1, 1), 1),
}


@pytest.mark.parametrize("frozen", [None, "input", "weight"])
@pytest.mark.parametrize("chunk_bytes", [conv.CHUNK_BYTES, 200])  # 200: one image a chunk
@pytest.mark.parametrize("layer", LAYERS.values(), ids=LAYERS.keys())
def test_backward_matches_the_naive_loops(layer, chunk_bytes, frozen, monkeypatch):
    monkeypatch.setattr(conv, "CHUNK_BYTES", chunk_bytes)
    cin, cout, stride, padding, dilation, groups = layer
    rng = np.random.default_rng(cin * 10 + cout)
    x_np = rng.standard_normal((3, cin, 6, 7))
    w_np = rng.standard_normal((cout, cin // groups, 3, 3))
    x = ag.tensor(x_np, requires_grad=frozen != "input")
    w = ag.tensor(w_np, requires_grad=frozen != "weight")
    params = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    out = F.conv2d(x, w, **params)
    g = rng.standard_normal(out.shape)
    out.backward(g)
    want_dx, want_dw, _ = conv2d_backward(x_np, w_np, g, **params)
    if frozen != "input":
        np.testing.assert_allclose(x.grad.numpy(), want_dx, atol=1e-12)
    if frozen != "weight":
        np.testing.assert_allclose(w.grad.numpy(), want_dw, atol=1e-12)
