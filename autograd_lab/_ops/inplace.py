"""In-place operations: add_, mul_, x[0] = v, fill_, zero_, copy_. They change a tensor's own
storage, so they bump its version (saved copies notice) and, when recorded, rebase its history:

* a tensor that is not a view: its grad_fn becomes the new node, whose input is the
  tensor's previous history -- the tensor now stands for the result of the in-place op;
* a view (of a base that requires grad, or changed with an operand that does): the base's
  history gets a ``CopySlices`` node -- the op applied to the viewed part, everything else
  passed through -- and the view becomes a view of that new base (``AsStridedBackward0``);
* every other view of the same base sees the change too: its grad_fn is made again, as an
  ``AsStridedBackward0`` of the base's current history. (PyTorch remakes it when the view's
  grad_fn is next read; here it is remade at the change, which gives the same graph.)

Where a view lies in its base (``_positions``) is worked out from numpy's memory layout, only
when a backward needs it.
"""
import math

import numpy as np

from .._core.dtype import from_numpy_dtype
from .._core.grad_mode import INFERENCE_INPLACE, _State
from .._core.graph import Node, called_with, dense, new_node
from .._core.hooks import typename
from .._core.tensor import Tensor, _wrap, no_grad_view_error
from .._core.zeros import COPY_IMMUTABLE, IMMUTABLE, ZeroArray
from .arithmetic import _f, add, div, mul, sub
from .indexing import _scatter, index_put, setitem_target
from .record import (_data, _edge, _operand, _record, _record1, _view, broadcast_error,
                     other_type_error)
from .shape import clone, expand, view

LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_INPLACE = "a view of " + LEAF_INPLACE
PARTIAL_OVERLAP_INPLACE = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer "
    "to a single memory location. Please clone() the tensor before performing the operation.")
OVERLAP_INPLACE = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation.")


def _check_inplace(x, other=None, operand=False, fill=False, copying=False):
    """PyTorch's refusals, in its order (``operand``: other is an operand of arithmetic, which
    may not share only some of x's elements; ``copying``: copy_'s kernel, whose refusal of a
    ZeroTensor has words of its own)."""
    __tracebackhide__ = True     # IPython shows the learner's line, not this one
    if x._inference and not _State.inference:
        raise RuntimeError(INFERENCE_INPLACE)
    if _State.enabled and (x._rg or type(other) is Tensor and other._rg):   # to be recorded
        base = x._base
        if base is not None:
            if x._no_grad_view:
                raise no_grad_view_error(x._no_grad_view, changing=True)
            if x._rg and base._grad_fn is None:     # (its base a leaf, frozen or not)
                raise RuntimeError(VIEW_OF_LEAF_INPLACE)
        elif x._rg and x._grad_fn is None:
            raise RuntimeError(LEAF_INPLACE)
    a = x._data
    if not fill and a.size and any(s == 0 and n > 1
                                   for s, n in zip(getattr(a, "strides", ()), a.shape)):
        raise RuntimeError(OVERLAP_INPLACE)         # an expanded tensor
    if operand:
        _check_operand(x, other)
    if type(a) is ZeroArray:        # (the kernel's own refusal, after autograd's)
        raise RuntimeError(COPY_IMMUTABLE if copying else IMMUTABLE)


def _check_operand(x, other):
    """An operand may be x itself (x.mul_(x)), but not share only some of x's elements -- as
    far as PyTorch tells (its get_overlap_status): it compares the memory two tensors span
    only when each fills one block of memory; other layouts it lets pass (``a[::2]``)."""
    a = x._data
    if type(other) is Tensor and type(a) is np.ndarray and type(other._data) is np.ndarray:
        o = other._data
        if not np.may_share_memory(a, o) or not dense(a) or not dense(o):
            return
        start_a, start_o = a.__array_interface__["data"][0], o.__array_interface__["data"][0]
        if start_a == start_o and a.nbytes == o.nbytes:
            partial = a.strides != o.strides        # the same block, in another order
        else:
            partial = start_a < start_o + o.nbytes and start_o < start_a + a.nbytes
        if partial:
            raise RuntimeError(PARTIAL_OVERLAP_INPLACE)


