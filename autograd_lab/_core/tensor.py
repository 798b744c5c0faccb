"""The Tensor: a numpy array plus what autograd needs to know about it.

* ``grad_fn``: the node that made this tensor (``None`` for a leaf).
* ``requires_grad``: whether operations on it are recorded. A non-leaf always requires grad.
* ``grad``: where backward accumulates the gradient -- on leaves only, unless ``retain_grad()``.
* ``_version``: how many times it was changed in place; saved tensors check it in backward.

The operations themselves (``+``, ``exp``, ``sum``, ...) are defined in ``_ops/``, each next
to its backward; ``_tensor_methods.py`` is the table that puts them on this class, with the
few methods whose code needs the graph (``backward``, ``_grad_accumulator``): the graph is
built on the Tensor, so this module cannot import it.
"""
import sys
import warnings
import weakref

import numpy as np

from . import device as _device
from . import dtype as _dtype
from .dtype import Size
from .grad_mode import INFERENCE_REQUIRES_GRAD
from .grad_mode import _State as _grad_state
from .hooks import RemovableHandle, check_hook_result, check_post_accumulate_result
from .zeros import NO_NUMPY, NO_STORAGE, ZeroArray

_ndarray = np.ndarray
_new = object.__new__

NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more information. (Triggered internally at "
    "/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)")
TO_SCALAR = (
    "Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
    "Consider using tensor.detach() first. (Triggered internally at "
    "/pytorch/torch/csrc/autograd/generated/python_variable_methods.cpp:822.)")
COPY_CONSTRUCT = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
    "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).")
NO_GRAD_VIEW_WHY = (
    "grad mode enabled. Given that this use case is ambiguous and error-prone, it is forbidden. "
    "You can clarify your code by moving both the view and the inplace either both inside the "
    "no_grad block (if you don't want the inplace to be tracked) or both outside (if you want "
    "the inplace to be tracked).")
_warned = set()


def no_grad_view_error(marker, changing):
    """PyTorch's refusal for a view made under no_grad (``marker``: see ``_no_grad_view``),
    either being changed in place with grad mode on (``changing``) or read after its base or
    another view of its base was changed in place."""
    who = ("A view was created in no_grad mode" if marker is True else
           f"Output 0 of {marker} is a view of a view which was created in no_grad mode")
    what = ("is being modified inplace" if changing else
            "its base or another view of its base has been modified inplace")
    return RuntimeError(f"{who} and {what} with {NO_GRAD_VIEW_WHY}")


def _warn_once(message, stacklevel):
    """Warn the first time only, process-wide, as PyTorch's TORCH_WARN_ONCE does: a second
    ``float(x)`` stays silent even under ``warnings.simplefilter("always")``."""
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, UserWarning, stacklevel=stacklevel + 1)


