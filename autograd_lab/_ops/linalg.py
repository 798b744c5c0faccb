"""Matrix products: mm, mv, dot, bmm, and matmul (``@``), which PyTorch builds out of them
and of views. For out = A @ B: grad_A = g @ B^T and grad_B = A^T @ g."""
import math

import numpy as np

from .._core.graph import Node
from .._core.tensor import Tensor
from .._core.zeros import ZeroArray, zeros
from .record import _binary, _data, _f, _operand, broadcast_error
from .shape import (_squeeze_fresh, _unsafe_view, contiguous, expand, reshape, squeeze, t,
                    transpose, unsqueeze)


class MmBackward0(Node):
    """out = self @ mat2 (matrices):  grad_self = g @ mat2^T,  grad_mat2 = self^T @ g"""
    saved_names = ("self", "mat2")
    pack_order = (1, 0)
    needed_by = {"self": 1, "mat2": 0}
    __slots__ = ("self_sym_sizes", "self_sym_strides", "mat2_sym_sizes", "mat2_sym_strides")

    def note_layouts(self, a, b):
        (self.self_sym_sizes, self.self_sym_strides, self.mat2_sym_sizes,
         self.mat2_sym_strides) = layouts(a._data, b._data, self._next[0], self._next[1])

    def backward(self, g):
        a, b = self._saved
        g_mat2 = mm_mat2_backward(g, a, self.mat2_sym_sizes, self.mat2_sym_strides) \
            if self._next[1] else None                  # (mat2's first: _ops/__init__)
        return (mm_mat1_backward(g, b, self.self_sym_sizes, self.self_sym_strides)
                if self._next[0] else None, g_mat2)


def layouts(a, b, a_needs, b_needs):
    """What PyTorch keeps of the two matrices of a product: both shapes, and the strides (in
    elements) of each one that needs a gradient -- ``()`` for the other one. Its formulas
    read them: a column-major input gets a column-major gradient."""
    return (a.shape, _strides(a) if a_needs else (), b.shape, _strides(b) if b_needs else ())


def _column_major(sizes, strides):
    return strides[0] == 1 and strides[1] == sizes[0]


def mm_mat1_backward(g, mat2, sizes, strides):
    """mat1's gradient, g @ mat2^T, as PyTorch's formula writes it: for a column-major mat1,
    (mat2 @ g^T)^T, so that the gradient is column-major too"""
    if _column_major(sizes, strides):
        return _f.t(_product("mm", mat2, _f.t(g)))
    return _product("mm", g, _f.t(mat2))


def mm_mat2_backward(g, mat1, sizes, strides):
    """mat2's gradient, mat1^T @ g; for a column-major mat2, (g^T @ mat1)^T"""
    if _column_major(sizes, strides):
        return _f.t(_product("mm", _f.t(g), mat1))
    return _product("mm", _f.t(mat1), g)


class BmmBackward0(Node):
    """out = self @ mat2 for batches of matrices (3-D), one product per batch entry"""
    __slots__ = ()
    saved_names = ("self", "mat2")
    pack_order = (1, 0)
    needed_by = {"self": 1, "mat2": 0}

    def backward(self, g):
        a, b = self._saved
        g_mat2 = _product("bmm", _f.transpose(a, 1, 2), g) if self._next[1] else None
        return (_product("bmm", g, _f.transpose(b, 1, 2)) if self._next[0] else None,
                g_mat2)                                 # (mat2's first: _ops/__init__)


class MvBackward0(Node):
    """out = self @ vec (matrix times vector)"""
    __slots__ = ()
    saved_names = ("self", "vec")
    needed_by = {"self": 1, "vec": 0}

    def backward(self, g):
        a, v = self._saved
        if self._next[0] and np.ndim(_data(g)) != 1:   # (by hand: PyTorch's ger, computed first)
            raise RuntimeError(f"outer: Expected 1-D argument self, but got "
                               f"{np.ndim(_data(g))}-D")
        return (g.reshape((-1, 1)) * v if self._next[0] else None,       # the outer product
                _product("mv", _f.t(a), g) if self._next[1] else None)


