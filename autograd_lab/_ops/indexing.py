"""Indexing: x[0], x[1:3], x[[0, 0, 2]], x[mask]. The backward puts the gradient into the
picked positions of a zero tensor (adding where an index repeats)."""
import builtins
import operator

import numpy as np

from .._core.dtype import from_numpy_dtype
from .._core.graph import Node
from .._core.tensor import Tensor
from .record import _data, _ndarray, _record1, _view, broadcast_error, derivative
from .shape import unsqueeze


class SelectBackward0(Node):
    """out = self[index] along ``dim``: the gradient lands in that slot of a zero tensor"""
    __slots__ = ("dim", "index", "self_sym_sizes")

    def backward(self, g):
        return (select_backward(g, input_sizes=self.self_sym_sizes, dim=self.dim,
                                index=self.index),)


class SelectBackwardBackward0(Node):
    """select's derivative as an operation of its own, PyTorch's select_backward: a zero
    tensor of the input's sizes with grad_output in the selected slot"""
    __slots__ = ("dim", "index")
    op_name = "select_backward"
    inputs = ("grad_output",)

    @staticmethod
    def forward(g, input_sizes, dim, index):
        return _put_into_zeros(g, input_sizes, (slice(None),) * dim + (index,))

    def backward(self, gg):
        key = (slice(None),) * self.dim + (self.index,)
        return (_select(gg, self.dim, self.index) if type(gg) is Tensor else gg[key],)


class SliceBackward0(Node):
    __slots__ = ("dim", "start", "end", "step", "self_sym_sizes")

    def backward(self, g):
        return (slice_backward(g, input_sizes=self.self_sym_sizes, dim=self.dim,
                               start=self.start, end=self.end, step=self.step),)


class SliceBackwardBackward0(Node):
    """slice's derivative as an operation of its own, PyTorch's slice_backward: a zero
    tensor of the input's sizes with grad_output in the sliced part"""
    __slots__ = ("dim", "start", "end", "step")
    op_name = "slice_backward"
    inputs = ("grad_output",)

    @staticmethod
    def forward(g, input_sizes, dim, start, end, step):
        return _put_into_zeros(g, input_sizes, (slice(None),) * dim + (slice(start, end, step),))

    def backward(self, gg):
        part = slice(self.start, self.end, self.step)
        return (_slice(gg, self.dim, part) if type(gg) is Tensor else
                gg[(slice(None),) * self.dim + (part,)],)


def _put_into_zeros(g, sizes, key):
    """Zeros of ``sizes`` with g copied into the part ``key`` picks: PyTorch's copy_, whose
    error names the sizes that do not broadcast (a node called with a gradient of another
    shape)"""
    out = np.zeros(sizes, g.dtype)
    part, shape = np.shape(out[key]), tuple(g.shape)
    if part != shape and (broadcast_error(part, shape) is not None or
                          np.broadcast_shapes(part, shape) != part):
        # shapes that broadcast, but to another shape than the part's (TensorIterator's
        # output check; numpy would drop a leading 1), or that do not
        raise broadcast_error(part, shape) or RuntimeError(
            f"output with shape {list(part)} doesn't match the broadcast shape "
            f"{list(np.broadcast_shapes(part, shape))}")
    out[key] = g
    return out


class IndexBackward0(Node):
    """out = self[indices] (advanced indexing): repeated indices add up. The indices are
    saved, and freed by backward like any saved tensor."""
    __slots__ = ("self_sym_sizes",)

    def backward(self, g):
        # PyTorch's formula puts g into zeros of self's dtype: a node called by hand with a
        # gradient of another dtype gets index_put's refusal
        key, dtype = self._saved
        if _data(g).dtype != dtype:
            raise RuntimeError(
                "Index put requires the source and destination dtypes match, got "
                f"{from_numpy_dtype(dtype).scalar_name} for the destination and "
                f"{from_numpy_dtype(_data(g).dtype).scalar_name} for the source.")
        zeros = np.zeros(self.self_sym_sizes, dtype)
        return (index_put_impl(zeros, g, indices=key, accumulate=True),)


