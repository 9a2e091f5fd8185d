"""Two teaching blocks: a residual block (merge by adding) and an Inception-style
block (branch, then merge by concatenating).

Both are small enough to read in full next to the graph they record.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from .. import creation, errors
from .. import op_functions as ag
from ..tensor import Tensor
from .layers import BatchNorm1d, BatchNorm2d, Conv2d, Linear, MaxPool2d, ReLU, Sequential
from .module import Module

__all__ = ["ResidualBlock", "InceptionBlock"]


class ResidualBlock(Module):
    """y = F(x) + shortcut(x): the block learns a correction F to the identity.

    * ``F`` (``self.body``) is conv3x3 -> batch norm -> ReLU -> conv3x3 -> batch norm
      (the first conv carries the ``stride``; the convs have no bias, batch norm
      shifts). With ``linear=True`` it is Linear -> BatchNorm1d -> ReLU -> Linear ->
      BatchNorm1d on (N, features) inputs.
    * ``shortcut`` is the identity when input and output shapes agree, and a
      projection (1x1 conv with the stride + batch norm, or a bias-free Linear) only
      when ``in_channels != out_channels`` or ``stride != 1``; then it is
      ``self.shortcut``, otherwise ``self.shortcut is None``.
    * The merge is a plain addition: it adds no parameters.

    As in the brief y = F(x) + x, there is no activation after the sum (ResNet puts
    a ReLU there: follow the block with ``nn.ReLU()`` for that). ``dtype`` defaults
    to float32; ``generator`` seeds the initial weights.

    >>> block = ResidualBlock(8, 8)
    >>> block.shortcut is None
    True
    >>> ResidualBlock(8, 16, stride=2).shortcut is None
    False
    """

    def __init__(self, in_channels: int, out_channels: int | None = None, stride: int = 1, *,
                 linear: bool = False, dtype=np.float32,
                 generator: creation.Generator | None = None):
        super().__init__()
        out_channels = in_channels if out_channels is None else out_channels
        if linear and stride != 1:
            raise errors.bad_option("ResidualBlock", "stride", stride,
                                    "1 for the linear variant")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.stride, self.linear = stride, linear
        kw = {"dtype": dtype, "generator": generator}
        if linear:
            self.body = Sequential(OrderedDict([
                ("fc1", Linear(in_channels, out_channels, bias=False, **kw)),
                ("bn1", BatchNorm1d(out_channels, dtype=dtype)),
                ("relu", ReLU()),
                ("fc2", Linear(out_channels, out_channels, bias=False, **kw)),
                ("bn2", BatchNorm1d(out_channels, dtype=dtype)),
            ]))
        else:
            self.body = Sequential(OrderedDict([
                ("conv1", Conv2d(in_channels, out_channels, 3, stride, padding=1, bias=False,
                                 **kw)),
                ("bn1", BatchNorm2d(out_channels, dtype=dtype)),
                ("relu", ReLU()),
                ("conv2", Conv2d(out_channels, out_channels, 3, padding=1, bias=False, **kw)),
                ("bn2", BatchNorm2d(out_channels, dtype=dtype)),
            ]))
        self.shortcut = None
        if in_channels != out_channels or stride != 1:
            self.shortcut = (
                Linear(in_channels, out_channels, bias=False, **kw) if linear else
                Sequential(OrderedDict([
                    ("conv", Conv2d(in_channels, out_channels, 1, stride, bias=False, **kw)),
                    ("bn", BatchNorm2d(out_channels, dtype=dtype)),
                ])))

    def forward(self, x: Tensor) -> Tensor:
        out = self.body(x)  # F(x) first: the order a learner traces it in
        return out + (x if self.shortcut is None else self.shortcut(x))

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}"
        if self.stride != 1:
            s += f", stride={self.stride}"
        return s + (", linear=True" if self.linear else "")


def _conv_relu(in_channels: int, out_channels: int, kernel_size: int, **kw) -> list:
    return [Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2, **kw),
            ReLU()]


class InceptionBlock(Module):
    """Four parallel branches over the same input, joined along channels:

    * ``branch1x1``: 1x1 conv -> ReLU (``out_1x1`` channels);
    * ``branch3x3``: [1x1 reduce -> ReLU ->] 3x3 conv -> ReLU (``out_3x3``);
    * ``branch5x5``: [1x1 reduce -> ReLU ->] 5x5 conv -> ReLU (``out_5x5``);
    * ``branch_pool``: 3x3 max pool (stride 1) -> 1x1 conv -> ReLU (``out_pool``).

    Padding keeps H and W, so ``cat`` along dim 1 gives out_1x1 + out_3x3 + out_5x5 +
    out_pool channels; in the backward, the concatenation splits the gradient back
    to each branch. ``reduce_3x3``/``reduce_5x5`` (optional) add GoogLeNet's 1x1
    reductions. ``dtype`` defaults to float32; ``generator`` seeds the weights.

    >>> InceptionBlock(4, 2, 3, 1, 2).out_channels
    8
    """

    def __init__(self, in_channels: int, out_1x1: int, out_3x3: int, out_5x5: int,
                 out_pool: int, reduce_3x3: int | None = None, reduce_5x5: int | None = None,
                 *, dtype=np.float32, generator: creation.Generator | None = None):
        super().__init__()
        kw = {"dtype": dtype, "generator": generator}
        self.in_channels = in_channels
        self.out_channels = out_1x1 + out_3x3 + out_5x5 + out_pool

        def branch(out: int, kernel_size: int, reduce: int | None) -> Sequential:
            layers = []
            if reduce is not None:
                layers += _conv_relu(in_channels, reduce, 1, **kw)
            layers += _conv_relu(in_channels if reduce is None else reduce, out, kernel_size,
                                 **kw)
            return Sequential(*layers)

        self.branch1x1 = branch(out_1x1, 1, None)
        self.branch3x3 = branch(out_3x3, 3, reduce_3x3)
        self.branch5x5 = branch(out_5x5, 5, reduce_5x5)
        self.branch_pool = Sequential(MaxPool2d(3, stride=1, padding=1),
                                      *_conv_relu(in_channels, out_pool, 1, **kw))

    def forward(self, x: Tensor) -> Tensor:
        branches = (self.branch1x1, self.branch3x3, self.branch5x5, self.branch_pool)
        return ag.cat([branch(x) for branch in branches], dim=1)

    def extra_repr(self) -> str:
        return f"{self.in_channels} -> {self.out_channels}"
