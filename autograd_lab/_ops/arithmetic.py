"""+ - * / ** and the elementwise functions (exp, log, tanh, relu, ...), each node class with
its backward formula next to the forward that records it."""
import math
import operator
import os

import numpy as np

from .._core.grad_mode import _State
from .._core.graph import Node, _pack_hooks, save_one
from .._core.tensor import Tensor, _wrap, tensor
from .record import _F as _RecordF
from .record import (_binary, _data, _float, _number, _operand, _promote, _record, _record1,
                     broadcasting, derivative, note_dtypes)

_ndarray = np.ndarray


class _F(_RecordF):
    """record.py's formula helpers, and two that are operations of this module (defined
    below): the op modules whose formulas need them import ``_f`` from here."""

    @staticmethod
    def where(cond, x, y):
        if type(cond) is not Tensor and type(x) is not Tensor and type(y) is not Tensor:
            return np.where(cond, x, y)
        return where(_wrap(_data(cond)), x, y)

    @staticmethod
    def masked_fill(x, mask, value):
        """x with ``value`` where ``mask`` (MaskedFillBackward0 for a number, 1 for a 0-d
        tensor: PyTorch's ``masked_fill_`` of a fresh tensor)"""
        if type(value) is Tensor:
            return masked_fill_tensor(x, value, mask=mask)
        return masked_fill(x, mask=mask, value=value)


_f = _F


class AddBackward0(Node):
    """out = self + alpha * other"""
    __slots__ = ("alpha",)

    def backward(self, g):
        return g, (g if self.alpha == 1 else g * self.alpha)


class AddBackward1(Node):
    """out = self + number, in a backward formula being recorded (the Scalar overload)"""
    __slots__ = ()

    def backward(self, g):
        return (g,)


AddBackward0.scalar = AddBackward1


def add(a, b, alpha=1):
    # alpha is applied to the values only: AddBackward0 multiplies other's gradient by it
    out, node = _binary(AddBackward0, operator.add if alpha == 1 else
                        lambda x, y: x + _scaled(y, alpha, x), a, b)
    if node:
        node.alpha = alpha
    return out


def _scaled(y, alpha, x):
    """alpha * y, computed in the dtype of the result (PyTorch scales after promoting: a
    float32 y added to float64 x is scaled in float64)."""
    x, y = np.asarray(x), np.asarray(y)
    if y.dtype != x.dtype and y.dtype.kind in "fc" and x.dtype.kind in "fc":
        y = y.astype(np.result_type(x, y))
    return alpha * y


class SubBackward0(Node):
    """out = self - alpha * other"""
    __slots__ = ("alpha",)

    def backward(self, g):
        return g, -g if self.alpha == 1 else -g * self.alpha


class SubBackward1(Node):
    """out = self - number, in a backward formula being recorded (the Scalar overload)"""
    __slots__ = ()

    def backward(self, g):
        return (g,)


SubBackward0.scalar = SubBackward1


def sub(a, b, alpha=1):
    _no_bool_subtraction(a, b)
    # alpha is applied to the values only: SubBackward0 multiplies other's gradient by it
    out, node = _binary(SubBackward0, operator.sub if alpha == 1 else
                        lambda x, y: x - _scaled(y, alpha, x), a, b)
    if node:
        node.alpha = alpha
    return out


class RsubBackward1(Node):
    """out = other - self, for a Python number ``other`` (``1 - x``)"""
    __slots__ = ("alpha",)

    def backward(self, g):
        return (-g,)


def _is_number(x):
    return isinstance(x, (int, float, np.number))


def rsub(x, number):
    if not _is_number(number):
        return NotImplemented       # ``None - x``: Python's TypeError
    _no_bool_subtraction(x, number)
    if _State.formula and x._rg:
        # in a C++ formula, number - x is a tensor filled with the number, then sub_(x)
        return sub(_filled_like(x, number), x)
    a = x._data
    out = number - a
    if out.dtype is not a.dtype:            # 0.5 - integer tensor: float32, as for x - 0.5
        out = _promote(out, x, number, lambda x, n: n - x)
    out, node = _record1(RsubBackward1, out, x)
    if node:
        node.alpha = 1
    return out


_BOOL_HINT = "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."


