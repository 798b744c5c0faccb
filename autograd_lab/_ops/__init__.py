"""Every differentiable operation: its node class, named as PyTorch names it, with the
backward formula, and right below it the forward that records it.

A forward computes on numpy arrays and hands the result to ``_record`` (``_core/record.py``),
which
wraps it in a Tensor and, if grad mode is on and an input requires grad, attaches a new node.
The node remembers where each input's gradient goes next and what backward needs
(``save_for_backward``).

A backward receives ``g`` = dL/d(output) and returns dL/d(input) for each input: the
vector-Jacobian product. What forward saved is in ``self._saved`` (checked by the engine
first: not freed, not changed in place). Formulas are PyTorch's (its derivatives.yaml), written
with operators and the ``_f`` helpers, so the same formula runs on numpy arrays (a plain
backward) and on Tensors (``create_graph=True``, where the backward is itself recorded and can
be differentiated again) -- and records the nodes PyTorch's records: where PyTorch's formula
calls an operation of its own (``tanh_backward``), so does this one (``record.derivative``:
TanhBackwardBackward0, with its own backward), and a number in a formula is a C++ Scalar
(``grad * 2`` records MulBackward1, see ``_State.formula``). A formula computes its inputs'
gradients in the order PyTorch's generated code does, the alphabetical order of the inputs'
names (``other`` before ``self``, ``mat2`` before ``self``): recorded, its nodes are made in
PyTorch's order, which decides the order of a later backward pass and of its hooks. Broadcast
inputs are summed back to their shapes in one place, ``graph.unbroadcast`` (``_core/``).

The families, one file each, each importing only the ones listed before it (and the core,
``_core/``; never a public module):

* ``record.py``      what the operations share to record themselves; the formulas' helpers
* ``arithmetic.py``  + - * / ** and the elementwise functions (exp, log, tanh, relu, ...)
* ``shape.py``       view, reshape, permute, transpose, squeeze, expand, cat, stack, to
* ``reductions.py``  sum, mean, max/min, prod, norm
* ``indexing.py``    x[0], x[1:3], x[[0, 2]], x[mask]
* ``linalg.py``      mm, mv, dot, bmm, matmul
* ``inplace.py``     add_, mul_, x[0] = v, fill_, clamp_
* ``nn.py``          clamp, softmax, argmax, all/any, movedim; linear and the losses of
                     ``torch.nn.functional``

and on top of them, without operations of their own:

* ``arg_parser.py``  PyTorch's argument checks, for the calls it refuses
* ``random.py``      ``rand``, ``randn``: PyTorch's CPU generator, bit for bit
* ``factories.py``   ``zeros``, ``ones``, ``arange``, ``linspace``, ``*_like``
* ``functions.py``   ``torch.<name>``: the operations as ``autograd_lab`` exports them

(The table that puts them on Tensor as methods and operators, ``x.sum``, ``x + y``, is
``autograd_lab/_tensor_methods.py``.)
"""
