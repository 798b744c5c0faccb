"""Views and copies that change a shape (view, reshape, permute, transpose, unsqueeze,
squeeze, expand), joining (cat, stack), dtype changes (to), comparisons. A view shares its
base's data and version counter; its backward only moves the gradient back into shape."""
import math
import operator

import numpy as np

from .._core import device as _device
from .._core.dtype import dtype as _dtype_cls
from .._core.graph import Node, unbroadcast
from .._core.tensor import Tensor, _warn_once, _wrap
from .record import (_data, _f, _operand, _record, _record1, _view, broadcasting, note_dtypes,
                     wrap_dim, wrap_dims)


class ViewBackward0(Node):
    """out = self with another shape: the gradient gets the old shape back"""
    __slots__ = ("self_sym_sizes",)

    def backward(self, g):
        return (g.reshape(self.self_sym_sizes),)


class UnsafeViewBackward0(ViewBackward0):
    __slots__ = ()


class ReshapeAliasBackward0(ViewBackward0):
    __slots__ = ()


class CloneBackward0(Node):
    """out = a copy of self"""
    __slots__ = ()

    def backward(self, g):
        return (g,)


def _shape_arg(shape):
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def _infer_size(shape, numel):
    """``shape`` for a tensor of ``numel`` elements, its one -1 worked out, or PyTorch's error
    (checked before anything else: a view's strides are looked at only for a valid shape)."""
    infer, known = None, 1
    for i, n in enumerate(shape):
        if n == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif n >= 0:
            known *= n
        else:
            raise RuntimeError(f"invalid shape dimension {n} at index {i} of shape {list(shape)}")
    if numel == known and infer is None:
        return shape
    if infer is not None and (numel == known or known > 0 and numel % known == 0):
        if known == 0:      # 0 elements into (0, -1): any size would do
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                "unspecified dimension size -1 can be any value and is ambiguous")
        return shape[:infer] + (numel // known,) + shape[infer + 1:]
    raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")


def _reshaped(x, shape, cls):
    """x with a shape that fits its size (see ``_infer_size``), recorded as a ``cls``."""
    a = x._storage()
    new = a.reshape(shape)
    if cls is not UnsafeViewBackward0 and new.size > 1:
        strides = _view_strides(a.shape, a.strides, new.shape)
        if strides is not None and strides != new.strides:
            new = np.lib.stride_tricks.as_strided(a, new.shape, strides, subok=True)
    # the reshape of a copy (UnsafeViewBackward0) is a tensor of its own, not a view
    out, node = (_record1 if cls is UnsafeViewBackward0 else _view)(cls, new, x)
    if node:
        node.self_sym_sizes = a.shape
    return out


def _view_strides(old_shape, old_strides, shape):
    """The strides PyTorch's view gives ``shape`` over memory laid out as ``old_shape`` with
    ``old_strides`` (ATen's computeStride), or None if it cannot view it. numpy's reshape
    finds the same strides wherever a dimension is longer than 1; in size-1 dimensions,
    where no element is read, PyTorch's are its own, and an in-place operation's overlap
    check compares them."""
    strides = [0] * len(shape)
    view_d = len(shape) - 1
    base = old_strides[-1] if old_strides else 0
    tensor_numel = view_numel = 1
    for d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[d]
        if d == 0 or old_shape[d - 1] != 1 and old_strides[d - 1] != tensor_numel * base:
            while view_d >= 0 and (view_numel < tensor_numel or shape[view_d] == 1):
                strides[view_d] = view_numel * base
                view_numel *= shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                base, tensor_numel, view_numel = old_strides[d - 1], 1, 1
    return tuple(strides) if view_d == -1 else None


def _unsafe_view(x, shape):
    """PyTorch's ``_unsafe_view``: ``x`` reshaped, as a tensor of its own rather than a view.
    For a result nothing else holds (a copy, or what a product just made): a view of it would
    only add a base to watch."""
    return _reshaped(x, tuple(shape), UnsafeViewBackward0)


def view(x, *shape):
    if shape == (None,):        # PyTorch's argument parser: view takes a dtype or a shape
        raise TypeError(
            "view() received an invalid combination of arguments - got (NoneType), but expected "
            "one of:\n * (torch.dtype dtype)\n      didn't match because some of the arguments "
            "have invalid types: (!NoneType!)\n * (tuple of ints size)\n      didn't match "
            "because some of the arguments have invalid types: (!NoneType!)\n")
    shape = _infer_size(_shape_arg(shape), x._data.size)
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
    shape = _infer_size(_shape_arg(shape), x._data.size)
    if x._data.flags.c_contiguous or x._data.size <= 1:
        return _reshaped(x, shape, ViewBackward0)
    try:                            # not contiguous, but the new shape fits its strides: a view
        v = x._data.view()
        v.shape = shape
    except (AttributeError, ValueError):
        # PyTorch copies first (CloneBackward0), then views the copy
        return _unsafe_view(clone(x), shape)
    return _reshaped(x, shape, ReshapeAliasBackward0)


def flatten(x, start_dim=0, end_dim=-1):
    """x with dimensions ``start_dim`` to ``end_dim`` made one: a reshape (ViewBackward0, or
    a copy's UnsafeViewBackward0 where x's memory does not fit)."""
    shape = x._data.shape
    start, end = wrap_dim(start_dim, len(shape)), wrap_dim(end_dim, len(shape))
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if not shape:
        return reshape(x, 1)
    if start == end:
        return x        # already flat there: PyTorch hands back the tensor itself
    return reshape(x, *shape[:start], math.prod(shape[start:end + 1]), *shape[end + 1:])


def clone(x):
    # in the layout of x's memory (a transposed tensor's clone is transposed), as PyTorch's
    # clone keeps it: a later view or reshape then views or copies as PyTorch's does. (numpy
    # would put an expanded dimension, stride 0, innermost; PyTorch's copy of one is row-major)
    a = x._data
    return _record1(CloneBackward0, a.copy(order="C" if 0 in a.strides else "K"), x)[0]


def contiguous(x):
    if x._data.flags.c_contiguous:
        return x
    return _record1(CloneBackward0, np.ascontiguousarray(x._data), x)[0]


class PermuteBackward0(Node):
    """out = self with its dimensions reordered"""
    __slots__ = ("dims",)

    def backward(self, g):
        # (the dims kept as given, wrapped here as PyTorch's permute_backwards wraps them)
        back = np.argsort([d % len(self.dims) for d in self.dims])
        return (g.permute(*back) if isinstance(g, Tensor) else g.transpose(back),)


def permute(x, *dims):
    dims = _shape_arg(dims)
    ndim = x._data.ndim
    if len(dims) != ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            "length of the desired ordering of dimensions i.e. input.dim() = "
            f"{ndim} is not equal to len(dims) = {len(dims)}")
    given, dims = tuple(dims), tuple(wrap_dim(d, ndim) for d in dims)
    if len(set(dims)) != ndim:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    out, node = _view(PermuteBackward0, x._storage().transpose(dims), x)
    if node:
        node.dims = given
    return out


