"""Containers that register what they hold: ``ModuleList``, ``ModuleDict``,
``ParameterList``.

A plain Python list of layers assigned to ``self.blocks`` is invisible to the module:
``parameters()`` misses the layers' weights, the optimizer never updates them and
``state_dict`` leaves them out. These containers are modules whose entries are
registered children (or parameters) named ``"0"``, ``"1"``, ... (a ModuleDict: by its
keys), so paths read ``blocks.0.weight``, as in PyTorch. None of them has a
``forward``: the model's own forward says how the entries are used.

>>> from autograd_core import nn
>>> blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
>>> len(blocks), [name for name, _ in blocks.named_parameters()][:2]
(3, ['0.weight', '0.bias'])
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping

import numpy as np

from .. import errors
from ..recording.tensor import Tensor
from .module import Module
from .parameter import Parameter

__all__ = ["ModuleList", "ModuleDict", "ParameterList"]


def _position(kind: str, index, length: int) -> int:
    """A list index (negative counts from the end) as a position, or a sentence."""
    if not isinstance(index, int | np.integer) or isinstance(index, bool):
        raise errors.container_index_type(kind, index)
    if not -length <= index < length:
        raise errors.container_index(kind, index, length)
    return int(index) % length


class _ListBase(Module):
    """What ModuleList and ParameterList share: entries stored under "0", "1", ... in
    ``_members`` (``_modules`` or ``_parameters``), kept numbered in order."""

    _members = "_modules"

    def _entries(self) -> list:
        return list(getattr(self, self._members).values())

    def _renumber(self, entries: list) -> None:
        members = getattr(self, self._members)
        members.clear()
        for entry in entries:
            self._add(str(len(members)), entry)

    def __len__(self) -> int:
        return len(getattr(self, self._members))

    def __iter__(self) -> Iterator:
        return iter(self._entries())

    def __getitem__(self, index):
        entries = self._entries()
        if isinstance(index, slice):
            return type(self)(entries[index])
        return entries[_position(type(self).__name__, index, len(entries))]

    def __setitem__(self, index, value) -> None:
        position = _position(type(self).__name__, index, len(self))
        self._add(str(position), value)

    def __delitem__(self, index) -> None:
        entries = self._entries()
        if isinstance(index, slice):
            del entries[index]
        else:
            del entries[_position(type(self).__name__, index, len(entries))]
        self._renumber(entries)

    def __iadd__(self, values: Iterable):
        return self.extend(values)

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, value):
        """Add ``value`` at the end; returns ``self``."""
        self._add(str(len(self)), value)
        return self

    def extend(self, values: Iterable):
        """Add each of ``values`` at the end, in order; returns ``self``."""
        if isinstance(values, Tensor | Module) or not isinstance(values, Iterable):
            raise errors.container_entry(type(self).__name__, values, "an iterable of entries")
        for value in values:
            self.append(value)
        return self

    def insert(self, index: int, value) -> None:
        """Put ``value`` before position ``index`` (as ``list.insert``)."""
        entries = self._entries()
        entries.insert(int(index), value)
        self._renumber(entries)


class ModuleList(_ListBase):
    """Modules in a list, each registered (``blocks.0.weight``): index, slice (a
    ModuleList), iterate, ``len``, ``append``, ``extend``, ``insert``, ``+=``."""

    def __init__(self, modules: Iterable[Module] | None = None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _add(self, name: str, module) -> None:
        if not isinstance(module, Module):
            raise errors.container_entry("ModuleList", module, "nn.Module objects")
        self.add_module(name, module)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        return ModuleList([*self, *other])


class ParameterList(_ListBase):
    """Parameters in a list, each registered (``weights.0``); a tensor appended becomes a
    Parameter that requires grad (its values copied), as in PyTorch."""

    _members = "_parameters"

    def __init__(self, values: Iterable | None = None):
        super().__init__()
        if values is not None:
            self.extend(values)

    def _add(self, name: str, value) -> None:
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value._data)  # as PyTorch: a Parameter that requires grad
        if not isinstance(value, Parameter):
            raise errors.container_entry("ParameterList", value, "tensors (nn.Parameter)")
        self.register_parameter(name, value)

    def extra_repr(self) -> str:
        return "\n".join(f"({i}): Parameter containing: [{p.dtype} of size "
                         f"{'x'.join(map(str, p.shape))}]" for i, p in enumerate(self))


class ModuleDict(Module):
    """Modules by name, each registered under its key (``heads.cls.weight``), in the
    order they were put in: ``d[key]``, ``d[key] = m``, ``del d[key]``, ``in``, ``len``,
    iteration over keys, ``keys``, ``values``, ``items``, ``update``, ``pop``, ``clear``."""

    def __init__(self, modules: Mapping[str, Module] | Iterable | None = None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        if key not in self._modules:
            raise errors.module_dict_key(key)
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        if not isinstance(module, Module):
            raise errors.container_entry("ModuleDict", module, "nn.Module objects")
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        if key not in self._modules:
            raise errors.module_dict_key(key)
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._modules))

    def __contains__(self, key) -> bool:
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def update(self, modules: Mapping[str, Module] | Iterable) -> None:
        """Add (or replace) each ``key: module`` of a mapping or of (key, module) pairs."""
        pairs = modules.items() if isinstance(modules, Mapping | OrderedDict) else modules
        for pair in pairs:
            if not isinstance(pair, tuple | list) or len(pair) != 2:
                raise errors.container_entry("ModuleDict", pair, "(key, module) pairs")
            self[pair[0]] = pair[1]

    def pop(self, key: str) -> Module:
        """Remove ``key`` and return its module."""
        module = self[key]
        del self[key]
        return module

    def clear(self) -> None:
        """Remove every entry."""
        self._modules.clear()
