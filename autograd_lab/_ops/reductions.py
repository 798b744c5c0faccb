"""Reductions: sum, mean, max/min, prod, norm. Their backward puts the reduced dimensions
back and spreads the gradient over them."""
import builtins
import operator
import warnings

import numpy as np

from .._core.dtype import from_numpy_dtype
from .._core.graph import Node
from .._core.tensor import Tensor, _wrap
from .arithmetic import _f, maximum
from .record import _data, _record, _record1, derivative, note_dtypes, wrap_dim, wrap_dims
from .shape import cat

_WHOLE = object()   # no dim given (an explicit None is another call to PyTorch)


def _dims(dim, ndim):
    """The dimensions to reduce, checked as PyTorch checks them; none for a 0-d tensor, all
    of them for an empty list (``x.sum([])``) or None."""
    if dim is None:
        return tuple(range(ndim))
    dims = wrap_dims((dim,) if isinstance(dim, int) else tuple(dim) or range(ndim), ndim)
    return tuple(sorted(dims)) if ndim else ()


def _expand_back(g, dims, keepdim, sizes):
    """Undo a reduction over ``dims`` (as given): put the reduced dimensions back, then
    broadcast. As PyTorch's sum_backward: one dim is unsqueezed as given (a node called by
    hand with a gradient of other dimensions wraps it by those), several are wrapped and
    unsqueezed one at a time, in order."""
    if not keepdim and sizes and dims:
        if len(dims) == 1:
            g = _f.unsqueeze(g, dims[0])
        else:
            for d in sorted(d % len(sizes) for d in dims):
                g = _f.unsqueeze(g, d)
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


def sum(x, dim=_WHOLE, keepdim=False, dtype=None, axis=_WHOLE, keepdims=None):  # noqa: A001
    dim = axis if dim is _WHOLE else dim
    keepdim = keepdims if keepdims is not None else keepdim
    a = x._data
    if dtype is not None:
        a = a.astype(dtype.np)
    elif a.dtype.kind in "biu":
        a = a.astype(np.int64)          # PyTorch sums integers and booleans as int64
    return _reduction(x, a, np.sum, dim, keepdim, SumBackward0, SumBackward1)[0]


def _reduction(x, a, reduce, dim, keepdim, whole, over_dims):
    """Record ``reduce`` (np.sum, np.mean) of x's data ``a``: a ``whole`` node when no dim
    was given, an ``over_dims`` node (which keeps dim and keepdim) otherwise -- also for an
    explicit ``dim=None``, which reduces every dimension (keeping them, with keepdim)."""
    if dim is _WHOLE:
        out, node = _record1(whole, np.asarray(reduce(a)), x)
    else:
        dims = _dims(dim, a.ndim)
        reduced = np.asarray(reduce(a, dims, keepdims=keepdim))
        if keepdim and len([n for n in reduced.shape if n > 1]) <= 1:
            reduced = _row_major(reduced)
        out, node = _record1(over_dims, reduced, x)
        if node:    # (the dims as given, in their order: PyTorch's node keeps them so)
            node.dim = None if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
            node.keepdim = keepdim
    if node:
        node.self_sym_sizes = a.shape
        if a.dtype is not x._data.dtype:    # summed in another dtype (``dtype=``)
            note_dtypes(node, (x,), a.dtype)
    return out, node


def _row_major(a):
    """a, with the strides PyTorch gives a reduction's result that has at most one dimension
    longer than 1: row-major, also in its size-1 dimensions (numpy's follow the input's order,
    which a transposed input makes column-major; mm's backward reads them)."""
    strides, step = [], a.itemsize
    for n in reversed(a.shape):
        strides.append(step)
        step *= builtins.max(n, 1)
    return a if a.strides == tuple(reversed(strides)) else a.copy()


class MeanBackward0(Node):
    """out = mean of all n elements: each element's gradient is g / n (divided after the
    expand, as PyTorch does: the gradient is a tensor of its own, not a view of g, and an
    in-place change of what ``autograd.grad`` returns is allowed)"""
    __slots__ = ("self_sym_sizes", "self_sym_numel")

    def backward(self, g):
        return (_f.expand(g, self.self_sym_sizes) / self.self_sym_numel,)


class MeanBackward1(Node):
    """out = mean over ``dim``"""
    __slots__ = ("dim", "keepdim", "self_sym_sizes", "self_sym_numel")

    def backward(self, g):
        n = self.self_sym_numel     # (all of them: no dim, an empty list, a 0-d self)
        if self.dim and self.self_sym_sizes:
            n = 1
            for d in self.dim:
                n *= self.self_sym_sizes[d]
        return (_expand_back(g, self.dim, self.keepdim, self.self_sym_sizes) / n,)


