"""Devices: the engine computes with NumPy on the CPU, and says so.

PyTorch code names a device everywhere (``x.device``, ``tensor(..., device=...)``,
``model.to(device)``). A :class:`device` here is always the CPU: ``"cpu"`` and
``device("cpu")`` are accepted wherever PyTorch takes a device, and anything else
(``"cuda"``, ``"mps"``) gets a sentence saying the engine runs on the CPU only.
"""

from __future__ import annotations

import numpy as np

from .. import errors


class device:  # noqa: N801 - PyTorch's name
    """The CPU, the one device the engine runs on: ``device("cpu")`` (``"cpu:0"`` too).

    >>> device("cpu")
    device(type='cpu')
    """

    __slots__ = ()

    def __init__(self, type: str = "cpu", index: int | None = None):  # noqa: A002
        check_device(type if index in (None, 0) else f"{type}:{index}")

    @property
    def type(self) -> str:  # noqa: A003 - PyTorch's name
        return "cpu"

    @property
    def index(self) -> None:
        return None

    def __eq__(self, other) -> bool:
        return isinstance(other, device)  # as PyTorch: not equal to the string "cpu"

    def __hash__(self) -> int:
        return hash("cpu")

    def __repr__(self) -> str:
        return "device(type='cpu')"

    def __str__(self) -> str:
        return "cpu"


def is_device(value) -> bool:
    """Whether ``value`` names a device (a device object or a string that is not a dtype
    name): what ``.to`` reads its argument as."""
    return isinstance(value, device) or (isinstance(value, str) and _looks_like_device(value))


_DEVICE_TYPES = ("cpu", "cuda", "mps", "xpu", "meta", "hip", "xla", "mkldnn", "vulkan",
                 "ipu", "hpu", "mtia", "privateuseone")


def _looks_like_device(name: str) -> bool:
    return name.split(":")[0].strip().lower() in _DEVICE_TYPES


def check_device(value) -> device | None:
    """``value`` as a device (None stays None), or a sentence: the CPU is the only one."""
    if value is None or isinstance(value, device):
        return value
    if not isinstance(value, str):
        raise errors.not_a_device(value)
    if value not in ("cpu", "cpu:0"):
        raise errors.cpu_only(value)
    return CPU


CPU = object.__new__(device)


def to_dtype(args: tuple, kwargs: dict):
    """The dtype ``.to(...)`` asks for (None: keep it), read as PyTorch reads
    ``to(dtype)``, ``to(device)``, ``to(device, dtype)`` and ``to(other_tensor)``, with
    ``device=``, ``dtype=``, ``non_blocking=`` and ``copy=`` keywords; a device is checked
    (the CPU only), anything else gets a sentence."""
    kwargs = dict(kwargs)
    kwargs.pop("non_blocking", None)
    kwargs.pop("copy", None)
    kwargs.pop("memory_format", None)
    device_arg, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
    if kwargs or len(args) > 2:
        raise errors.bad_to_arguments(args + tuple(f"{k}=" for k in kwargs))
    rest = list(args)
    if rest and hasattr(rest[0], "_data") and hasattr(rest[0], "dtype"):  # to(other)
        if len(rest) > 1:
            raise errors.bad_to_arguments(args)
        return np.dtype(rest[0].dtype)
    if rest and (is_device(rest[0]) or not isinstance(rest[0], str) and
                 not _is_dtype(rest[0])):
        device_arg = rest.pop(0)
    if rest:
        dtype = rest.pop(0)
    if rest:
        raise errors.bad_to_arguments(args)
    check_device(device_arg)
    if dtype is None:
        return None
    if not _is_dtype(dtype):
        raise errors.bad_to_arguments(args)
    return np.dtype(dtype)


def _is_dtype(value) -> bool:
    if value is None or isinstance(value, bool | int | float):
        return False
    try:
        np.dtype(value)
    except TypeError:
        return False
    return True
