"""What neural-network code needs beyond arithmetic: clamp, softmax and log_softmax, argmax,
all/any, movedim, and the layer and loss functions of ``torch.nn.functional`` (linear and
the losses: mse, cross entropy, binary cross entropy with and without logits).

Each differentiable one has PyTorch's node, with the backward formula PyTorch uses, so that
``loss.grad_fn`` and ``next_functions`` read as they do under PyTorch. ``reduction=`` is
"mean" (the default), "sum" or "none", as there.
"""
import builtins
import math
import warnings

import numpy as np

from .._core.grad_mode import no_grad
from .._core.graph import Node
from .._core.tensor import Tensor, _wrap
from .arithmetic import _f, _sigmoid
from .linalg import layouts, matmul, mm_mat1_backward, mm_mat2_backward, product
from .record import _data, _float, _record, _record1, broadcasting, derivative, wrap_dim
from .shape import expand, permute, t, view


def _sum_keep(x, dim):
    """Sum over ``dim``, keeping it: for arrays and Tensors alike (backward formulas)."""
    return x.sum(dim, keepdims=True)


# -- clamp ---------------------------------------------------------------------------------
class ClampBackward1(Node):
    """out = self clamped to Python-number bounds: the gradient passes where self was inside
    them, bounds included (PyTorch's choice at the edges)"""
    __slots__ = ("min", "max")
    saved_names = ("self",)

    def backward(self, g):
        (a,) = self._saved
        return (_f.where(_inside(_data(a), self.min, self.max), g, 0.0),)


class ClampBackward0(Node):
    """out = self clamped to tensor bounds: self's gradient where it was inside, each bound's
    where it won"""
    __slots__ = ()
    saved_names = ("self", "min", "max")

    def backward(self, g):
        # PyTorch's clamp_backward_min_max: where min > max, max wins and min has no gradient
        a, lo, hi = self._saved
        ad, lod, hid = _data(a), _data(lo), _data(hi)
        # (in the order of the names: max, min, self; see _ops/__init__)
        ghi = glo = None
        if hi is not None and self._next[2]:
            ghi = _f.where((ad > hid) | (hid < lod), g, 0.0) if lo is not None else \
                _f.where(ad > hid, g, 0.0)
        if lo is not None and self._next[1]:
            glo = _f.where((ad < lod) & (lod < hid), g, 0.0) if hi is not None else \
                _f.where(ad < lod, g, 0.0)
        return _f.where(_inside(ad, lod, hid), g, 0.0), glo, ghi


def _inside(a, lo, hi):
    inside = np.ones(np.shape(a), bool)
    if lo is not None:
        inside &= a >= lo
    if hi is not None:
        inside &= a <= hi
    return inside


def clamp(x, min=None, max=None):        # noqa: A002 -- PyTorch's argument names
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp_tensors(x, min, max)
    a = x._data
    bounds = [b for b in (min, max) if b is not None]
    if a.dtype.kind != "f" and builtins.any(isinstance(b, float) for b in bounds):
        a = a.astype(np.float32)
    out = a
    if min is not None:
        out = np.maximum(out, np.asarray(min, a.dtype))
    if max is not None:
        out = np.minimum(out, np.asarray(max, a.dtype))
    result, node = _record1(ClampBackward1, np.asarray(out, a.dtype), x)
    if node:
        node.min, node.max = min, max
        node.save_for_backward(x)
    return result


def _clamp_tensors(x, lo, hi):
    lod = None if lo is None else lo._data
    hid = None if hi is None else hi._data
    out = x._data
    if lod is not None:
        out = np.maximum(out, lod)
    if hid is not None:
        out = np.minimum(out, hid)
    result, node = _record(ClampBackward0, out, x, lo, hi)
    if node:
        node.save_for_backward(x, lo, hi)
    return result


# -- softmax and log_softmax -------------------------------------------------------------
class SoftmaxBackward0(Node):
    """y = exp(x) / sum(exp(x)) over ``dim``: dx = y * (g - sum(g * y))"""
    __slots__ = ("dim",)
    saved_names = ("result",)

    def backward(self, g):
        (y,) = self._saved
        return (softmax_backward_data(g, y, dim=self.dim),)