def _same_view(x, src):
    """Whether ``src`` is ``x`` itself or a view of the very same elements, in the same order
    and dtype: PyTorch's copy_ then copies nothing, and checks no overlap."""
    if src is x:
        return True
    a, o = x._data, src._data
    return (type(a) is np.ndarray and type(o) is np.ndarray and a.dtype == o.dtype
            and a.shape == o.shape and a.strides == o.strides
            and a.__array_interface__["data"][0] == o.__array_interface__["data"][0])


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


def _apply(x, compute, other=None, operand=False, fill=False, copying=False):
    """Change x in place to ``compute(before)``, ``before`` being x as it was (a copy of its
    values, with its history); record the change if ``compute`` recorded a node. ``fill``:
    every element gets one value, so elements that share memory may be written (fill_, zero_)."""
    __tracebackhide__ = True     # IPython shows the learner's line, not this one
    _check_inplace(x, other, operand, fill, copying)
    # (x's stored grad_fn: a no_grad view changed under no_grad keeps none, see _remake_views)
    before = _wrap(x._data.copy() if _State.enabled else x._data, x._history(), x._rg)
    before._acc = x._acc
    result = compute(before)
    _write(x, result._data)
    _changed(x, result._grad_fn)
    return x


def _changed(x, node):
    """x was just changed in place; ``node`` recorded the change (None if nothing did)."""
    base = x._base
    if node is not None:
        if base is None:
            _set_history(x, node)
        else:
            # through a view: the base's history gets the change, for the viewed part
            copy = new_node(CopySlices, (_edge(base),) + tuple(node._next[1:]))
            copy.fn, copy.where = node, _Where(x, base)
            if node._shapes:        # fn's other inputs were broadcast: summed back by the engine
                copy._shapes = (base._data.shape,) + tuple(node._shapes[1:])
            dtypes = node._extras and node._extras.get("dtypes")
            if dtypes:              # of several dtypes: each gradient cast back by the engine
                copy._extras_table()["dtypes"] = (base._data.dtype,) + tuple(dtypes[1:])
            # fn's saved values are checked and freed as this node's (a CopySlices always
            # holds something to free: PyTorch's refuses a second backward too)
            copy._saved, copy._checks = node._saved or (None,), node._checks
            _set_history(base, copy)
    _remake_views(x)


def _set_history(t, node):
    """t's grad_fn becomes ``node``; ``retain_grad()`` carries over, as in PyTorch."""
    old, t._grad_fn, t._rg = t._grad_fn, node, True
    hooks = old is not None and old._extras and old._extras.get("tensor")
    retain = hooks and hooks.get("retain")
    if retain and retain.tensor() is t:
        del hooks["retain"]
        node._extras_table().setdefault("tensor", {})["retain"] = retain


def _remake_views(x):
    """Every view of the base x belongs to (x's version counter knows them) is now a view of
    the base's current history: an AsStridedBackward0 node.

    Except a view made under no_grad (or a view of one): it had no history of the base to
    begin with, so none can be remade. It loses its grad_fn, and reading it from now on raises
    PyTorch's error (``Tensor._refuse_if_stale``)."""
    vc = x._vc
    if vc is None or len(vc) < 2:
        return
    for ref in vc[1]:
        v = ref()
        if v is None:
            continue
        if v._no_grad_view:
            if v._stale is None:
                v._stale, v._grad_fn = (v._grad_fn,), None
            v._rg = v._rg or v._base._rg     # a view requires grad while its base does
            continue
        base = v._base
        if not base._rg and v._grad_fn is None:
            continue            # no history to view (a view that had one is remade, as in
                                # PyTorch, even of a base frozen since)
        node = new_node(AsStridedBackward0, (_edge(base),))
        node.where = _Where(v, base)
        node.self_sym_sizes = base._data.shape
        _set_history(v, node)


