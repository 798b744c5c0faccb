"""``backward()`` and ``grad()``: what the user passed, checked as PyTorch checks it, turned
into the engine's roots and seeds; then the engine (``engine.run_backward``), and its results
handed back: accumulated into ``.grad``, or returned.

``torch.autograd.backward`` and ``torch.autograd.grad`` (``autograd/__init__.py``) call these
with ``engine=`` the engine as that module names it at the time of the call, which a course
check may swap for one that refuses to run (the learner's own backward must not call it)."""
import warnings
from collections.abc import Mapping

import numpy as np

from .engine import run_backward
from .grad_mode import no_grad
from .graph import grad_accumulator
from .record import _view
from .tensor import Tensor, _warn_once, _wrap

CREATE_GRAPH_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter "
    "and its gradient which can cause a memory leak. We recommend using autograd.grad when "
    "creating the graph to avoid this. If you have to use this function, make sure to reset the "
    ".grad fields of your parameters to None after use to break the cycle and avoid the leak. "
    "(Triggered internally at /pytorch/torch/csrc/autograd/engine.cpp:1307.)")



def _tuple(x):
    """One tensor, or a sequence of them, as a tuple (PyTorch's: anything else is iterated)."""
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _inputs(inputs, api):
    """``inputs`` of ``grad`` or ``backward`` as a tuple, as PyTorch reads them: one tensor, a
    dict's values (named parameters), or any other iterable; never empty."""
    if isinstance(inputs, Tensor):
        result = (inputs,)
    elif type(inputs) is dict:
        result = tuple(inputs.values())
    elif isinstance(inputs, Mapping):
        raise TypeError(f"`inputs` argument to `{api}()` must be a dict, not "
                        f"{type(inputs).__name__}. Other Mapping types are not supported.")
    else:
        result = tuple(inputs)
    if not result:
        raise RuntimeError(f"`inputs` argument to `{api}()` cannot be empty.")
    return result


def _seeds(outputs, grad_outputs):
    """The gradient each output starts with (PyTorch's checks and messages, in its order)."""
    __tracebackhide__ = True     # IPython shows the learner's line, not this one
    seeds = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if isinstance(g, Tensor):
            if g.shape != out.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and "
                    f"output[{i}] has a shape of {out.shape}.")
            seeds.append(g if g.dtype == out.dtype or g.grad_fn is not None
                         else _wrap(g._data.astype(out._data.dtype)))
        elif g is None:
            if out.requires_grad:
                if out.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                seeds.append(_wrap(np.ones(out._data.shape, out._data.dtype)))
            else:
                seeds.append(None)
        else:
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
    return seeds


def _roots(outputs):
    __tracebackhide__ = True     # IPython shows the learner's line, not this one
    roots = []
    for i, out in enumerate(outputs):
        root = out.requires_grad and (out.grad_fn or grad_accumulator(out))
        if not root:        # (a view made under no_grad requires grad but has neither)
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a "
                               "grad_fn")
        roots.append(root)
    return roots