class SoftmaxBackwardDataBackward0(Node):
    """softmax's derivative as an operation of its own, PyTorch's _softmax_backward_data:
    out = output * (grad_output - sum(grad_output * output))"""
    __slots__ = ("dim",)
    op_name = "_softmax_backward_data"
    inputs = saved_names = ("grad_output", "output")

    @staticmethod
    def forward(g, y, dim):
        return y * (g - _sum_keep(g * y, dim))

    def backward(self, gg):
        go, y = self._saved
        d = self.dim
        return (softmax_backward_data(gg, y, dim=d) if self._next[0] else None,
                go * gg - _sum_keep(y * go, d) * gg - go * _sum_keep(y * gg, d)
                if self._next[1] else None)


softmax_backward_data = derivative(SoftmaxBackwardDataBackward0)


class LogSoftmaxBackward0(Node):
    """y = x - log(sum(exp(x))) over ``dim``: dx = g - exp(y) * sum(g)"""
    __slots__ = ("dim",)
    saved_names = ("result",)

    def backward(self, g):
        (y,) = self._saved
        return (log_softmax_backward_data(g, y, dim=self.dim),)


class LogSoftmaxBackwardDataBackward0(Node):
    """log_softmax's derivative as an operation of its own, PyTorch's
    _log_softmax_backward_data: out = grad_output - exp(output) * sum(grad_output)"""
    __slots__ = ("dim",)
    op_name = "_log_softmax_backward_data"
    inputs = saved_names = ("grad_output", "output")

    @staticmethod
    def forward(g, y, dim):
        return g - np.exp(y) * _sum_keep(g, dim)

    def backward(self, gg):
        go, y = self._saved
        d = self.dim
        return (gg - _sum_keep(gg * _f.call("exp", y), d) if self._next[0] else None,
                -_sum_keep(go, d) * _f.call("exp", y) * gg if self._next[1] else None)


log_softmax_backward_data = derivative(LogSoftmaxBackwardDataBackward0)


def _softmax_forward(cls, compute):
    def forward(x, dim, dtype=None):
        if dtype is not None:
            x = x.to(dtype)
        d = wrap_dim(dim, x.ndim)
        a = _float(x._data)
        with np.errstate(all="ignore"):
            shifted = a - a.max(axis=d, keepdims=True) if a.ndim else a - a
            out = np.asarray(compute(shifted, d if a.ndim else None), a.dtype)
        result, node = _record1(cls, out, x)
        if node:    # (the dim as given, as PyTorch's node keeps it; numpy's axes wrap it)
            node.dim = dim if a.ndim else None
            node.save_for_backward(result)
        return result
    return forward


softmax = _softmax_forward(
    SoftmaxBackward0, lambda s, d: (e := np.exp(s)) / e.sum(axis=d, keepdims=True))
log_softmax = _softmax_forward(
    LogSoftmaxBackward0, lambda s, d: s - np.log(np.exp(s).sum(axis=d, keepdims=True)))
softmax.__name__, log_softmax.__name__ = "softmax", "log_softmax"


# -- argmax, argmin, all, any, movedim (not differentiable, or views) ---------------------
def _arg(reduce):
    def arg(x, dim=None, keepdim=False):
        a = x._data
        if dim is None:
            out = reduce(a.reshape(-1))
            return _wrap(np.asarray(out, np.int64).reshape((1,) * a.ndim if keepdim else ()))
        d = wrap_dim(dim, a.ndim)
        if a.ndim == 0:
            return _wrap(np.asarray(0, np.int64))
        return _wrap(np.asarray(reduce(a, axis=d, keepdims=keepdim), np.int64))
    return arg


argmax, argmin = _arg(np.argmax), _arg(np.argmin)


def _logical(reduce):
    def fn(x, dim=None, keepdim=False):
        a = x._data
        if dim is None:
            return _wrap(np.asarray(reduce(a)))
        d = wrap_dim(dim, a.ndim) if isinstance(dim, int) else tuple(
            wrap_dim(k, a.ndim) for k in dim)
        return _wrap(np.asarray(reduce(a, axis=d, keepdims=keepdim)))
    return fn


all, any = _logical(np.all), _logical(np.any)      # noqa: A001


