"""``save`` and ``load``: a state dict to a file and back, with no code in the file.

A state dict is names mapped to tensors (``model.state_dict()``). ``save`` writes it
as a NumPy ``.npz`` archive: one ``.npy`` array per entry, and the names, in order, as
an array of strings. ``load`` reads it back with ``allow_pickle=False``, so a file can
hold only arrays of numbers and strings: opening one never runs code from it (unlike a
pickle, which can call any function while it is read). A file that is not such an
archive, or is damaged, gets a sentence.
"""

from __future__ import annotations

import os
import zipfile
from collections import OrderedDict
from collections.abc import Mapping

import numpy as np

from . import errors
from .recording.device import check_device
from .recording.tensor import Tensor

__all__ = ["save", "load"]

_KEYS = "keys"  # the archive entry holding the names, in order


def save(obj: Mapping, f) -> None:
    """Write the state dict ``obj`` (names to tensors or arrays of numbers) to ``f``, a
    path (written as given, no suffix added) or a binary file object, as ``torch.save``
    does for a state dict.

    >>> save(model.state_dict(), "model.npz")          # doctest: +SKIP
    """
    if not isinstance(obj, Mapping):
        raise errors.save_object(obj)
    arrays = {}
    for i, (key, value) in enumerate(obj.items()):
        data = value._data if isinstance(value, Tensor) else value
        if not isinstance(key, str) or not isinstance(data, np.ndarray | np.number) \
                or np.asarray(data).dtype.kind not in "biuf":
            raise errors.save_entry(key, value)
        arrays[f"v{i}"] = np.asarray(data)
    arrays[_KEYS] = np.array(list(obj.keys()), dtype=np.str_)
    if isinstance(f, str | os.PathLike):
        with open(f, "wb") as file:
            np.savez(file, **arrays)
    else:
        np.savez(f, **arrays)


def load(f, map_location=None, weights_only: bool = True) -> OrderedDict:
    """The state dict ``save`` wrote to ``f`` (a path or a binary file object): names to
    tensors, in the order saved, as ``torch.load`` gives it. Only arrays are read (no
    pickle), so the file cannot run code; ``map_location`` may be the CPU."""
    check_device(map_location)
    try:
        archive = np.load(f, allow_pickle=False)
    except FileNotFoundError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise errors.damaged_file(f, _first_line(exc)) from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise errors.damaged_file(f, "it holds one array, not a state dict")
    with archive:
        try:
            keys = archive[_KEYS]
            if keys.dtype.kind != "U" or keys.ndim != 1:
                raise errors.damaged_file(f, "its list of names is not a list of strings")
            return OrderedDict((str(key), Tensor._wrap(archive[f"v{i}"]))
                               for i, key in enumerate(keys))
        except KeyError as exc:
            raise errors.damaged_file(f, f"the entry {exc} is missing") from None
        except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
            if str(exc).startswith("load:"):  # our own sentence, from just above
                raise
            raise errors.damaged_file(f, _first_line(exc)) from None


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