class TransposeBackward0(Node):
    """out = self with two dimensions swapped"""
    __slots__ = ("dim0", "dim1")

    def backward(self, g):
        # a view of g, even where nothing is swapped (transpose(0, 0), or a 0-d tensor's)
        if type(g) is Tensor:
            return (transpose(g, self.dim0, self.dim1),)
        return (g.swapaxes(self.dim0, self.dim1) if g.ndim else g[...],)


def transpose(x, dim0, dim1):
    a = x._storage()
    d0, d1 = wrap_dim(dim0, a.ndim), wrap_dim(dim1, a.ndim)
    out, node = _view(TransposeBackward0, a.swapaxes(d0, d1) if a.ndim else a[...], x)
    if node:
        # the dimensions as given, as PyTorch saves them: its backward wraps a negative one
        # against the gradient it is handed (x.mT's node, called with a gradient of fewer
        # dimensions, swaps that gradient's last two)
        node.dim0, node.dim1 = dim0, dim1
    return out


class TBackward0(Node):
    """out = self^T (a matrix)"""
    __slots__ = ()

    def backward(self, g):
        return (g.t() if isinstance(g, Tensor) else g.T,)


def t(x):
    if x._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x._data.ndim}D")
    return _view(TBackward0, x._storage().T, x)[0]