def movedim(x, source, destination):
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    src = [wrap_dim(s, x.ndim) for s in src]
    dst = [wrap_dim(d, x.ndim) for d in dst]
    order = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(x, *order)


# -- torch.nn.functional -------------------------------------------------------------------
class AddmmBackward0(Node):
    """out = beta * self + alpha * (mat1 @ mat2) (``F.linear`` with a bias: alpha = beta = 1).
    The bias was broadcast to the product's shape: the engine sums its gradient back."""
    __slots__ = ("alpha", "beta", "mat1_sym_sizes", "mat1_sym_strides", "mat2_sym_sizes",
                 "mat2_sym_strides")
    saved_names = ("mat1", "mat2")
    pack_order = (1, 0)

    def backward(self, g):
        a, b = self._saved
        return (g,          # (mat1's, mat2's, self's: in the order of the names, _ops/__init__)
                mm_mat1_backward(g, b, self.mat1_sym_sizes, self.mat1_sym_strides)
                if self._next[1] else None,
                mm_mat2_backward(g, a, self.mat2_sym_sizes, self.mat2_sym_strides)
                if self._next[2] else None)


def _addmm(bias, mat1, mat2):
    """bias + mat1 @ mat2 as one node (PyTorch's ``addmm``), with its checks in its order."""
    a, b = mat1._data, mat2._data
    if b.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {b.ndim}-D tensor")
    if bias._data.dtype is not b.dtype:
        raise RuntimeError("self and mat2 must have the same dtype, but got "
                           f"{bias.dtype.scalar_name} and {mat2.dtype.scalar_name}")
    if a.dtype is not b.dtype:
        raise RuntimeError("mat1 and mat2 must have the same dtype, but got "
                           f"{mat1.dtype.scalar_name} and {mat2.dtype.scalar_name}")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} "
                           f"and {b.shape[0]}x{b.shape[1]})")
    ab = product(a, b)
    try:
        out = bias._data + ab          # (after the sum, as PyTorch's addmm adds it)
    except ValueError:
        out = None
    if out is None or out.shape != ab.shape:
        # numpy broadcast the bias further than the product's shape, or not at all: PyTorch
        # expands the bias to that shape, and expand says why it cannot
        expand(bias, *ab.shape)
    result, node = _record(AddmmBackward0, out, bias, mat1, mat2)
    if node:
        node.alpha = node.beta = 1
        if bias._data.shape != out.shape:
            node._shapes = (bias._data.shape, a.shape, b.shape)
        (node.mat1_sym_sizes, node.mat1_sym_strides, node.mat2_sym_sizes,
         node.mat2_sym_strides) = layouts(a, b, node._next[1], node._next[2])
        node.save_for_backward(mat1 if node._next[2] else None, mat2 if node._next[1] else None)
    return result


def linear(input, weight, bias=None):   # noqa: A002
    """input @ weight.T + bias, built as PyTorch 2.13 builds it (ATen's ``linear``), so the
    graph holds the nodes PyTorch's holds:

    * without a bias: matmul;
    * a matrix with a bias: one addmm (AddmmBackward0);
    * any other contiguous input, with a bias that is one row (see ``_one_row``): its leading
      dimensions folded into the rows of one matrix (ViewBackward0), one addmm, and the result
      viewed back to the input's leading dimensions (ViewBackward0);
    * anything else: matmul, then the bias added to its result in place (AddBackward0)."""
    if not input._data.ndim or not weight._data.ndim:
        raise RuntimeError("both arguments to linear need to be at least 1D, but they are "
                           f"{input._data.ndim}D and {weight._data.ndim}D")
    if bias is None:
        return matmul(input, t(weight))
    if input._data.ndim == 2:
        return _addmm(bias, input, t(weight))
    if input._data.flags.c_contiguous and _one_row(bias._data.shape):
        rows = input.shape[:-1]
        out = _addmm(bias, view(input, math.prod(rows), input.shape[-1]), t(weight))
        return view(out, *rows, out.shape[1])
    out = matmul(input, t(weight))
    out.add_(bias)
    return out


