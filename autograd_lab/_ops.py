"""Every differentiable operation: its node class (PyTorch's name) with the backward formula,
and right below it the forward that records it.

A forward computes on numpy arrays and hands the result to ``_record``, which wraps it in a
Tensor and, if grad mode is on and an input requires grad, attaches a new node. The node
remembers where each input's gradient goes next and what backward needs (``save_for_backward``).

A backward receives ``g`` = dL/d(output) and returns dL/d(input) for each input: the
vector-Jacobian product. What forward saved is in ``self._saved`` (checked by the engine
first: not freed, not changed in place). It is written with operators and ``_f`` helpers only, so the same
formula runs on numpy arrays (a plain backward) and on Tensors (``create_graph=True``, where
the backward is itself recorded and can be differentiated again). Broadcast inputs are summed
back to their shapes in one place, ``graph.unbroadcast``.
"""
import builtins
import math
import operator

import numpy as np

from ._tensor import Tensor, _wrap, tensor
from .autograd.graph import Node, _sequence, new_node, save_one
from .autograd.grad_mode import _State

_ndarray = np.ndarray
_new = object.__new__


# ----------------------------------------------------------------------------------------
# recording
# ----------------------------------------------------------------------------------------
def _edge(x):
    """Where the gradient for input ``x`` goes: its grad_fn, its AccumulateGrad, or nowhere."""
    if type(x) is not Tensor or not x._rg:
        return None
    return x.grad_fn or x._grad_accumulator()


def _record(cls, out, *inputs):
    """Wrap ``out``; attach a new ``cls`` node if grad mode is on and some input requires grad.
    Returns the tensor and the node (``None`` when nothing was recorded)."""
    if _State.enabled:
        for x in inputs:
            if type(x) is Tensor and x._rg:
                node = new_node(cls, tuple([_edge(i) for i in inputs]))
                return _wrap(out, node, True), node
    return _wrap(out), None


def _record1(cls, out, x):
    """``_record`` for an operation of one tensor, the common case, kept quick."""
    if x._rg and _State.enabled:
        node = new_node(cls, (x.grad_fn or x._grad_accumulator(),))
        return _wrap(out, node, True), node
    return _wrap(out), None


def _view(cls, out, x):
    """``_record`` for an op whose result is a view of x's data. Like a PyTorch view it shares
    x's version counter -- an in-place change through either one is a change of both, which
    saved tensors must notice -- and it knows its base tensor (``._base``)."""
    result, node = _record1(cls, out, x)
    result._vc = x._counter()
    result._base = x if x._base is None else x._base
    return result, node


def _data(x):
    return x._data if type(x) is Tensor else x


def _operand(x):
    """A second operand: Tensors and Python numbers pass; arrays and lists become tensors."""
    if type(x) is Tensor or type(x) is float or type(x) is int or type(x) is bool:
        return x
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (int, float, np.number)):
        return x.item() if isinstance(x, np.number) else x
    return tensor(x)


def _promote(out, a, b):
    """Fix numpy's result dtype where PyTorch's promotion differs (called only on a mismatch).

    PyTorch: integer tensors with a float scalar or true division give the default float32;
    a 0-dim tensor does not raise the dtype of a tensor with dimensions."""
    da, db = _data(a), _data(b)
    arrays = [d for d in (da, db) if isinstance(d, _ndarray)]
    dims = [d for d in arrays if d.ndim] or arrays
    floats = [d.dtype for d in dims if d.dtype.kind == "f"]
    if floats:
        want = np.result_type(*floats)
    elif out.dtype.kind == "f":
        want = np.float32
    elif any(d.dtype.kind == "b" for d in dims) and out.dtype.kind != "b":
        want = out.dtype
    else:
        want = np.result_type(*[d.dtype for d in dims]) if dims else out.dtype
    return out if out.dtype == want else out.astype(want)


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
        tb, bd = type(b), _data(b)
    ad = a._data
    out = fn(ad, _number(bd, ad) if tb is float else bd)
    if out.dtype is not ad.dtype or tb is Tensor and out.dtype is not bd.dtype:
        out = _promote(out, a, b)
    if _State.enabled and (a._rg or tb is Tensor and b._rg):
        # new_node() and _wrap(), written out: this is the one hottest path of the engine
        node = _new(cls)
        node._next = ((a.grad_fn or a._grad_accumulator()) if a._rg else None,
                      (b.grad_fn or b._grad_accumulator()) if tb is Tensor and b._rg else None)
        node._saved = ()
        node._checks = node._shapes = node._hooks = node._pending = None
        node._seq = next(_sequence)
        shape = out.shape
        if ad.shape != shape or tb is Tensor and bd.shape != shape:
            node._shapes = (ad.shape, bd.shape if tb is Tensor else ())
        t = _new(Tensor)
        t._data, t.grad_fn, t._rg = out, node, True
        t._grad = t._acc = t._hooks = t._vc = None
        return t, node
    return _wrap(out), None


_numbers = {}


def _number(b, like):
    """A Python float ``b`` as a 0-d array of float array ``like``'s dtype, else ``b``.

    numpy converts a Python float again on every call, which on a small array costs more
    than the arithmetic (460 ns against 200 for ``a * 0.5``). A loop uses the same few
    numbers over and over, so the conversions are kept. (Not 0.0, which would also stand
    for -0.0: equal keys.)"""
    if type(b) is not float or type(like) is not _ndarray or not b:
        return b
    key = (b, like.dtype)
    c = _numbers.get(key)
    if c is None:
        if len(_numbers) > 255:
            _numbers.clear()
        c = _numbers[key] = np.array(b, like.dtype)
    return c


