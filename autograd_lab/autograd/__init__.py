"""``autograd_lab.autograd``: ``backward``, ``grad``, ``Function``, ``Variable``, as in PyTorch.

A public module. ``backward()`` and ``grad()`` are in the core (``_core/backward.py``), the
backward pass they run in ``_core/engine.py``: ``run_backward``, which ``backward`` and
``grad`` here look up in this module at each call, so that the lesson-06 check can swap it
for one that refuses (a learner's own backward walk must not call the engine)."""
from .._core import backward as _backward
from .._core.engine import run_backward
from . import grad_mode, graph
from .function import Function
from .grad_mode import (detect_anomaly, enable_grad, inference_mode, is_grad_enabled,
                        is_inference_mode_enabled, no_grad, set_detect_anomaly, set_grad_enabled)

# (imported here, as PyTorch does, and not on first use: `import torch.autograd.gradcheck` or
#  `from torch.autograd.gradcheck import GradcheckError` before it would leave the module, not
#  the function, as `autograd.gradcheck`: importing a submodule sets its name on the package)
from .gradcheck import gradcheck, gradgradcheck

__all__ = ["backward", "grad", "Function", "Variable", "functional", "graph", "no_grad",
           "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled", "gradcheck", "gradgradcheck", "grad_mode",
           "detect_anomaly", "set_detect_anomaly"]


def Variable(data, requires_grad=False):
    """The pre-0.4 wrapper. Today it simply returns a tensor, as PyTorch's does."""
    data.requires_grad_(requires_grad)
    return data


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulate d(tensors)/d(leaf), weighted by ``grad_tensors``, into every leaf's ``.grad``."""
    __tracebackhide__ = True     # IPython shows the learner's line, not this one
    _backward.backward(tensors, grad_tensors, retain_graph, create_graph, grad_variables,
                       inputs, engine=run_backward)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """d(outputs)/d(inputs), weighted by ``grad_outputs``, returned instead of accumulated (in
    a dict if ``inputs`` is one)."""
    __tracebackhide__ = True     # IPython shows the learner's line, not this one
    return _backward.grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                          only_inputs, allow_unused, is_grads_batched, materialize_grads,
                          engine=run_backward)


def __getattr__(name):
    # imported on first use, for import speed: a first cell does not need it
    if name == "functional":
        import importlib
        value = globals()[name] = importlib.import_module(".functional", __name__)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"functional"})
