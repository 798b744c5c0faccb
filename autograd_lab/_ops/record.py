"""What the operations share for recording themselves, on top of the core's ``_record``,
``_record1`` and ``_view`` (``_core/record.py``, imported from here by every op module): the
forward of ``+ - * / **`` written out for speed (``_binary``), PyTorch's dtype promotion and
broadcasting errors, and the few helpers backward formulas share (``_f``), so that the same
formula runs on numpy arrays and, for ``create_graph=True``, on Tensors."""
import builtins

import numpy as np

from .._core.grad_mode import _State
from .._core.hooks import typename
from .._core.graph import (_data, _sequence, _slot_names, grad_accumulator, new_node,
                           remember_forward)
# (the op modules import the core's recording functions from here, with those below)
from .._core.record import _edge, _record, _record1, _view, note_dtypes  # noqa: F401
from .._core.tensor import Tensor, _wrap
from .._core.zeros import plain as _plain
from .._core.zeros import zeros as _zeros

_ndarray = np.ndarray
_new = object.__new__


def _operand(x):
    """A second operand: a Tensor or a number (a numpy scalar as the Python number it holds),
    as PyTorch's parser takes them. Anything else -- a list, a tuple, a numpy array (even a
    0-d one), None -- gives NotImplemented: an operator then does what Python does next
    (``x + [1.]`` raises Python's TypeError, ``x * [1.]`` asks the list to repeat itself,
    ``x * np.ones(2)`` is numpy's, which reads ``x`` as an array), a method or function raises
    PyTorch's TypeError (``other_type_error``)."""
    if type(x) is Tensor or type(x) is float or type(x) is int or type(x) is bool:
        return x
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (np.number, np.bool_)):     # (np.float64 is a float too)
        return x.item()
    if isinstance(x, (int, float)):
        return x
    return NotImplemented


def other_type_error(name, other, position):
    return TypeError(f"{name}(): argument 'other' (position {position}) must be Tensor, not "
                     f"{typename(other)}")


def typed(op, position):
    """``op`` as a method or a function: the same operation as the operator (which returns
    NotImplemented for an operand it cannot take, so that Python raises its TypeError), with
    PyTorch's TypeError instead when called by name (``x.add(None)``, ``torch.add(x, None)``):
    ``other`` is argument ``position``."""
    def method(self, other, *args, **kwargs):
        out = op(self, other, *args, **kwargs)
        if out is NotImplemented:
            raise other_type_error(op.__name__, other, position)
        return out
    method.__name__ = op.__name__
    return method


def _promote(out, a, b, fn=None):
    """Fix numpy's result dtype where PyTorch's promotion differs (called only on a mismatch).

    PyTorch: integer tensors with a float scalar or true division give the default float32;
    a 0-dim tensor does not raise the dtype of a tensor with dimensions, unless it brings the
    floats: then its dtype is the result's (an integer or bool tensor times a 0-dim float64).

    PyTorch casts the operands to that dtype first: given the operation ``fn``, a float result
    is computed again from operands so rounded (int 16777217 + 0.5 is 16777216 in float32,
    16777218 rounded from float64; a 0-d float64 -1.6 is -1.6f). It is computed in numpy's
    wider dtype and rounded once, which for + - * / is exactly the narrower operation, and
    for a power is PyTorch's result where numpy's float32 power is less accurate."""
    da, db = _data(a), _data(b)
    # (a tensor's 0-d result may be a numpy scalar; a Python number never counts)
    arrays = [d for d in (da, db) if isinstance(d, (_ndarray, np.generic))]
    dims = [d for d in arrays if d.ndim] or arrays
    floats = [d.dtype for d in dims if d.dtype.kind == "f"]
    if floats:
        want = np.result_type(*floats)
    elif out.dtype.kind == "f":
        zero_dim = [d.dtype for d in arrays if d.dtype.kind == "f"]
        want = np.result_type(*zero_dim) if zero_dim else np.dtype(np.float32)
    elif any(d.dtype.kind == "b" for d in dims) and out.dtype.kind != "b":
        want = out.dtype
    else:
        want = np.result_type(*[d.dtype for d in dims]) if dims else out.dtype
    if out.dtype == want:
        return out
    if fn is not None and want.kind == "f" and out.dtype.kind == "f":
        wide = out.dtype
        out = fn(np.asarray(da, want).astype(wide), np.asarray(db, want).astype(wide))
    return out.astype(want)


def wrap_dim(dim, ndim):
    """``dim`` as a position in 0..ndim-1 (a negative one counts from the end), or PyTorch's
    IndexError. A 0-d tensor takes 0 and -1, as if it had one dimension."""
    n = ndim or 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def wrap_dims(dims, ndim):
    """Each of ``dims`` wrapped as ``wrap_dim`` wraps it, in the order given, or PyTorch's
    error for a dimension named twice (``x.sum((0, -2))`` of a matrix)."""
    wrapped = []
    for d in dims:
        d = wrap_dim(d, ndim)
        if d in wrapped:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        wrapped.append(d)
    return tuple(wrapped)