class _F:
    """The few functions a backward formula needs beyond operators, for arrays and Tensors."""


    @staticmethod
    def expand(g, shape):
        return g.expand(shape) if type(g) is Tensor else np.broadcast_to(g, shape)

    @staticmethod
    def call(name, x):      # np.cos(x) for an array, x.cos() for a Tensor
        return getattr(x, name)() if type(x) is Tensor else getattr(np, name)(x)

    @staticmethod
    def where(cond, x, y):
        if type(cond) is not Tensor and type(x) is not Tensor and type(y) is not Tensor:
            return np.where(cond, x, y)
        return where(_wrap(_data(cond)), x, y)

    @staticmethod
    def zeros_like(g):
        return g * 0 if type(g) is Tensor else np.zeros_like(g)

    @staticmethod
    def matT(x):            # transpose of the last two dimensions
        return x.transpose(-1, -2) if type(x) is Tensor else x.swapaxes(-1, -2)


_f = _F


# ----------------------------------------------------------------------------------------
# arithmetic
# ----------------------------------------------------------------------------------------
class AddBackward0(Node):
    """out = self + alpha * other"""
    __slots__ = ("alpha",)

    def backward(self, g):
        return g, (g if self.alpha == 1 else g * self.alpha)


def add(a, b, alpha=1):
    # alpha is applied to the values only: AddBackward0 multiplies other's gradient by it
    out, node = _binary(AddBackward0, operator.add if alpha == 1 else
                        lambda x, y: x + alpha * y, a, b)
    if node:
        node.alpha = alpha
    return out


class SubBackward0(Node):
    """out = self - alpha * other"""
    __slots__ = ("alpha",)

    def backward(self, g):
        return g, -g if self.alpha == 1 else -g * self.alpha


def sub(a, b, alpha=1):
    # alpha is applied to the values only: SubBackward0 multiplies other's gradient by it
    out, node = _binary(SubBackward0, operator.sub if alpha == 1 else
                        lambda x, y: x - alpha * y, a, b)
    if node:
        node.alpha = alpha
    return out


class RsubBackward1(Node):
    """out = other - self, for a Python number ``other`` (``1 - x``)"""
    __slots__ = ("alpha",)

    def backward(self, g):
        return (-g,)


def rsub(x, number):
    out, node = _record1(RsubBackward1, number - x._data, x)
    if node:
        node.alpha = 1
    return out


class MulBackward0(Node):
    """out = self * other"""
    saved_names = ("self", "other")
    needed_by = {"self": 1, "other": 0}     # each factor only for the other one's gradient

    def backward(self, g):
        a, b = self._saved
        return (None if b is None else g * _number(b, g)), (None if a is None else g * a)


def mul(a, b):
    out, node = _binary(MulBackward0, operator.mul, a, b)
    if node:
        # each factor is needed only for the *other* input's gradient (PyTorch saves likewise)
        if type(b) is float or type(b) is int:
            node._saved = (None, b)         # x * 2: keep the 2, nothing of x; no version to check
        else:
            ga, gb = node._next
            node.save_for_backward(a if gb else None, b if ga else None)
    return out


class DivBackward0(Node):
    """out = self / other"""
    saved_names = ("self", "other")
    needed_by = {"self": 1}

    def backward(self, g):
        a, b = self._saved
        return g / b, (None if a is None else -g * a / (b * b))


def div(a, b):
    with np.errstate(all="ignore"):         # x / 0 is inf, silently, as in PyTorch
        out, node = _binary(DivBackward0, operator.truediv, a, b)
    if node:
        node.save_for_backward(a if node._next[1] else None, b)
    return out


def _elementwise(cls):
    """The forward of an elementwise function: apply ``cls.forward`` to the data, record a
    ``cls`` node, and save the input or the result, whichever ``cls.saved_names`` names."""
    fn = cls.forward
    saves_result = cls.saved_names == ("result",)
    if cls.silenced:
        fn = _silently(fn)

    def forward(x):
        a = x._data
        out = fn(a)
        if out.dtype is not a.dtype and a.dtype.kind != "f":
            out = out.astype(np.float32)        # integer input: PyTorch's default float
        if not (x._rg and _State.enabled):
            return _wrap(out)
        node = new_node(cls, (x.grad_fn or x._grad_accumulator(),))
        result = _wrap(out, node, True)
        if cls.saved_names:
            save_one(node, result if saves_result else x)
        return result
    forward.__doc__ = cls.__doc__
    return forward


def _silently(fn):
    """``fn`` without numpy's warnings: log(0) is -inf and sqrt(-1) nan, silently, as in
    PyTorch. (Only where needed: entering np.errstate costs as much as a small op.)"""
    def quiet(a):
        with np.errstate(all="ignore"):
            return fn(a)
    return quiet


class NegBackward0(Node):
    """out = -self"""
    forward = staticmethod(np.negative)

    def backward(self, g):
        return (-g,)


class ReciprocalBackward0(Node):
    """out = 1 / self;  d out / d self = -out**2"""
    silenced = True
    saved_names = ("result",)
    forward = staticmethod(np.reciprocal)

    def backward(self, g):
        (y,) = self._saved
        return (-g * (y * y),)


class ExpBackward0(Node):
    """out = e ** self;  d out / d self = out"""
    saved_names = ("result",)
    forward = staticmethod(np.exp)

    def backward(self, g):
        (y,) = self._saved
        return (g * y,)


class LogBackward0(Node):
    """out = ln(self);  d out / d self = 1 / self"""
    silenced = True
    saved_names = ("self",)
    forward = staticmethod(np.log)

    def backward(self, g):
        (a,) = self._saved
        return (g / a,)


class SinBackward0(Node):
    """out = sin(self);  d out / d self = cos(self)"""
    saved_names = ("self",)
    forward = staticmethod(np.sin)

    def backward(self, g):
        (a,) = self._saved
        return (g * _f.call("cos", a),)


class CosBackward0(Node):
    """out = cos(self);  d out / d self = -sin(self)"""
    saved_names = ("self",)
    forward = staticmethod(np.cos)

    def backward(self, g):
        (a,) = self._saved
        return (g * -_f.call("sin", a),)


