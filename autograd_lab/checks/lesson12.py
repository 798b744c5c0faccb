"""Checks of lesson 12, hooks, kinks and higher-order gradients.

Expected values come from the engine, run on the lesson's own expressions (the hooked
y = x * 3, the kinks, x**3's gradient) or on the check's own functions, never typed in. A
learner's function is called on inputs of the check's own: ``clip_gradient`` on a fresh
y = x * 3, ``hvp`` on functions it has not seen.
"""
import math

import numpy as np

from .. import autograd, tensor
from . import (ANY, Maybe, Outcome, Prediction, as_tensor_text as _text, attempt, check, fail,
               flag_answer, returned, same_values, show, tensor_answer)
from .._tensor import Tensor


# ----------------------------------------------------------------------------------------
# 1. a hook that returns a gradient, and one that returns nothing
# ----------------------------------------------------------------------------------------
def _hooked(hook):
    x = tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.register_hook(hook)
    (y ** 2).sum().backward()
    return np.asarray(x.grad._data, dtype=np.float64)


def _look(g):
    g = g * 10          # noqa: F841 -- the lesson's hook, which rebinds its own name only


@check
def hooks_prediction(xa_grad, xb_grad):
    """xa.grad with a hook returning g * 10 on ya = xa * 3; xb.grad with one returning None."""
    __tracebackhide__ = True
    found_a = tensor_answer("xa_grad", xa_grad, floating=False)
    found_b = tensor_answer("xb_grad", xb_grad, floating=False)
    replaced, looked = _hooked(lambda g: g * 10), _hooked(_look)
    unhooked = _hooked(lambda g: None)
    verdict = Prediction()
    if not same_values(found_a, replaced):
        if same_values(found_a, unhooked):
            verdict.off(f"xa.grad: you predicted {_text(found_a)}, as if the hook's result "
                        "were thrown away.", misconception="hook-result-ignored")
        else:
            verdict.off(f"xa.grad: you predicted {_text(found_a)}.",
                        hint="ya receives 2 * ya; the hook's result goes on to "
                        "MulBackward0, which multiplies it by 3")
    if not same_values(found_b, looked):
        if same_values(found_b, replaced) or same_values(found_b, 0 * looked):
            verdict.off(f"xb.grad: you predicted {_text(found_b)}, as if `look` had changed "
                        "the gradient.", misconception="hook-returns-nothing")
        else:
            verdict.off(f"xb.grad: you predicted {_text(found_b)}.",
                        hint="without a hook: yb receives 2 * yb, and MulBackward0 "
                        "multiplies by 3")
    verdict.tell()


# ----------------------------------------------------------------------------------------
# 1. the exercise: a hook that clips the gradient passing a tensor
# ----------------------------------------------------------------------------------------
def _clip_probe(clip_gradient, *, values=(1.0, -2.0, 0.5), limit=4.0):
    """Probe: the learner's clip_gradient(y, limit) on y = x * 3, then (y**2).sum()'s
    backward; the handle's remove(), then the same backward again. What each call did, and
    x.grad after each backward."""
    if not callable(clip_gradient):
        return clip_gradient, None, None, None, None, None
    x = tensor(list(values), requires_grad=True)
    y = x * 3
    made = attempt(clip_gradient, y, limit)
    first = attempt(lambda: (y ** 2).sum().backward(retain_graph=True))
    clipped = None if x._grad is None else x._grad.detach()
    x.grad = None
    handle = None if made.raised else made.value
    removed = attempt(lambda: handle.remove())
    attempt(lambda: (y ** 2).sum().backward())
    plain = None if x._grad is None else x._grad.detach()
    return clip_gradient, made, first, clipped, removed, plain


def _clip_reference(values, limit):
    """x.grad without a hook, and with y's gradient clipped (float64)."""
    y = 3 * np.asarray(values, dtype=np.float64)
    return 3 * 2 * y, 3 * np.clip(2 * y, -limit, limit)


@check(probe=_clip_probe,
       reply=lambda **settings: (ANY, Maybe(Outcome), Maybe(Outcome), Maybe(Tensor),
                                 Maybe(Outcome), Maybe(Tensor)))
