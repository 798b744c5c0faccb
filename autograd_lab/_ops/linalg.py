"""Matrix products: mm, mv, dot, matmul (batched). For out = A @ B:
grad_A = g @ B^T and grad_B = A^T @ g."""
import numpy as np

from ..autograd.graph import Node
from .record import _binary, _f, _operand
from .shape import squeeze, unsqueeze


class MmBackward0(Node):
    """out = self @ mat2 (matrices):  grad_self = g @ mat2^T,  grad_mat2 = self^T @ g"""
    saved_names = ("self", "mat2")
    pack_order = (1, 0)
    needed_by = {"self": 1, "mat2": 0}
    __slots__ = ("self_sym_sizes", "self_sym_strides", "mat2_sym_sizes", "mat2_sym_strides")

    def note_layouts(self, a, b):
        """What PyTorch also keeps: both shapes, and the strides (in elements) of each input
        that needs a gradient -- ``()`` for the other one."""
        self.self_sym_sizes, self.mat2_sym_sizes = a._data.shape, b._data.shape
        self.self_sym_strides = _strides(a._data) if self._next[0] else ()
        self.mat2_sym_strides = _strides(b._data) if self._next[1] else ()

    def backward(self, g):
        a, b = self._saved
        return (g @ _f.matT(b) if self._next[0] else None,
                _f.matT(a) @ g if self._next[1] else None)


class BmmBackward0(MmBackward0):
    """batched matrices"""
    __slots__ = ()


class MvBackward0(Node):
    """out = self @ vec (matrix times vector)"""
    __slots__ = ()
    saved_names = ("self", "vec")
    needed_by = {"self": 1, "vec": 0}

    def backward(self, g):
        a, v = self._saved
        return (g.reshape((-1, 1)) * v if self._next[0] else None,
                g @ a if self._next[1] else None)


class DotBackward0(Node):
    """out = self . tensor (two vectors)"""
    __slots__ = ()
    saved_names = ("self", "tensor")
    needed_by = {"self": 1, "tensor": 0}

    def backward(self, g):
        a, b = self._saved
        return (g * b if self._next[0] else None, g * a if self._next[1] else None)


def _mm(cls, a, b):
    out, node = _binary(cls, np.matmul, a, b)
    if node:
        node._shapes = None
        node.save_for_backward(a if node._next[1] else None, b if node._next[0] else None)
        if isinstance(node, MmBackward0):
            node.note_layouts(a, b)
    return out


def _same_dtype(kind, a, b):
    """A product takes one dtype: PyTorch refuses mixed ones (numpy would promote them, silently),
    in the words of the kernel that would have run."""
    if a.dtype is b.dtype:
        return
    da, db = a.dtype, b.dtype
    raise RuntimeError({
        "dot": "dot : expected both vectors to have same dtype, but found "
               f"{da.scalar_name} and {db.scalar_name}",
        "mm": f"expected m1 and m2 to have the same dtype, but got: {da.c_name} != {db.c_name}",
        "mv": "addmv input tensors must have the same dtype, but got "
              f"{db.scalar_name}, {da.scalar_name}, and {db.scalar_name}",
        "bmm": f"expected scalar type {da.scalar_name} but found {db.scalar_name}",
    }[kind])


def _folds(big, small):
    """Whether PyTorch's matmul runs a batched product as one mm or mv (it shows in which dtype
    error it raises): when the smaller operand requires grad, or the batch is one matrix in
    memory (``big``: the batch as PyTorch orients it, a numpy array)."""
    if small.requires_grad:
        return True
    strides, shape = _strides(big), big.shape
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(big.ndim - 2))


def _strides(a):
    return tuple(s // a.itemsize for s in a.strides)


def mm(a, b):
    if a.dim() != 2:
        raise RuntimeError("self must be a matrix")
    if b.dim() != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
            f"{b.shape[0]}x{b.shape[1]})")
    _same_dtype("mm", a, b)
    return _mm(MmBackward0, a, b)


def dot(a, b):
    b = _operand(b)
    if a.dim() != 1 or b.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.dim()}D and {b.dim()}D tensors")
    _same_dtype("dot", a, b)
    if a.shape != b.shape:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] "
            f"to have the same number of elements, but got {a.shape[0]} and {b.shape[0]} "
            "elements respectively")
    return _mm(DotBackward0, a, b)


def matmul(a, b):
    """``@``: picks the product PyTorch picks, and records the nodes PyTorch records."""
    b = _operand(b)
    if b is NotImplemented:
        return b
    da, db = a.dim(), b.dim()
    if da == 0 or db == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D, but they are "
                           f"{da}D and {db}D")
    if da == 1 and db == 1:
        return dot(a, b)
    if da == 2 and db == 1:
        if a.shape[1] != b.shape[0]:
            raise RuntimeError(f"size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x"
                               f"{a.shape[1]}), vec ({b.shape[0]})")
        _same_dtype("mv", a, b)
        return _mm(MvBackward0, a, b)
    if da == 1 and db == 2:
        return squeeze(mm(unsqueeze(a, 0), b), 0)
    if da == 2 and db == 2:
        return mm(a, b)
    # (mixed dtypes are refused after a size mismatch, in the words of the kernel PyTorch picks)
    if da == 1:         # a vector times a batch of matrices: as a one-row matrix
        if a.shape[0] == b.shape[-2]:
            if _folds(np.swapaxes(b._data, -1, -2), a):
                _same_dtype("mv", b, a)
            _same_dtype("bmm", a, b)
        return squeeze(matmul(unsqueeze(a, 0), b), -2)
    if db == 1:         # a batch of matrices times a vector: as a one-column matrix
        if a.shape[-1] == b.shape[0]:
            _same_dtype("mv" if _folds(a._data, b) else "bmm", a, b)
        return squeeze(matmul(a, unsqueeze(b, -1)), -1)
    out = _mm(BmmBackward0, a, b)       # numpy's shape errors first, as PyTorch's come first
    if db == 2 and _folds(a._data, b):
        _same_dtype("mm", a, b)
    if da == 2 and a.requires_grad:
        _same_dtype("mm", b, a)
    _same_dtype("bmm", a, b)
    if out.grad_fn is not None:     # batch dimensions may broadcast: sum their gradients back
        out.grad_fn._shapes = (a.shape, b.shape)
    return out


def mv(a, b):
    if a.dim() != 2 or b.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a.dim()}, {b.dim()}")
    return matmul(a, b)