class TanhBackward0(Node):
    """out = tanh(self);  d out / d self = 1 - out**2"""
    saved_names = ("result",)
    forward = staticmethod(np.tanh)

    def backward(self, g):
        (y,) = self._saved
        return (g - g * y * y,)         # g * (1 - y*y), without a slow Python-number operand


def _sigmoid(a):
    with np.errstate(over="ignore"):            # exp(-a) overflows to inf for a << 0: fine
        return np.reciprocal(np.exp(-a) + a.dtype.type(1))


class SigmoidBackward0(Node):
    """out = 1 / (1 + e**-self);  d out / d self = out * (1 - out)"""
    saved_names = ("result",)
    forward = staticmethod(_sigmoid)

    def backward(self, g):
        (y,) = self._saved
        return (g * (1 - y) * y,)


class ReluBackward0(Node):
    """out = max(self, 0);  the gradient passes where out > 0"""
    saved_names = ("result",)
    forward = staticmethod(lambda a: np.maximum(a, 0))

    def backward(self, g):
        (y,) = self._saved
        return (g * (y > 0),)


class SqrtBackward0(Node):
    """out = sqrt(self);  d out / d self = 1 / (2 out)"""
    silenced = True
    saved_names = ("result",)
    forward = staticmethod(np.sqrt)

    def backward(self, g):
        (y,) = self._saved
        return (g / (y + y),)


class AbsBackward0(Node):
    """out = |self|;  d out / d self = sign(self)"""
    saved_names = ("self",)
    forward = staticmethod(np.abs)

    def backward(self, g):
        (a,) = self._saved
        return (g * _f.call("sign", a),)


class SignBackward0(Node):
    """out = sign(self): flat almost everywhere, so its gradient is zero"""
    forward = staticmethod(np.sign)

    def backward(self, g):
        return (_f.zeros_like(g),)


neg, reciprocal, exp, log, sin, cos, tanh, sigmoid, relu, sqrt, abs, sign = map(  # noqa: A001
    _elementwise, (NegBackward0, ReciprocalBackward0, ExpBackward0, LogBackward0, SinBackward0,
                   CosBackward0, TanhBackward0, SigmoidBackward0, ReluBackward0, SqrtBackward0,
                   AbsBackward0, SignBackward0))


def rdiv(x, number):
    """``number / x`` is recorded as ``reciprocal(x) * number``, as PyTorch records it."""
    return mul(reciprocal(x), number)


class PowBackward0(Node):
    """out = self ** exponent, for a Python number ``exponent``"""
    __slots__ = ("exponent",)
    saved_names = ("self",)

    def backward(self, g):
        (a,) = self._saved
        e = self.exponent
        if e == 0:
            return (_f.zeros_like(g),)
        if e == 2:
            return (g * (a + a),)       # the same numbers as 2 * a, without a Python operand
        return (g * (e * a ** (e - 1)),)


class PowBackward1(Node):
    """out = self ** exponent, both tensors"""
    saved_names = ("self", "exponent", "result")

    def backward(self, g):
        a, e, y = self._saved
        ga = g * (e * a ** (e - 1)) if self._next[0] else None
        ge = g * (y * _f.call("log", a)) if self._next[1] else None
        return ga, ge


class PowBackward2(Node):
    """out = base ** self, for a Python number ``base`` (``2 ** x``)"""
    __slots__ = ("self",)
    saved_names = ("exponent", "result")

    def backward(self, g):
        e, y = self._saved
        return (g * (y * math.log(self.self)),)


def pow(x, exponent):                     # noqa: A001 -- torch.pow
    if type(exponent) is Tensor:
        with np.errstate(all="ignore"):
            out, node = _binary(PowBackward1, operator.pow, x, exponent)
        if node:
            node.save_for_backward(x, exponent, out)
        return out
    if type(exponent) is not int and type(exponent) is not float:
        exponent = _operand(exponent)
    a = x._data
    if type(exponent) is int and exponent >= 0:
        out = a ** exponent
    else:
        with np.errstate(all="ignore"):     # 0 ** -1 is inf, (-1) ** 0.5 nan: silently
            out = a ** exponent
    if out.dtype is not a.dtype and a.dtype.kind != "f":
        out = out.astype(np.float32)
    out, node = _record1(PowBackward0, out, x)
    if node:
        node.exponent = exponent
        save_one(node, x)
    return out


def rpow(x, base):
    out, node = _record1(PowBackward2, base ** _float(x._data), x)
    if node:
        node.self = base
        node.save_for_backward(x, out)
    return out


def _float(a):
    return a if a.dtype.kind == "f" else a.astype(np.float32)


class MaximumBackward0(Node):
    """out = max(self, other) elementwise; a tie splits the gradient in half"""
    saved_names = ("self", "other")

    def backward(self, g):
        a, b = self._saved
        share_a = (a > b) + (a == b) * 0.5
        return g * share_a, g * (1 - share_a)


def maximum(a, b):
    out, node = _binary(MaximumBackward0, np.maximum, a, b)
    if node:
        node.save_for_backward(a, b)
    return out


class WhereBackward0(Node):
    """out = self where condition, else other"""
    saved_names = ("condition",)

    def backward(self, g):
        (c,) = self._saved
        zero = _f.zeros_like(g)
        return _f.where(c, g, zero), _f.where(c, zero, g)


def where(condition, x, y):
    condition = condition if isinstance(condition, Tensor) else tensor(condition)
    x, y = _operand(x), _operand(y)
    cond = condition._data.astype(bool)
    out = np.asarray(np.where(cond, _data(x), _data(y)))
    if out.dtype.kind == "f" and isinstance(_data(x), float) and isinstance(_data(y), float):
        out = out.astype(np.float32)
    result, node = _record(WhereBackward0, out, x, y)
    if node:
        node._shapes = (np.shape(_data(x)), np.shape(_data(y)))
        node.save_for_backward(_wrap(cond))
    return result


