"""In-place operations: add_, mul_, x[0] = v, fill_. They change a tensor's own storage, so
they bump its version (saved copies notice) and, when recorded, rebase its history."""
import builtins

import numpy as np

from .._dtype import from_numpy_dtype
from .._tensor import Tensor, _wrap
from ..autograd.graph import Node, unbroadcast
from ..autograd.grad_mode import _State
from .arithmetic import add, div, mul, sub
from .indexing import _index_key, _is_basic, getitem
from .record import _data, _f, _operand, _record, _record1, other_type_error


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
    return from_numpy_dtype(np_dtype).scalar_name


def inplace(x, op, other, alpha=None):
    """``x.add_(other)`` and friends: compute out of place, then write into x.

    When recorded, the new node's input is x's *previous* history, and x's grad_fn becomes
    the new node -- PyTorch's "rebase": x now stands for the result of the in-place op."""
    _check_inplace(x)
    other, given = _operand(other), other
    if other is NotImplemented:
        raise other_type_error(op.__name__ + "_", given, 1)
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
    return _rebase(x, lambda before: op(before, other) if alpha is None
                   else op(before, other, alpha))


def inplace_unary(x, fn):
    """``x.clamp_(0, 1)``: the out-of-place ``fn(x)``, written into x."""
    _check_inplace(x)
    return _rebase(x, fn)


def _rebase(x, compute):
    """Write ``compute(x as it was)`` into x; if that was recorded, x's history is now it."""
    # x as it was, with its history. While recording, a copy of its values (PyTorch's
    # "original_self"): mul_ and div_ save it for other's gradient, and x is overwritten below.
    before = _wrap(x._data.copy() if _State.enabled else x._data, x.grad_fn, x._rg)
    before._acc = x._acc
    result = compute(before)
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
    """x.fill_(v) on a tensor in a graph: the filled values depend on nothing"""
    __slots__ = ()

    def backward(self, g):
        return (_f.zeros_like(g),)


class CopySlices(Node):
    """``x[key] = value`` on a tensor in a graph: x keeps the gradient outside ``key``, and
    ``value`` receives the gradient inside it"""
    __slots__ = ("key", "value_shape")

    def name(self):
        return "torch::autograd::CopySlices"       # a C++ node, named like AccumulateGrad

    def backward(self, g):
        keep = np.ones(g.shape, bool)
        keep[self.key] = False          # what was overwritten gets no gradient through x
        gv = g[self.key] if type(g) is Tensor else np.asarray(g[self.key])
        return g * keep, unbroadcast(gv, self.value_shape)


def setitem(x, key, value):
    # PyTorch's index errors, from the same place as for x[key] (on a stand-in without data)
    getitem(_wrap(np.broadcast_to(np.zeros((), bool), x._data.shape)), key)
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
    __slots__ = ()

    def name(self):
        return "torch::autograd::CopyBackwards"     # a C++ node, named like AccumulateGrad

    def backward(self, g):
        return (g,)


def copy_grad(g):
    return _record1(CopyBackwards, g._data.copy(), g)[0]