class IndexPutBackward0(Node):
    """out = self with ``values`` put at ``indices`` (``x[indices] = values``), or added there
    (``accumulate``): the places written over get no gradient, values gets the gradient at
    its places (summed back by the engine where it was broadcast)"""
    __slots__ = ("indices", "accumulate")
    op_name = "index_put"
    inputs = ("self", "values")

    @staticmethod
    def forward(a, values, indices, accumulate=False):
        out = np.array(a)
        try:
            if accumulate:
                np.add.at(out, indices, values)
            else:
                out[indices] = values
        except ValueError:      # (indexing's backward called by hand with another shape)
            raise RuntimeError(
                f"shape mismatch: value tensor of shape {list(np.shape(values))} cannot be "
                f"broadcast to indexing result of shape {list(out[indices].shape)}") from None
        return out

    def backward(self, g):
        indices = self.indices
        gv = g[indices] if type(g) is Tensor else np.asarray(g[indices])
        gs = None
        if self._next[0]:
            gs = g if self.accumulate else index_put(
                g, np.zeros(np.shape(_data(gv)), _data(g).dtype), indices=indices,
                accumulate=False)
        return gs, gv if self._next[1] else None


class IndexPutImplBackward0(IndexPutBackward0):
    """the same, as PyTorch's _index_put_impl_ (what the backward of indexing calls)"""
    __slots__ = ()
    op_name = "_index_put_impl_"


select_backward, slice_backward, index_put, index_put_impl = map(derivative, (
    SelectBackwardBackward0, SliceBackwardBackward0, IndexPutBackward0, IndexPutImplBackward0))


def _scatter(g, key, shape, accumulate=False):
    """A zero array (or tensor) of ``shape`` with ``g`` placed (or added) at ``key``."""
    return index_put_impl(np.zeros(shape, _data(g).dtype), g, indices=key, accumulate=accumulate)


def _items(key):
    """The items of an index, each an int, a slice, None, Ellipsis or an index array (integer
    or boolean). A 0-d integer tensor counts as an int, as in PyTorch."""
    keys = key if type(key) is tuple else (key,)
    items = []
    for k in keys:
        if isinstance(k, Tensor):
            k = k._data
        if isinstance(k, list):
            k = np.asarray(k)
        if isinstance(k, (_ndarray, np.generic)) and k.ndim == 0 and k.dtype.kind in "iu":
            k = int(k)
        if isinstance(k, (_ndarray, np.generic)) and k.dtype.kind not in "iub":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        items.append(k)
    return items


def _is_array(k):
    return isinstance(k, (_ndarray, np.generic, bool))


def getitem(x, key):
    """``x[key]`` as PyTorch does it: first the ints, slices, ``None`` and ``...`` as views,
    left to right (Select, Slice, Unsqueeze nodes); then, if the key holds index arrays, one
    advanced index of that view (IndexBackward0). Doing the views first is what PyTorch
    does, and it decides the shape: ``x[0, :, [0, 1]]`` of a (2, 3, 4) tensor is (3, 2),
    where numpy would say (2, 3)."""
    if type(key) is not tuple and not _is_array(key) and not isinstance(key, (list, Tensor)):
        return _basic_index(x, [key], alone=True)
    items = _items(key)
    if not builtins.any(_is_array(k) for k in items):
        return _basic_index(x, items, alone=type(key) is not tuple)
    out, index = _basic_index(x, items, alone=False, advanced=True)
    return _advanced_index(out, index)


def setitem_target(x, key):
    """What ``x[key] = value`` writes into, found as PyTorch finds it: the view that the ints,
    slices, ``None`` and ``...`` of the key make -- but no view for a slice over a whole
    dimension, which PyTorch's setitem skips -- and the index arrays left for that view
    (None when the key has none), checked as for ``x[key]``."""
    items = _items(key)
    out, index = _basic_index(x, items, alone=type(key) is not tuple, advanced=True, setting=True)
    if not builtins.any(_is_array(k) for k in items):
        return out, None
    return out, _advanced_key(out._data, index)


