r"""``LSTM``: a multi-layer long short-term memory with PyTorch's parameters, gate order,
shapes and initialisation, composed of the engine's ops (linear, sigmoid, tanh, mul,
add, indexing, stack), so its gradients are theirs, step by step.

Layer k at time t, with x_t its input (the previous layer's h, after dropout in training)
and the gates in PyTorch's order i, f, g, o (rows of ``weight_ih_lk``, ``weight_hh_lk``,
``bias_ih_lk``, ``bias_hh_lk``, each 4·hidden_size long):

::

    i, f, g, o = split(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh, 4)
    c_t = sigmoid(f) * c_{t-1} + sigmoid(i) * tanh(g)
    h_t = sigmoid(o) * tanh(c_t)

The derivative is that of this composition (the sweep applies each op's rule), checked
against finite differences and PyTorch in ``tests/engine/test_ported_surface*.py``.
Not supported (a sentence each): ``bidirectional=True`` and ``proj_size > 0``.

>>> import autograd_core as ag
>>> from autograd_core import nn
>>> lstm = nn.LSTM(3, 5, num_layers=2)
>>> out, (h, c) = lstm(ag.randn(7, 4, 3, dtype=ag.float32))
>>> out.shape, h.shape, c.shape
((7, 4, 5), (2, 4, 5), (2, 4, 5))
"""

from __future__ import annotations

import math

import numpy as np

from .. import errors
from ..ops import api as ag
from ..recording import creation, default_dtype
from ..recording.tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["LSTM"]


class LSTM(Module):
    """``LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
    dropout=0.0)``; ``forward(input, (h_0, c_0))`` returns ``output, (h_n, c_n)``.

    input: (L, N, input_size), (N, L, input_size) with ``batch_first``, or (L,
    input_size) unbatched; h_0 and c_0: (num_layers, N, hidden_size) (or without N),
    zeros when not given. output: the last layer's h at every step. Initialisation
    (PyTorch's): every parameter U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, *, dtype=None,
                 generator: creation.Generator | None = None):
        super().__init__()
        if bidirectional:
            raise errors.rnn_option("LSTM", "bidirectional=True")
        if proj_size:
            raise errors.rnn_option("LSTM", f"proj_size={proj_size!r}")
        if not (isinstance(dropout, int | float) and 0 <= dropout <= 1):
            raise errors.dropout_probability(dropout)
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        bound = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0.0
        for layer in range(num_layers):
            fan_in = input_size if layer == 0 else hidden_size
            shapes = {"weight_ih": (4 * hidden_size, fan_in),
                      "weight_hh": (4 * hidden_size, hidden_size)}
            if bias:
                shapes.update(bias_ih=(4 * hidden_size,), bias_hh=(4 * hidden_size,))
            for name, shape in shapes.items():
                weight = Parameter(np.zeros(shape, dtype=np.dtype(default_dtype.resolve(dtype))))
                setattr(self, f"{name}_l{layer}",
                        init.uniform_(weight, -bound, bound, generator=generator))

    def _check(self, what: str, t: Tensor, shape: tuple) -> None:
        if tuple(t.shape) != shape:
            raise errors.rnn_input(f"LSTM {what}", t.shape, str(shape))

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None):
        batched = input.ndim == 3
        if input.ndim not in (2, 3) or input.shape[-1] != self.input_size:
            raise errors.rnn_input("LSTM input", input.shape,
                                   f"(L, N, {self.input_size}) or (L, {self.input_size})")
        x = input if batched else ag.unsqueeze(input, 1)
        if self.batch_first and batched:
            x = ag.transpose(x, 0, 1)
        steps, batch = x.shape[:2]
        state = (self.num_layers, batch, self.hidden_size)
        if hx is None:
            h0 = c0 = creation.zeros(*state, dtype=x.dtype)
        else:
            h0, c0 = hx
            for what, t in (("h_0", h0), ("c_0", c0)):
                self._check(what, t, state if batched else (state[0], state[2]))
            if not batched:
                h0, c0 = ag.unsqueeze(h0, 1), ag.unsqueeze(c0, 1)
        last_h, last_c = [], []
        for layer in range(self.num_layers):
            if layer and self.dropout and self.training:
                x = F.dropout(x, self.dropout)
            x, h, c = self._layer(x, h0[layer], c0[layer], layer, steps)
            last_h.append(h)
            last_c.append(c)
        h_n, c_n = ag.stack(last_h, 0), ag.stack(last_c, 0)
        if not batched:
            return ag.squeeze(x, 1), (ag.squeeze(h_n, 1), ag.squeeze(c_n, 1))
        if self.batch_first:
            x = ag.transpose(x, 0, 1)
        return x, (h_n, c_n)

    def _layer(self, x: Tensor, h: Tensor, c: Tensor, layer: int, steps: int):
        """One layer over every step: the input's part of the gates for all steps in one
        matmul, then the recurrence one step at a time."""
        size = self.hidden_size
        w_ih, w_hh = getattr(self, f"weight_ih_l{layer}"), getattr(self, f"weight_hh_l{layer}")
        b_ih = getattr(self, f"bias_ih_l{layer}") if self.bias else None
        b_hh = getattr(self, f"bias_hh_l{layer}") if self.bias else None
        from_input = F.linear(x, w_ih, b_ih)
        outputs = []
        for t in range(steps):
            gates = from_input[t] + F.linear(h, w_hh, b_hh)
            i, f = ag.sigmoid(gates[:, :size]), ag.sigmoid(gates[:, size:2 * size])
            g, o = ag.tanh(gates[:, 2 * size:3 * size]), ag.sigmoid(gates[:, 3 * size:])
            c = f * c + i * g
            h = o * ag.tanh(c)
            outputs.append(h)
        return ag.stack(outputs, 0), h, c

    def extra_repr(self) -> str:
        extras = "".join(f", {k}={getattr(self, k)!r}" for k, default in
                         (("num_layers", 1), ("bias", True), ("batch_first", False),
                          ("dropout", 0.0)) if getattr(self, k) != default)
        return f"{self.input_size}, {self.hidden_size}{extras}"