def _is_bool(x):
    return type(x) is Tensor and x._data.dtype.kind == "b"


def _no_bool_subtraction(a, b):
    if _is_bool(a) and _is_bool(b):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if _is_bool(a) or _is_bool(b):
        raise RuntimeError(f"Subtraction, the `-` operator, with a bool tensor is not "
                           f"supported. {_BOOL_HINT}")


class MulBackward0(Node):
    """out = self * other"""
    __slots__ = ()
    saved_names = ("self", "other")
    pack_order = (1, 0)
    needed_by = {"self": 1, "other": 0}     # each factor only for the other one's gradient

    def backward(self, g):
        a, b = self._saved
        if type(g) is Tensor:           # recorded: the user's number as a wrapped tensor
            b = _f.number(b, g)
        elif type(b) is float and type(g) is _ndarray:  # (a numpy scalar takes it as it is)
            b = _number(b, g)
        g_other = None if a is None else g * a          # (other's first: see _ops/__init__)
        return (None if b is None else g * b), g_other


_NUMBER_SAVED = {}


class MulBackward1(Node):
    """out = self * number, in a backward formula being recorded (the Scalar overload)"""
    __slots__ = ("other",)

    def backward(self, g):
        return (g * _number(self.other, g),)


MulBackward0.scalar = MulBackward1


def mul(a, b):
    out, node = _binary(MulBackward0, operator.mul, a, b)
    if node:
        # each factor is needed only for the *other* input's gradient (PyTorch saves likewise)
        if type(b) is float or type(b) is int:
            # x * 2: keep the 2, nothing of x; no version to check. (One tuple per number:
            # a long chain of x * 2 keeps one, not one per node.)
            saved = _NUMBER_SAVED.get(b) if b and b == b else None     # (not 0.0: -0.0)
            if saved is None or type(saved[1]) is not type(b):
                if len(_NUMBER_SAVED) > 255:
                    _NUMBER_SAVED.clear()
                saved = _NUMBER_SAVED[b] = (None, b)
            node._saved = saved
        else:
            ga, gb = node._next
            node.save_for_backward(a if gb else None, b if ga else None)
    return out


class DivBackward0(Node):
    """out = self / other"""
    __slots__ = ()
    saved_names = ("self", "other")
    pack_order = (1, 0)
    needed_by = {"self": 1}

    def backward(self, g):
        a, b = self._saved
        # PyTorch's order for other's gradient, -g * ((a / b) / b): a / a gives exactly 0
        g_other = None if a is None else -g * (a / b / b)  # (other's first: _ops/__init__)
        gb = _f.number(b, g) if type(g) is Tensor else _number(b, g)
        return g / gb if self._next[0] else None, g_other


class DivBackward1(Node):
    """out = self / number, in a backward formula being recorded (the Scalar overload)"""
    __slots__ = ("other",)

    def backward(self, g):
        return (g / _number(self.other, g),)


DivBackward0.scalar = DivBackward1


def div(a, b):
    with np.errstate(all="ignore"):         # x / 0 is inf, silently, as in PyTorch
        out, node = _binary(DivBackward0, operator.truediv, a, b)
    if node:
        node.save_for_backward(a if node._next[1] else None, b)
    return out


def _elementwise(cls):
    """The forward of an elementwise function: apply ``cls.forward`` to the data, record a
    ``cls`` node, and save the input or the result, whichever ``cls.saved_names`` names."""
    fn = cls.forward
    saves_result = cls.saved_names == ("result",)
    saves = bool(cls.saved_names)
    if cls.silenced:
        fn = _silently(fn)

    def forward(x):
        a = x._data
        out = fn(a)
        if out.dtype is not a.dtype and a.dtype.kind != "f":
            out = fn(a.astype(np.float32))      # integer input: computed in the default float
        result, node = _record1(cls, out, x)
        if node is not None:
            if saves_result and not _pack_hooks:    # save_one(node, result), written out: a
                counter = result._vc = [0]  # fresh output's version counter starts here, at 0
                node._saved, node._checks = (out,), (0, None, counter, 0)
            elif saves:
                save_one(node, result if saves_result else x)
        return result
    forward.__doc__ = cls.__doc__
    return forward