def _basic_index(x, items, alone, advanced=False, setting=False):
    """Apply the ints, slices, ``None`` and ``...`` of an index as views, one node per item,
    left to right as PyTorch records them. Inside a tuple a full ``:`` records nothing; an
    index that records nothing at all gives an Alias. With ``advanced``, index arrays are
    passed over, and the view is returned with the index that is left for it: per dimension
    an array, or a full slice."""
    ndim = x._data.ndim
    used = builtins.sum(k.ndim if _is_array(k) and k.dtype.kind == "b" else
                        k is not None and k is not Ellipsis for k in items)
    if used > ndim and not (alone and ndim == 0):
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    ellipsis_dims = ndim - used
    out, dim, index = x, 0, []
    # real_dim: the dimension PyTorch's out-of-bounds error names, the item's place in the
    # key (an ellipsis or a mask counts as one, whatever it spans)
    for real_dim, k in enumerate(items):
        if k is None:
            out = unsqueeze(out, dim)
            index.append(slice(None))
            dim += 1
        elif k is Ellipsis:
            index += [slice(None)] * ellipsis_dims
            dim += ellipsis_dims
        elif isinstance(k, slice):
            if setting:
                whole = out._data.ndim and k.indices(out._data.shape[dim]) == (
                    0, out._data.shape[dim], 1)
                if not whole:
                    out = _slice(out, dim, k)
            elif alone or k.indices(out._data.shape[dim]) != (0, out._data.shape[dim], 1):
                out = _slice(out, dim, k)       # (in a tuple, one over all of it records none)
            index.append(slice(None))
            dim += 1
        elif _is_array(k):
            index.append(k)
            n = k.ndim if k.dtype.kind == "b" else 1
            dim += n
        else:
            out = _select(out, dim, int(k), real_dim)
    if advanced:
        return out, index
    if out is x:
        out = _view(AliasBackward0, x._storage()[...], x)[0]
    return out


def _advanced_index(x, index):
    """``x[index]``, ``index`` holding index arrays (and full slices): PyTorch's checks and
    texts first, then one IndexBackward0."""
    a = x._data
    key = _advanced_key(a, index)
    out_data = a[key]
    if type(out_data) is not _ndarray:
        out_data = np.asarray(out_data)
    out, node = _record1(IndexBackward0, out_data, x)
    if node:
        node._saved, node.self_sym_sizes = (key, a.dtype), a.shape
    return out


def _advanced_key(a, index):
    """``index`` (index arrays and full slices, one per dimension of array ``a``) as a numpy
    key, after PyTorch's checks, in its words."""
    while index and not _is_array(index[-1]):
        index.pop()
    shapes, k, dim = [], 0, 0          # k: the index tensor's position, as PyTorch counts them
    for item in index:
        if not _is_array(item):
            dim += 1
            continue
        item = np.asarray(item)
        if item.dtype.kind == "b":
            for j, n in enumerate(item.shape):
                if n != a.shape[dim + j]:
                    raise IndexError(
                        f"The shape of the mask {list(item.shape)} at index {j} does not match the "
                        f"shape of the indexed tensor {list(a.shape)} at index {dim + j}")
            shapes.append([int(item.sum())])
            k, dim = k + item.ndim, dim + item.ndim
            continue
        n = a.shape[dim]
        bad = (item < -n) | (item >= n)
        if bad.any():
            raise IndexError(f"index {item[bad].flat[0]} is out of bounds for dimension {k} "
                             f"with size {n}")
        shapes.append(list(item.shape))
        k, dim = k + 1, dim + 1
    try:
        np.broadcast_shapes(*[tuple(s) for s in shapes])
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with "
                         f"shapes {', '.join(str(s) for s in shapes)}") from None
    return tuple(index)


def _select(x, dim, index, real_dim=None):
    a = x._storage()
    if a.ndim == 0:
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    n = a.shape[dim]
    if not -n <= index < n:
        raise IndexError(f"index {index} is out of bounds for dimension "
                         f"{dim if real_dim is None else real_dim} with size {n}")
    out, node = _view(SelectBackward0, a[(slice(None),) * dim + (index, Ellipsis)], x)
    if node:
        node.dim, node.index, node.self_sym_sizes = dim, index, a.shape
    return out


def _slice(x, dim, key):
    a = x._storage()
    if a.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    out, node = _view(SliceBackward0, a[(slice(None),) * dim + (key,)], x)
    if node:
        # (as given, an omitted start 0 and end the largest int64, as PyTorch's node keeps
        # them: backward's slice wraps them again)
        node.start = 0 if key.start is None else operator.index(key.start)
        node.end = 2 ** 63 - 1 if key.stop is None else operator.index(key.stop)
        node.step = 1 if key.step is None else operator.index(key.step)
        node.dim, node.self_sym_sizes = dim, a.shape
    return out


class AliasBackward0(Node):
    """out = self, a new view of all of it (``x[...]``)"""
    __slots__ = ()

    def backward(self, g):
        return (g,)