def clipped(clip_gradient, made, first, found, removed, after, *, values=(1.0, -2.0, 0.5),
            limit=4.0):
    """clip_gradient(t, limit): a hook on t clamping its gradient to [-limit, limit], and
    register_hook's handle returned."""
    __tracebackhide__ = True
    if made is None:
        fail("`clip_gradient` should be a function (def clip_gradient(t, limit): ...).",
             found=show(clip_gradient))
    handle = returned("clip_gradient(y, limit)", made)
    returned("backward through y, with your hook on it", first,
             hint="a hook receives the gradient and returns a tensor of the same shape "
             "(or None)")
    plain, expected = _clip_reference(values, limit)
    setup = f"x = torch.tensor({list(values)}, requires_grad=True), y = x * 3, limit {limit:g}"
    # (a backward that ran reached x, and returned() has refused one that raised: no answer
    # leaves x.grad None here, but a None is judged as no gradient at all, not a crash)
    got = np.zeros(len(values)) if found is None else np.asarray(found._data, dtype=np.float64)
    if not same_values(got, expected):
        if same_values(got, plain):
            fail(f"The gradient reaching y was not clipped ({setup}): x.grad is what it is "
                 "without a hook.", expected=_text(expected), found=_text(got),
                 misconception="hook-result-ignored")
        if same_values(got, np.clip(plain, -limit, limit)):
            fail(f"x.grad is clipped to [-limit, limit] ({setup}), but the hook belongs on "
                 "y: y's gradient is clipped, and MulBackward0 multiplies it by 3 after.",
                 expected=_text(expected), found=_text(got))
        fail(f"x.grad is not 3 times y's gradient clamped to [-limit, limit] ({setup}).",
             expected=_text(expected), found=_text(got))
    if handle is None or removed.raised:
        why = ("clip_gradient returned None" if handle is None else
               f"handle.remove() raised {type(removed.error).__name__}: {removed.error}")
        fail(f"{why}: clip_gradient should return the handle that register_hook gives back.",
             hint="return t.register_hook(...)")
    if after is None or not same_values(np.asarray(after._data, dtype=np.float64), plain):
        fail("After handle.remove(), backward still clips the gradient.",
             expected=_text(plain), found=show(after),
             hint="return the handle of the hook that clips, not of another one")


# ----------------------------------------------------------------------------------------
# 2. the gradient PyTorch defines at a kink
# ----------------------------------------------------------------------------------------
def _kinks():
    r = tensor([-1.0, 0.0, 1.0], requires_grad=True)
    r.relu().sum().backward()
    m = tensor([1.0, 3.0, 3.0], requires_grad=True)
    m.max().backward()
    s = tensor(0.0, requires_grad=True)
    s.sqrt().backward()
    return (np.asarray(r.grad._data, dtype=np.float64),
            np.asarray(m.grad._data, dtype=np.float64), float(s.grad.item()))


def _number(name, value):
    """A number, inf and nan included (a Python number or a one-element tensor)."""
    __tracebackhide__ = True
    if isinstance(value, Tensor):
        if value.numel() != 1:
            fail(f"`{name}` should be a single number.", found=show(value))
        return float(value.detach().item())
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        fail(f"`{name}` should be a number.", found=show(value))
    return float(value)


@check
def kinks_prediction(relu_grad, max_grad, sqrt_grad):
    """relu at -1, 0, 1; max() of [1, 3, 3] (a tie); sqrt at 0."""
    __tracebackhide__ = True
    found_relu = tensor_answer("relu_grad", relu_grad, shape=(3,), floating=False)
    found_max = tensor_answer("max_grad", max_grad, shape=(3,), floating=False)
    found_sqrt = _number("sqrt_grad", sqrt_grad)
    relu, tie, root = _kinks()
    verdict = Prediction()
    if not same_values(found_relu, relu):
        verdict.off(f"relu_grad: you predicted {_text(found_relu)}.",
                    misconception="kink-gradient",
                    hint="relu's backward passes the gradient where x > 0, strictly")
    if not same_values(found_max, tie):
        hint = "max() over the whole tensor: which elements hold the maximum?"
        if same_values(found_max, [0.0, 1.0, 0.0]) or same_values(found_max, [0.0, 0.0, 1.0]):
            hint = ("max(dim=...) picks one index; max() of the whole tensor shares the "
                    "gradient among all the tied elements")
        elif same_values(found_max, [0.0, 1.0, 1.0]):
            hint = "each of the two tied elements gets a share, and the shares add up to 1"
        verdict.off(f"max_grad: you predicted {_text(found_max)}.",
                    misconception="kink-gradient", hint=hint)
    if not (math.isinf(found_sqrt) and found_sqrt > 0):
        verdict.off(f"sqrt_grad: you predicted {found_sqrt:g}.", misconception="kink-gradient",
                    hint="sqrt's backward is 1 / (2 sqrt(x)), computed as it stands at x = 0")
    verdict.tell()


