"""PyTorch's ``torch.utils.checkpoint`` path: ``from autograd_core.utils.checkpoint import
checkpoint, checkpoint_sequential``. The code is in ``autograd_core/func/checkpoint.py``.
"""

from . import checkpoint

__all__ = ["checkpoint"]