# ----------------------------------------------------------------------------------------
# reductions
# ----------------------------------------------------------------------------------------
def _dims(dim, ndim):
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return tuple(sorted(d % ndim if ndim else 0 for d in dims))


def _expand_back(g, dims, keepdim, sizes):
    """Undo a reduction over ``dims``: put the reduced dimensions back, then broadcast."""
    if not keepdim and sizes:
        g = g.reshape(tuple(1 if i in dims else n for i, n in enumerate(sizes)))
    return _f.expand(g, sizes)


class SumBackward0(Node):
    """out = sum of all elements: each element's gradient is g"""
    __slots__ = ("self_sym_sizes",)

    def backward(self, g):
        return (_f.expand(g, self.self_sym_sizes),)


class SumBackward1(Node):
    """out = sum over ``dim``"""
    __slots__ = ("dim", "keepdim", "self_sym_sizes")

    def backward(self, g):
        return (_expand_back(g, self.dim, self.keepdim, self.self_sym_sizes),)


def sum(x, dim=None, keepdim=False, dtype=None, axis=None, keepdims=None):  # noqa: A001
    dim = axis if dim is None else dim
    keepdim = keepdims if keepdims is not None else keepdim
    a = x._data
    if a.dtype.kind in "biu" and dtype is None:
        a = a.astype(np.int64)
    if dim is None:
        out, node = _record1(SumBackward0, np.asarray(a.sum(dtype=dtype and dtype.np)), x)
    else:
        dims = _dims(dim, a.ndim)
        out, node = _record1(SumBackward1, np.asarray(a.sum(dims, keepdims=keepdim)), x)
        if node:
            node.dim, node.keepdim = dims, keepdim
    if node:
        node.self_sym_sizes = a.shape
    return out


class MeanBackward0(Node):
    """out = mean of all n elements: each element's gradient is g / n"""
    __slots__ = ("self_sym_sizes", "self_sym_numel")

    def backward(self, g):
        return (_f.expand(g / self.self_sym_numel, self.self_sym_sizes),)


class MeanBackward1(Node):
    """out = mean over ``dim``"""
    __slots__ = ("dim", "keepdim", "self_sym_sizes", "self_sym_numel")

    def backward(self, g):
        n = 1
        for d in self.dim:
            n *= self.self_sym_sizes[d]
        return (_expand_back(g / n, self.dim, self.keepdim, self.self_sym_sizes),)


def mean(x, dim=None, keepdim=False, dtype=None, axis=None):
    dim = axis if dim is None else dim
    a = x._data
    if a.dtype.kind != "f":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {x.dtype.name.capitalize().replace('Int64', 'Long')}")
    if dim is None:
        out, node = _record1(MeanBackward0, np.asarray(a.mean()), x)
    else:
        dims = _dims(dim, a.ndim)
        out, node = _record1(MeanBackward1, np.asarray(a.mean(dims, keepdims=keepdim)), x)
        if node:
            node.dim, node.keepdim = dims, keepdim
    if node:
        node.self_sym_sizes, node.self_sym_numel = a.shape, a.size
    return out


class MaxBackward1(Node):
    """out = the largest element; ties share the gradient equally"""
    saved_names = ("self", "result")

    def backward(self, g):
        a, y = self._saved
        mask = (a == y)
        return (mask * (g / mask.sum()),)


class MinBackward1(MaxBackward1):
    """out = the smallest element; ties share the gradient equally"""
    __slots__ = ()


class MaxBackward0(Node):
    """out = largest element along ``dim``: the gradient goes to the position that won"""
    __slots__ = ("dim", "keepdim", "self_sym_sizes")
    saved_names = ("indices",)

    def backward(self, g):
        idx = _data(self._saved[0])     # which position won: numbers, never differentiated
        dim = self.dim
        if not self.keepdim:
            g = g.reshape(tuple(1 if i == dim else n for i, n in enumerate(self.self_sym_sizes)))
            idx = np.expand_dims(idx, dim)
        onehot = np.arange(self.self_sym_sizes[dim]).reshape(
            [-1 if i == dim else 1 for i in range(len(self.self_sym_sizes))]) == idx
        return (g * onehot,)


class MinBackward0(MaxBackward0):
    __slots__ = ()


class _ValuesIndices(tuple):
    """``torch.return_types.max``: a pair with ``.values`` and ``.indices``."""

    __slots__ = ()
    name = "max"

    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]

    def __repr__(self):
        return f"torch.return_types.{self.name}(\nvalues={self[0]!r},\nindices={self[1]!r})"


class _MinValuesIndices(_ValuesIndices):
    __slots__ = ()
    name = "min"


def _extreme(x, dim, keepdim, largest):
    a = x._data
    if dim is None:
        cls = MaxBackward1 if largest else MinBackward1
        out, node = _record1(cls, np.asarray(a.max() if largest else a.min()), x)
        if node:
            node.save_for_backward(x, out)
        return out
    dim = dim % a.ndim if a.ndim else 0
    idx = (a.argmax if largest else a.argmin)(dim, keepdims=keepdim)
    values = np.take_along_axis(a, idx if keepdim else np.expand_dims(idx, dim), dim)
    if not keepdim:
        values = values.squeeze(dim)
    out, node = _record(MaxBackward0 if largest else MinBackward0, values, x)
    if node:
        node.dim, node.keepdim, node.self_sym_sizes = dim, keepdim, a.shape
        node.save_for_backward(_wrap(idx))
    return (_ValuesIndices if largest else _MinValuesIndices)((out, _wrap(idx.astype(np.int64))))