def _one_row(shape):
    """Whether PyTorch 2.13's ``linear`` folds an input of other than 2 dimensions for this bias
    shape: for a 1-D bias, or one whose sizes are all 1 but one (probed: (1, 4) and (10, 1)
    do, (), (1, 1) and (2, 4) do not)."""
    return len(shape) == 1 or builtins.sum(n != 1 for n in shape) == 1


def _reduce(loss, reduction, n):
    """The loss of each element, reduced as ``reduction`` says (a numpy array)."""
    if reduction == "mean":
        return np.asarray(loss.mean() if n else np.nan, loss.dtype)
    if reduction == "sum":
        return np.asarray(loss.sum(), loss.dtype)
    return loss


def _check_reduction(reduction):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _mean_of(g, n, reduction):
    """g divided by n for a mean (PyTorch divides last, in place: DivBackward1)"""
    return g / n if reduction == "mean" else g


class MseLossBackward0(Node):
    """out = reduce((self - target) ** 2)"""
    __slots__ = ("reduction",)
    saved_names = ("self", "target")

    def backward(self, g):
        a, b = self._saved
        r = self.reduction
        return (mse_loss_backward(g, a, b, reduction=r) if self._next[0] else None,
                mse_loss_backward(g, b, a, reduction=r) if self._next[1] else None)


class MseLossBackwardBackward0(Node):
    """mse_loss's derivative as an operation of its own, PyTorch's mse_loss_backward:
    out = norm * (self - target) * grad_output, norm = 2, or 2 / n for a mean"""
    __slots__ = ("reduction",)
    op_name = "mse_loss_backward"
    inputs = saved_names = ("grad_output", "self", "target")

    @staticmethod
    def forward(g, a, b, reduction):
        norm = a.dtype.type(2 / a.size if reduction == "mean" else 2)
        return norm * (a - b) * g

    def backward(self, gg):
        go, a, b = self._saved
        r = self.reduction
        ggo = mse_loss_backward(gg, a, b, reduction=r) if self._next[0] else None
        both = gg * go if self._next[1] or self._next[2] else None
        return (ggo,
                _mean_of(2 * both, np.size(_data(a)), r) if self._next[1] else None,
                -_mean_of(2 * both, np.size(_data(b)), r) if self._next[2] else None)


mse_loss_backward = derivative(MseLossBackwardBackward0)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):  # noqa: A002
    if target.size() != input.size():
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.", UserWarning, stacklevel=2)
    _check_reduction(reduction)
    a, b = input._data, target._data
    shape = broadcasting(np.broadcast, a, b).shape     # PyTorch's error if they do not fit
    if a.shape != shape:        # torch.broadcast_tensors, as F.mse_loss calls it
        input, a = expand(input, *shape), np.broadcast_to(a, shape)
    if b.shape != shape:
        target, b = expand(target, *shape), np.broadcast_to(b, shape)
    if b.dtype != a.dtype:
        target = _wrap(b.astype(a.dtype))
        b = target._data
    loss = (a - b) ** 2
    result, node = _record(MseLossBackward0, _reduce(loss, reduction, loss.size), input, target)
    if node:
        node.reduction = reduction
        node.save_for_backward(input, target)
    return result


class NllLossBackward0(Node):
    """out = reduce(-self[i, target[i]]), classes along dim 1"""
    __slots__ = ("reduction", "target", "ignore_index", "total_weight")
    saved_names = ("self",)

    def backward(self, g):
        (a,) = self._saved
        return (nll_loss_backward(g, a, reduction=self.reduction, target=self.target,
                                  ignore_index=self.ignore_index,
                                  total_weight=self.total_weight),)


