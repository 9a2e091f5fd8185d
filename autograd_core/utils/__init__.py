"""Utilities beyond plain backprop, with PyTorch's names: ``utils.checkpoint``
(gradient checkpointing: recompute a segment in backward instead of keeping it).

>>> from autograd_core.utils.checkpoint import checkpoint, checkpoint_sequential
"""

from . import checkpoint

__all__ = ["checkpoint"]
