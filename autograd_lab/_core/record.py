"""Recording an operation: wrap its result in a Tensor and, when grad mode is on and an
input requires grad, attach a node that knows where each input's gradient goes next. A view
(``x[0]``, ``x.T``) also shares its base's version counter and knows its base.

Every operation in ``_ops/`` records itself with these (its forward computes on arrays; these
make the Tensor and the node)."""
import weakref

from .grad_mode import _State
from .graph import _sequence, grad_accumulator, new_node, remember_forward, short_name
from .tensor import Tensor, _wrap

_new = object.__new__


def _edge(x):
    """Where the gradient for input ``x`` goes: its grad_fn, its AccumulateGrad, or nowhere."""
    if type(x) is not Tensor or not x._rg:
        return None
    return x._grad_fn or grad_accumulator(x)


def _record(cls, out, *inputs):
    """Wrap ``out``; attach a new ``cls`` node if grad mode is on and some input requires grad.
    Returns the tensor and the node (``None`` when nothing was recorded)."""
    if _State.enabled:
        for x in inputs:
            if type(x) is Tensor and x._rg:
                node = new_node(cls, tuple([_edge(i) for i in inputs]))
                return _wrap(out, node, True), node
    return _wrap(out), None


def _record1(cls, out, x):
    """``_record`` for an operation of one tensor, the common case, kept quick: new_node()
    and _wrap() are written out, as in _binary."""
    if x._rg and _State.enabled:
        node = _new(cls)
        node._next = (x._grad_fn or grad_accumulator(x),)
        node._saved = ()
        node._checks = node._pending = node._extras = None
        node._seq = next(_sequence)
        if _State.anomaly:
            remember_forward(node)
        t = _new(Tensor)
        t._data, t._grad_fn, t._rg, t._vc = out, node, True, None
        return t, node
    return _wrap(out), None


def note_dtypes(node, inputs, result=None):
    """Inputs of several dtypes, or of another dtype than the ``result`` (``x.sum(dtype=...)``):
    the engine casts each gradient back to its own input's (as PyTorch's engine does), where
    the backward formula would give the result's dtype."""
    dtypes = tuple(x._data.dtype if type(x) is Tensor else None for x in inputs)
    if len({d for d in dtypes + (result,) if d is not None}) > 1:
        node._extras_table()["dtypes"] = dtypes


def _view(cls, out, x):
    """``_record`` for an op whose result is a view of x's data. Like a PyTorch view it shares
    x's version counter -- an in-place change through either one is a change of both, which
    saved tensors must notice -- and it knows its base tensor (``._base``)."""
    result, node = _record1(cls, out, x)
    vc = result._vc = x._counter()
    result._base = x if x._base is None else x._base
    if not _State.enabled:
        # Made under no_grad: of a tensor that requires grad, it requires grad too (as in
        # PyTorch), but has no history, and may not be changed in place with grad mode on.
        result._no_grad_view = True
        result._rg = result._base._rg   # (its base's: a view's own flag is the base's)
    elif x._no_grad_view:
        # A view of such a view is one too. PyTorch's errors name its node, if it has one
        # ("Output 0 of Slice is a view of a view which..."), else call it "A view".
        result._no_grad_view = True if node is None else short_name(cls.__name__)
    # The views of a base are listed with its version counter (weakly): a change in place of
    # the base or of any view remakes their grad_fn (inplace.py).
    if len(vc) == 1:
        vc.append([])
    views = vc[1]
    views.append(weakref.ref(result))
    if len(views) >= 64 and not len(views) & (len(views) - 1):     # 64, 128, ...: prune
        views[:] = [ref for ref in views if ref() is not None]
    return result, node
