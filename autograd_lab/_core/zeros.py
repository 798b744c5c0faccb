"""PyTorch's ZeroTensor: the gradient of ``sgn`` (so the second derivative of ``abs``), a
tensor of zeros that PyTorch never allocates.

Only a few of PyTorch's kernels know it: ``*`` and ``/`` give another ZeroTensor (so
``zero * nan`` is 0, and ``zero / x`` is 0 for every x but another ZeroTensor), ``+`` and
``-`` of two give one, and views of it are views of nothing. Every other operation sees
ordinary zeros, and its result is an ordinary tensor. It cannot be changed in place, and
``tolist()`` and ``numpy()`` refuse it.

Here it is a Tensor whose array is a ``ZeroArray``: the tensor needs no flag of its own, and
the arithmetic of ordinary arrays pays nothing for it (numpy calls ``__array_ufunc__`` only
when one operand is a ``ZeroArray``). Views keep the class, as numpy's views of a subclass
do; anything else returns plain arrays.
"""
import numpy as np

from .grad_mode import _State

IMMUTABLE = ("ZeroTensors are immutable. Please use the materialized zero tensor obtained "
             "using .clone() if you want a mutable tensor.")
COPY_IMMUTABLE = ("ZeroTensors are immutable. Please materialize the tensor using `.clone()`, if "
                  "you want a mutable zero tensor.")     # (copy_'s words, and so x[i] = v's)
NO_STORAGE = "tolist() shouldn't be called on a tensor with unallocated storage"
NO_NUMPY = " Cannot convert a ZeroTensor to numpy. Set force=True if you need the zero array."

_plain = np.ndarray
# numpy functions that return a view (the operations of _ops/shape.py that use them)
_VIEWS = {np.expand_dims, np.squeeze, np.transpose, np.moveaxis, np.swapaxes, np.reshape,
          np.split, np.array_split}


class ZeroArray(np.ndarray):
    """The array of a ZeroTensor (see the module's docstring)."""

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if out is not None:
            if any(type(o) is ZeroArray for o in out):
                raise RuntimeError(IMMUTABLE)
            kwargs["out"] = out
        zero = [type(x) is ZeroArray for x in inputs]
        result = getattr(ufunc, method)(*map(plain, inputs), **kwargs)
        # A plain number in a backward formula is PyTorch's Scalar overload: div.Scalar (mean's
        # ``g / n``) does not know ZeroTensors, mul.Scalar (add's ``g * alpha``) does; anywhere
        # else (``z * 2``, or a user's number a formula wraps) it is a tensor, and ``*`` keeps
        # the ZeroTensor.
        if out is None and method == "__call__" and not (
                _State.formula and ufunc is not np.multiply
                and any(type(x) in (int, float) for x in inputs)):
            if (ufunc is np.multiply or ufunc is np.divide and zero[0] and not zero[1]
                    or (ufunc is np.add or ufunc is np.subtract) and all(zero)):
                return zeros(np.shape(result), result.dtype)
            if ufunc is np.divide and zero[1] and not zero[0]:
                return np.full(np.shape(result), np.inf, result.dtype)   # x / 0 is inf, all
        return result

    def __array_function__(self, func, types, args, kwargs):
        if func in _VIEWS:          # numpy's own handling: a view of a ZeroArray is one
            return super().__array_function__(func, types, args, kwargs)
        return func(*_unwrap_all(args), **_unwrap_all(kwargs))

    def __getitem__(self, key):
        # basic indexing is a view (a ZeroTensor still); advanced indexing copies (ordinary)
        part = super().__getitem__(key)
        if type(part) is ZeroArray and not np.may_share_memory(part, self):
            return part.view(_plain)
        return part

    def copy(self, order="C"):          # clone() materializes
        return self.view(_plain).copy(order)

    def astype(self, dtype, *args, **kwargs):     # so does a change of dtype
        return self.view(_plain).astype(dtype, *args, **kwargs)


def zeros(shape, dtype):
    """A ZeroTensor's array: zeros that never change. (Its own memory, not a view of a plain
    array: code that looks for an array's base finds none.)"""
    z = ZeroArray(shape, dtype)
    _plain.fill(z, 0)
    return z


def plain(x):
    """x, or the plain array of a ZeroArray: zeros as any kernel but PyTorch's few sees them"""
    return x.view(_plain) if type(x) is ZeroArray else x


def _unwrap_all(x):
    if type(x) is ZeroArray:
        return x.view(_plain)
    if type(x) in (list, tuple):
        return type(x)(map(_unwrap_all, x))
    if type(x) is dict:
        return {k: _unwrap_all(v) for k, v in x.items()}
    return x