class _Where:
    """Where a view's elements lie in its base: their flat positions (C order), worked out
    from the two arrays' memory layout the first time a backward asks."""

    __slots__ = ("view", "base", "_positions", "geometry")

    def __init__(self, view, base):
        self.view, self.base, self._positions = view._data, base._storage(), None
        v, b = self.view, self.base
        # the view as PyTorch's as_strided would make it again, over memory laid out as the
        # base's: its shape, strides and offset, then the base's shape and strides, counted
        # in elements (what a recorded backward rebuilds, in PyTorch's steps)
        n = v.itemsize
        self.geometry = (v.shape, tuple(st // n for st in v.strides),
                         (_start(v) - _start(b)) // n, b.shape, tuple(st // n for st in b.strides))

    @property
    def positions(self):
        if self._positions is None:
            b = _addresses(self.base).reshape(-1)
            order = np.argsort(b, kind="stable")
            self._positions = order[np.searchsorted(b[order], _addresses(self.view))]
            self.view = self.base = None
        return self._positions


def _start(a):
    return np.asarray(a).__array_interface__["data"][0]


def _strided(memory, shape, strides, offset=0):
    """A view of the 1-d array ``memory`` (PyTorch's as_strided), strides in elements."""
    n = memory.itemsize
    return np.lib.stride_tricks.as_strided(memory[offset:], shape, [st * n for st in strides])


def _extent(shape, strides, offset=0):
    """How many elements of memory a strided view needs (PyTorch's _min_storage_size)."""
    if 0 in shape:
        return offset
    return offset + 1 + sum((n - 1) * st for n, st in zip(shape, strides))


def _maybe_overlapping(shape, strides):
    """PyTorch's test whether a strided view may reach an element twice: its dimensions by
    stride, each stride beyond everything the smaller ones reach (it says maybe, never no,
    where it cannot tell)."""
    reach = 0
    for st, n in sorted(zip(strides, shape)):
        if st <= reach:
            return True
        reach += st * (n - 1)
    return False


def _as_strided_backward(g, geometry):
    """A remade view's gradient, recorded (create_graph, or the node called by hand), in the
    steps of PyTorch's as_strided_backward: g reduced to the view's distinct elements (each
    size-1 dimension squeezed, each expanded one summed, from the last), copied into zeros laid
    out as memory holding the base and the view (CopySlices), and the base read back from it
    (AsStridedBackward0). None where either may reach an element twice: PyTorch adds such
    elements up with index_add_, which the engine does not have (the caller scatters)."""
    shape, strides, offset, base_shape, base_strides = geometry
    if 0 in shape or 0 in base_shape:
        return _wrap(np.zeros(base_shape, g._data.dtype))
    out_shape, out_strides = [], []
    for i in reversed(range(len(shape))):
        if shape[i] == 1:
            g = g.squeeze(i)
        elif strides[i] == 0:
            g = g.sum(i)
        else:
            out_shape.insert(0, shape[i])
            out_strides.insert(0, strides[i])
    inp_shape = [n for n in base_shape if n != 1]
    inp_strides = [st for n, st in zip(base_shape, base_strides) if n != 1]
    if _maybe_overlapping(out_shape, out_strides) or _maybe_overlapping(inp_shape, inp_strides):
        return None
    memory = np.zeros(max(_extent(base_shape, base_strides),
                          _extent(out_shape, out_strides, offset)), g._data.dtype)
    storage = _wrap(memory)
    part, _ = _view(AsStridedBackward0, _strided(memory, out_shape, out_strides, offset), storage)
    setitem(part, Ellipsis, g)
    result, node = _view(AsStridedBackward0, _strided(memory, base_shape, base_strides), storage)
    if node:
        node.where, node.self_sym_sizes = _Where(result, storage), memory.shape
    return result


def _addresses(a):
    """The memory address of every element of array ``a``, in a's shape."""
    out = np.full(a.shape, a.__array_interface__["data"][0], np.intp)
    for d, (n, stride) in enumerate(zip(a.shape, a.strides)):
        out += (np.arange(n, dtype=np.intp) * stride).reshape((-1,) + (1,) * (a.ndim - d - 1))
    return out


def _into_base(g, positions, shape):
    """A zero tensor of the base's ``shape`` with ``g`` added at the view's ``positions``."""
    return _scatter(g, (positions,), (math.prod(shape),), accumulate=True).reshape(shape)


class AsStridedBackward0(Node):
    """out = a view of the base, made again after the base changed in place: the gradient
    lands at the view's positions in a zero tensor of the base's shape"""
    __slots__ = ("where", "self_sym_sizes")

    def backward(self, g):
        if type(g) is Tensor:
            result = _as_strided_backward(g, self.where.geometry)
            if result is not None:
                return (result,)
        return (_into_base(g, self.where.positions, self.self_sym_sizes),)


class CopySlices(Node):
    """The base of a view that was changed in place by ``fn`` (the in-place op's own node):
    outside the view the gradient passes to the base's old history unchanged; inside, fn's
    backward decides what goes to the old values and to fn's other inputs."""
    __slots__ = ("fn", "where")

    def name(self):
        return "torch::autograd::CopySlices"       # a C++ node, named like AccumulateGrad

    def __call__(self, *grads, **kwargs):
        if called_with(grads, kwargs) is None:
            # PyTorch's CopySlices returns at once, reading nothing of fn's: a freed one too
            return None if len(self._next) == 1 else (None,) * len(self._next)
        return Node.__call__(self, *grads, **kwargs)

    def backward(self, g):
        base_shape = self.where.geometry[3]
        if tuple(g.shape) != base_shape:
            # (a node called by hand) PyTorch copies g into a tensor laid out as the base:
            # copy_'s broadcasting, and its refusals
            error = broadcast_error(base_shape, tuple(g.shape))
            if error is None and np.broadcast_shapes(base_shape, tuple(g.shape)) != base_shape:
                error = RuntimeError(f"output with shape {list(base_shape)} doesn't match the "
                                     f"broadcast shape "
                                     f"{list(np.broadcast_shapes(base_shape, tuple(g.shape)))}")
            if error is not None:
                raise error
            g = _f.expand(g, base_shape)
        positions, shape = self.where.positions, g.shape
        ordered = np.sort(positions, axis=None)      # (np.unique would import numpy.ma)
        if (ordered[1:] == ordered[:-1]).any():
            # the view was expanded (fill_ and zero_ may write one): PyTorch writes the
            # gradient back through the same view, and refuses to
            raise RuntimeError(OVERLAP_INPLACE)
        if type(g) is Tensor:
            return self._recorded(g)
        flat = g.reshape(-1)
        fn = self.fn
        grads = fn._checked_backward(flat[(positions,)], as_tensors=type(g) is Tensor)
        outside = np.ones(flat.shape, bool)
        outside[positions] = False
        base = _f.where(outside.reshape(shape), g, 0.0)
        if grads[0] is not None:
            base = base + _into_base(grads[0], positions, shape)
        return (base,) + tuple(grads[1:])

    def _recorded(self, g):
        """The same, recorded (create_graph, or the node called by hand), in PyTorch's own
        steps: g copied into a fresh tensor laid out as the base (CopyBackwards), the view's
        part of it (AsStridedBackward0) cloned and handed to fn, and fn's gradient for it
        copied back into that part (CopySlices)."""
        shape, strides, offset, base_shape, base_strides = self.where.geometry
        memory = np.empty(max(_extent(base_shape, base_strides), _extent(shape, strides, offset)),
                          g._data.dtype)
        result = _wrap(_strided(memory, base_shape, base_strides))
        setitem(result, Ellipsis, g)
        part, node = _view(AsStridedBackward0, _strided(memory, shape, strides, offset), result)
        if node:                        # (g needs no gradient: nothing recorded yet)
            node.where, node.self_sym_sizes = _Where(part, result), base_shape
        grads = self.fn._checked_backward(clone(part), as_tensors=True)
        if grads[0] is not None:
            setitem(part, Ellipsis, grads[0])
        return (result,) + tuple(grads[1:])


# -- the in-place operations ------------------------------------------------------------
def inplace(x, op, other, alpha=None):
    """``x.add_(other)`` and friends: compute out of place, then write into x."""
    __tracebackhide__ = True     # IPython shows the learner's line, not this one
    other, given = _operand(other), other
    if other is NotImplemented:
        raise other_type_error(op.__name__ + "_", given, 1)
    if not (_State.enabled and (x._rg or type(other) is Tensor and other._rg)):
        # Nothing to record (an optimizer step under no_grad): compute straight into x's
        # storage, one pass over the data. Errors fall through to the general path below,
        # which reports them in PyTorch's words.
        _check_inplace(x, other, operand=True)
        into = x._storage()
        try:
            _INPLACE_UFUNCS[op](into, _data(other) if alpha is None else _data(other) * alpha,
                                out=into, casting="same_kind")
        except (TypeError, ValueError):
            pass
        else:
            x._bump_version()
            _remake_views(x)
            return x
    # ``before`` is a copy while recording (PyTorch's "original_self"): mul_ and div_ save
    # it for other's gradient, and x is overwritten
    return _apply(x, lambda before: op(before, other) if alpha is None
                  else op(before, other, alpha), other, operand=True)


def inplace_unary(x, fn):
    """``x.clamp_(0, 1)``: the out-of-place ``fn(x)``, written into x."""
    return _apply(x, fn)


_INPLACE_UFUNCS = {add: np.add, sub: np.subtract, mul: np.multiply, div: np.true_divide}


class ZeroBackward0(Node):
    """x.zero_(): the zeros depend on nothing"""
    __slots__ = ()

    def backward(self, g):
        return (_f.zeros_like(g),)


class FillBackward2(ZeroBackward0):
    """x.fill_(number)"""
    __slots__ = ()


class FillBackward3(Node):
    """x.fill_(value), value a 0-d tensor: its gradient is the sum of all of g"""
    __slots__ = ()

    def backward(self, g):
        return _f.zeros_like(g), g.sum()


class CopyBackwards(Node):
    """x.copy_(src) (``x[...] = src``); also a leaf's .grad that is itself part of a graph
    (``backward(create_graph=True)``), where src is the gradient"""
    __slots__ = ("src_dtype",)

    def name(self):
        return "torch::autograd::CopyBackwards"     # a C++ node, named like AccumulateGrad

    def backward(self, g):
        if len(self._next) == 1:
            return (g,)
        # src's gradient in the output's shape, as PyTorch's node returns it (called by hand);
        # the engine sums it back to src's shape (``_shapes``, set where src was broadcast)
        return _f.zeros_like(g), (g.to(from_numpy_dtype(self.src_dtype)) if type(g) is Tensor
                                  else np.asarray(g, self.src_dtype))


def copy_grad(g):
    return _record1(CopyBackwards, g._data.copy(), g)[0]


def _filled(before, value, cls):
    """``before`` with every element ``value`` (a number or a 0-d tensor), recorded as ``cls``."""
    out = np.full(before._data.shape, _data(value), before._data.dtype)
    return _record(cls, out, before, value)[0] if cls is FillBackward3 else \
        _record1(cls, out, before)[0]


def inplace_fill(x, value, cls=None, fill=True):
    """x.fill_(value); ``fill=False``: an assignment ``x[...] = value`` that fills, which PyTorch
    refuses on elements that share memory as it refuses any other write."""
    if cls is None:
        cls = FillBackward3 if type(value) is Tensor else FillBackward2
    if type(value) is Tensor and value._data.ndim:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value._data.ndim} dimensions.")
    return _apply(x, lambda before: _filled(before, value, cls), value, fill=fill,
                  copying=not fill)


def zero_(x):
    return inplace_fill(x, 0, ZeroBackward0)


def _copied(before, src):
    """``before`` overwritten with ``src`` (broadcast), recorded as CopyBackwards."""
    out = np.broadcast_to(np.asarray(_data(src), before._data.dtype), before._data.shape)
    result, node = _record(CopyBackwards, out.copy(), before, src)
    if node:
        node.src_dtype = src._data.dtype
        if src._data.shape != out.shape:
            node._shapes = (out.shape, src._data.shape)
    return result


def copy_(x, src, non_blocking=False):
    """x.copy_(src): src's values, broadcast to x's shape and cast to x's dtype, written into x
    (``non_blocking`` means nothing on a CPU). Recorded as CopyBackwards: no gradient for what
    x held before, src's gradient summed back to src's shape and dtype."""
    __tracebackhide__ = True     # IPython shows the learner's line, not this one
    if type(src) is not Tensor:
        if not isinstance(src, (bool, int, float, np.number)):
            raise TypeError("copy_")    # the argument parser says it in PyTorch's words
        src = _wrap(np.asarray(src, x._data.dtype))     # a number, as PyTorch wraps one
    error = broadcast_error(x._data.shape, src._data.shape)
    if error is not None:
        raise error
    shape = np.broadcast_shapes(x._data.shape, src._data.shape)
    if shape != x._data.shape:
        raise RuntimeError(f"output with shape {list(x._data.shape)} doesn't match the broadcast "
                           f"shape {list(shape)}")
    # x.copy_(x), or of a view of the same elements, copies nothing, so PyTorch's kernel
    # checks no overlap (it is still recorded)
    itself = _same_view(x, src)
    return _apply(x, lambda before: _copied(before, src), src, operand=not itself, fill=itself,
                  copying=True)


def _shaped_like(value, target):
    """``value`` made ``target``'s shape as PyTorch's setitem does (its copy_to): its leading
    size-1 dimensions dropped by a view, then expanded -- each step recorded, expand's errors
    for a shape that does not fit."""
    sizes = value._data.shape
    lead = 0
    while lead < len(sizes) and sizes[lead] == 1:
        lead += 1
    value = view(value, sizes[lead:])
    return value if value._data.shape == target._data.shape else expand(value, target.shape)


def _put(before, index, value):
    return index_put(before, value, indices=index, accumulate=False)


def setitem(x, key, value):
    """``x[key] = value`` as PyTorch does it: the ints and slices of the key make a view of x
    (a slice over a whole dimension makes none), then the view is filled, copied into, or, if
    the key holds index arrays, written with index_put_ -- an in-place change of a view."""
    value, given = _operand(value), value
    if value is NotImplemented:     # a list, an array: PyTorch takes a Tensor or a number
        raise TypeError(f"can't assign a {typename(given)} to a "
                        f"torch.{from_numpy_dtype(x._data.dtype).legacy}")
    target, index = setitem_target(x, key)
    if index is not None:
        if type(value) is not Tensor:
            value = _wrap(np.asarray(value, x._data.dtype))
        return _apply(target, lambda before: _put(before, index, value), value)
    if type(value) is not Tensor:
        return inplace_fill(target, _wrap(np.asarray(value, x._data.dtype)), FillBackward3,
                            fill=False)
    if value._data.ndim == 0 and target._data.ndim:
        # PyTorch's copy_to: a 0-d value fills a part of another shape, and is copied into one
        # of its own shape (whose CopyBackwards casts the value's gradient to its dtype)
        return inplace_fill(target, value, FillBackward3, fill=False)
    if value._data.shape != target._data.shape:
        value = _shaped_like(value, target)
    return _apply(target, lambda before: _copied(before, value), value, operand=True,
                  copying=True)