def _travelling(seed, create_graph):
    # A plain backward sends numpy arrays through the graph; create_graph sends Tensors, so
    # that the backward formulas are themselves recorded.
    return seed if create_graph else seed._data


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None, engine=run_backward):
    """Accumulate d(tensors)/d(leaf), weighted by ``grad_tensors``, into every leaf's ``.grad``."""
    __tracebackhide__ = True     # IPython shows the learner's line, not this one
    if grad_variables is not None:
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.",
                      FutureWarning, stacklevel=3)     # (the caller of autograd.backward)
        if grad_tensors is not None:
            raise RuntimeError("`grad_tensors` and `grad_variables` (deprecated) arguments both "
                               "passed to `backward()`. Please only use `grad_tensors`.")
        grad_tensors = grad_variables
    if inputs is not None:
        inputs = _inputs(inputs, "backward")
    tensors = _tuple(tensors)
    grad_tensors = (None,) * len(tensors) if grad_tensors is None else _tuple(grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph:
        _warn_once(CREATE_GRAPH_WARNING, stacklevel=1)     # PyTorch points inside itself too
    seeds = _seeds(tensors, grad_tensors)
    roots = _roots(tensors)
    travelling = [_travelling(s, create_graph) for s in seeds]
    if inputs is None:
        engine(roots, travelling, retain_graph, create_graph)
        return
    for t in inputs:
        # as PyTorch does: a non-leaf input keeps its .grad from now on, and an input that
        # does not require grad (a leaf frozen since the forward) is refused in its words
        t.retain_grad()
    # Only the part of the graph between the roots and the inputs runs. A non-leaf input's
    # .grad is filled by its retain_grad hook as its gradient arrives.
    where = {t.grad_fn or grad_accumulator(t): t for t in inputs}
    got = engine(roots, travelling, retain_graph, create_graph, capture=where,
                       accumulate=False, run_captured=True)
    for node, t in where.items():
        g = got.get(node)       # (None: reached, by an undefined gradient)
        if t.grad_fn is None and g is not None:
            t._accumulate(g, hooked=True)
        elif t.grad_fn is None and node in got:
            node._undefined()


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False,
         engine=run_backward):
    """d(outputs)/d(inputs), weighted by ``grad_outputs``, returned instead of accumulated (in
    a dict if ``inputs`` is one)."""
    __tracebackhide__ = True     # IPython shows the learner's line, not this one
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs, names = _tuple(outputs), inputs
    inputs = _inputs(inputs, "grad")
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to "
                      "True). To accumulate gradient for other parts of the graph, please use "
                      "torch.autograd.backward.", FutureWarning,
                      stacklevel=3)     # (the caller of autograd.grad)
    grad_outputs = (None,) * len(outputs) if grad_outputs is None else _tuple(grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    seeds = _seeds(outputs, grad_outputs)
    roots = _roots(outputs)
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    result = _grad(roots, seeds, inputs, retain_graph, create_graph, allow_unused,
                   materialize_grads, engine)
    return dict(zip(names, result)) if type(names) is dict else result


def _grad(roots, seeds, inputs, retain_graph, create_graph, allow_unused, materialize_grads,
          engine):
    __tracebackhide__ = True     # IPython shows the learner's line, not this one
    where = [t.grad_fn or grad_accumulator(t) for t in inputs]
    for s in seeds:     # a 0-d seed as an array, so that a gradient can be a view of it
        if s is not None:
            s._storage()
    got = engine(roots, [_travelling(s, create_graph) for s in seeds], retain_graph,
                       create_graph, capture=set(where), accumulate=False)
    # the seeds flow through backward as they are: a gradient that is one (the gradient of an
    # output that is also an input, passed on by a node that changes nothing) is that tensor
    result, made = [], {id(s._data): s for s in seeds if s is not None}
    for i, (t, node) in enumerate(zip(inputs, where)):
        g = got.get(node)
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior.")
            result.append(_wrap(np.zeros_like(t._data), None, bool(create_graph))
                          if materialize_grads else None)
        else:
            result.append(g.to(t.dtype) if create_graph else _returned(g, t._data.dtype, made))
    return tuple(result)


def _writable_view(a, root):
    """The read-only view ``a`` made again over the memory of ``root``, its writable base, or
    None where numpy cannot lend that memory (a root that is itself a strided view)."""
    if root is a or not root.flags.writeable or type(root) is not np.ndarray:
        return None
    try:
        return np.ndarray(a.shape, a.dtype, root, a.ctypes.data - root.ctypes.data, a.strides)
    except (TypeError, ValueError):
        return None


def _returned(g, dtype, made):
    """The gradient array ``g`` as ``grad`` returns it, in the input's ``dtype``.

    PyTorch hands back the very tensors its backward computed, not copies, and so does this:
    a gradient that reached two inputs (``x + y``) is one tensor, and the gradient of a sum
    is the seed expanded (a stride-0 view, which refuses an in-place add but may be filled).
    Where numpy's formula made a view (of the seed, say), so did PyTorch's -- while backward
    ran under no_grad: the gradient is a view made under no_grad, with what that forbids.
    ``made`` maps each array already wrapped to its tensor."""
    t = made.get(id(g))
    if t is None or t._data.dtype != dtype:
        a = np.asanyarray(g, dtype)         # a copy only to change the dtype
        root = a
        while isinstance(root.base, np.ndarray):
            root = root.base
        if not a.flags.writeable:           # np.broadcast_to's view: writable, as an expand is
            try:
                a.setflags(write=True)
            except ValueError:
                a = _writable_view(a, root)
                if a is None:               # over memory no tensor may write to: a copy
                    a = root = np.asanyarray(g, dtype).copy()
        if root is a:
            t = _wrap(a)
        else:
            base = made.get(id(root))
            if base is None:
                base = made[id(root)] = _wrap(root)     # one tensor, if it is returned too
            with no_grad():
                t = _view(None, a, base)[0]
        made[id(g)] = t
    return t