class NllLossBackwardBackward0(Node):
    """nll_loss's derivative as an operation of its own, PyTorch's nll_loss_backward:
    -grad_output (divided by the total weight, for a mean) at each sample's target class.
    Linear in grad_output, flat in self."""
    __slots__ = ("reduction", "target", "ignore_index", "total_weight")
    op_name = "nll_loss_backward"
    inputs = ("grad_output", "self")

    @staticmethod
    def forward(g, a, reduction, target, ignore_index, total_weight):
        if reduction == "none" and np.ndim(target):
            g = g.reshape(g.shape[:1] + (1,) + g.shape[1:])     # classes are dim 1
        elif reduction == "mean":
            g = g / total_weight
        picked = np.zeros(a.shape, bool)        # each sample's target class, unless ignored
        keep = target != ignore_index
        if np.ndim(target) == 0:
            picked[target] = keep
        else:
            np.put_along_axis(picked, np.expand_dims(np.where(keep, target, 0), 1),
                              np.expand_dims(keep, 1), axis=1)
        return g * np.where(picked, a.dtype.type(-1), a.dtype.type(0))

    def backward(self, gg):
        ggo = None
        if self._next[0]:
            ggo = nll_loss(gg, _wrap(self.target), ignore_index=self.ignore_index,
                           reduction=self.reduction) if type(gg) is Tensor else \
                _nll_values(gg, self.target, self.ignore_index, self.reduction)
        return (ggo,
                _f.zeros_like(gg) if self._next[1] else None)


nll_loss_backward = derivative(NllLossBackwardBackward0)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,  # noqa: A002
             reduction="mean"):
    _check_reduction(reduction)
    if target._data.dtype not in (np.int64, np.uint8):
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{target.dtype.scalar_name}")
    a, tgt = input._data, target._data.astype(np.int64)
    batched = a.ndim > 1
    if batched and tgt.shape[:1] != a.shape[:1]:
        raise ValueError(f"Expected input batch_size ({a.shape[0]}) to match target batch_size "
                         f"({tgt.shape[0] if tgt.ndim else 1}).")
    classes = a.shape[1] if batched else a.shape[0]
    keep = tgt != ignore_index
    for k in tgt[keep].reshape(-1):
        if not 0 <= k < classes:
            raise IndexError(f"Target {k} is out of bounds.")
    out = _nll_values(a, tgt, ignore_index, reduction)
    result, node = _record1(NllLossBackward0, out, input)
    if node:
        node.reduction, node.target, node.ignore_index = reduction, tgt, ignore_index
        node.total_weight = a.dtype.type(int(keep.sum()))
        node.save_for_backward(input)
    return result


def _nll_values(a, tgt, ignore_index, reduction):
    """nll_loss of array ``a`` (classes along dim 1, or 0 without a batch): -a at each
    sample's target class, reduced"""
    keep = tgt != ignore_index
    picked = np.zeros(tgt.shape, a.dtype)
    if a.ndim > 1:
        idx = np.expand_dims(np.where(keep, tgt, 0), 1)
        picked = np.take_along_axis(a, idx, 1).squeeze(1)
    elif keep:
        picked = a[tgt]
    loss = np.where(keep, -picked, 0).astype(a.dtype)
    if reduction == "mean":
        return np.asarray(loss.sum() / a.dtype.type(int(keep.sum())), a.dtype)
    return _reduce(loss, reduction, loss.size)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,  # noqa: A002
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """log_softmax over the classes (dim 1, or 0 without a batch), then nll_loss -- or, for a
    target of class probabilities (same shape as input), -sum(target * log_softmax)."""
    dim = 1 if input.ndim > 1 else 0
    logp = log_softmax(input, dim)
    if target.is_floating_point() and target.shape == input.shape:
        _check_reduction(reduction)
        loss = -(logp * target).sum(dim)
        if reduction == "none":
            return loss
        total = loss.sum()
        return total / (input.shape[0] if input.ndim > 1 else 1) if reduction == "mean" else total
    return nll_loss(logp, target, ignore_index=ignore_index, reduction=reduction)


class BinaryCrossEntropyBackward0(Node):
    """out = reduce(-(t log(x) + (1 - t) log(1 - x))):
    dx = (x - t) / (x (1 - x)),  dt = log(1 - x) - log(x) = -logit(x)"""
    __slots__ = ("reduction",)
    saved_names = ("self", "target")

    def backward(self, g):
        a, b = self._saved
        r = self.reduction
        gt = None
        if self._next[1]:       # PyTorch's binary_cross_entropy_target_backward
            ad = _data(a)
            logit = _f.call("log", a / (1 - a)) if type(a) is Tensor else np.log(ad / (1 - ad))
            gt = _mean_of(-logit * g, np.size(_data(b)), r)
        return (binary_cross_entropy_backward(g, a, b, reduction=r) if self._next[0] else None,
                gt)


