"""The one table of Tensor's methods, operators and properties that are not in the class body
(``_core/tensor.py``): every operation, from the op module (``_ops/``) that defines it, and
the few methods that need what is built on the Tensor class: the graph, ``autograd.backward``.
Applied once, when ``autograd_lab`` is imported: where ``x.sum`` comes from is the line
``"sum": ...`` below. (The core calls some of these on gradients: ``g.to(...)``, ``g + h``.)

A method PyTorch's argument parser checks (``arg_parser.SIGNATURES``, its ``Tensor.`` entries)
is put on Tensor wrapped by ``checked``, so that a call PyTorch refuses raises PyTorch's error.
"""
from . import autograd
from ._core import graph
from ._core.dtype import bool, float16, float32, float64, int32, int64
from ._core.tensor import Tensor, tensor
from ._ops import arithmetic, factories, indexing, inplace, linalg, nn, reductions, shape
from ._ops.arg_parser import SIGNATURES, checked
from ._ops.functions import equal
from ._ops.record import typed


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Compute the gradient of this tensor with respect to the graph's leaves and add it
    into their ``.grad``. ``gradient`` is the vector v of the product v^T J; it may be left
    out only when this tensor holds a single element (v = 1)."""
    __tracebackhide__ = True     # IPython shows the learner's line, not this one
    autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def _needs_dim(fn):
    """``x.softmax(dim)``: the method has no default dimension, unlike F.softmax."""
    def method(self, dim=None, dtype=None):
        if dim is None:
            raise TypeError(f'{fn.__name__}() missing 1 required positional arguments: "dim"')
        return fn(self, dim, dtype)
    return method


def _inplace(op):
    """``x.add_(y)``: ``op`` computed, then written into x (_ops/inplace.py)."""
    def method(self, other, **kwargs):
        __tracebackhide__ = True     # IPython shows the learner's line, not this one
        return inplace.inplace(self, op, other, **kwargs)
    method.__name__ = op.__name__ + "_"
    return method


def _clamp_(x, min=None, max=None):     # (PyTorch's argument names)
    return inplace.inplace_unary(x, lambda b: nn.clamp(b, min, max))


def _new(factory):
    """``x.new_zeros(2, 3)``: the factory, with x's dtype unless another one is given."""
    def method(self, *args, dtype=None, device=None, requires_grad=False):
        return factory(*args, dtype=dtype or self.dtype, device=device,
                       requires_grad=requires_grad)
    method.__name__ = "new_" + factory.__name__
    return method


def _to(dtype):
    return lambda x: shape.to(x, dtype)


