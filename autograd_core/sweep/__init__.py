"""Layer 3, the reverse sweep: from an output back to every leaf, one node at a time.

* ``engine.py``: the one loop (``_sweep``) behind ``Tensor.backward``, ``grad`` and the
  stepper, with or without ``create_graph``; hooks, observers, accumulation, release.
* ``grad.py``: ``grad(outputs, inputs)``, gradients returned rather than accumulated.

It builds on the recording layer (``autograd_core/recording``) and runs each op's
``backward`` from ``autograd_core/ops``.
"""
