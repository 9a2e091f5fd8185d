"""Neural-network building blocks with PyTorch's names: ``Module``, ``Parameter``,
the standard layers, attention, the teaching blocks, ``init`` and ``functional``.

>>> import autograd_core as ag
>>> from autograd_core import nn
>>> model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
>>> model
Sequential(
  (0): Linear(in_features=64, out_features=32, bias=True)
  (1): ReLU()
  (2): Linear(in_features=32, out_features=10, bias=True)
)
"""

from . import functional, init, utils
from .blocks import InceptionBlock, ResidualBlock, SelfAttention, TransformerBlock
from .containers import ModuleDict, ModuleList, ParameterList
from .layers import (
    GELU,
    AdaptiveAvgPool2d,
    AvgPool2d,
    BatchNorm1d,
    BatchNorm2d,
    Conv2d,
    Dropout,
    Embedding,
    Flatten,
    LayerNorm,
    LeakyReLU,
    Linear,
    MaxPool2d,
    ReLU,
    RMSNorm,
    Sequential,
    Sigmoid,
    SiLU,
    Softplus,
    Tanh,
)
from .loss import CrossEntropyLoss, MSELoss, NLLLoss
from .module import Module, RemovableHandle
from .multihead_attention import MultiheadAttention
from .parameter import Parameter
from .rnn import LSTM

__all__ = [
    "functional", "init", "utils", "Module", "ModuleList", "ModuleDict", "ParameterList",
    "Parameter", "RemovableHandle", "Linear", "Conv2d",
    "BatchNorm1d", "BatchNorm2d", "Dropout", "Embedding", "ReLU", "Tanh", "Sigmoid",
    "GELU", "SiLU", "Softplus", "LeakyReLU", "MaxPool2d", "AvgPool2d",
    "AdaptiveAvgPool2d", "Flatten", "Sequential",
    "CrossEntropyLoss", "NLLLoss", "MSELoss", "LSTM",
    "ResidualBlock", "InceptionBlock",
    "LayerNorm", "RMSNorm",
    "MultiheadAttention", "SelfAttention", "TransformerBlock",
]
