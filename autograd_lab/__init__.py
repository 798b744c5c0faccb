"""autograd_lab: PyTorch's autograd, small enough to read in one sitting.

``import autograd_lab as torch`` runs the autograd parts of a PyTorch snippet with the same
numbers, printed tensors, node names and errors. Where to look:

* ``_tensor.py``       the Tensor: data, grad, requires_grad, grad_fn, is_leaf, versions
* ``_ops/``            every operation, its backward next to its forward (a file per family)
* ``autograd/graph.py``  graph nodes, saved tensors, AccumulateGrad
* ``autograd/engine.py`` the backward pass: topological sort, sweep, accumulate, free
* ``autograd/grad_mode.py`` no_grad and friends
* ``_tensor_str.py``   printing
"""
import builtins

import numpy as _np

from . import _device, _ops, autograd
from ._device import device, get_default_device, set_default_device
from ._dtype import (Size, bool, dtype, float16, float32, float64, int8, int16, int32, int64,
                     uint8)
from ._ops import (abs, add, all, any, argmax, argmin, bmm, cat, clamp, clone, cos, div, eq,
                   exp, flatten, ge, gt, le, log, log_softmax, lt, max, maximum, mean, min, mm,
                   movedim, mul, mv, ne, neg, norm, permute, prod, reciprocal, relu, reshape,
                   sigmoid, sign, sin, softmax, sqrt, squeeze, stack, sub, sum, t, tanh, transpose,
                   unsqueeze, where)
from ._ops import clamp as clip
from ._ops import dot
from ._random import Generator, default_generator, initial_seed, manual_seed, rand, randn, seed
from ._tensor import Tensor, _wrap, tensor
from .autograd.grad_mode import (enable_grad, inference_mode, is_anomaly_check_nan_enabled,
                                 is_anomaly_enabled, is_grad_enabled, is_inference_mode_enabled,
                                 no_grad, set_grad_enabled)

__version__ = "0.1.0"

# PyTorch computes inf and nan silently (1/0, log(0), inf - inf); numpy warns, on every
# operation that makes one. Operations here are numpy calls, so numpy's floating-point
# warnings are switched off for the process, once, rather than around every operation (which
# would cost as much as the operation itself).
_np.seterr(all="ignore")

float = float32         # noqa: A001 -- PyTorch's aliases
double = float64
half = float16
long = int64
int = int32             # noqa: A001


def _install():
    """Put the operations on Tensor: methods, operators and in-place variants."""
    o = _ops
    methods = {
        "add": o.add, "sub": o.sub, "mul": o.mul, "div": o.div, "pow": o.pow, "neg": o.neg,
        "matmul": _typed(o.matmul, 1), "mm": o.mm, "bmm": o.bmm, "mv": o.mv, "dot": o.dot,
        "exp": o.exp, "log": o.log,
        "sin": o.sin, "cos": o.cos, "tanh": o.tanh, "sigmoid": o.sigmoid, "relu": o.relu,
        "sqrt": o.sqrt, "abs": o.abs, "sign": o.sign, "reciprocal": o.reciprocal,
        "square": square, "sum": o.sum, "mean": o.mean, "max": o.max,
        "min": o.min, "prod": o.prod, "norm": o.norm, "maximum": o.maximum, "t": o.t,
        "reshape": o.reshape, "view": o.view, "flatten": o.flatten, "permute": o.permute,
        "transpose": o.transpose, "unsqueeze": o.unsqueeze, "squeeze": o.squeeze,
        "expand": o.expand, "expand_as": lambda x, other: o.expand(x, other.shape),
        "clamp": o.clamp, "clip": o.clamp, "softmax": _needs_dim(o.softmax),
        "log_softmax": _needs_dim(o.log_softmax), "argmax": o.argmax, "argmin": o.argmin,
        "all": o.all, "any": o.any, "movedim": o.movedim,
        "clamp_": lambda x, min=None, max=None: o.inplace_unary(x, lambda b: o.clamp(b, min, max)),
        "clip_": lambda x, min=None, max=None: o.inplace_unary(x, lambda b: o.clamp(b, min, max)),
        "clone": o.clone, "contiguous": o.contiguous, "to": o.to,
        "double": lambda x: o.to(x, float64), "float": lambda x: o.to(x, float32),
        "half": lambda x: o.to(x, float16), "long": lambda x: o.to(x, int64),
        "int": lambda x: o.to(x, int32), "bool": lambda x: o.to(x, bool),
        "eq": o.eq, "ne": o.ne, "lt": o.lt, "le": o.le, "gt": o.gt, "ge": o.ge,
        "__add__": o.add, "__radd__": o.add, "__sub__": o.sub, "__rsub__": o.rsub,
        "__mul__": o.mul, "__rmul__": o.mul, "__truediv__": o.div, "__rtruediv__": o.rdiv,
        "__pow__": o.pow, "__rpow__": o.rpow, "__matmul__": o.matmul,
        "__rmatmul__": lambda x, other: o.matmul(tensor(other), x), "__neg__": o.neg,
        "__abs__": o.abs, "__getitem__": o.getitem, "__eq__": o.eq, "__ne__": o.ne,
        "__lt__": o.lt, "__le__": o.le, "__gt__": o.gt, "__ge__": o.ge,
    }
    for name, fn in methods.items():
        setattr(Tensor, name, fn)
    for name in ("add", "sub", "mul", "div", "maximum", "pow"):
        setattr(Tensor, name, _typed(getattr(o, name), 1))
    Tensor.T = property(o.T)
    Tensor.mT = property(lambda x: o.transpose(x, -2, -1))
    for name, op in {"add_": o.add, "sub_": o.sub, "mul_": o.mul, "div_": o.div}.items():
        setattr(Tensor, name, _inplace_method(op))
    for dunder, name in (("__iadd__", "add_"), ("__isub__", "sub_"), ("__imul__", "mul_"),
                         ("__itruediv__", "div_")):
        setattr(Tensor, dunder, getattr(Tensor, name))