def _silently(fn):
    """``fn`` without numpy's warnings: log(0) is -inf and sqrt(-1) nan, silently, as in
    PyTorch. (Only where needed: entering np.errstate costs as much as a small op.)"""
    def quiet(a):
        with np.errstate(all="ignore"):
            return fn(a)
    return quiet


class NegBackward0(Node):
    """out = -self"""
    __slots__ = ()

    @staticmethod
    def forward(a):
        if a.dtype.kind == "b":
            raise RuntimeError(f"Negation, the `-` operator, on a bool tensor is not supported. "
                               f"{_BOOL_HINT}")
        return np.negative(a)

    def backward(self, g):
        return (-g,)


class ReciprocalBackward0(Node):
    """out = 1 / self;  d out / d self = -out**2"""
    __slots__ = ()
    silenced = True
    saved_names = ("result",)
    forward = staticmethod(lambda a: np.reciprocal(_float(a)))     # 1 / 2 is 0.5, not 0

    def backward(self, g):
        (y,) = self._saved
        return (-g * (y * y),)


class ExpBackward0(Node):
    """out = e ** self;  d out / d self = out"""
    __slots__ = ()
    saved_names = ("result",)
    forward = staticmethod(np.exp)

    def backward(self, g):
        (y,) = self._saved
        return (g * y,)


class LogBackward0(Node):
    """out = ln(self);  d out / d self = 1 / self"""
    __slots__ = ()
    silenced = True
    saved_names = ("self",)
    forward = staticmethod(np.log)

    def backward(self, g):
        (a,) = self._saved
        return (g / a,)


class SinBackward0(Node):
    """out = sin(self);  d out / d self = cos(self)"""
    __slots__ = ()
    saved_names = ("self",)
    forward = staticmethod(np.sin)

    def backward(self, g):
        (a,) = self._saved
        return (g * _f.call("cos", a),)


class CosBackward0(Node):
    """out = cos(self);  d out / d self = -sin(self)"""
    __slots__ = ()
    saved_names = ("self",)
    forward = staticmethod(np.cos)

    def backward(self, g):
        (a,) = self._saved
        return (g * -_f.call("sin", a),)


class TanhBackward0(Node):
    """out = tanh(self);  d out / d self = 1 - out**2"""
    __slots__ = ()
    saved_names = ("result",)
    forward = staticmethod(np.tanh)

    def backward(self, g):
        (y,) = self._saved
        if type(g) is not Tensor and type(y) is not Tensor:
            # a plain backward computes on arrays: tanh_backward's own check for Tensors to
            # record (create_graph) would cost every tanh node a call for nothing
            return (g * _one_minus_square(y),)
        return (tanh_backward(g, y),)


class TanhBackwardBackward0(Node):
    """tanh's derivative as an operation of its own, PyTorch's tanh_backward:
    out = grad_output * (1 - output**2)"""
    __slots__ = ()
    op_name = "tanh_backward"
    inputs = saved_names = ("grad_output", "output")

    @staticmethod
    def forward(g, y):
        return g * _one_minus_square(y)

    def backward(self, gg):
        go, y = self._saved
        return (tanh_backward(gg, y) if self._next[0] else None,
                gg * (-2 * y * go) if self._next[1] else None)


def _fused_kernels():
    """Whether PyTorch's elementwise CPU kernels fuse ``a * b + c`` into one rounding on this
    machine. PyTorch compiles them once per instruction set and picks one by the CPU (or the
    ATEN_CPU_CAPABILITY variable); its AVX2 and AVX-512 builds, which an x86-64 CPU with AVX2
    and FMA3 gets, contract such a pair into a fused multiply-add, its default build does
    not. (Measured: tanh_backward's ``1 - y*y`` is fused exactly when the capability is not
    "default".)"""
    if os.environ.get("ATEN_CPU_CAPABILITY", "").lower() == "default":
        return False
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:         # numpy 1
        from numpy.core._multiarray_umath import __cpu_features__ as features
    return bool(features.get("AVX2") and features.get("FMA3"))


_FUSED = _fused_kernels()