def broadcast_error(*shapes):
    """PyTorch's error for shapes that do not broadcast together (numpy's is a ValueError), or
    None if they do. Shapes are combined left to right, each compared from its last dimension,
    as PyTorch's TensorIterator does; "tensor a" is what the shapes before combine to."""
    shape = tuple(shapes[0])
    for other in shapes[1:]:
        n = builtins.max(len(shape), len(other))
        a = (1,) * (n - len(shape)) + shape
        b = (1,) * (n - len(other)) + tuple(other)
        for i in reversed(range(n)):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                return RuntimeError(f"The size of tensor a ({a[i]}) must match the size of "
                                    f"tensor b ({b[i]}) at non-singleton dimension {i}")
        shape = tuple(y if x == 1 else x for x, y in zip(a, b))
    return None


def broadcasting(fn, *args):
    """``fn(*args)`` on arrays and numbers, with PyTorch's error if their shapes do not
    broadcast together."""
    try:
        return fn(*args)
    except ValueError:
        error = broadcast_error(*[np.shape(a) for a in args])
        if error is None:
            raise
        raise error from None


def _binary(cls, fn, a, b):
    """The forward of a two-input operation (``a`` a Tensor, ``b`` a Tensor or a number):
    compute, fix the dtype where PyTorch promotes differently, and record. This runs for
    every ``+ - * / **``, so it avoids generic helpers on the common path."""
    tb = type(b)
    if tb is Tensor:
        bd = b._data
    elif tb is float or tb is int:
        bd = b
    else:
        b = _operand(b)
        if b is NotImplemented:
            return b, None
        tb, bd = type(b), _data(b)
    ad = a._data
    da = ad.dtype
    if tb is float and type(ad) is _ndarray:
        last = _last_number         # _number's quick case, written out
        bd = last[2] if last[0] is bd and last[1] is da else _number(bd, ad)
    try:
        out = fn(ad, bd)
    except ValueError:
        out = broadcasting(fn, ad, bd)      # raises PyTorch's error for a shape mismatch
    db = bd.dtype if tb is Tensor else None
    if out.dtype is not da or db is not None and out.dtype is not db:
        out = _promote(out, a, b, fn)
    if _State.enabled and (a._rg or tb is Tensor and b._rg):
        if tb is not Tensor and _State.formula and cls.scalar is not None:
            return _scalar_overload(cls.scalar, out, a, b), None
        # new_node() and _wrap(), written out: this is the one hottest path of the engine
        node = _new(cls)
        node._next = ((a._grad_fn or grad_accumulator(a)) if a._rg else None,
                      (b._grad_fn or grad_accumulator(b)) if tb is Tensor and b._rg else None)
        node._saved = ()
        node._checks = node._pending = node._extras = None
        node._seq = next(_sequence)
        if _State.anomaly:
            remember_forward(node)
        if db is not None:
            # Two tensors of different shapes were broadcast: backward sums each gradient
            # back to its input's shape. (A number never stretches a.)
            if ad.shape != bd.shape:
                node._shapes = (ad.shape, bd.shape)
            # Two dtypes: numpy's promotion inside the backward formula is not PyTorch's, so
            # each gradient is cast back to its input's dtype (as PyTorch's engine does).
            if da is not db:
                node._extras_table()["dtypes"] = (da, db)
        t = _new(Tensor)
        t._data, t._grad_fn, t._rg = out, node, True
        t._vc = None
        return t, node
    return _wrap(out), None


def _scalar_overload(cls, out, a, number):
    """``a <op> number`` inside a backward formula being recorded (``_State.formula``): the
    node of PyTorch's Scalar overload (``cls``: MulBackward1 for ``grad * 2``), whose one input
    is ``a``; a Python ``x * 2`` records MulBackward0, for two. The node is complete: the
    number it keeps, if any, is saved here."""
    node = new_node(cls, (a._grad_fn or grad_accumulator(a),))
    if "other" in cls.__slots__:
        node.other = number             # a Scalar: shown as a number, never freed
    return _wrap(out, node, True)


_numbers = {}
_last_number = [None, None, None]      # the last (float, dtype, array) converted


def _number(b, like):
    """A Python float ``b`` as a 0-d array of floating array ``like``'s dtype, else ``b``.

    numpy converts a Python float again on every call, which on a small array costs more
    than the arithmetic (460 ns against 200 for ``a * 0.5``). A loop uses the same few
    numbers over and over, so the conversions are kept -- the last one at hand, since a loop
    passes the very same float object again. (Not 0.0, which would also stand for -0.0.)"""
    if type(b) is not float or type(like) is not _ndarray or not b:
        return b
    dtype = like.dtype
    last = _last_number
    if last[0] is b and last[1] is dtype:
        return last[2]
    if dtype.kind != "f":       # an integer array: numpy must see the float, or 0.5 becomes 0
        return b
    key = (b, dtype)
    c = _numbers.get(key)
    if c is None:
        if len(_numbers) > 255:
            _numbers.clear()
        c = _numbers[key] = np.array(b, dtype)
    last[:] = b, dtype, c
    return c