def T(x):
    if x._data.ndim != 2:
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
    # (``dim`` as given: a node called by hand with a gradient of other dimensions squeezes
    # that gradient's own ``dim``, as PyTorch's does)
    __slots__ = ("dim",)

    def backward(self, g):
        return (g.squeeze(self.dim),)


def unsqueeze(x, dim):
    given, dim = dim, wrap_dim(dim, x._data.ndim + 1)
    a = x._storage()
    # PyTorch's strides: the others as they are (numpy's expand_dims, a reshape, remakes
    # those of size-1 dimensions), the new one its next dimension's size times stride
    new = a.strides[dim] * a.shape[dim] if dim < a.ndim else a.itemsize
    strides = a.strides[:dim] + (new,) + a.strides[dim:]
    shape = a.shape[:dim] + (1,) + a.shape[dim:]
    out, node = _view(UnsqueezeBackward0,
                      np.lib.stride_tricks.as_strided(a, shape, strides, subok=True), x)
    if node:
        node.dim = given
    return out


class SqueezeBackward0(Node):
    """out = self without its size-1 dimensions: the gradient gets them back"""
    __slots__ = ("self_sym_sizes",)

    def backward(self, g):
        # PyTorch's unsqueeze_to: one unsqueeze per dimension squeezed, in order (none: the
        # gradient itself is passed on, not a view of it)
        for d in self._squeezed():
            g = _f.unsqueeze(g, d)
        return (g,)

    def _squeezed(self):
        return [d for d, n in enumerate(self.self_sym_sizes) if n == 1]


class SqueezeBackward1(SqueezeBackward0):
    """``squeeze(dim)``: one dimension"""
    __slots__ = ("dim",)

    def _squeezed(self):
        # (the dims as given, wrapped here as PyTorch's unsqueeze_to wraps them)
        sizes = self.self_sym_sizes
        dims = self.dim if isinstance(self.dim, tuple) else (self.dim,)
        return [d for d in sorted(d % len(sizes) for d in dims) if sizes[d] == 1] \
            if sizes else []


class SqueezeBackward2(SqueezeBackward1):
    """``squeeze((0, 2))``: a tuple of dimensions (``dim`` holds the tuple)"""
    __slots__ = ()


class SqueezeBackward4(SqueezeBackward1):
    """``squeeze_(dim)``, in place"""
    __slots__ = ()


def squeeze(x, dim=None, *more):
    """x without its size-1 dimensions: all of them, the one ``dim`` names, or those among
    a tuple of dims (``x.squeeze((0, 2))``, or ``x.squeeze(0, 2)`` as a method). A named
    dimension whose size is not 1 stays."""
    if more:
        dim = (dim,) + more
    a = x._storage()
    if dim is None:
        out, node = _view(SqueezeBackward0, a.squeeze(), x)
    else:
        if isinstance(dim, (int, np.integer)):      # a numpy integer is an int dim too
            cls, given = SqueezeBackward1, int(dim)
            named = (wrap_dim(given, a.ndim),)
        else:
            cls, given = SqueezeBackward2, tuple(operator.index(d) for d in dim)
            named = wrap_dims(given, a.ndim)
        gone = tuple(d for d in named if a.ndim and a.shape[d] == 1)
        # a[...]: a new view even when nothing goes, as every view is a tensor of its own
        out, node = _view(cls, a.squeeze(gone) if gone else a[...], x)
        if node:    # (the dims as given, as PyTorch's node keeps them)
            node.dim = given
    if node:
        node.self_sym_sizes = a.shape
    return out