def max(x, dim=None, keepdim=False):        # noqa: A001 -- torch.max
    if isinstance(dim, Tensor):
        return maximum(x, dim)
    return _extreme(x, dim, keepdim, largest=True)


def min(x, dim=None, keepdim=False):        # noqa: A001 -- torch.min
    return _extreme(x, dim, keepdim, largest=False)


class ProdBackward0(Node):
    """out = product of all elements: d out / d x_i = product of all the other elements"""
    saved_names = ("self", "result")

    def backward(self, g):
        a = _data(self._saved[0])       # numpy only: the product of the others, as numbers
        flat = a.reshape(-1)
        before = np.concatenate([[1], np.cumprod(flat[:-1])]).astype(a.dtype)
        after = np.concatenate([np.cumprod(flat[::-1][:-1])[::-1], [1]]).astype(a.dtype)
        return (g * (before * after).reshape(a.shape),)


def prod(x):
    out, node = _record1(ProdBackward0, np.asarray(x._data.prod()), x)
    if node:
        node.save_for_backward(x, out)
    return out


class LinalgVectorNormBackward0(Node):
    """out = sqrt(sum of squares);  d out / d self = self / out"""
    saved_names = ("self", "result")

    def backward(self, g):
        a, y = self._saved
        if type(g) is not Tensor and not y:
            return (np.zeros_like(a),)      # at the zero vector PyTorch picks the subgradient 0
        return (g * a / y,)


def norm(x, p=2):
    if p != 2:
        raise NotImplementedError("autograd_lab's norm supports only the 2-norm")
    a = _float(x._data)
    out, node = _record1(LinalgVectorNormBackward0, np.asarray(np.sqrt((a * a).sum()), a.dtype), x)
    if node:
        node.save_for_backward(x, out)
    return out


# ----------------------------------------------------------------------------------------
# matrix products
# ----------------------------------------------------------------------------------------
class MmBackward0(Node):
    """out = self @ mat2 (matrices):  grad_self = g @ mat2^T,  grad_mat2 = self^T @ g"""
    saved_names = ("self", "mat2")
    needed_by = {"self": 1, "mat2": 0}
    __slots__ = ("self_sym_sizes", "self_sym_strides", "mat2_sym_sizes", "mat2_sym_strides")

    def note_layouts(self, a, b):
        """What PyTorch also keeps: both shapes, and the strides (in elements) of each input
        that needs a gradient -- ``()`` for the other one."""
        self.self_sym_sizes, self.mat2_sym_sizes = a._data.shape, b._data.shape
        self.self_sym_strides = _strides(a._data) if self._next[0] else ()
        self.mat2_sym_strides = _strides(b._data) if self._next[1] else ()

    def backward(self, g):
        a, b = self._saved
        return (g @ _f.matT(b) if self._next[0] else None,
                _f.matT(a) @ g if self._next[1] else None)


class BmmBackward0(MmBackward0):
    """batched matrices"""
    __slots__ = ()


class MvBackward0(Node):
    """out = self @ vec (matrix times vector)"""
    saved_names = ("self", "vec")
    needed_by = {"self": 1, "vec": 0}

    def backward(self, g):
        a, v = self._saved
        return (g.reshape((-1, 1)) * v if self._next[0] else None,
                g @ a if self._next[1] else None)


class DotBackward0(Node):
    """out = self . tensor (two vectors)"""
    saved_names = ("self", "tensor")
    needed_by = {"self": 1, "tensor": 0}

    def backward(self, g):
        a, b = self._saved
        return (g * b if self._next[0] else None, g * a if self._next[1] else None)


def _mm(cls, a, b):
    out, node = _binary(cls, np.matmul, a, b)
    if node:
        node._shapes = None
        node.save_for_backward(a if node._next[1] else None, b if node._next[0] else None)
        if isinstance(node, MmBackward0):
            node.note_layouts(a, b)
    return out


def _strides(a):
    return tuple(s // a.itemsize for s in a.strides)


def mm(a, b):
    if a.dim() != 2:
        raise RuntimeError("self must be a matrix")
    if b.dim() != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
            f"{b.shape[0]}x{b.shape[1]})")
    return _mm(MmBackward0, a, b)


def matmul(a, b):
    """``@``: picks the product PyTorch picks, and records the nodes PyTorch records."""
    b = _operand(b)
    da, db = a.dim(), b.dim()
    if da == 0 or db == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D, but they are "
                           f"{da}D and {db}D")
    if da == 1 and db == 1:
        if a.shape != b.shape:
            raise RuntimeError(
                f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] "
                f"to have the same number of elements, but got {a.shape[0]} and {b.shape[0]} "
                "elements respectively")
        return _mm(DotBackward0, a, b)
    if da == 2 and db == 1:
        if a.shape[1] != b.shape[0]:
            raise RuntimeError(f"size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x"
                               f"{a.shape[1]}), vec ({b.shape[0]})")
        return _mm(MvBackward0, a, b)
    if da == 1 and db == 2:
        return squeeze(mm(unsqueeze(a, 0), b), 0)
    if da == 2 and db == 2:
        return mm(a, b)
    if da == 1:         # a vector times a batch of matrices: as a one-row matrix
        return squeeze(matmul(unsqueeze(a, 0), b), -2)
    if db == 1:         # a batch of matrices times a vector: as a one-column matrix
        return squeeze(matmul(a, unsqueeze(b, -1)), -1)
    out = _mm(BmmBackward0, a, b)
    if out.grad_fn is not None:     # batch dimensions may broadcast: sum their gradients back
        out.grad_fn._shapes = (a.shape, b.shape)
    return out


def mv(a, b):
    if a.dim() != 2 or b.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a.dim()}, {b.dim()}")
    return matmul(a, b)


# ----------------------------------------------------------------------------------------
# shapes and indexing
# ----------------------------------------------------------------------------------------
class ViewBackward0(Node):
    """out = self with another shape: the gradient gets the old shape back"""
    __slots__ = ("self_sym_sizes",)

    def backward(self, g):
        return (g.reshape(self.self_sym_sizes),)