class Tensor:
    __slots__ = ("_data", "_grad_fn", "_rg", "_vc", "__weakref__", "__dict__")

    # Set on few tensors, so kept in the instance's __dict__ when set, these defaults otherwise
    # (a new tensor is made per operation: every attribute it need not set saves time).
    _grad = None    # .grad
    _acc = None     # a leaf's AccumulateGrad, weakly
    _hooks = None   # a leaf's hooks
    _base = None    # a view's base tensor
    _no_grad_view = False   # a view made under no_grad (True), or a view of one (its op's name)
    _stale = None           # such a view once its base changed in place: (the grad_fn it had,)
    _inference = False      # made under inference_mode (is_inference())

    @property
    def grad_fn(self):
        """The node that made this tensor; None for a leaf. (The engine reads ``_grad_fn``.)"""
        fn = self._grad_fn
        if fn is None and self._stale is not None:
            self._refuse_if_stale()
        return fn

    @grad_fn.setter
    def grad_fn(self, node):
        self._grad_fn = node

    def _refuse_if_stale(self):
        """A view made under no_grad whose base (or another view of that base) was changed in
        place since (``_remake_views`` in _ops/inplace.py) has no history anyone can name: the
        one from before the change, or after? PyTorch refuses to say wherever a grad_fn is
        read -- the attribute, ``is_leaf``, an operation, a hook, backward -- and so does this.
        (With no history before and none now, nothing is ambiguous: None.)"""
        if self._stale is not None and (self._stale[0] is not None or self._base._rg):
            raise no_grad_view_error(self._no_grad_view, changing=False)

    def _history(self):
        """grad_fn as it is stored, without the check above: what PyTorch's C++ reads where it
        only asks whether a tensor is a leaf (``.grad``, ``retain_grad()``, printing)."""
        return self._grad_fn if self._stale is None else self._stale[0]

    # -- construction --------------------------------------------------------------------
    def __new__(cls, *args):
        # The legacy constructor: ``Tensor([1, 2])`` copies data, ``Tensor(2, 3)`` makes a shape.
        if len(args) == 1 and not isinstance(args[0], int):
            data = args[0]._data if isinstance(args[0], Tensor) else args[0]  # no copy warning
            return tensor(data, dtype=_dtype.float32)
        return _wrap(np.zeros(args, np.float32))

    @property
    def data(self):
        """The same values, detached from the graph and not tracked by version checks."""
        return _wrap(self._storage())

    @data.setter
    def data(self, value):
        self._data = _as_array(value)

    @property
    def requires_grad(self):
        return self._rg

    @requires_grad.setter
    def requires_grad(self, flag):
        if self._history() is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables.")
        if flag and not self.dtype.is_floating_point:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if flag and self._inference and not _grad_state.inference:
            raise RuntimeError(INFERENCE_REQUIRES_GRAD)
        if not flag and self._base is not None and self._grad_fn is None and self._base._rg:
            return      # a view with no history asks its base, which requires grad: still True
        self._rg = bool(flag)
        # A view with no history (made under no_grad, or before its base required grad)
        # requires grad as its base does, now too: PyTorch asks the base each time. (Its
        # views are listed with the version counter.)
        for ref in self._vc[1] if self._vc is not None and len(self._vc) > 1 else ():
            v = ref()
            if v is not None and v._base is self and v._grad_fn is None:
                v._rg = self._rg

    def is_inference(self):
        """Whether this tensor was made under ``inference_mode`` (it stays out of graphs)."""
        return self._inference

    def requires_grad_(self, requires_grad=True):
        if self._history() is not None and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        if self._history() is None:
            self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def grad(self):
        if self._history() is not None and not self.retains_grad:
            warnings.warn(NON_LEAF_GRAD, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of "
                    f"size '{list(self.shape)}'. Please ensure that the gradient and the tensor "
                    "are the same size")
        self._grad = value

    @property
    def retains_grad(self):
        # retain_grad() keeps its hook on grad_fn (see _tensor_hooks); the hook knows its tensor
        fn = self._history()
        hooks = fn is not None and fn._extras
        retain = hooks and hooks.get("tensor", {}).get("retain")
        return bool(retain) and retain.tensor() is self

    def retain_grad(self):
        """Keep ``.grad`` on this non-leaf tensor too (a leaf keeps it anyway)."""
        if not self._rg:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._history() is None or self.retains_grad:
            return
        ref = weakref.ref(self)     # weak, so the graph does not keep this tensor alive

        def retain(grad):
            t = ref()
            # (an undefined gradient, a hook's None upstream, leaves .grad alone, as in PyTorch)
            if t is not None and grad is not None:  # recorded under create_graph, as PyTorch's
                t._grad = grad.clone() if t._grad is None else t._grad + grad
        retain.tensor = ref         # which tensor it fills: retains_grad and viz.draw read it
        self._tensor_hooks()["retain"] = retain

    def register_hook(self, fn):
        """``fn(grad)`` runs when this tensor's gradient is computed; a tensor it returns
        replaces that gradient."""
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        return RemovableHandle(self._tensor_hooks().setdefault("pre", []), fn)

    def register_post_accumulate_grad_hook(self, fn):
        """``fn(tensor)`` runs on a leaf after its ``.grad`` was updated."""
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        return RemovableHandle(self._tensor_hooks().setdefault("post_acc", []), fn)

    def _tensor_hooks(self):
        # A non-leaf's hooks run when its grad_fn receives the gradient, so they live on the
        # node (PyTorch's "tensor pre-hooks"); a leaf's run in its AccumulateGrad.
        if self.grad_fn is not None:
            return self.grad_fn._extras_table().setdefault("tensor", {})
        if self._hooks is None:
            self._hooks = {}
        return self._hooks

    # -- shape and type ------------------------------------------------------------------
    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        return self.shape if dim is None else self._data.shape[dim]

    @property
    def dtype(self):
        return _dtype.from_numpy_dtype(self._data.dtype)

    @property
    def ndim(self):
        return self._data.ndim

    def dim(self):
        return self._data.ndim

    def numel(self):
        return self._data.size

    nelement = numel

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return len(self._data)

    def is_floating_point(self):
        return self._data.dtype.kind == "f"

    def is_contiguous(self):
        return self._data.flags.c_contiguous

    def stride(self, dim=None):
        """Elements to step over along each dimension (a view's are PyTorch's; an elementwise
        result's follow numpy's layout: docs/learners/pytorch.md)"""
        d = self._data
        strides = tuple(s // d.itemsize for s in np.shape(d) and d.strides)
        if dim is None:
            return strides
        n = len(strides)
        if not n:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        if not -n <= dim < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                             f"{n - 1}], but got {dim})")
        return strides[dim]

    # -- the device: always the CPU (see _device.py) ------------------------------------
    @property
    def device(self):
        return _device.CPU

    is_cuda, is_cpu = False, True

    def cpu(self):
        return self

    def cuda(self, device=None, non_blocking=False):
        raise AssertionError(_device.NO_CUDA)

    def get_device(self):
        return -1

    @property
    def _version(self):
        vc = self._vc
        return vc[0] if vc else 0

    def _bump_version(self):
        self._counter()[0] += 1

    def _counter(self):
        """The version counter, made the first time something needs to watch this tensor's
        version (a save for backward, an alias, an in-place change); most tensors never do."""
        vc = self._vc
        if vc is None:
            vc = self._vc = [0]
        return vc

    def _alias(self, grad_fn=None):
        """Another Tensor over the same data and the same version counter (``detach()``)."""
        return Tensor._make(self._storage(), grad_fn, self._counter())

    def _storage(self):
        """The data as an array that can be shared and written in place.

        Operations hand back 0-d results as numpy scalars, which compute ten times faster
        than 0-d arrays but are immutable. Whoever needs real storage (an alias, an in-place
        write, ``.numpy()``) gets it here; after that, the tensor keeps the array."""
        d = self._data
        if type(d) is not _ndarray and type(d) is not ZeroArray:
            d = self._data = np.array(d)
        return d

    @staticmethod
    def _make(data, grad_fn=None, vc=None):
        t = _wrap(data, grad_fn, grad_fn is not None)
        if vc is not None:
            t._vc = vc
        return t

    # -- leaving the graph ---------------------------------------------------------------
    def detach(self):
        return self._alias()

    def detach_(self):
        self.grad_fn = None
        self._rg = False
        return self

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.reshape(()).item()

    def tolist(self):
        if type(self._data) is ZeroArray:
            raise RuntimeError(NO_STORAGE)
        return self._data.tolist()

    def numpy(self, *, force=False):
        if force:       # PyTorch's: whatever it takes (a copy, for a ZeroTensor)
            d = self._data
            return d.copy() if type(d) is ZeroArray else self.detach().numpy()
        if self._rg and _grad_state.enabled:      # (under no_grad PyTorch lets it pass)
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if type(self._data) is ZeroArray:
            raise RuntimeError(NO_NUMPY)
        return self._storage()

    def _is_zerotensor(self):
        """Whether this is PyTorch's ZeroTensor, the gradient of ``sgn`` (_core/zeros.py)."""
        return type(self._data) is ZeroArray

    def __array__(self, dtype=None, copy=None):
        return self.numpy() if dtype is None else self.numpy().astype(dtype)

    # Above an array's: ``np.ones(2) * x`` is x's to answer (and refused, as in PyTorch),
    # not numpy's reading x as an array.
    __array_priority__ = 1000

    def __array_wrap__(self, array):
        """What numpy makes of this tensor (``x * np.ones(2)``, ``np.exp(x)``) comes back as a
        Tensor, bools as uint8, as PyTorch's does. (numpy 2 warns that this signature lacks
        two arguments; PyTorch's has the same one, and so the same warning.)"""
        if array.dtype == bool:
            array = array.astype("uint8")
        return _wrap(np.asarray(array))

    def __float__(self):
        return float(self._scalar())

    def __int__(self):
        return int(self._scalar())

    def __index__(self):
        if self._data.dtype.kind not in "iu" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._data.reshape(()))

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data.reshape(()))

    def _scalar(self):
        if self._rg:
            _warn_once(TO_SCALAR, stacklevel=3)
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self._data.reshape(()).item()

    # -- printing (rules in tensor_str.py) -----------------------------------------------
    def __repr__(self):
        # (imported at the first print, not with the package: import speed)
        from .tensor_str import tensor_repr
        return tensor_repr(self)

    __str__ = __repr__

    def __format__(self, spec):
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        if spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return repr(self)

    __hash__ = object.__hash__

    # -- copying and saving --------------------------------------------------------------
    def __reduce_ex__(self, protocol):
        # what torch.save keeps: values, dtype, shape, requires_grad (serialization.py)
        d = np.asarray(self._data)
        return _rebuild_tensor, (d.tobytes(), d.dtype.str, d.shape, self._rg)

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                "protocol at the moment.  If you were attempting to deepcopy a module, this may "
                "be because of a torch.nn.utils.weight_norm usage, see "
                "https://github.com/pytorch/pytorch/pull/103001")
        import copy  # (deepcopy only: not an import every program pays)
        new = _wrap(np.array(self._data))
        new._rg = self._rg
        if self._grad is not None:
            new._grad = copy.deepcopy(self._grad, memo)
        memo[id(self)] = new
        return new

    # -- gradients ----------------------------------------------------------------------
    # (``backward`` and ``_grad_accumulator`` need the graph, which is built on this class:
    # they are put on Tensor by _tensor_methods.py, from autograd/ and graph.py)

    def _leaf_hooks(self, g):
        """The gradient ``g`` as this leaf receives it: in the leaf's dtype (a float64 leaf
        used in float32 arithmetic gets a float64 gradient, as in PyTorch), then through its
        ``register_hook`` hooks (each may replace it). None (an undefined gradient) stays None."""
        dtype = self._data.dtype
        if type(g) is Tensor:
            if g._data.dtype != dtype:
                g = g.to(_dtype.from_numpy_dtype(dtype))
        elif getattr(g, "dtype", dtype) != dtype:
            g = np.asarray(g, dtype)
        hooks = self._hooks
        if hooks and "pre" in hooks:
            for fn in hooks["pre"]:
                given = g if g is None or type(g) is Tensor else _wrap(np.asanyarray(g))
                g = check_hook_result(fn, fn(given), g)
        return g

    def _accumulate(self, g, hooked=False):
        """``.grad += g``: in place once ``.grad`` exists, as PyTorch does, so a reference to
        ``x.grad`` taken before another backward sees the new sum too. (``hooked``: the
        leaf's hooks have seen ``g`` already.)"""
        hooks = self._hooks
        if not hooked:
            g = self._leaf_hooks(g)
        grad = self._grad
        if not self._rg:
            pass    # frozen since the forward (requires_grad_(False)): PyTorch skips it too
        elif type(g) is Tensor:
            # create_graph=True: the gradient is itself part of a graph and stays so
            # (a copy recorded as PyTorch's CopyBackwards, an operation of _ops/inplace.py)
            self._grad = g._copy_grad() if grad is None else grad + g
        else:
            if type(g) is ZeroArray and g.dtype is self._data.dtype:
                pass        # a ZeroTensor becomes .grad as it is, as in PyTorch
            elif type(g) is not _ndarray or g.dtype is not self._data.dtype:
                g = np.array(g, self._data.dtype)       # a fresh array of the leaf's dtype
            elif g.base is not None or not g.flags.writeable or sys.getrefcount(g) > 4:
                # Someone else can see this array (the caller's gradient, a view, a hook), so
                # keep a copy. Otherwise only the backward pass refers to it (4 references:
                # the engine's, our caller's, ours and getrefcount's) and it becomes .grad as
                # it is, saving a copy -- PyTorch "steals" such a buffer too.
                g = g.copy()
            if grad is None:
                self._grad = _wrap(g)
            elif grad._data.shape == g.shape:
                # in place, even into a .grad that a create_graph backward made part of a
                # graph: it stays so (PyTorch adds in place while not recording)
                into = grad._storage()
                np.add(into, g, out=into)
                grad._bump_version()
            else:
                self._grad = _wrap(grad._data + g)
        if hooks and "post_acc" in hooks:
            for fn in hooks["post_acc"]:
                check_post_accumulate_result(fn, fn(self), self)