def _one_minus_square(y):
    """1 - y*y as PyTorch's kernel rounds it: with one rounding where it fuses (exact in a
    wider type for float32; for float64, y*y split into its rounded value and the error),
    else two. Near y = +-1 the two differ: this is where the result cancels."""
    if not _FUSED or y.dtype.kind != "f":
        return 1 - y * y
    if y.dtype.itemsize < 8:            # (exact in float64: 24 + 24 bits of product)
        wide = y.astype(np.float64)
        if wide.size < 1024:            # (a 0-d result is a numpy scalar: no buffer to reuse)
            return (1.0 - wide * wide).astype(y.dtype)
        np.multiply(wide, wide, out=wide)   # many numbers: the one float64 buffer, reused
        return np.subtract(1.0, wide, out=wide).astype(y.dtype)
    p = y * y                           # Dekker's product: p + err is exactly y*y
    c = 134217729.0 * y
    hi = c - (c - y)
    lo = y - hi
    err = ((hi * hi - p) + 2 * hi * lo) + lo * lo
    return (1 - p) - err


tanh_backward = derivative(TanhBackwardBackward0)


def _sigmoid(a):
    a = _float(a)       # first, not after as for other integer inputs: -True is an error
    with np.errstate(over="ignore"):            # exp(-a) overflows to inf for a << 0: fine
        return np.reciprocal(np.exp(-a) + a.dtype.type(1))


class SigmoidBackward0(Node):
    """out = 1 / (1 + e**-self);  d out / d self = out * (1 - out)"""
    __slots__ = ()
    saved_names = ("result",)
    forward = staticmethod(_sigmoid)

    def backward(self, g):
        (y,) = self._saved
        return (sigmoid_backward(g, y),)


class SigmoidBackwardBackward0(Node):
    """sigmoid's derivative as an operation of its own, PyTorch's sigmoid_backward:
    out = grad_output * (1 - output) * output"""
    __slots__ = ()
    op_name = "sigmoid_backward"
    inputs = saved_names = ("grad_output", "output")

    @staticmethod
    def forward(g, y):
        return g * (1 - y) * y

    def backward(self, gg):
        go, y = self._saved
        return (sigmoid_backward(gg, y) if self._next[0] else None,
                gg * go * (-2 * y + 1) if self._next[1] else None)


sigmoid_backward = derivative(SigmoidBackwardBackward0)


class ReluBackward0(Node):
    """out = max(self, 0);  the gradient passes where out > 0"""
    __slots__ = ()
    saved_names = ("result",)
    # 0 first: on a tie numpy's maximum gives its second argument, and PyTorch's relu keeps
    # -0.0 as it is (1 / relu(-0.0) is -inf)
    forward = staticmethod(lambda a: np.maximum(0, a))

    def backward(self, g):
        (y,) = self._saved
        return (threshold_backward(g, y, threshold=0),)


class ThresholdBackwardBackward0(Node):
    """relu's derivative as an operation of its own, PyTorch's threshold_backward: the
    gradient passes unless self <= threshold (so it passes at nan). Selected, not multiplied
    by a mask: inf * 0 is nan. Flat in self: self's gradient is zero."""
    __slots__ = ("threshold",)
    op_name = "threshold_backward"
    inputs = ("grad_output", "self")
    saved_names = ("self",)

    @staticmethod
    def forward(g, a, threshold):
        out = np.where(a <= threshold, 0, g)
        if out.dtype != a.dtype:    # (a node called by hand with a gradient of another dtype:
            out = out.astype(np.result_type(out, a))   # promoted, as PyTorch's kernel does)
        return out

    def backward(self, gg):
        (a,) = self._saved
        return (threshold_backward(gg, a, threshold=self.threshold) if self._next[0] else None,
                _f.zeros_like(gg) if self._next[1] else None)


threshold_backward = derivative(ThresholdBackwardBackward0)


class SqrtBackward0(Node):
    """out = sqrt(self);  d out / d self = 1 / (2 out)"""
    __slots__ = ()
    silenced = True
    saved_names = ("result",)
    forward = staticmethod(np.sqrt)

    def backward(self, g):
        (y,) = self._saved
        return (g / (2 * y),)


def _sign(a):
    """PyTorch's sign: (0 < x) - (x < 0), so 0 at nan, where numpy's is nan."""
    if a.dtype.kind == "b":
        return a.copy()
    return np.nan_to_num(np.sign(a), nan=0.0) if a.dtype.kind == "f" else np.sign(a)