def _squeeze_fresh(x, dim):
    """``x.squeeze_(dim)`` where ``x`` is a result nothing else holds yet (PyTorch's matmul
    squeezes its mm's result so). In place: the result is no view, its node is
    SqueezeBackward4, and it starts at version 1."""
    a = x._data
    d = wrap_dim(dim, a.ndim)
    out, node = _record1(SqueezeBackward4, a.squeeze(d) if a.shape[d] == 1 else a, x)
    if node:
        node.dim, node.self_sym_sizes = d, a.shape
    out._bump_version()
    return out


class ExpandBackward0(Node):
    """out = self repeated along new or size-1 dimensions: gradients sum back"""
    __slots__ = ("self_sym_sizes",)

    def backward(self, g):
        return (unbroadcast(g, self.self_sym_sizes),)


def expand(x, *shape):
    shape = _shape_arg(shape)
    a = x._storage()
    lead = len(shape) - a.ndim
    if lead < 0:
        raise RuntimeError(
            f"expand(torch.{x.dtype.legacy}{{{list(a.shape)}}}, size={list(shape)}): the number of sizes "
            f"provided ({len(shape)}) must be greater or equal to the number of dimensions in "
            f"the tensor ({a.ndim})")
    # checked from the last dimension, as PyTorch's infer_expand_geometry does: its error
    # names the last dimension that does not fit
    target = list(shape)
    for i in reversed(range(len(shape))):
        s = shape[i]
        if i < lead:
            if s == -1:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            continue
        n = a.shape[i - lead]
        if s == -1:
            target[i] = n
        elif n != s and n != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({n}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(shape)}.  Tensor "
                f"sizes: {list(a.shape)}")
    shape = tuple(target)
    if any(s < 0 for s in shape):
        raise RuntimeError("numel: integer multiplication overflow")
    # a view with stride 0 where it repeats (writable, unlike np.broadcast_to's: an in-place
    # change of an expanded tensor that repeats nothing is allowed, as in PyTorch); a new
    # dimension of size 1 gets PyTorch's stride, the next one's size times its stride (the
    # overlap checks of in-place operations compare strides)
    strides = [0] * len(shape)
    for i in reversed(range(len(shape))):
        if i >= lead:
            n, stride = a.shape[i - lead], a.strides[i - lead]
        else:
            n = 1
            stride = shape[i + 1] * strides[i + 1] if i + 1 < len(shape) else 0
        strides[i] = stride if n == shape[i] else 0
    # (subok: the expand of a ZeroTensor is one, _core/zeros.py)
    expanded = np.lib.stride_tricks.as_strided(a, shape, strides, subok=True)
    out, node = _view(ExpandBackward0, expanded, x)
    if node:
        node.self_sym_sizes = a.shape
    return out


# -- joining, dtype changes --------------------------------------------------------------
class CatBackward0(Node):
    """out = inputs joined along ``dim``: each input gets its slice of the gradient"""
    __slots__ = ("dim", "sizes")
    tensor_list = True

    def backward(self, g):
        # PyTorch's formula narrows g to each input's slice in turn: narrow's errors, for a
        # node called by hand with a gradient of another shape
        shape = np.shape(_data(g))
        if not shape:
            raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
        dim = wrap_dim(self.dim, len(shape))
        parts, start = [], 0
        for n in self.sizes:
            if n is None:   # an input that was skipped (1-D and empty) gets an empty gradient
                empty = np.zeros(0, _data(g).dtype)
                parts.append(_wrap(empty) if type(g) is Tensor else empty)
                continue
            if start + n > shape[dim]:
                raise RuntimeError(f"start ({start}) + length ({n}) exceeds dimension size "
                                   f"({shape[dim]}).")
            parts.append(g[(slice(None),) * dim + (slice(start, start + n),)])
            start += n
        return tuple(parts)


