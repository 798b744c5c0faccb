"""Every differentiable operation: its node class, named as PyTorch names it, with the
backward formula, and right below it the forward that records it.

A forward computes on numpy arrays and hands the result to ``_record`` (``record.py``), which
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
inputs are summed back to their shapes in one place, ``graph.unbroadcast``.

The families, one file each:

* ``record.py``      recording an operation; helpers the formulas share
* ``arithmetic.py``  + - * / ** and the elementwise functions (exp, log, tanh, relu, ...)
* ``reductions.py``  sum, mean, max/min, prod, norm
* ``linalg.py``      mm, mv, dot, bmm, matmul
* ``shape.py``       view, reshape, permute, transpose, squeeze, expand, cat, stack, to
* ``indexing.py``    x[0], x[1:3], x[[0, 2]], x[mask]
* ``inplace.py``     add_, mul_, x[0] = v, fill_, clamp_
* ``nn.py``          clamp, softmax, argmax, all/any, movedim; linear and the losses of
                     ``torch.nn.functional``
"""
from .arithmetic import (abs, add, cos, div, exp, log, maximum, mul, neg, pow, rdiv,  # noqa: A004
                         reciprocal, relu, rpow, rsub, sigmoid, sign, sin, sqrt, sub, tanh,
                         where)
from .indexing import getitem
from .inplace import copy_grad, inplace, inplace_fill, inplace_unary, setitem, zero_
from .linalg import bmm, dot, matmul, mm, mv
from .nn import (all, any, argmax, argmin, clamp, log_softmax, movedim,  # noqa: A004
                 softmax)
from .record import _edge, other_type_error
from .reductions import max, mean, min, norm, prod, sum  # noqa: A004
from .shape import (T, cat, clone, contiguous, eq, expand, flatten, ge, gt, le, lt, ne, permute,
                    reshape, squeeze, stack, t, to, transpose, unsqueeze, view)