class AbsBackward0(Node):
    """out = |self|;  d out / d self = sgn(self) (0 at 0, and at nan)"""
    __slots__ = ()
    saved_names = ("self",)
    forward = staticmethod(np.abs)

    def backward(self, g):
        (a,) = self._saved
        return (g * sgn(a),)


class SgnBackward0(Node):
    """out = sgn(self), the sign as abs's derivative uses it: flat almost everywhere, so its
    gradient is zero. It saves self and result as PyTorch's does (sgn_backward reads them for
    complex numbers), so that a change of self in place is caught here too."""
    __slots__ = ()
    saved_names = ("self", "result")
    op_name = "sgn"
    inputs = ("self",)
    forward = staticmethod(_sign)
    makes_zeros = True      # the engine: what follows this node may meet a ZeroTensor

    def backward(self, g):
        return (_f.zero_tensor_like(g),)   # PyTorch's ZeroTensor (_core/zeros.py)


sgn = derivative(SgnBackward0)


class SignBackward0(Node):
    """out = sign(self): flat almost everywhere, so its gradient is zero"""
    __slots__ = ()
    forward = staticmethod(_sign)

    def backward(self, g):
        return (_f.zeros_like(g),)


neg, reciprocal, exp, log, sin, cos, tanh, sigmoid, relu, sqrt, abs, sign = map(  # noqa: A001
    _elementwise, (NegBackward0, ReciprocalBackward0, ExpBackward0, LogBackward0, SinBackward0,
                   CosBackward0, TanhBackward0, SigmoidBackward0, ReluBackward0, SqrtBackward0,
                   AbsBackward0, SignBackward0))


def rdiv(x, number):
    """``number / x`` is recorded as ``reciprocal(x) * number``, as PyTorch records it."""
    if not _is_number(number):
        return NotImplemented
    if _State.formula and x._rg:
        return div(_filled_like(x, number), x)      # (as rsub's: fill_, then div_)
    return mul(reciprocal(x), number)


def _filled_like(x, number):
    return _wrap(np.full(x._data.shape, number, _float(x._data).dtype))


class PowBackward0(Node):
    """out = self ** exponent, for a Python number ``exponent``"""
    __slots__ = ("exponent",)
    saved_names = ("self",)

    def backward(self, g):
        (a,) = self._saved
        e = self.exponent
        if e == 2 and type(a) is not Tensor:
            return (g * (a + a),)       # the same numbers as 2 * a, without a Python operand
        # (Recorded, for create_graph, the formula is PyTorch's as it is: a ** 2's gradient
        # keeps a ** 1 in the graph, whose own gradient, a ** 0, is in a graph too.)
        if e == 0:
            return (_f.zeros_like(a),)      # PyTorch's: zeros like self, whatever g is
        e = float(e)                    # PyTorch's formula takes the exponent as a double
        if type(a) is not Tensor:       # (self.pow(e - 1): the forward's kernel, on arrays)
            return (g * (e * _power_of(a, e - 1)),)
        return (g * (e * a ** (e - 1)),)


class PowBackward1(Node):
    """out = self ** exponent, both tensors"""
    __slots__ = ()
    saved_names = ("self", "exponent", "result")
    pack_order = (1, 0, 2)

    def backward(self, g):
        # PyTorch's formulas, masked where they say nan or -inf: an exponent of 0 gives self
        # no gradient (not 0 * 0 ** -1 = nan at 0), and a base of 0 with an exponent >= 0
        # gives the exponent none (not y * log(0))
        a, e, y = self._saved
        ad, ed = _data(a), _data(e)
        ge = g * _f.where((ad == 0) & (ed >= 0), 0.0, y * _f.call("log", a)) \
            if self._next[1] else None                  # (the exponent's first: _ops/__init__)
        ga = _f.where(ed == 0, 0.0, g * (e * _f_power(a, e - 1))) if self._next[0] else None
        return ga, ge


class PowBackward2(Node):
    """out = base ** self, for a Python number ``base`` (``2 ** x``)"""
    __slots__ = ("self",)
    saved_names = ("exponent", "result")

    def backward(self, g):
        e, y = self._saved
        base = self.self
        if base == 0:       # log(0) is -inf: where 0 ** e is flat (e >= 0), no gradient
            return (g * _f.where(_data(e) >= 0, 0.0, y * -math.inf),)
        return (g * (y * float(np.log(np.float64(base)))),)     # (nan for a base below 0)