class BinaryCrossEntropyBackwardBackward0(Node):
    """binary_cross_entropy's derivative as an operation of its own, PyTorch's
    binary_cross_entropy_backward: grad_output (x - t) / max(x (1 - x), 1e-12), / n for a
    mean"""
    __slots__ = ("reduction",)
    op_name = "binary_cross_entropy_backward"
    inputs = saved_names = ("grad_output", "self", "target")

    @staticmethod
    def forward(g, a, b, reduction):
        out = g * (a - b) / np.maximum((1 - a) * a, a.dtype.type(1e-12))
        return _mean_of(out, a.size, reduction)

    def backward(self, gg):
        # PyTorch's binary_cross_entropy_double_backward{_grad_output,,_target}
        go, a, b = self._saved
        r, eps = self.reduction, 1e-12
        n = np.size(_data(a))
        ggo = ga = gb = None
        if self._next[0]:
            ggo = (a - b) / ((a + eps) * (1 - a + eps)) * gg
            ggo = ggo / n if r == "mean" else ggo.sum() if r == "sum" else ggo
        if self._next[1]:
            ga = (a * a - 2 * a * b + b) / ((a + eps) ** 2 * (1 - a + eps) ** 2)
            ga = _mean_of(ga * (gg * go), n, r)
        if self._next[2]:
            denom = (1 - a) * a
            if type(denom) is Tensor:
                with no_grad():         # clamped in place, without recording: PyTorch's
                    denom.clamp_(min=eps)
            else:
                denom = np.maximum(denom, eps)
            gb = _mean_of(-gg * go / denom, n, r)
        return ggo, ga, gb


binary_cross_entropy_backward = derivative(BinaryCrossEntropyBackwardBackward0)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,  # noqa: A002
                         reduction="mean"):
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}) is deprecated. Please ensure they have the same size.")
    _check_reduction(reduction)
    if target.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {target.dtype.scalar_name} but expected "
                           f"{input.dtype.scalar_name}")
    a, b = input._data, target._data
    with np.errstate(all="ignore"):
        # PyTorch clamps each log at -100, so that x = 0 or 1 gives a finite loss
        loss = -(b * np.maximum(np.log(a), -100) + (1 - b) * np.maximum(np.log1p(-a), -100))
    loss = np.asarray(loss, a.dtype)
    result, node = _record(BinaryCrossEntropyBackward0, _reduce(loss, reduction, loss.size),
                           input, target)
    if node:
        node.reduction = reduction
        node.save_for_backward(input, target)
    return result


class BinaryCrossEntropyWithLogitsBackward0(Node):
    """out = reduce((1 - t) x - log(sigmoid(x))):  dx = sigmoid(x) - t,  dt = -x"""
    __slots__ = ("reduction",)
    saved_names = ("self", "target")

    def backward(self, g):
        # PyTorch's binary_cross_entropy_with_logits_backward: (sigmoid(x) - t) * g, / n
        a, b = self._saved
        n = np.size(_data(a))
        s = _f.call("sigmoid", a) if type(a) is Tensor else _sigmoid(a)
        return (_mean_of((s - b) * g, n, self.reduction) if self._next[0] else None,
                _mean_of(-a * g, n, self.reduction) if self._next[1] else None)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,  # noqa: A002
                                     reduce=None, reduction="mean", pos_weight=None):
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    _check_reduction(reduction)
    if target._data.dtype.kind != "f":
        raise RuntimeError(f"result type {input.dtype.scalar_name} can't be cast to the desired "
                           f"output type {target.dtype.scalar_name}")
    a, b = input._data, target._data.astype(input._data.dtype)
    with np.errstate(all="ignore"):
        log_sigmoid = np.minimum(a, 0) - np.log1p(np.exp(-np.abs(a)))
        loss = np.asarray((1 - b) * a - log_sigmoid, a.dtype)
    result, node = _record(BinaryCrossEntropyWithLogitsBackward0,
                           _reduce(loss, reduction, loss.size), input, target)
    if node:
        node.reduction = reduction
        node.save_for_backward(input, _wrap(b) if b is not target._data else target)
    return result