def _needs_dim(fn):
    """``x.softmax(dim)``: the method has no default dimension, unlike F.softmax."""
    def method(self, dim=None, dtype=None):
        if dim is None:
            raise TypeError(f'{fn.__name__}() missing 1 required positional arguments: "dim"')
        return fn(self, dim, dtype)
    return method


def square(input):          # noqa: A002 -- PyTorch's square is a power (PowBackward0)
    return _ops.pow(input, 2)


def is_floating_point(input):   # noqa: A002
    return input.is_floating_point()


def matmul(input, other):   # noqa: A002 -- torch.matmul(input=..., other=...)
    out = _ops.matmul(input, other)
    if out is NotImplemented:
        raise _ops.other_type_error("matmul", other, 2)
    return out


def _typed(op, position):
    """``op`` as a method or a function: the same operation as the operator (which returns
    NotImplemented for an operand it cannot take, so that Python raises its TypeError), with
    PyTorch's TypeError instead when called by name (``x.add(None)``, ``torch.add(x, None)``)."""
    def method(self, other, *args, **kwargs):
        out = op(self, other, *args, **kwargs)
        if out is NotImplemented:
            raise _ops.other_type_error(op.__name__, other, position)
        return out
    method.__name__ = op.__name__
    return method


def _inplace_method(op):
    def method(self, other, **kwargs):
        __tracebackhide__ = True     # IPython shows the learner's line, not this one
        return _inplace(self, op, other, **kwargs)
    method.__name__ = op.__name__ + "_"
    return method


_inplace = _ops.inplace
_install()

add, sub, mul, div, maximum = (_typed(op, 2) for op in (add, sub, mul, div, maximum))


def _check_arguments():
    """PyTorch's argument checks (``_arg_parser``) on the methods and functions that take
    arguments it may refuse: a None, a list where an int goes."""
    from ._arg_parser import SIGNATURES, checked
    module = globals()
    for key in SIGNATURES:
        owner, name = key.split(".")
        if owner == "Tensor":
            setattr(Tensor, name, checked(getattr(Tensor, name), key, method=True))
        elif owner == "torch":
            module[name] = checked(module[name], key, method=False)
Tensor.zero_ = _ops.zero_
Tensor.fill_ = lambda self, value: _ops.inplace_fill(self, value)
Tensor.__setitem__ = _ops.setitem


def FloatTensor(*args):
    """The legacy constructor the old tutorials use: ``FloatTensor([1, 2])`` is float32."""
    return Tensor(*args)


def DoubleTensor(*args):
    return _ops.to(FloatTensor(*args), float64)


def _factory_shape(size):
    if len(size) == 1 and not isinstance(size[0], (builtins.int, _np.integer)):
        return tuple(size[0])
    return tuple(size)


def _np_dtype(dtype, default=_np.float32):
    return default if dtype is None else dtype.np


def _leaf(array, requires_grad):
    t = _wrap(array)
    if requires_grad:
        t.requires_grad = True
    return t


