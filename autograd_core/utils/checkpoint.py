"""Gradient checkpointing under PyTorch's name (``torch.utils.checkpoint``); the code and
its explanation are in ``autograd_core/func/checkpoint.py``.

>>> from autograd_core.utils.checkpoint import checkpoint, checkpoint_sequential
"""

from ..func.checkpoint import Checkpoint, checkpoint, checkpoint_sequential

__all__ = ["checkpoint", "checkpoint_sequential", "Checkpoint"]
