"""``autograd_lab.autograd``: ``backward``, ``grad``, ``Function``, ``Variable``, as in PyTorch."""
from . import graph
from .engine import run_backward
from .function import Function
# (imported here, as PyTorch does, and not on first use: `import torch.autograd.gradcheck` or
#  `from torch.autograd.gradcheck import GradcheckError` before it would leave the module, not
#  the function, as `autograd.gradcheck`: importing a submodule sets its name on the package)
from .gradcheck import gradcheck, gradgradcheck
from .grad_mode import (detect_anomaly, enable_grad, inference_mode, is_grad_enabled,
                        is_inference_mode_enabled, no_grad, set_detect_anomaly, set_grad_enabled)

__all__ = ["backward", "grad", "Function", "Variable", "functional", "graph", "no_grad",
           "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled", "gradcheck", "gradgradcheck"]

CREATE_GRAPH_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter "
    "and its gradient which can cause a memory leak. We recommend using autograd.grad when "
    "creating the graph to avoid this. If you have to use this function, make sure to reset the "
    ".grad fields of your parameters to None after use to break the cycle and avoid the leak. "
    "(Triggered internally at /pytorch/torch/csrc/autograd/engine.cpp:1307.)")


def Variable(data, requires_grad=False):
    """The pre-0.4 wrapper. Today it simply returns a tensor, as PyTorch's does."""
    data.requires_grad_(requires_grad)
    return data


def _tuple(x):
    """One tensor, or a sequence of them, as a tuple (PyTorch's: anything else is iterated)."""
    from .._tensor import Tensor
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _inputs(inputs, api):
    """``inputs`` of ``grad`` or ``backward`` as a tuple, as PyTorch reads them: one tensor, a
    dict's values (named parameters), or any other iterable; never empty."""
    from collections.abc import Mapping
    from .._tensor import Tensor
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
    from .._tensor import Tensor, _wrap
    import numpy as np
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
        root = out.requires_grad and (out.grad_fn or out._grad_accumulator())
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
             grad_variables=None, inputs=None):
    """Accumulate d(tensors)/d(leaf), weighted by ``grad_tensors``, into every leaf's ``.grad``."""
    __tracebackhide__ = True     # IPython shows the learner's line, not this one
    if grad_variables is not None:
        import warnings
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.",
                      FutureWarning, stacklevel=2)
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
        from .._tensor import _warn_once
        _warn_once(CREATE_GRAPH_WARNING, stacklevel=1)     # PyTorch points inside itself too
    seeds = _seeds(tensors, grad_tensors)
    roots = _roots(tensors)
    travelling = [_travelling(s, create_graph) for s in seeds]
    if inputs is None:
        run_backward(roots, travelling, retain_graph, create_graph)
        return
    for t in inputs:
        if t.grad_fn is not None:
            t.retain_grad()     # as PyTorch does: a non-leaf input keeps its .grad from now on
    # Only the part of the graph between the roots and the inputs runs. A non-leaf input's
    # .grad is filled by its retain_grad hook as its gradient arrives.
    where = {t.grad_fn or t._grad_accumulator(): t for t in inputs}
    got = run_backward(roots, travelling, retain_graph, create_graph, capture=where,
                       accumulate=False, run_captured=True)
    for node, t in where.items():
        if node in got and t.grad_fn is None:
            t._accumulate(got[node], hooked=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
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
        import warnings
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to "
                      "True). To accumulate gradient for other parts of the graph, please use "
                      "torch.autograd.backward.", FutureWarning, stacklevel=2)
    grad_outputs = (None,) * len(outputs) if grad_outputs is None else _tuple(grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    seeds = _seeds(outputs, grad_outputs)
    roots = _roots(outputs)
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    result = _grad(roots, seeds, inputs, retain_graph, create_graph, allow_unused,
                   materialize_grads)
    return dict(zip(names, result)) if type(names) is dict else result


def _grad(roots, seeds, inputs, retain_graph, create_graph, allow_unused, materialize_grads):
    __tracebackhide__ = True     # IPython shows the learner's line, not this one
    from .._tensor import _wrap
    import numpy as np
    where = [t.grad_fn or t._grad_accumulator() for t in inputs]
    got = run_backward(roots, [_travelling(s, create_graph) for s in seeds], retain_graph,
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


def _returned(g, dtype, made):
    """The gradient array ``g`` as ``grad`` returns it, in the input's ``dtype``.

    PyTorch hands back the very tensors its backward computed, not copies, and so does this:
    a gradient that reached two inputs (``x + y``) is one tensor, and the gradient of a sum
    is the seed expanded (a stride-0 view, which refuses an in-place add but may be filled).
    Where numpy's formula made a view (of the seed, say), so did PyTorch's -- while backward
    ran under no_grad: the gradient is a view made under no_grad, with what that forbids.
    ``made`` maps each array already wrapped to its tensor."""
    from .._tensor import _wrap
    from .._ops.record import _view
    import numpy as np
    t = made.get(id(g))
    if t is None or t._data.dtype != dtype:
        a = np.asarray(g, dtype)            # a copy only to change the dtype
        if not a.flags.writeable:           # np.broadcast_to's view: writable, as an expand is
            try:
                a.setflags(write=True)
            except ValueError:              # over memory no tensor may write to: a copy
                a = a.copy()
        root = a
        while isinstance(root.base, np.ndarray):
            root = root.base
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


def __getattr__(name):
    # imported on first use: a first cell does not need it
    if name == "functional":
        import importlib
        value = globals()[name] = importlib.import_module(".functional", __name__)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"functional"})