# ----------------------------------------------------------------------------------------
# 3. create_graph
# ----------------------------------------------------------------------------------------
@check
def create_graph_prediction(plain_requires_grad, graph_requires_grad):
    """grad((x**3).sum(), x) without and with create_graph=True: does the result require
    grad?"""
    __tracebackhide__ = True
    flag_answer("plain_requires_grad", plain_requires_grad)
    flag_answer("graph_requires_grad", graph_requires_grad)
    x = tensor([1.0, 2.0], requires_grad=True)
    (plain,) = autograd.grad((x ** 3).sum(), x)
    (graph,) = autograd.grad((x ** 3).sum(), x, create_graph=True)
    verdict = Prediction()
    if plain_requires_grad != plain.requires_grad:
        verdict.off(f"g_plain.requires_grad: you predicted {plain_requires_grad}.",
                    misconception="create-graph-forgotten")
    if graph_requires_grad != graph.requires_grad:
        verdict.off(f"g_graph.requires_grad: you predicted {graph_requires_grad}.",
                    hint="create_graph=True records the backward pass: its result has a "
                    "grad_fn, like any recorded result")
    verdict.tell()


# ----------------------------------------------------------------------------------------
# 3. the exercise: a Hessian-vector product
# ----------------------------------------------------------------------------------------
def _cube(p):
    return (p ** 3).sum()


def _tanh(p):
    return (p.tanh() * p ** 2).sum()


def _coupled(p):
    return (p[0] * p[1]) ** 2 + p.exp().sum()


_CASES = {"cube": _cube, "tanh": _tanh, "coupled": _coupled}
_SHOWN = {"cube": "(x**3).sum()", "tanh": "(x.tanh() * x**2).sum()",
          "coupled": "(x[0] * x[1])**2 + x.exp().sum()"}


def _hvp_probe(hvp, *, case="cube", x0=(1.0, 2.0), v=(1.0, 0.5)):
    """Probe: the learner's hvp on the check's function, at a fresh leaf x."""
    if not callable(hvp):
        return hvp, None
    x = tensor(list(x0), requires_grad=True)
    return hvp, attempt(hvp, _CASES[case], x, tensor(list(v)))


def _hvp_reference(case, x0, v):
    """H v, and the gradient, by the engine (float64)."""
    x = tensor(list(x0), requires_grad=True)
    (g,) = autograd.grad(_CASES[case](x.double()), x, create_graph=True)
    (hv,) = autograd.grad((g * tensor(list(v))).sum(), x)
    return (np.asarray(hv._data, dtype=np.float64),
            np.asarray(g.detach()._data, dtype=np.float64))


@check(probe=_hvp_probe, reply=lambda **settings: (ANY, Maybe(Outcome)))
def hessian_vector(hvp, outcome, *, case="cube", x0=(1.0, 2.0), v=(1.0, 0.5)):
    """hvp(f, x, v): the Hessian of f at x times v, by double backward."""
    __tracebackhide__ = True
    if outcome is None:
        fail("`hvp` should be a function (def hvp(f, x, v): ...).", found=show(hvp))
    call = f"hvp(f, x, v) with f(x) = {_SHOWN[case]}, x = {list(x0)}, v = {list(v)}"
    if outcome.raised and isinstance(outcome.error, RuntimeError) \
            and "does not require grad" in str(outcome.error):
        fail(f"`{call}` raised RuntimeError: {outcome.error}",
             misconception="create-graph-forgotten",
             hint="the first torch.autograd.grad call needs create_graph=True")
    result = returned(call, outcome)
    expected, gradient = _hvp_reference(case, x0, v)
    found = tensor_answer("what hvp returned", result, shape=(len(x0),))
    if not same_values(found, expected, rtol=1e-3, atol=1e-4):
        weights = np.asarray(v, dtype=np.float64)
        if same_values(found, gradient * weights, rtol=1e-3, atol=1e-4) \
                or same_values(found, gradient, rtol=1e-3, atol=1e-4):
            fail(f"hvp returned the gradient of f (times v), not H v: {call}.",
                 expected=_text(expected), found=_text(found),
                 hint="differentiate the gradient again: the gradient of (g * v).sum() "
                 "with respect to x is H v")
        fail(f"{call} is not H v.", expected=_text(expected), found=_text(found))