class _F:
    """The functions a backward formula needs beyond operators, for arrays and Tensors: on
    arrays they compute, on Tensors (create_graph) they are the operations PyTorch's formula
    calls, so that the graph they record is PyTorch's. (``_f.where`` and ``_f.masked_fill``:
    arithmetic.py's ``_f``, which adds them.)"""

    @staticmethod
    def expand(g, shape):
        return g.expand(shape) if type(g) is Tensor else np.broadcast_to(g, shape)

    @staticmethod
    def call(name, x):      # np.cos(x) for an array, x.cos() for a Tensor
        return getattr(x, name)() if type(x) is Tensor else getattr(np, name)(x)

    @staticmethod
    def zeros_like(g):      # not g * 0, which is nan where g is inf
        return _wrap(np.zeros_like(g._data)) if type(g) is Tensor else np.zeros_like(g)

    @staticmethod
    def zero_tensor_like(g):
        """PyTorch's ``_efficientzerotensor`` of g's shape and dtype (_core/zeros.py)"""
        z = _zeros(np.shape(_data(g)), _data(g).dtype)
        return _wrap(z) if type(g) is Tensor else z

    @staticmethod
    def number(b, like):
        """A number the user gave as an operand (the 2 of ``x * 2``), as the formula reads it:
        PyTorch's Python layer wrapped it in a 0-d tensor (a "wrapped number", which takes
        the other operand's dtype), so ``grad * other`` records MulBackward0 with no edge for
        it, where a formula's own numbers are Scalars (``_State.formula``)."""
        if type(like) is Tensor and type(b) in (int, float, bool):
            return _wrap(np.asarray(b, like._data.dtype))
        return _number(b, like)

    # Operations of the op modules, which import this one: on a Tensor, the Tensor method
    # (bound by _tensor_methods.py) -- as ``call`` and ``expand`` do. ``where`` and ``masked_fill``
    # extend this class in arithmetic.py, next to those operations.
    @staticmethod
    def t(x):
        return x.t() if type(x) is Tensor else x.T

    @staticmethod
    def transpose(x, dim0, dim1):
        return x.transpose(dim0, dim1) if type(x) is Tensor else x.swapaxes(dim0, dim1)

    @staticmethod
    def unsqueeze(x, dim):
        return x.unsqueeze(dim) if type(x) is Tensor else np.expand_dims(x, dim)


def derivative(cls):
    """The function a backward formula calls where PyTorch's calls an operation of its own
    (``tanh_backward(grad, result)``): ``cls.forward`` computes it on arrays; given Tensors
    (create_graph) it is recorded as a ``cls`` node (TanhBackwardBackward0), whose own
    backward differentiates it again.

    The positional arguments are its differentiable inputs (``cls.inputs``: an edge each);
    keyword arguments are the others (a dim, an index). The node saves the values
    ``cls.saved_names`` names, inputs or keywords (an index array as a tensor) or ``result``
    (its own output), and keeps the keywords that are its slots (``_saved_threshold``). Without
    a Tensor argument it returns the array ``cls.forward`` gives."""
    fn = cls.forward
    slots = _slot_names(cls)

    def op(*args, **kwargs):
        for a in args:
            if type(a) is Tensor:
                break
        else:
            return fn(*args, **kwargs)
        # (a kernel of PyTorch's own, not one that knows ZeroTensors: it reads plain zeros)
        out = np.asarray(fn(*[_plain(_data(a)) for a in args], **kwargs))
        result, node = _record(cls, out, *args)
        if node:
            if cls.makes_zeros:
                node._extras_table()["zeros"] = True    # (the engine's careful path)
            shapes = tuple(np.shape(_data(a)) for a in args)
            if any(shape != out.shape for shape in shapes):
                node._shapes = shapes       # broadcast inputs: gradients summed back
            for name, value in kwargs.items():
                if name in slots:
                    setattr(node, name, value)
            node.save_for_backward(*[
                result if name == "result" else
                args[cls.inputs.index(name)] if name in cls.inputs else
                _wrap(kwargs[name]) if type(kwargs[name]) is _ndarray else kwargs[name]
                for name in cls.saved_names])
        return result
    op.__name__ = op.__qualname__ = cls.op_name
    op.__doc__ = cls.__doc__
    return op


_f = _F


def _float(a):
    return a if a.dtype.kind == "f" else a.astype(np.float32)