class UnsafeViewBackward0(ViewBackward0):
    __slots__ = ()


class CloneBackward0(Node):
    """out = a copy of self"""

    def backward(self, g):
        return (g,)


def _shape_arg(shape):
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def _reshaped(x, shape, cls):
    a = x._storage()
    try:
        new = a.reshape(shape)
    except ValueError:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {a.size}") from None
    out, node = _view(cls, new, x)
    if node:
        node.self_sym_sizes = a.shape
    return out


def view(x, *shape):
    shape = _shape_arg(shape)
    a = x._data
    if not a.flags.c_contiguous and a.size > 1:
        try:
            v = a.view()
            v.shape = shape         # raises if numpy would need a copy
        except (AttributeError, ValueError):
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead.") from None
    return _reshaped(x, shape, ViewBackward0)


def reshape(x, *shape):
    shape = _shape_arg(shape)
    if x._data.flags.c_contiguous or x._data.size <= 1:
        return _reshaped(x, shape, ViewBackward0)
    # not contiguous: PyTorch copies first (CloneBackward0), then views the copy
    return _reshaped(clone(x), shape, UnsafeViewBackward0)


def flatten(x):
    return reshape(x, -1)


def clone(x):
    return _record1(CloneBackward0, x._data.copy(), x)[0]


def contiguous(x):
    return x if x._data.flags.c_contiguous else clone(x)


class PermuteBackward0(Node):
    """out = self with its dimensions reordered"""
    __slots__ = ("dims",)

    def backward(self, g):
        return (g.permute(*np.argsort(self.dims)) if isinstance(g, Tensor)
                else g.transpose(np.argsort(self.dims)),)


def permute(x, *dims):
    dims = _shape_arg(dims)
    dims = tuple(d % x._data.ndim for d in dims)
    out, node = _view(PermuteBackward0, x._storage().transpose(dims), x)
    if node:
        node.dims = dims
    return out


class TransposeBackward0(Node):
    """out = self with two dimensions swapped"""
    __slots__ = ("dim0", "dim1")

    def backward(self, g):
        return (g.transpose(self.dim0, self.dim1) if isinstance(g, Tensor)
                else g.swapaxes(self.dim0, self.dim1),)


def transpose(x, dim0, dim1):
    out, node = _view(TransposeBackward0, x._storage().swapaxes(dim0, dim1), x)
    if node:
        node.dim0, node.dim1 = dim0, dim1
    return out


class TBackward0(Node):
    """out = self^T (a matrix)"""

    def backward(self, g):
        return (g.t() if isinstance(g, Tensor) else g.T,)


def t(x):
    if x._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x._data.ndim}D")
    return _view(TBackward0, x._storage().T, x)[0]


def T(x):
    if x._data.ndim != 2:
        from ._tensor import _warn_once
        _warn_once(T_NOT_2D if x._data.ndim else T_0D, stacklevel=2)
    return permute(x, *reversed(range(x._data.ndim)))


T_NOT_2D = (
    "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated "
    "and it will throw an error in a future release. Consider `x.mT` to transpose batches of "
    "matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a "
    "tensor. (Triggered internally at /pytorch/aten/src/ATen/native/TensorShape.cpp:4314.)")
T_0D = ("Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases. "
        "(Triggered internally at /pytorch/aten/src/ATen/native/TensorShape.cpp:4321.)")


class UnsqueezeBackward0(Node):
    __slots__ = ("dim",)

    def backward(self, g):
        return (g.squeeze(self.dim),)


def unsqueeze(x, dim):
    dim = dim % (x._data.ndim + 1)
    out, node = _view(UnsqueezeBackward0, np.expand_dims(x._storage(), dim), x)
    if node:
        node.dim = dim
    return out


class SqueezeBackward0(Node):
    __slots__ = ("self_sym_sizes",)

    def backward(self, g):
        return (g.reshape(self.self_sym_sizes),)


class SqueezeBackward1(SqueezeBackward0):
    __slots__ = ("dim",)


class SqueezeBackward4(SqueezeBackward1):
    __slots__ = ()


def squeeze(x, dim=None):
    a = x._storage()
    if dim is None:
        out, node = _view(SqueezeBackward0, a.squeeze(), x)
    else:
        d = dim % a.ndim if a.ndim else 0
        cls = SqueezeBackward1 if isinstance(dim, int) else SqueezeBackward4
        out, node = _view(cls, a.squeeze(d) if a.ndim and a.shape[d] == 1 else a[...], x)
        if node:
            node.dim = d
    if node:
        node.self_sym_sizes = a.shape
    return out


class ExpandBackward0(Node):
    """out = self repeated along new or size-1 dimensions: gradients sum back"""
    __slots__ = ("self_sym_sizes",)

    def backward(self, g):
        from .autograd.graph import unbroadcast
        return (unbroadcast(g, self.self_sym_sizes),)


def expand(x, *shape):
    shape = _shape_arg(shape)
    a = x._storage()
    shape = tuple(a.shape[i - len(shape) + a.ndim] if s == -1 else s for i, s in enumerate(shape))
    out, node = _view(ExpandBackward0, np.broadcast_to(a, shape), x)
    if node:
        node.self_sym_sizes = a.shape
    return out


class SelectBackward0(Node):
    """out = self[index] along ``dim``: the gradient lands in that slot of a zero tensor"""
    __slots__ = ("dim", "index", "self_sym_sizes")

    def backward(self, g):
        return (_scatter(g, (slice(None),) * self.dim + (self.index,), self.self_sym_sizes),)


class SliceBackward0(Node):
    __slots__ = ("dim", "start", "end", "step", "self_sym_sizes")

    def backward(self, g):
        key = (slice(None),) * self.dim + (slice(self.start, self.end, self.step),)
        return (_scatter(g, key, self.self_sym_sizes),)


