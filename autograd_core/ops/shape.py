"""Shape ops: reshape, permute (transpose) and expand.

They move no arithmetic, only the layout of the values, so their backward undoes
the layout change on the gradient. ``expand`` is broadcasting made explicit: its
backward is the engine's own un-broadcast sum.
"""

from __future__ import annotations

import numpy as np

from .. import errors
from ..recording.node import Function


class Reshape(Function):
    """f(a) = a with a new shape (same elements, same order)"""

    name = "reshape"
    rule = "da = g.reshape(a.shape)"

    @staticmethod
    def forward(ctx, a, shape=()):
        try:
            return np.reshape(a, shape)
        except ValueError:
            raise errors.bad_reshape(shape, np.size(a)) from None

    @staticmethod
    def jvp(ctx, ta):
        """dout = ta.reshape(shape)"""
        return np.reshape(ta, ctx.output_shape)


class Permute(Function):
    """f(a) = a with its axes reordered"""

    name = "permute"
    rule = "da = transpose(g, argsort(axes))   (the axes put back)"

    @staticmethod
    def forward(ctx, a, axes=()):
        return np.transpose(a, axes)

    @staticmethod
    def jvp(ctx, ta):
        """dout = ta with the same axes reordered"""
        return np.transpose(ta, ctx.params["axes"])


class Expand(Function):
    """f(a) = a broadcast to a larger shape (a view, no copy)"""

    name = "expand"
    rule = "da = g   (the engine sums it over the expanded axes)"

    @staticmethod
    def forward(ctx, a, shape=()):
        try:
            return np.broadcast_to(a, shape)
        except ValueError:
            raise errors.broadcast("expand", np.shape(a), shape) from None

    @staticmethod
    def jvp(ctx, ta):
        """dout = ta broadcast to the same shape"""
        return np.broadcast_to(ta, ctx.output_shape)
