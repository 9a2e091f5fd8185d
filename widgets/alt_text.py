"""Text alternatives for the pictures the project puts in notebook outputs.

JupyterLab draws an output's ``image/png`` or ``image/svg+xml`` as an ``<img>`` with
no ``alt``: a screen reader meets "image" and nothing more. An output can carry the
picture's text alternative in its metadata, under the picture's MIME type::

    {"image/png": {"alt": "Bytes held for backward ..."}}

That is the key nbconvert's HTML export writes as the ``<img>``'s ``alt``; the
project's JupyterLab extension (``widgets/labextension``) writes it onto the
``<img>`` JupyterLab draws. nbval does not compare output metadata, so adding it
leaves the lessons' stored outputs valid.

* :func:`alt_metadata`: that metadata, for one picture;
* :func:`graph_alt`: the text alternative of a graph picture laid out by
  ``widgets.svg`` ("Computational graph: 5 ops, 8 tensors"), read from the SVG itself.

Pure Python (no Jupyter, no matplotlib): ``widgets.svg`` uses it.
"""

from __future__ import annotations

import re

__all__ = ["ALT", "alt_metadata", "graph_alt"]

ALT = "alt"  # the metadata key (nbconvert's)

# A node group as widgets.svg leaves it: <g id="op3" class="node op">
_NODE = re.compile(r'<g id="(?P<id>[^"]+)" class="node (?P<classes>[^"]*)"')


def alt_metadata(text: str, mime: str = "image/png") -> dict[str, dict[str, str]]:
    """Output metadata that gives the ``mime`` picture of an output the text
    alternative ``text``.

    >>> alt_metadata("a plot")
    {'image/png': {'alt': 'a plot'}}
    """
    return {mime: {ALT: text}}


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def graph_alt(svg: str) -> str:
    """What a graph picture shows, in one sentence: its ops and tensors (a tensor drawn
    again beside each op that uses it counts once), the modules drawn as one box, and
    whether ops were left out of it.

    >>> graph_alt('<g id="op0" class="node op"><g id="t0" class="node tensor leaf">'
    ...           '<g id="t0_at_op0" class="node tensor leaf copy_t0">')
    'Computational graph: 1 op, 1 tensor'
    """
    ops, tensors, boxes, gaps = 0, set(), 0, 0
    for node in _NODE.finditer(svg):
        classes = node["classes"].split()
        kind = classes[0] if classes else ""
        if kind == "op":
            ops += 1
        elif kind == "tensor":
            copy = next((c[len("copy_"):] for c in classes if c.startswith("copy_")), None)
            tensors.add(copy or node["id"])
        elif kind == "module_box":
            boxes += 1
        elif kind == "gap":
            gaps += 1
    text = f"Computational graph: {_count(ops, 'op')}, {_count(len(tensors), 'tensor')}"
    if boxes:
        text += f", {_count(boxes, 'module')} drawn as one box each"
    if gaps:
        text += f"; {_count(gaps, 'run')} of ops left out, each drawn as one note"
    return text
