"""Factories: new leaf tensors of a shape (``zeros``, ``ones``, ``full``, ``eye``, ``arange``,
``linspace``) or of another tensor's shape (``zeros_like``...). ``tensor()`` itself is in
``_core/tensor.py``; random ones in ``random.py``."""
import builtins

import numpy as np

from .._core import device as _device
from .._core.dtype import float32, int64
from .._core.tensor import _wrap, tensor
from .random import rand, randn


def _factory_shape(size):
    if len(size) == 1 and not isinstance(size[0], (builtins.int, np.integer)):
        return tuple(size[0])
    return tuple(size)


def _np_dtype(dtype, default=np.float32):
    return default if dtype is None else dtype.np


def _leaf(array, requires_grad):
    t = _wrap(array)
    if requires_grad:
        t.requires_grad = True
    return t


def zeros(*size, dtype=None, device=None, requires_grad=False):
    _device.check(device)
    return _leaf(np.zeros(_factory_shape(size), _np_dtype(dtype)), requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    _device.check(device)
    return _leaf(np.ones(_factory_shape(size), _np_dtype(dtype)), requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False):
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    _device.check(device)
    if dtype is None:
        dtype = tensor(fill_value).dtype
    return _leaf(np.full(tuple(size), fill_value, dtype.np), requires_grad)


def zeros_like(x, dtype=None, device=None, requires_grad=False):
    return zeros(x.shape, dtype=dtype or x.dtype, device=device, requires_grad=requires_grad)


def ones_like(x, dtype=None, device=None, requires_grad=False):
    return ones(x.shape, dtype=dtype or x.dtype, device=device, requires_grad=requires_grad)


def empty_like(x, dtype=None, device=None, requires_grad=False):
    return zeros_like(x, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(x, fill_value, dtype=None, device=None, requires_grad=False):
    return full(x.shape, fill_value, dtype=dtype or x.dtype, device=device,
                requires_grad=requires_grad)


def rand_like(x, dtype=None, device=None, requires_grad=False):
    return rand(x.shape, dtype=dtype or x.dtype, device=device, requires_grad=requires_grad)


def randn_like(x, dtype=None, device=None, requires_grad=False):
    return randn(x.shape, dtype=dtype or x.dtype, device=device, requires_grad=requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    _device.check(device)
    return _leaf(np.eye(n, m, dtype=_np_dtype(dtype)), requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    _device.check(device)
    if end is None:
        start, end = 0, start
    if dtype is None:
        whole = builtins.all(isinstance(v, (builtins.int, np.integer)) for v in (start, end, step))
        dtype = int64 if whole else float32
    return _leaf(np.arange(start, end, step).astype(dtype.np), requires_grad)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    """``steps`` points from start to end, computed as PyTorch's CPU kernel does, so that
    float32 grids are bit for bit PyTorch's: the first half counts up from ``start``, the
    second half down from ``end``, each point one fused multiply-add (``start + step * i``
    rounded once; float32 emulated exactly in float64, float64 in long double)."""
    _device.check(device)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dtype = dtype or float32
    if steps <= 1:
        return _leaf(np.full(steps, start, dtype.np), requires_grad)
    if dtype.is_floating_point:
        kind = dtype.np
        s, e = kind.type(start), kind.type(end)
    else:       # integer grids: whole-number ends, a float64 step, each point truncated
        kind = np.dtype(np.float64)
        s, e = kind.type(builtins.int(start)), kind.type(builtins.int(end))
    wide = np.float64 if kind.itemsize < 8 else np.longdouble
    step = kind.type(kind.type(e - s) / kind.type(steps - 1))
    i = np.arange(steps)
    up = wide(s) + wide(step) * i
    down = wide(e) - wide(step) * (steps - 1 - i)
    values = np.where(i < steps // 2, up, down).astype(kind)
    return _leaf(values.astype(dtype.np), requires_grad)