class DotBackward0(Node):
    """out = self . tensor (two vectors)"""
    __slots__ = ()
    saved_names = ("self", "tensor")
    needed_by = {"self": 1, "tensor": 0}

    def backward(self, g):
        a, b = self._saved
        return (g * b if self._next[0] else None, g * a if self._next[1] else None)


def product(a, b):
    """``a @ b`` of arrays as dot, mv, mm and bmm take them (1-D to 3-D). A sum of at most
    three products (k <= 3), and any small batch of matrices (k * rows * columns < 400, which
    PyTorch's bmm computes in a loop of its own on every CPU), is summed in order: each
    element is ((0 + p0) + p1) + ..., every product rounded on its own, where numpy's BLAS
    fuses a product and a sum into one rounding (FMA). The difference shows where a sum
    cancels, as in R @ R.T of a rotation matrix, exactly the identity in PyTorch. PyTorch's
    mm, mv and dot go to MKL, which sums so on every CPU for R @ R.T, a dot of two and a
    matrix times a vector, but fuses other layouts on CPUs with AVX-512 or AVX2 (README,
    "Digits"): there the last bit may differ. Larger products go to BLAS, whose order is its
    own in both."""
    if a.ndim == 1 and b.ndim == 1 and (type(a) is ZeroArray or type(b) is ZeroArray):
        return zeros((), np.result_type(a, b))      # PyTorch's dot keeps a ZeroTensor
    a, b = np.asarray(a), np.asarray(b)     # (mm and mv do not: they see zeros)
    k = a.shape[-1]
    few_terms = 0 < k <= 3
    small_batch = a.ndim == 3 and 0 < k * a.shape[1] * b.shape[2] < 400
    if a.dtype.kind != "f" or not (few_terms or small_batch):
        return np.matmul(a, b)
    rows = a if a.ndim > 1 else a[None]
    cols = b if b.ndim > 1 else b[:, None]
    out = rows[..., :, :1] * cols[..., :1, :]
    for i in range(1, k):
        out += rows[..., :, i:i + 1] * cols[..., i:i + 1, :]
    out += 0.0              # a sum that starts from +0: -0.0 only where that gives it
    if a.ndim == 1:
        out = out[..., 0, :]
    if b.ndim == 1:
        out = out[..., 0]
    # a fresh array, as PyTorch's mv and dot give, not a view of this function's own buffer
    # (autograd.grad hands back a view as a view)
    return out if out.base is None else out.copy()


def _product(name, a, b):
    """``a.mm(b)``, ``a.mv(b)`` or ``a.bmm(b)`` (``name``) in a backward formula: on Tensors
    (create_graph) the kernel PyTorch's formula calls, by name, so that its node is the one
    PyTorch records; on arrays, ``product``."""
    if type(a) is Tensor:
        return {"mm": mm, "mv": mv, "bmm": bmm}[name](a, b)
    return product(a, b)


def _mm(cls, a, b):
    out, node = _binary(cls, product, a, b)
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


def mv(a, b):
    if a.dim() != 2 or b.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a.dim()}, {b.dim()}")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x"
                           f"{a.shape[1]}), vec ({b.shape[0]})")
    _same_dtype("mv", a, b)
    return _mm(MvBackward0, a, b)


def bmm(a, b):
    if a.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if b.shape[0] != a.shape[0] or b.shape[1] != a.shape[2]:
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}].")
    if 0 in a._data.shape or 0 in b._data.shape:
        # nothing to multiply: PyTorch's bmm returns before its dtype check, in mat2's dtype
        out = _mm(BmmBackward0, a, b)
        out._data = out._data.astype(b._data.dtype)
        return out
    _same_dtype("bmm", a, b)
    return _mm(BmmBackward0, a, b)