# Exponents PyTorch computes with plain arithmetic rather than pow(), which rounds
# differently in the last bit (x ** 2 is numpy's square already, x * x).
_EXACT_POWERS = {3: lambda a: a * a * a, -2: lambda a: 1 / (a * a),
                 0.5: np.sqrt, -0.5: lambda a: 1 / np.sqrt(a)}  # (-inf) ** 0.5 is nan, as sqrt


def _power(a, e, small=32):
    """a ** e, a float32 power rounded as PyTorch's CPU kernel rounds it where it computes in
    double (std::pow), then rounds once: for every tensor ** tensor, and for a tensor of fewer
    than ``small`` elements ** a number (from 32 on, PyTorch's vectorized kernel takes over,
    whose last bit neither double nor numpy's float32 power matches). numpy's float32 power
    differs from that in the last bit for about one element in five (measured against torch
    2.13, 2026-11-29: 0 differences in 5,000 small tensors with the double)."""
    out = a ** e
    # (x ** 2 and x ** -1 are a product and a division, rounded once either way)
    if getattr(out, "dtype", None) == np.float32 and np.size(out) < small and not (
            type(e) in (int, float) and e in (0, 1, 2, -1)):
        out = (np.asarray(a, np.float64) ** np.asarray(e, np.float64)).astype(np.float32)
    return out


def _power_of(a, exponent):
    """a ** exponent (a number) for a float array, as pow computes it"""
    return _EXACT_POWERS[exponent](a) if exponent in _EXACT_POWERS else _power(a, exponent)


def _tensor_power(a, e):
    return _power(a, e, small=math.inf)


def _f_power(a, e):
    """a ** e in a formula: the operation on Tensors (create_graph), pow's kernel on arrays"""
    return a ** e if type(a) is Tensor else _tensor_power(a, e)


def pow(x, exponent):                     # noqa: A001 -- torch.pow
    if type(exponent) is Tensor:
        with np.errstate(all="ignore"):
            out, node = _binary(PowBackward1, _tensor_power, x, exponent)
        if node:
            node.save_for_backward(x, exponent, out)
        return out
    if type(exponent) is not int and type(exponent) is not float:
        exponent = _operand(exponent)
        if exponent is NotImplemented:
            return exponent
        if type(exponent) is Tensor:
            return pow(x, exponent)
    a = x._data
    if type(exponent) is int and exponent >= 0:
        if a.dtype.kind == "b":
            a = a.astype(np.int64)          # True ** 2 is 1, an integer (numpy says int8)
        # an integer tensor stays integer; x ** 3 is x * x * x, rounded as PyTorch rounds it
        out = a * a * a if exponent == 3 else _power(a, exponent)
    else:
        if a.dtype.kind != "f":
            if type(exponent) is int:
                raise RuntimeError("Integers to negative integer powers are not allowed.")
            a = a.astype(np.float32)        # integer ** 0.5: computed in the default float
        with np.errstate(all="ignore"):     # 0 ** -1 is inf, (-1) ** 0.5 nan: silently
            out = _power_of(a, exponent)
    out, node = _record1(PowBackward0, out, x)
    if node:
        node.exponent = exponent
        save_one(node, x)
    return out


def square(input):          # noqa: A002 -- PyTorch's square is a power (PowBackward0)
    return pow(input, 2)


def rpow(x, base):
    if not _is_number(base):
        return NotImplemented
    if isinstance(base, (np.number, np.bool_)):
        base = base.item()          # a number like any other: x's dtype, not numpy's float64
    out, node = _record1(PowBackward2, base ** _float(x._data), x)
    if node:
        node.self = base
        node.save_for_backward(x, out)
    return out


class MaximumBackward0(Node):
    """out = max(self, other) elementwise; a tie splits the gradient in half"""
    __slots__ = ()
    saved_names = ("self", "other")
    pack_order = (1, 0)

    def backward(self, g):
        # PyTorch's formula: a tie halves g; the smaller input gets 0; a nan (which wins, and
        # compares false) passes g to both. Selected, not multiplied: inf * 0 is nan.
        # compared in the result's dtype, as computed: a float64 0-d with float32 is float32
        a, b = (np.asarray(_data(v), _data(g).dtype) for v in self._saved)
        g_other = _f.masked_fill(_f.where(a == b, g / 2, g), a > b, 0)    # (first: _ops/__init__)
        return _f.masked_fill(_f.where(a == b, g / 2, g), a < b, 0), g_other


