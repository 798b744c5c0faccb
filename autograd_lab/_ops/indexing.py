"""Indexing: x[0], x[1:3], x[[0, 0, 2]], x[mask]. The backward puts the gradient into the
picked positions of a zero tensor (adding where an index repeats)."""
import builtins

import numpy as np

from .._tensor import Tensor
from ..autograd.graph import Node
from .record import _ndarray, _record1, _view
from .shape import unsqueeze


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
    __slots__ = ()

    def backward(self, g):
        return (g,)