def _wrap(data, grad_fn=None, rg=False):
    """The fast internal constructor: ``data`` must already be a numpy array."""
    t = _new(Tensor)
    t._data = data
    t._grad_fn = grad_fn
    t._rg = rg
    t._vc = None
    if _grad_state.inference:
        t._inference = True
    return t


def _as_array(x):
    if isinstance(x, Tensor):
        return x._data
    return np.asarray(x)


def tensor(data, dtype=None, requires_grad=False, device=None):
    """A new leaf tensor holding a copy of ``data`` (a number, nested lists, or an array)."""
    _device.check(device)
    if isinstance(data, Tensor):
        warnings.warn(COPY_CONSTRUCT, UserWarning, stacklevel=2)
        data = data._data
    if dtype is not None:
        array = np.array(data, dtype=dtype.np if isinstance(dtype, _dtype.dtype) else dtype)
    else:
        array = np.array(data)
        if array.dtype == np.float64 and not _is_numpy(data):
            array = array.astype(np.float32)       # Python floats -> PyTorch's default float32
        elif array.dtype.kind in "iu" and array.dtype != np.int64 and not _is_numpy(data):
            array = array.astype(np.int64)
    if array.dtype.kind == "O":     # something that is not a number, somewhere in data
        odd = next(v for v in array.reshape(-1) if not isinstance(v, (int, float, bool)))
        raise RuntimeError(f"Could not infer dtype of {type(odd).__name__}")
    if array.dtype.kind not in "fiub":
        raise TypeError(f"can't convert np.ndarray of type {array.dtype}.")
    # a 0-d tensor holds a numpy scalar, as an operation's 0-d result does: arithmetic with
    # it is ten times quicker than with a 0-d array (``_storage`` makes the array on demand)
    t = _wrap(array[()] if array.ndim == 0 else array)
    if requires_grad:
        if array.dtype.kind != "f":
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t._rg = True
    return t


def _rebuild_tensor(raw, dtype, shape, requires_grad):
    """The inverse of ``Tensor.__reduce_ex__``: a new leaf from the saved bytes."""
    t = _wrap(np.frombuffer(raw, np.dtype(dtype)).reshape(shape).copy())
    t._rg = requires_grad
    return t


def _is_numpy(data):
    return isinstance(data, (np.ndarray, np.generic))
