"""autograd_lab: PyTorch's autograd, small enough to read in one sitting.

``import autograd_lab as torch`` runs the autograd parts of a PyTorch snippet with the same
numbers, printed tensors, node names and errors. Where to look, bottom to top (each layer
imports only the ones below it; ``.importlinter`` checks it):

* ``_core/``           the engine every operation is built on:
  ``tensor.py``        the Tensor: data, grad, requires_grad, grad_fn, is_leaf, versions
  ``graph.py``         graph nodes, saved tensors, AccumulateGrad
  ``engine.py``        the backward pass: topological sort, sweep, accumulate, free
  ``grad_mode.py``     no_grad and friends;  ``tensor_str.py``  printing
* ``_ops/``            every operation, its backward next to its forward (a file per family)
* this module, ``autograd``, ``nn``, ``viz``, ...: the public modules, PyTorch's names;
  ``_tensor_methods.py`` the table that puts the operations on Tensor (``x.sum``, ``x + y``)
"""
import numpy as _np

from . import _tensor_methods  # noqa: F401 -- binds Tensor's methods, once
from . import autograd
from ._core.device import device, get_default_device, set_default_device
from ._core.dtype import (Size, bool, dtype, float16, float32, float64, int8, int16, int32, int64,
                          uint8)
from ._core.grad_mode import (enable_grad, inference_mode, is_anomaly_check_nan_enabled,
                              is_anomaly_enabled, is_grad_enabled, is_inference_mode_enabled,
                              no_grad, set_grad_enabled)
from ._core.tensor import Tensor, _wrap, tensor
from ._ops.factories import (arange, empty, empty_like, eye, full, full_like, linspace, ones_like,
                             rand_like, randn_like, zeros_like)
from ._ops.functions import (abs, add, all, allclose, any, argmax, argmin, bmm, cat, clamp, clip,
                             clone, cos, div, dot, eq, equal, exp, flatten, ge, gt,
                             is_floating_point, le, log, log_softmax, lt, matmul, max, maximum,
                             mean, min, mm, movedim, mul, mv, ne, neg, norm, ones, permute, pow,
                             prod, reciprocal, relu, reshape, sigmoid, sign, sin, softmax, sqrt,
                             square, squeeze, stack, sub, sum, t, tanh, transpose, unsqueeze, where,
                             zeros)
from ._ops.random import Generator, default_generator, initial_seed, manual_seed, rand, randn, seed
from ._ops.shape import to as _to

# What ``from autograd_lab import *`` gives: every public name but the lazy ones below
__all__ = ["DoubleTensor", "FloatTensor", "Generator", "Size", "Tensor", "abs", "add", "all",
           "allclose", "any", "arange", "argmax", "argmin", "autograd", "bmm", "bool", "cat",
           "clamp", "clip", "clone", "cos", "default_generator", "device", "div", "dot",
           "double", "dtype", "empty", "empty_like", "enable_grad", "eq", "equal", "exp",
           "eye", "flatten", "float", "float16", "float32", "float64", "from_numpy", "full",
           "full_like", "ge", "get_default_device", "get_default_dtype", "gt", "half",
           "inference_mode", "initial_seed", "int", "int16", "int32", "int64", "int8",
           "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_floating_point",
           "is_grad_enabled", "is_inference_mode_enabled", "is_tensor", "le", "linspace",
           "log", "log_softmax", "long", "lt", "manual_seed", "matmul", "max", "maximum",
           "mean", "min", "mm", "movedim", "mul", "mv", "ne", "neg", "no_grad", "norm",
           "numel", "ones", "ones_like", "permute", "pow", "prod", "rand", "rand_like",
           "randn", "randn_like", "reciprocal", "relu", "reshape", "seed",
           "set_default_device", "set_grad_enabled", "set_printoptions", "sigmoid", "sign",
           "sin", "softmax", "sqrt", "square", "squeeze", "stack", "sub", "sum", "t", "tanh",
           "tensor", "transpose", "uint8", "unsqueeze", "where", "zeros", "zeros_like"]

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


def FloatTensor(*args):
    """The legacy constructor the old tutorials use: ``FloatTensor([1, 2])`` is float32."""
    return Tensor(*args)


def DoubleTensor(*args):
    return _to(FloatTensor(*args), float64)


def from_numpy(array):
    return _wrap(array)


def is_tensor(x):
    return isinstance(x, Tensor)


def numel(x):
    return x.numel()


def get_default_dtype():
    return float32


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None):
    """PyTorch's print options: a profile first ("default", "short" or "full"; another name
    changes nothing, as in PyTorch), then each option given; ``sci_mode`` True or False forces
    scientific notation on or off, None (also when not given) lets each tensor decide."""
    from ._core import tensor_str as s  # (imported on first use: import speed)
    presets = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80),
               "full": (4, _np.inf, 3, 80)}
    if profile in presets:
        s.PRECISION, s.THRESHOLD, s.EDGEITEMS, s.LINEWIDTH = presets[profile]
    for name, value in (("PRECISION", precision), ("THRESHOLD", threshold),
                        ("EDGEITEMS", edgeitems), ("LINEWIDTH", linewidth)):
        if value is not None:
            setattr(s, name, value)
    s.SCI_MODE = sci_mode


# What a first cell does not need is imported on first use: drawing (``viz``, which needs
# graphviz), ``nn.functional``, ``save``/``load``, the device modules. ``import autograd_lab``
# stays about as quick as ``import numpy``, and ``from autograd_lab import nn`` works as ever.
_LAZY = {"viz": (".viz", None), "nn": (".nn", None), "cuda": (".cuda", None),
         "accelerator": (".accelerator", None), "backends": (".backends", None),
         "save": (".serialization", "save"), "load": (".serialization", "load")}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib  # (on first use only, as the modules it imports)
    module, attr = _LAZY[name]
    value = importlib.import_module(module, __name__)
    value = globals()[name] = value if attr is None else getattr(value, attr)
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