def matmul(a, b):
    """``@``, built as PyTorch builds it (ATen's ``matmul``) out of dot, mv, mm or bmm and
    views, so the graph holds the nodes PyTorch's holds and an error is the one the kernel
    PyTorch picks raises."""
    if not isinstance(b, Tensor):   # not even a list: Python's TypeError, or PyTorch's
        return NotImplemented
    da, db = a._data.ndim, b._data.ndim
    if da == 2 and db == 2:         # first: a training loop's product
        return mm(a, b)
    if da == 0 or db == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D, but they are "
                           f"{da}D and {db}D")
    if da == 1 and db == 1:
        return dot(a, b)
    if da == 2 and db == 1:
        return mv(a, b)
    if da == 1 and db == 2:         # a vector as a one-row matrix
        return _squeeze_fresh(mm(unsqueeze(a, 0), b), 0)
    if _should_fold(a, b):
        return _folded(a, b)
    return _batched(a, b)


def _should_fold(a, b):
    """Whether a batch of matrices (3-D or more) times a vector or a matrix runs as one mm or
    mv, its batch folded into rows. It does when the smaller operand requires grad: through a
    bmm its gradient would first be a whole batch of them, then summed. Otherwise only when
    the fold needs no copy -- and never for a matrix times a batch, whose result would then
    need a transposed copy."""
    big, small = (a, b) if a._data.ndim >= b._data.ndim else (b, a)
    if big._data.ndim < 3 or small._data.ndim > 2:
        return False
    if small.requires_grad:
        return True
    if a._data.ndim == 2:
        return False
    big = big._data if big is a else np.swapaxes(big._data, -1, -2)   # as rows @ small
    if big.size == 0:
        return True
    strides, shape = _strides(big), big.shape
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(big.ndim - 2))


def _folded(a, b):
    """A batch times a vector or matrix as one mm or mv: the batch (transposed, if it is the
    right operand) folded into the rows of one matrix, and the result viewed back."""
    flip = b._data.ndim > a._data.ndim          # (a @ b)^T = b^T @ a^T
    big = transpose(b, -2, -1) if flip else a
    small = (t(a) if a._data.ndim == 2 else a) if flip else b
    rows = big.shape[:-1]
    folded = reshape(big, math.prod(rows), big.shape[-1])
    if small._data.ndim == 1:
        return _unsafe_view(mv(folded, small), rows)
    out = _unsafe_view(mm(folded, small), rows + (small.shape[1],))
    return contiguous(transpose(out, -2, -1)) if flip else out


def _batched(a, b):
    """Both are batches (or one is a vector): broadcast the batches, flatten them into one,
    one bmm, and view the result back."""
    da, db = a._data.ndim, b._data.ndim
    n, m1 = a.shape[-2] if da > 1 else 1, a.shape[-1]
    m2, p = (b.shape[-2], b.shape[-1]) if db > 1 else (b.shape[0], 1)
    batch_a, batch_b = a.shape[:-2], b.shape[:-2]
    # a batch of one that requires grad would be expanded, and its gradient summed back: as
    # in should_fold, PyTorch squeezes it away and takes the path of a matrix instead
    if da == 3 and db == 3 and batch_a[0] != batch_b[0]:
        if batch_a[0] == 1 and a.requires_grad:
            return matmul(squeeze(a, 0), b)
        if batch_b[0] == 1 and b.requires_grad:
            return matmul(a, squeeze(b, 0))
    error = broadcast_error(batch_a, batch_b)
    if error:
        raise error
    batch = tuple(np.broadcast_shapes(batch_a, batch_b))
    k = math.prod(batch)
    a3 = reshape(expand(a, *batch, n, m1), k, n, m1)
    if db == 1:         # a vector is one column, (k, m2, 1), not broadcast as a row
        out = squeeze(bmm(a3, unsqueeze(reshape(expand(b, *batch, m2), k, m2), 2)), -1)
    else:
        out = bmm(a3, reshape(expand(b, *batch, m2, p), k, m2, p))
    return _unsafe_view(out, batch + ((n,) if da > 1 else ()) + ((p,) if db > 1 else ()))