def _tensor_list(tensors):
    tensors = list(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    return tensors


def cat(tensors, dim=0):
    tensors = _tensor_list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    arrays = [t._data for t in tensors]
    for i, a in enumerate(arrays):
        if a.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    # PyTorch skips 1-D empty tensors (the legacy "empty" shape) in its checks and the join
    joined = [i for i, a in enumerate(arrays) if a.ndim != 1 or a.size] or list(range(len(arrays)))
    d = wrap_dim(dim, arrays[joined[0]].ndim) if len(joined) < len(arrays) or \
        arrays[0].ndim != 1 or arrays[0].size else 0
    first = arrays[joined[0]].shape
    for i, a in ((i, arrays[i]) for i in joined):
        if a.ndim != len(first):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(first)} "
                               f"and {a.ndim}")
        for k, (n, m) in enumerate(zip(first, a.shape)):
            if k != d and n != m:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size {n} but "
                    f"got size {m} for tensor number {i} in the list.")
    # (contiguous, as PyTorch's: numpy's result follows its inputs' layout, and an expanded
    # input would make it strided, which a later view or matmul tells apart)
    result = np.ascontiguousarray(np.concatenate([arrays[i] for i in joined], axis=d))
    out, node = _record(CatBackward0, result, *tensors)
    if node:
        note_dtypes(node, tensors)
        node.dim = d
        node.sizes = [a.shape[d] if i in joined else None for i, a in enumerate(arrays)]
    return out


class StackBackward0(Node):
    __slots__ = ("dim",)
    tensor_list = True

    def backward(self, g):
        # PyTorch's formula selects each input's slice in turn: its errors, for a node
        # called by hand with a gradient of another shape
        shape = np.shape(_data(g))
        if not shape:
            raise IndexError("select() cannot be applied to a 0-dim tensor.")
        d = wrap_dim(self.dim, len(shape))
        n = len(self._next)
        if n > shape[d]:
            raise IndexError(f"select(): index {shape[d]} out of range for tensor of size "
                             f"{list(shape)} at dimension {d}")
        if type(g) is not Tensor:
            return tuple(np.take(g, i, axis=d) for i in range(n))
        return tuple(g[(slice(None),) * d + (i,)] for i in range(n))


def stack(tensors, dim=0):
    tensors = _tensor_list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(tensors[0].shape)} at entry 0 and {list(t.shape)} at "
                               f"entry {i}")
    d = wrap_dim(dim, tensors[0]._data.ndim + 1)
    stacked = np.ascontiguousarray(np.stack([t._data for t in tensors], axis=d))   # (as cat)
    out, node = _record(StackBackward0, stacked, *tensors)
    if node:
        note_dtypes(node, tensors)
        node.dim = dim      # as given: the formula wraps it against the gradient it is handed
    return out


class ToCopyBackward0(Node):
    """out = self in another dtype: the gradient goes back to the old dtype"""
    __slots__ = ("dtype",)

    def backward(self, g):
        return (g.to(self.dtype) if type(g) is Tensor else g.astype(self.dtype.np),)


def to(x, *args, dtype=None, device=None, non_blocking=False, copy=False):
    """``x.to(dtype)``, ``x.to(device)``, ``x.to(device, dtype)``, ``x.to(other_tensor)``:
    ``x`` itself when nothing changes (and not ``copy``), else a recorded copy."""
    for a in args:
        if isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, _dtype_cls):
            dtype = a
        else:
            device = a
    # A device with an index (``"cpu:0"``) is, to PyTorch, another place: it copies.
    moved = device is not None and _device.check(device).index is not None
    target = x._data.dtype if dtype is None else dtype.np
    if target == x._data.dtype and not (copy or moved):
        return x
    data = x._data.astype(target)
    if data.dtype.kind != "f":      # integers and bools have no gradient: never in the graph
        return _wrap(data)
    out, node = _record1(ToCopyBackward0, data, x)
    if node:
        node.dtype = x.dtype
    return out


# -- comparisons (never differentiable) --------------------------------------------------
def _compare(fn):
    def compare(a, b):
        b = _operand(b)
        if b is NotImplemented:
            return b
        return _wrap(np.asarray(broadcasting(fn, _data(a), _data(b))))
    return compare


eq, ne, lt, le, gt, ge = map(_compare, (np.equal, np.not_equal, np.less, np.less_equal,
                                         np.greater, np.greater_equal))