class IndexBackward0(Node):
    """out = self[indices] (advanced indexing): repeated indices add up"""
    __slots__ = ("indices", "self_sym_sizes")

    def backward(self, g):
        return (_scatter(g, self.indices, self.self_sym_sizes, accumulate=True),)


class IndexPutBackward0(Node):
    """the backward of indexing, recorded when the backward itself is differentiated"""
    __slots__ = ("indices",)

    def backward(self, g):
        return (g[self.indices],)


def _scatter(g, key, shape, accumulate=False):
    """A zero tensor of ``shape`` with ``g`` placed (or added) at ``key``."""
    if isinstance(g, Tensor):
        out, node = _record1(IndexPutBackward0, _scatter(g._data, key, shape, accumulate), g)
        if node:
            node.indices = key
        return out
    z = np.zeros(shape, g.dtype)
    if accumulate:
        np.add.at(z, key, g)
    else:
        z[key] = g
    return z


def _index_key(key):
    if isinstance(key, Tensor):
        return key._data
    if isinstance(key, tuple):
        return tuple(k._data if isinstance(k, Tensor) else k for k in key)
    if isinstance(key, list):
        return np.asarray(key)
    return key


def getitem(x, key):
    key = _index_key(key)
    if _is_basic(key):
        return _basic_index(x, key)
    a = x._data
    out_data = a[key]
    if type(out_data) is not _ndarray:
        out_data = np.asarray(out_data)
    out, node = _record1(IndexBackward0, out_data, x)
    if node:
        node.indices, node.self_sym_sizes = key, a.shape
    return out


def _is_basic(key):
    keys = key if type(key) is tuple else (key,)
    return builtins.all(k is None or k is Ellipsis or isinstance(k, slice) or
                        (isinstance(k, (int, np.integer)) and not isinstance(k, bool)) for k in keys)


def _basic_index(x, key):
    """``x[key]`` for ints, slices, ``None`` and ``...``: one view node per item, applied left
    to right as PyTorch records them (Select, Slice, Unsqueeze). Inside a tuple a full ``:``
    records nothing; an index that records nothing at all gives an Alias."""
    alone = type(key) is not tuple
    keys = (key,) if alone else key
    ellipsis_dims = x._data.ndim - builtins.sum(k is not None and k is not Ellipsis for k in keys)
    out, dim = x, 0
    for k in keys:
        if k is None:
            out = unsqueeze(out, dim)
            dim += 1
        elif k is Ellipsis:
            dim += ellipsis_dims
        elif isinstance(k, slice):
            if alone or k != slice(None):
                out = _slice(out, dim, k)
            dim += 1
        else:
            out = _select(out, dim, int(k))
    if out is x:
        out = _view(AliasBackward0, x._storage()[...], x)[0]
    return out


def _select(x, dim, index):
    a = x._storage()
    out, node = _view(SelectBackward0, a[(slice(None),) * dim + (index, Ellipsis)], x)
    if node:
        node.dim, node.index, node.self_sym_sizes = dim, index, a.shape
    return out


def _slice(x, dim, key):
    a = x._storage()
    out, node = _view(SliceBackward0, a[(slice(None),) * dim + (key,)], x)
    if node:
        node.start, node.end, node.step = key.indices(a.shape[dim])
        node.dim, node.self_sym_sizes = dim, a.shape
    return out


class AliasBackward0(Node):
    """out = self, a new view of all of it (``x[...]``)"""

    def backward(self, g):
        return (g,)


# ----------------------------------------------------------------------------------------
# joining, dtype changes
# ----------------------------------------------------------------------------------------
class CatBackward0(Node):
    """out = inputs joined along ``dim``: each input gets its slice of the gradient"""
    __slots__ = ("dim", "sizes")

    def backward(self, g):
        bounds = np.cumsum(self.sizes)[:-1]
        parts = np.split(g, bounds, axis=self.dim) if type(g) is not Tensor else \
            [g[(slice(None),) * self.dim + (slice(s - n, s),)]
             for s, n in zip(np.cumsum(self.sizes), self.sizes)]
        return tuple(parts)


def cat(tensors, dim=0):
    tensors = list(tensors)
    arrays = [t._data for t in tensors]
    d = dim % arrays[0].ndim
    out, node = _record(CatBackward0, np.concatenate(arrays, axis=d), *tensors)
    if node:
        node.dim, node.sizes = d, [a.shape[d] for a in arrays]
    return out


class StackBackward0(Node):
    __slots__ = ("dim",)

    def backward(self, g):
        n = g.shape[self.dim]
        if type(g) is not Tensor:
            return tuple(np.take(g, i, axis=self.dim) for i in range(n))
        return tuple(g[(slice(None),) * self.dim + (i,)] for i in range(n))


def stack(tensors, dim=0):
    tensors = list(tensors)
    d = dim % (tensors[0]._data.ndim + 1)
    out, node = _record(StackBackward0, np.stack([t._data for t in tensors], axis=d), *tensors)
    if node:
        node.dim = d
    return out


class ToCopyBackward0(Node):
    """out = self in another dtype: the gradient goes back to the old dtype"""
    __slots__ = ("dtype",)

    def backward(self, g):
        return (g.to(self.dtype) if type(g) is Tensor else g.astype(self.dtype.np),)


def to(x, dtype=None, *args, **kwargs):
    from . import _dtype
    if isinstance(dtype, str) or dtype is None:     # .to("cpu"): nothing to move
        dtype = kwargs.get("dtype")
        if dtype is None:
            return x
    if dtype.np == x._data.dtype:
        return x
    out, node = _record1(ToCopyBackward0, x._data.astype(dtype.np), x)
    if node:
        node.dtype = x.dtype
    return out


