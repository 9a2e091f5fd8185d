"""Layer 1, the tensor and its graph: how a forward pass records what backward needs.

* ``tensor.py``: the ``Tensor``, a NumPy array plus what autograd needs to know about it.
  Its maths (``x + y``, ``x.exp()``, ``x.sum()``) and ``backward`` run ops and the sweep,
  which sit in the layers above; ``autograd_core/tensor_methods.py`` puts them on the class.
* ``node.py``: ``Function``, the base class of every op, and the ``Node`` each recorded
  call leaves in the graph, with its named saved tensors; the observers that watch ops run.
* ``grad_mode.py``: ``no_grad`` and ``enable_grad``, which switch recording off and on.
* ``source.py``: the line of your code each node was recorded from.
* ``creation.py``: new leaf tensors (``zeros``, ``randn``, ...) and seeded generators.

Nothing here imports a layer above it.
"""
