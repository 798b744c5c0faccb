"""``torch.<name>``: the operations as functions of tensors, as ``autograd_lab`` exports them.

Where PyTorch refuses a call by its argument parser (``torch.sum(x, None)``), the function is
wrapped by ``checked`` with that signature (arg_parser.py, the ``torch.`` entries); a binary
operation called by name raises PyTorch's TypeError for an operand it cannot take (``typed``).
The same operations as Tensor methods: ``autograd_lab/_tensor_methods.py``."""
import builtins

import numpy as np

from .._core.tensor import Tensor
from . import factories, linalg
from .arg_parser import checked
from .arithmetic import (abs, add, cos, div, exp, log, maximum, mul, neg, reciprocal, relu, rpow,
                         sigmoid, sign, sin, sqrt, square, sub, tanh, where)
from .linalg import bmm, dot, mm, mv
from .nn import all, any, argmax, argmin, clamp, log_softmax, movedim, softmax
from .record import _operand, other_type_error, typed
from .reductions import max, mean, min, norm, prod, sum
from .shape import (cat, clone, eq, flatten, ge, gt, le, lt, ne, permute, reshape, squeeze, stack,
                    t, transpose, unsqueeze)

clip = clamp


def _torch(fn, name):
    """``fn`` with PyTorch's argument checks of ``torch.<name>``."""
    return checked(fn, "torch." + name, method=False)


def _matmul(input, other):      # (torch.matmul(input=..., other=...): PyTorch's names)
    out = linalg.matmul(input, other)
    if out is NotImplemented:
        raise other_type_error("matmul", other, 2)
    return out


def _pow(x, exponent):
    # torch.pow(2, x) has the number first
    return x ** exponent if isinstance(x, Tensor) else rpow(exponent, x)


def _number_first(op):
    """``op`` that also takes a number first (``torch.add(1., x)``): PyTorch's parser wraps it
    as a 0-d tensor, so the node has two inputs, the first without an edge (and mul and div
    save it). Here the tensor is in the result's dtype, the one PyTorch computes in: a number
    does not raise a tensor's dtype (but a float makes integers float32, an int bools int64).
    (PyTorch's node saves it as float64 where it was a float.)"""
    def fn(input, other, *args, **kwargs):
        number = input if isinstance(other, Tensor) and not isinstance(input, Tensor) \
            else NotImplemented
        number = number if number is NotImplemented else _operand(number)
        if number is not NotImplemented:
            d = other._data.dtype
            dtype = (np.float32 if type(number) is float and d.kind != "f" else
                     np.int64 if type(number) is int and d.kind == "b" else d)
            input = Tensor._make(np.asarray(number, dtype))
        return op(input, other, *args, **kwargs)
    fn.__name__ = fn.__qualname__ = op.__name__
    return fn


add = _torch(_number_first(typed(add, 2)), "add")
sub = _torch(_number_first(typed(sub, 2)), "sub")
mul = _torch(_number_first(typed(mul, 2)), "mul")
maximum = _torch(typed(maximum, 2), "maximum")
div = _number_first(typed(div, 2))
matmul = _torch(_matmul, "matmul")
pow = _torch(_pow, "pow")
reshape = _torch(reshape, "reshape")
unsqueeze = _torch(unsqueeze, "unsqueeze")
squeeze = _torch(squeeze, "squeeze")
sum = _torch(sum, "sum")
mean = _torch(mean, "mean")
max = _torch(max, "max")
min = _torch(min, "min")
prod = _torch(prod, "prod")
transpose = _torch(transpose, "transpose")
permute = _torch(permute, "permute")
flatten = _torch(flatten, "flatten")
softmax = _torch(softmax, "softmax")
log_softmax = _torch(log_softmax, "log_softmax")
where = _torch(where, "where")
cat = _torch(cat, "cat")
stack = _torch(stack, "stack")
mm = _torch(mm, "mm")
mv = _torch(mv, "mv")
dot = _torch(dot, "dot")
bmm = _torch(bmm, "bmm")
relu = _torch(relu, "relu")
exp = _torch(exp, "exp")
log = _torch(log, "log")
sin = _torch(sin, "sin")
cos = _torch(cos, "cos")
tanh = _torch(tanh, "tanh")
sigmoid = _torch(sigmoid, "sigmoid")
sqrt = _torch(sqrt, "sqrt")
abs = _torch(abs, "abs")
neg = _torch(neg, "neg")
t = _torch(t, "t")
square = _torch(square, "square")
sign = _torch(sign, "sign")
reciprocal = _torch(reciprocal, "reciprocal")
zeros = _torch(factories.zeros, "zeros")
ones = _torch(factories.ones, "ones")


def is_floating_point(input): 
    return input.is_floating_point()


def allclose(a, b, rtol=1e-05, atol=1e-08):
    return np.allclose(a._data, b._data, rtol=rtol, atol=atol)


def equal(a, b):
    return a.shape == b.shape and builtins.bool(np.array_equal(a._data, b._data))


__all__ = ["abs", "add", "all", "allclose", "any", "argmax", "argmin", "bmm", "cat", "clamp",
           "clip", "clone", "cos", "div", "dot", "eq", "equal", "exp", "flatten", "ge", "gt",
           "is_floating_point", "le", "log", "log_softmax", "lt", "matmul", "max", "maximum",
           "mean", "min", "mm", "movedim", "mul", "mv", "ne", "neg", "norm", "permute", "pow",
           "prod", "reciprocal", "relu", "reshape", "sigmoid", "sign", "sin", "softmax", "sqrt",
           "square", "squeeze", "stack", "sub", "sum", "t", "tanh", "transpose", "unsqueeze",
           "where", "zeros", "ones"]