# ----------------------------------------------------------------------------------------
# comparisons (never differentiable)
# ----------------------------------------------------------------------------------------
def _compare(fn):
    def compare(a, b):
        return _wrap(np.asarray(fn(_data(a), _data(_operand(b)))))
    return compare


eq, ne, lt, le, gt, ge = map(_compare, (np.equal, np.not_equal, np.less, np.less_equal,
                                         np.greater, np.greater_equal))


# ----------------------------------------------------------------------------------------
# in-place operations
# ----------------------------------------------------------------------------------------
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_INPLACE = "a view of " + LEAF_INPLACE


VIEW_OF_GRAPH_INPLACE = (
    "autograd_lab can't change a view of a tensor that requires grad in place (here a view of "
    "a tensor made by {name}): PyTorch would rewrite that tensor's history, which this small "
    "engine does not do. Change the tensor itself, or work on a .clone() of the view.")


def _check_inplace(x, text=LEAF_INPLACE):
    if not _State.enabled:
        return
    if x._rg and x.grad_fn is None:
        raise RuntimeError(text)
    base = x._base
    if base is not None and base._rg:
        if base.grad_fn is None:
            raise RuntimeError(VIEW_OF_LEAF_INPLACE)
        raise RuntimeError(VIEW_OF_GRAPH_INPLACE.format(name=base.grad_fn.name()))


def _write(x, values):
    """Store ``values`` into x's own array and count the change (saved copies will notice)."""
    values = np.asarray(values)
    if not np.can_cast(values.dtype, x._data.dtype, "same_kind"):
        raise RuntimeError(f"result type {_type_name(values.dtype)} can't be cast to the desired "
                           f"output type {_type_name(x._data.dtype)}")
    if values.shape != x._data.shape:
        raise RuntimeError(f"output with shape {list(x._data.shape)} doesn't match the broadcast "
                           f"shape {list(values.shape)}")
    np.copyto(x._storage(), values, casting="same_kind")
    x._bump_version()


def _type_name(np_dtype):
    return {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int",
            "bool": "Bool"}.get(np_dtype.name, np_dtype.name)


def inplace(x, op, other, alpha=None):
    """``x.add_(other)`` and friends: compute out of place, then write into x.

    When recorded, the new node's input is x's *previous* history, and x's grad_fn becomes
    the new node -- PyTorch's "rebase": x now stands for the result of the in-place op."""
    _check_inplace(x)
    other = _operand(other)
    if not (_State.enabled and (x._rg or type(other) is Tensor and other._rg)):
        # Nothing to record (an optimizer step under no_grad): compute straight into x's
        # storage, one pass over the data. Errors fall through to the general path below,
        # which reports them in PyTorch's words.
        into = x._storage()
        try:
            _INPLACE_UFUNCS[op](into, _data(other) if alpha is None else _data(other) * alpha,
                                out=into, casting="same_kind")
        except (TypeError, ValueError):
            pass
        else:
            x._bump_version()
            return x
    # x as it was, with its history. While recording, a copy of its values (PyTorch's
    # "original_self"): mul_ and div_ save it for other's gradient, and x is overwritten below.
    before = _wrap(x._data.copy() if _State.enabled else x._data, x.grad_fn, x._rg)
    before._acc = x._acc
    result = op(before, other) if alpha is None else op(before, other, alpha)
    _write(x, result._data)
    if result.grad_fn is not None:
        x.grad_fn, x._rg = result.grad_fn, True
    return x


_INPLACE_UFUNCS = {add: np.add, sub: np.subtract, mul: np.multiply, div: np.true_divide}


def inplace_fill(x, value):
    _check_inplace(x)
    x._storage()[...] = value
    x._bump_version()
    if x.grad_fn is not None and _State.enabled:
        # filled values no longer depend on anything: later gradients stop here
        x.grad_fn = _record1(FillBackward0, x._data, x)[1]
    return x


class FillBackward0(Node):
    def backward(self, g):
        return (_f.zeros_like(g),)


class CopySlices(Node):
    """``x[key] = value`` on a tensor in a graph: x keeps the gradient outside ``key``, and
    ``value`` receives the gradient inside it"""
    __slots__ = ("key", "value_shape")

    def name(self):
        return "torch::autograd::CopySlices"       # a C++ node, named like AccumulateGrad

    def backward(self, g):
        from .autograd.graph import unbroadcast
        keep = np.ones(g.shape, bool)
        keep[self.key] = False          # what was overwritten gets no gradient through x
        gv = g[self.key] if type(g) is Tensor else np.asarray(g[self.key])
        return g * keep, unbroadcast(gv, self.value_shape)


def setitem(x, key, value):
    key = _index_key(key)
    value = _operand(value)
    recording = _State.enabled and (x._rg or (type(value) is Tensor and value._rg))
    # PyTorch writes ``x[0] = v`` through a view of x (x[:] and x[[0]] write into x itself)
    keys = key if type(key) is tuple else (key,)
    through_view = _is_basic(key) and not builtins.all(
        k is Ellipsis or (isinstance(k, slice) and k == slice(None)) for k in keys)
    _check_inplace(x, VIEW_OF_LEAF_INPLACE if through_view else LEAF_INPLACE)
    before_fn, before_acc = x.grad_fn, x._acc
    x._storage()[key] = _data(value)
    x._bump_version()
    if recording:
        before = _wrap(x._data, before_fn, x._rg)
        before._acc = before_acc
        out, node = _record(CopySlices, x._data, before, value)
        node.key, node.value_shape = key, np.shape(_data(value))
        x.grad_fn, x._rg = node, True


class CopyBackwards(Node):
    """A leaf's .grad that is itself part of a graph (``backward(create_graph=True)``)"""

    def backward(self, g):
        return (g,)


def copy_grad(g):
    return _record1(CopyBackwards, g._data.copy(), g)[0]