def mean(x, dim=_WHOLE, keepdim=False, dtype=None, axis=_WHOLE):
    dim = axis if dim is _WHOLE else dim
    a = x._data
    if a.dtype.kind != "f":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {x.dtype.scalar_name}")
    if a.size:
        out, node = _reduction(x, a, np.mean, dim, keepdim, MeanBackward0, MeanBackward1)
    else:
        with warnings.catch_warnings():         # nan, and no "Mean of empty slice" warning
            warnings.simplefilter("ignore", RuntimeWarning)
            out, node = _reduction(x, a, np.mean, dim, keepdim, MeanBackward0, MeanBackward1)
    if node:
        node.self_sym_numel = a.size
    return out


class MaxBackward1(Node):
    """out = the largest element; ties share the gradient equally"""
    __slots__ = ()
    saved_names = ("self", "result")

    def backward(self, g):
        a, y = self._saved
        ad, yd = _data(a), _data(y)
        mask = (ad == yd) if yd == yd else (ad != ad)   # a nan result came from the nans
        # PyTorch's evenly_distribute_backward: zeros, filled where the mask is with g shared
        # out (not mask * g: a nan or inf g times 0 would be nan)
        # (zeros of self's dtype: a gradient of another, handed by hand, is cast into them)
        share = g / _f.number(int(mask.sum()), g)
        if np.ndim(_data(g)):       # (a node called by hand with a gradient of dimensions)
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {np.ndim(_data(g))} dimension(s).")
        out = _f.masked_fill(np.zeros(ad.shape, ad.dtype), mask, share)
        if type(out) is Tensor:     # recorded: PyTorch's masked_fill_ left it at version 1
            out._counter()[0] = 1
        return (out,)


class MinBackward1(MaxBackward1):
    """out = the smallest element; ties share the gradient equally"""
    __slots__ = ()


class MaxBackward0(Node):
    """out = largest element along ``dim``: the gradient goes to the position that won"""
    __slots__ = ("dim", "keepdim", "self_sym_sizes")
    saved_names = ("indices",)

    def backward(self, g):
        # PyTorch's value_selecting_reduction_backward: g scattered into zeros at the
        # positions that won (not g * onehot: inf * 0 would be nan)
        idx = _data(self._saved[0])     # which position won: numbers, never differentiated
        dim = self.dim
        if not self.keepdim:
            g, idx = _f.unsqueeze(g, dim), np.expand_dims(idx, dim)
        out = scatter(np.zeros(self.self_sym_sizes, _data(g).dtype), g, dim=dim, index=idx)
        if type(out) is Tensor:     # recorded: PyTorch's zero_ and scatter_, at version 2
            out._counter()[0] = 2
        return (out,)


class MinBackward0(MaxBackward0):
    __slots__ = ()


class ScatterBackward0(Node):
    """out = self with ``src`` written at ``index`` along ``dim`` (PyTorch's scatter, as the
    backward of max and min along a dim uses it): self's gradient where nothing was written,
    src's gathered from where it was"""
    __slots__ = ("dim",)
    op_name = "scatter"
    inputs = ("self", "src")
    saved_names = ("index",)

    @staticmethod
    def forward(a, src, dim, index):
        out = np.array(a)
        if out.ndim:
            if np.shape(src) != index.shape:
                _scatter_shape_check(a, dim, index, src)
            np.put_along_axis(out, index, src, dim)
        else:                           # a 0-d tensor: its one element is written
            out[...] = np.reshape(src, ())
        return out

    def backward(self, g):
        idx = _data(self._saved[0])
        return (scatter_value(g, dim=self.dim, index=idx, value=0) if self._next[0] else None,
                gather(g, dim=self.dim, index=idx) if self._next[1] else None)


def _scatter_shape_check(a, dim, index, src):
    """PyTorch's scatter_shape_check (a node called by hand with another gradient): index no
    larger than self but along ``dim``, then no larger than src, read a dimension at a time
    (a dimension src lacks: IndexError), then as many dimensions as src. A 0-d tensor counts
    as one element in one dimension."""
    if not index.size:
        return

    def size(shape, d):
        return shape[wrap_dim(d, len(shape))] if shape else 1
    n, dim = a.ndim, dim % a.ndim
    wrong = any(size(index.shape, d) > size(a.shape, d) for d in range(n) if d != dim) or \
        any(size(index.shape, d) > size(np.shape(src), d) for d in range(n))
    if (np.ndim(src) or 1) != (index.ndim or 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if wrong:
        raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self "
                           f"{list(a.shape)} apart from dimension {dim} and to be no larger "
                           f"size than src {list(np.shape(src))}")