o = arithmetic
METHODS = {
    # -- arithmetic (_ops/arithmetic.py): by name, with PyTorch's TypeError for a bad operand --
    "add": typed(o.add, 1), "sub": typed(o.sub, 1), "mul": typed(o.mul, 1),
    "div": typed(o.div, 1), "pow": typed(o.pow, 1), "maximum": typed(o.maximum, 1),
    "neg": o.neg, "exp": o.exp, "log": o.log, "sin": o.sin, "cos": o.cos, "tanh": o.tanh,
    "sigmoid": o.sigmoid, "relu": o.relu, "sqrt": o.sqrt, "abs": o.abs, "sign": o.sign,
    "reciprocal": o.reciprocal, "square": o.square,
    # ... and as operators, which return NotImplemented for what they cannot take
    "__add__": o.add, "__radd__": o.add, "__sub__": o.sub, "__rsub__": o.rsub,
    "__mul__": o.mul, "__rmul__": o.mul, "__truediv__": o.div, "__rtruediv__": o.rdiv,
    "__pow__": o.pow, "__rpow__": o.rpow, "__neg__": o.neg, "__abs__": o.abs,
    # -- products (linalg.py) --
    "matmul": typed(linalg.matmul, 1), "mm": linalg.mm, "bmm": linalg.bmm, "mv": linalg.mv,
    "dot": linalg.dot, "__matmul__": linalg.matmul,
    "__rmatmul__": lambda x, other: linalg.matmul(tensor(other), x),
    # -- reductions (reductions.py) --
    "sum": reductions.sum, "mean": reductions.mean, "max": reductions.max,
    "min": reductions.min, "prod": reductions.prod, "norm": reductions.norm,
    # -- shape, copies and dtype (shape.py) --
    "t": shape.t, "reshape": shape.reshape, "view": shape.view, "flatten": shape.flatten,
    "permute": shape.permute, "transpose": shape.transpose, "unsqueeze": shape.unsqueeze,
    "squeeze": shape.squeeze, "expand": shape.expand,
    "expand_as": lambda x, other: shape.expand(x, other.shape),
    "clone": shape.clone, "contiguous": shape.contiguous, "to": shape.to,
    "double": _to(float64), "float": _to(float32), "half": _to(float16), "long": _to(int64),
    "int": _to(int32), "bool": _to(bool),
    # -- comparisons (shape.py) --
    "eq": typed(shape.eq, 1), "ne": typed(shape.ne, 1), "lt": typed(shape.lt, 1),
    "le": typed(shape.le, 1), "gt": typed(shape.gt, 1), "ge": typed(shape.ge, 1), "__eq__": shape.eq, "__ne__": shape.ne, "__lt__": shape.lt,
    "__le__": shape.le, "__gt__": shape.gt, "__ge__": shape.ge, "equal": equal,
    # -- nn.py --
    "clamp": nn.clamp, "clip": nn.clamp, "softmax": _needs_dim(nn.softmax),
    "log_softmax": _needs_dim(nn.log_softmax), "argmax": nn.argmax, "argmin": nn.argmin,
    "all": nn.all, "any": nn.any, "movedim": nn.movedim,
    # -- indexing (indexing.py, inplace.py) --
    "__getitem__": indexing.getitem, "__setitem__": inplace.setitem,
    # -- in place (inplace.py) --
    "add_": _inplace(o.add), "sub_": _inplace(o.sub), "mul_": _inplace(o.mul),
    "div_": _inplace(o.div), "clamp_": _clamp_, "clip_": _clamp_, "zero_": inplace.zero_,
    "fill_": lambda self, value: inplace.inplace_fill(self, value), "copy_": inplace.copy_,
    # -- factories (factories.py) --
    "new_zeros": _new(factories.zeros), "new_ones": _new(factories.ones),
    "new_empty": _new(factories.empty), "new_full": _new(factories.full),
    "new_tensor": _new(tensor),
    # -- defined in the class body, listed for their argument checks --
    "requires_grad_": Tensor.requires_grad_,
    # -- methods that need what is built on the Tensor: the graph, autograd --
    "backward": backward,
    "_grad_accumulator": graph.grad_accumulator,
    # -- operations the core calls on a gradient (tensor.py, create_graph) --
    "_copy_grad": inplace.copy_grad,
}
del o
# the in-place operators are the in-place methods
for _dunder, _name in (("__iadd__", "add_"), ("__isub__", "sub_"), ("__imul__", "mul_"),
                       ("__itruediv__", "div_")):
    METHODS[_dunder] = METHODS[_name]

PROPERTIES = {
    "T": shape.T,
    "mT": lambda x: shape.transpose(x, -2, -1),
}


def _checked_methods():
    """METHODS, each one PyTorch's parser checks wrapped by ``checked``."""
    methods = dict(METHODS)
    for key in SIGNATURES:
        owner, name = key.split(".")
        if owner == "Tensor":
            methods[name] = checked(METHODS[name], key, method=True)
    return methods


for _name, _fn in _checked_methods().items():
    setattr(Tensor, _name, _fn)
for _name, _fn in PROPERTIES.items():
    setattr(Tensor, _name, property(_fn))
