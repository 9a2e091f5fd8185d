"""``DescribedImage``: an image widget with a text alternative (``alt``).

ipywidgets' ``Image`` draws an ``<img>`` without ``alt``, and cannot be given one
(its ``tooltip`` even stops the view: ipywidgets 8.1 reads a ``description`` that
``Image`` has not got). This widget keeps ``Image``'s interface where the views use it
(``value``: the image's bytes, ``format``) and adds ``alt``; the browser side
(``widgets/static/described_image.js``, an anywidget module shipped in the package)
sets it on the ``<img>``.
"""

from __future__ import annotations

from pathlib import Path

import anywidget
import traitlets

__all__ = ["DescribedImage"]

_STATIC = Path(__file__).parent / "static"


class DescribedImage(anywidget.AnyWidget):
    """An image (``value``: its bytes, in ``format``) with the text alternative ``alt``.

    >>> DescribedImage(alt="a plot").format
    'png'
    """

    # Read as text, not given as a path (see widgets.canvas).
    _esm = (_STATIC / "described_image.js").read_text(encoding="utf-8")

    value = traitlets.Bytes(b"").tag(sync=True)
    format = traitlets.Unicode("png").tag(sync=True)
    alt = traitlets.Unicode("").tag(sync=True)