class ScatterBackward1(Node):
    """out = self with a number written at ``index`` along ``dim``"""
    __slots__ = ("dim",)
    op_name = "scatter"
    inputs = ("self",)
    saved_names = ("index",)

    @staticmethod
    def forward(a, dim, index, value):
        return ScatterBackward0.forward(a, value, dim, index)

    def backward(self, g):
        return (scatter_value(g, dim=self.dim, index=_data(self._saved[0]), value=0),)


class GatherBackward0(Node):
    """out = self's elements at ``index`` along ``dim``: the gradient goes back to where each
    came from, added up where an index repeats"""
    __slots__ = ("dim",)
    op_name = "gather"
    inputs = ("self",)
    saved_names = ("self", "index")

    @staticmethod
    def forward(a, dim, index):
        return np.take_along_axis(a, index, dim) if a.ndim else np.reshape(a, np.shape(index))

    def backward(self, g):
        a, idx = self._saved
        zeros = np.zeros(np.shape(_data(a)), _data(g).dtype)
        return (scatter_add(zeros, g, dim=self.dim, index=_data(idx)),)


class ScatterAddBackward0(Node):
    """out = self with ``src`` added at ``index`` along ``dim``"""
    __slots__ = ("dim",)
    op_name = "scatter_add"
    inputs = ("self", "src")
    saved_names = ("index",)

    @staticmethod
    def forward(a, src, dim, index):
        out = np.array(a)
        if not out.ndim:
            return out + np.reshape(src, ())
        grid = list(np.indices(index.shape, sparse=True))
        grid[dim] = index
        np.add.at(out, tuple(grid), src)
        return out

    def backward(self, g):
        idx = _data(self._saved[0])
        return (g if self._next[0] else None,
                gather(g, dim=self.dim, index=idx) if self._next[1] else None)


scatter, scatter_value, gather, scatter_add = map(derivative, (
    ScatterBackward0, ScatterBackward1, GatherBackward0, ScatterAddBackward0))


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
        if not a.size:
            name = "max" if largest else "min"
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                               f"== 0. Specify the reduction dim with the 'dim' argument.")
        cls = MaxBackward1 if largest else MinBackward1
        out, node = _record1(cls, np.asarray(a.max() if largest else a.min()), x)
        if node:
            node.save_for_backward(x, out)
        return out
    given, dim = dim, wrap_dim(dim, a.ndim)
    if a.ndim and not a.shape[dim]:
        raise IndexError(f"{'max' if largest else 'min'}(): Expected reduction dim {dim} to have "
                         "non-zero size.")
    if a.ndim == 0:             # a 0-d tensor is its own largest element, at index 0
        a, keepdim = a.reshape(1), False
    idx = (a.argmax if largest else a.argmin)(dim, keepdims=keepdim)
    values = np.take_along_axis(a, idx if keepdim else np.expand_dims(idx, dim), dim)
    if not keepdim:
        values = values.squeeze(dim)
    out, node = _record(MaxBackward0 if largest else MinBackward0, values, x)
    if node:
        # (the dim as given: a node called by hand unsqueezes its gradient's own dim)
        node.dim, node.keepdim, node.self_sym_sizes = given, keepdim, x._data.shape
        node.save_for_backward(_wrap(idx))
    return (_ValuesIndices if largest else _MinValuesIndices)((out, _wrap(idx.astype(np.int64))))


def max(x, dim=None, keepdim=False):        # noqa: A001 -- torch.max
    if isinstance(dim, Tensor):
        return maximum(x, dim)
    return _extreme(x, dim, keepdim, largest=True)


def min(x, dim=None, keepdim=False):        # noqa: A001 -- torch.min
    return _extreme(x, dim, keepdim, largest=False)


class ProdBackward0(Node):
    """out = product of all elements: d out / d x_i = product of all the other elements.

    PyTorch's formula: with no zero, out / x_i (so a nan or an inf anywhere is in every
    gradient); with a zero, the products of the others (``_times_others``); with two zeros,
    outside create_graph, zeros straight away."""
    __slots__ = ()
    saved_names = ("self", "result")

    def backward(self, g):
        a, y = self._saved
        d = _data(a)
        if not d.ndim:
            return (g,)
        a = _in_dtype_of(a, g)
        zeros = np.count_nonzero(d == 0)
        if not zeros:
            return (g * (y / a),)
        if zeros > 1 and type(g) is not Tensor:
            # every product of the others holds a zero (not the running products, which are
            # nan where a zero meets an inf)
            return (np.zeros_like(d),)
        return (_times_others(g, a.reshape(-1), 0).reshape(d.shape),)


