"""The core: what every operation is built on, and nothing built on it.

Bottom to top (each module imports only those listed before it):

* ``grad_mode.py``  whether operations record (``no_grad``, ``inference_mode``, anomaly mode)
* ``dtype.py``, ``device.py``  the names PyTorch prints: ``torch.float32``, ``torch.Size``,
  ``device(type='cpu')``
* ``tensor_str.py``  printing a tensor
* ``hooks.py``      hook handles, and the check of what a gradient hook returns
* ``tensor.py``     the Tensor: data, ``requires_grad``, ``grad_fn``, ``.grad``, versions
* ``graph.py``      graph nodes, saved tensors, ``AccumulateGrad``, ``unbroadcast``
* ``record.py``     recording an operation: its result tensor, its node, views
* ``engine.py``     the backward pass: topological sort, sweep, accumulate, free
* ``backward.py``   ``backward()`` and ``grad()``: checking their arguments, then the engine
  (``torch.autograd.backward`` and ``grad``, in ``autograd/``, call these)

The core imports no operation (``_ops/``) and no public module: those import it. Where the
core needs an operation at run time (adding two gradients, casting one), it calls a Tensor
method, which ``_tensor_methods.py`` binds onto Tensor, once, when the package is imported.
(``.importlinter`` at the repository root checks these rules.)
"""