def zeros(*size, dtype=None, device=None, requires_grad=False):
    _device.check(device)
    return _leaf(_np.zeros(_factory_shape(size), _np_dtype(dtype)), requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    _device.check(device)
    return _leaf(_np.ones(_factory_shape(size), _np_dtype(dtype)), requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False):
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    _device.check(device)
    if dtype is None:
        dtype = tensor(fill_value).dtype
    return _leaf(_np.full(tuple(size), fill_value, dtype.np), requires_grad)


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
    return _leaf(_np.eye(n, m, dtype=_np_dtype(dtype)), requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    _device.check(device)
    if end is None:
        start, end = 0, start
    if dtype is None:
        whole = builtins.all(isinstance(v, (builtins.int, _np.integer)) for v in (start, end, step))
        dtype = int64 if whole else float32
    return _leaf(_np.arange(start, end, step).astype(dtype.np), requires_grad)


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
        return _leaf(_np.full(steps, start, dtype.np), requires_grad)
    if dtype.is_floating_point:
        kind = dtype.np
        s, e = kind.type(start), kind.type(end)
    else:       # integer grids: whole-number ends, a float64 step, each point truncated
        kind = _np.dtype(_np.float64)
        s, e = kind.type(builtins.int(start)), kind.type(builtins.int(end))
    wide = _np.float64 if kind.itemsize < 8 else _np.longdouble
    step = kind.type(kind.type(e - s) / kind.type(steps - 1))
    i = _np.arange(steps)
    up = wide(s) + wide(step) * i
    down = wide(e) - wide(step) * (steps - 1 - i)
    values = _np.where(i < steps // 2, up, down).astype(kind)
    return _leaf(values.astype(dtype.np), requires_grad)


def _new_factory(factory):
    """``x.new_zeros(2, 3)``: the factory, with x's dtype unless another one is given."""
    def method(self, *args, dtype=None, device=None, requires_grad=False):
        return factory(*args, dtype=dtype or self.dtype, device=device,
                       requires_grad=requires_grad)
    method.__name__ = "new_" + factory.__name__
    return method


Tensor.new_zeros, Tensor.new_ones, Tensor.new_empty, Tensor.new_full, Tensor.new_tensor = map(
    _new_factory, (zeros, ones, empty, full, tensor))


def from_numpy(array):
    return _wrap(array)


def is_tensor(x):
    return isinstance(x, Tensor)


def numel(x):
    return x.numel()


def pow(x, exponent):       # noqa: A001 -- torch.pow(2, x) has the number first
    return x ** exponent if isinstance(x, Tensor) else _ops.rpow(exponent, x)


def allclose(a, b, rtol=1e-05, atol=1e-08):
    return _np.allclose(a._data, b._data, rtol=rtol, atol=atol)


def equal(a, b):
    return a.shape == b.shape and builtins.bool(_np.array_equal(a._data, b._data))


Tensor.equal = equal


def get_default_dtype():
    return float32


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None):
    """PyTorch's print options: a profile first ("default", "short" or "full"; another name
    changes nothing, as in PyTorch), then each option given; ``sci_mode`` True or False forces
    scientific notation on or off, None (also when not given) lets each tensor decide."""
    from . import _tensor_str as s
    presets = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80),
               "full": (4, _np.inf, 3, 80)}
    if profile in presets:
        s.PRECISION, s.THRESHOLD, s.EDGEITEMS, s.LINEWIDTH = presets[profile]
    for name, value in (("PRECISION", precision), ("THRESHOLD", threshold),
                        ("EDGEITEMS", edgeitems), ("LINEWIDTH", linewidth)):
        if value is not None:
            setattr(s, name, value)
    s.SCI_MODE = sci_mode


_check_arguments()


# What a first cell does not need is imported on first use: drawing (``viz``, which needs
# graphviz), ``nn.functional``, ``save``/``load``, the device modules. ``import autograd_lab``
# stays about as quick as ``import numpy``, and ``from autograd_lab import nn`` works as ever.
_LAZY = {"viz": (".viz", None), "nn": (".nn", None), "cuda": (".cuda", None),
         "accelerator": (".accelerator", None), "backends": (".backends", None),
         "save": (".serialization", "save"), "load": (".serialization", "load")}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib
    module, attr = _LAZY[name]
    value = importlib.import_module(module, __name__)
    value = globals()[name] = value if attr is None else getattr(value, attr)
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