class ProdBackward1(Node):
    """out = product along ``dim``: as ProdBackward0, one slice at a time (with a zero anywhere
    in the input, every slice takes the running products)"""
    __slots__ = ("dim", "keepdim")
    saved_names = ("self", "result")

    def backward(self, g):
        a, y = self._saved
        d = _data(a)
        if not d.ndim:
            return (g,)
        a = _in_dtype_of(a, g)
        dim = self.dim % d.ndim     # (kept as given; PyTorch's formula wraps it so)
        if not self.keepdim:        # the reduced dimension back, as a 1
            g, y = _f.unsqueeze(g, dim), _f.unsqueeze(y, dim)
        if not np.count_nonzero(d == 0):
            return (g * (y / a),)
        return (_times_others(g, a, dim),)


def _in_dtype_of(a, g):
    """The input as PyTorch's prod formulas read it: ``self.to(grad.scalar_type())`` (a
    gradient of another dtype: prod's own ``dtype=``, or a node called by hand)."""
    dtype = _data(g).dtype
    if _data(a).dtype == dtype:
        return a
    return a.to(from_numpy_dtype(dtype)) if type(a) is Tensor else a.astype(dtype)


def _times_others(g, a, dim):
    """g times, for each element of ``a``, the product of the other elements along ``dim``
    (PyTorch's prod_safe_zeros_backward), exact where ``a`` holds zeros: running products from
    either end, for arrays; under create_graph, for Tensors, each product of the others is a
    prod of its own, so that it has a gradient too. Along a dimension of one element there are
    no others: the gradient is g itself, a constant (as PyTorch's)."""
    n = a.shape[dim]
    if n == 1:
        return g
    if type(a) is Tensor:

        def part(start, stop):
            return a[(slice(None),) * dim + (slice(start, stop),)]
        return g * cat([prod(cat([part(0, i), part(i + 1, n)], dim), dim, keepdim=True)
                        for i in range(n)], dim)
    ones = np.ones_like(np.take(a, [0], dim))
    before = np.cumprod(np.concatenate([ones, np.take(a, range(n - 1), dim)], dim), dim)
    after = np.flip(np.cumprod(np.concatenate(
        [ones, np.flip(np.take(a, range(1, n), dim), dim)], dim), dim), dim)
    return g * (before * after)


def prod(x, dim=_WHOLE, keepdim=False, *, dtype=None, axis=_WHOLE):
    """The product of all elements (ProdBackward0), or along one ``dim`` (ProdBackward1)."""
    dim = axis if dim is _WHOLE else dim
    a = x._data
    if dtype is not None:
        a = a.astype(dtype.np)
    elif a.dtype.kind in "biu":
        a = a.astype(np.int64)          # PyTorch multiplies integers and booleans as int64
    if dim is _WHOLE:
        out, node = _record1(ProdBackward0, np.asarray(a.prod()), x)
    else:
        if isinstance(dim, bool) or dim is None:    # (the argument parser words the error)
            raise TypeError(f"prod(): dim must be an int, not {type(dim).__name__}")
        d = wrap_dim(operator.index(dim), a.ndim)
        out = np.prod(a, axis=d, keepdims=keepdim) if a.ndim else np.asarray(a.prod())
        out, node = _record1(ProdBackward1, out, x)
        if node:
            node.dim, node.keepdim = operator.index(dim), keepdim     # (as given)
    if node:
        if a.dtype is not x._data.dtype:    # multiplied in another dtype (``dtype=``)
            note_dtypes(node, (x,), a.dtype)
        node.save_for_backward(x, out)
    return out


class LinalgVectorNormBackward0(Node):
    """out = sqrt(sum of squares);  d out / d self = self / out"""
    __slots__ = ()
    saved_names = ("self", "result")

    def backward(self, g):
        # PyTorch's norm_backward: at the zero vector the subgradient 0
        a, y = self._saved
        return (g * _f.masked_fill(a / y, _data(y) == 0, 0),)


def norm(x, p=2, dim=None, keepdim=False, dtype=None):
    if p is not None and p != 2 or dim is not None or dtype is not None:
        raise NotImplementedError("autograd_lab's norm supports only the 2-norm of all elements")
    a = x._data
    if a.dtype.kind != "f":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {x.dtype.scalar_name}")
    out, node = _record1(LinalgVectorNormBackward0, np.asarray(np.sqrt((a * a).sum()), a.dtype), x)
    if node:
        node.save_for_backward(x, out)
    return out