def maximum(a, b):
    out, node = _binary(MaximumBackward0, np.maximum, a, b)
    if node:
        node.save_for_backward(a, b)
    return out


class MaskedFillBackward0(Node):
    """out = self with a number where ``mask`` (PyTorch's masked_fill_, as backward formulas
    use it): the filled places get no gradient"""
    __slots__ = ()
    op_name = "masked_fill"
    inputs = ("self",)
    saved_names = ("mask",)

    @staticmethod
    def forward(a, mask, value):
        return np.where(mask, value, a).astype(a.dtype, copy=False)

    def backward(self, g):
        (mask,) = self._saved
        return (masked_fill(g, mask=_data(mask), value=0),)


class MaskedFillBackward1(Node):
    """out = self with ``value`` (a 0-d tensor) where ``mask``: value's gradient is the sum
    of the gradient over the mask"""
    __slots__ = ()
    op_name = "masked_fill"
    inputs = ("self", "value")
    saved_names = ("mask",)

    @staticmethod
    def forward(a, value, mask):
        return np.where(mask, value, a).astype(a.dtype, copy=False)

    def backward(self, g):
        (mask,) = self._saved
        m = _data(mask)
        gv = None
        if self._next[1]:
            gv = masked_select(g, mask=m)
            gv = gv.sum() if type(gv) is Tensor else np.asarray(gv.sum())
        return (masked_fill(g, mask=m, value=0) if self._next[0] else None, gv)


class MaskedSelectBackward0(Node):
    """out = the elements of self where ``mask`` is true, in order (1-D): each goes back to
    its place"""
    __slots__ = ()
    op_name = "masked_select"
    inputs = ("self",)
    saved_names = ("mask", "self")

    @staticmethod
    def forward(a, mask):
        shape = np.broadcast_shapes(a.shape, np.shape(mask))
        return np.broadcast_to(a, shape)[np.broadcast_to(mask, shape)]

    def backward(self, g):
        mask, a = self._saved
        m = _data(mask)
        zeros = np.zeros(np.broadcast_shapes(np.shape(_data(a)), m.shape), _data(g).dtype)
        return (masked_scatter(zeros, g, mask=m),)


class MaskedScatterBackward0(Node):
    """out = self with the elements of ``source``, in order, where ``mask`` is true"""
    __slots__ = ()
    op_name = "masked_scatter"
    inputs = ("self", "source")
    saved_names = ("mask",)

    @staticmethod
    def forward(a, source, mask):
        out = np.array(a)
        out[mask] = source.reshape(-1)[:np.count_nonzero(mask)]
        return out

    def backward(self, g):
        m = _data(self._saved[0])
        return (masked_fill(g, mask=m, value=0) if self._next[0] else None,
                masked_select(g, mask=m) if self._next[1] else None)


masked_fill, masked_fill_tensor, masked_select, masked_scatter = map(derivative, (
    MaskedFillBackward0, MaskedFillBackward1, MaskedSelectBackward0, MaskedScatterBackward0))


class WhereBackward0(Node):
    """out = self where condition, else other"""
    __slots__ = ()
    saved_names = ("condition",)

    def backward(self, g):
        (c,) = self._saved
        g_other = _f.where(c, 0.0, g)                   # (other's first: _ops/__init__)
        return _f.where(c, g, 0.0), g_other


def where(condition, x, y):
    condition = condition if isinstance(condition, Tensor) else tensor(condition)
    x, y = _operand(x), _operand(y)
    cond = condition._data.astype(bool)
    out = _promote(np.asarray(broadcasting(np.where, cond, _data(x), _data(y))), x, y)
    result, node = _record(WhereBackward0, out, x, y)
    if node:
        node._shapes = (np.shape(_data(x)), np.shape(_data(y)))
        note_dtypes(node, (x, y))
        node.save_for_backward(_wrap(cond))
    return result
