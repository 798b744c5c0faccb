"""Checks of lesson 06, retain_graph and the freed graph.

Whether a snippet raises is found out by running it here, with the engine, and the expected
gradients come from the engine's own backward: the check and the lesson cannot disagree.
"""
import numpy as np

from .. import autograd, tensor
from . import Prediction, as_tensor_text, attempt, check, fail, same_values, show, tensor_answer
from . import ANY, Maybe, Outcome

#: The lesson's snippets, each run on a fresh x = tensor([1., 2.], requires_grad=True).
SNIPPETS = {
    "A": "y = (x + 1).sum()\ny.backward()\ny.backward()",
    "B": "y = (x * 2).sum()\ny.backward()\ny.backward()",
    "C": "y = (x * x).sum()\ny.backward(retain_graph=True)\ny.backward()",
    "D": "y = (x * x).sum()\ny.backward(retain_graph=True)\ny.backward()\ny.backward()",
    "E": "y = (x ** 2).sum()\ny.backward()\ny = (x ** 2).sum()\ny.backward()",
    "F": "y = x.exp().sum()\ntorch.autograd.grad(y, x)\ny.backward()",
}

_WHY = {
    "A": "AddBackward0 saved no tensor (adding 1 has derivative 1, whatever x is), so there "
         "is nothing to free and a second pass works",
    "B": "x * 2 saved the 2 (MulBackward0 keeps the other factor), and the first backward "
         "freed it",
    "C": "retain_graph=True on the first call kept the saved x for the second",
    "D": "the second call had no retain_graph, so it freed the saved tensors: the third call "
         "finds them gone",
    "E": "the second y is a new forward pass, so a new graph with its own saved tensors",
    "F": "autograd.grad frees the saved tensors exactly as backward does (ExpBackward0 saved "
         "its result)",
}


def _raises(code):
    import autograd_lab as torch        # the snippets speak PyTorch's names
    x = tensor([1.0, 2.0], requires_grad=True)
    try:
        exec(code, {"torch": torch, "x": x})
    except RuntimeError:
        return True
    return False


@check
def raises_prediction(raises):
    __tracebackhide__ = True
    if not isinstance(raises, dict):
        fail("`raises` should be a dictionary from snippet name to True/False.",
             found=show(raises))
    missing = sorted(set(SNIPPETS) - set(raises))
    if missing:
        fail(f"`raises` has no entry for {', '.join(missing)}.",
             found=f"entries for {sorted(raises, key=str)}",
             hint=f"write True or False for each of {', '.join(SNIPPETS)}")
    for name in SNIPPETS:
        if not isinstance(raises[name], bool):
            fail(f"raises[{name!r}] should be True or False.", found=show(raises[name]))
    verdict = Prediction()
    for name, code in SNIPPETS.items():
        truth = _raises(code)
        if raises[name] == truth:
            continue
        what = f"Snippet {name}: you predicted it {'raises' if raises[name] else 'runs'}."
        verdict.off(what, hint=_WHY[name],
                    misconception="retain-graph-missing" if truth and name in ("B", "D", "F")
                    else None)
    verdict.tell()


# ----------------------------------------------------------------------------------------
# two losses over one shared subgraph
# ----------------------------------------------------------------------------------------
def _shared_graph(values, kind):
    x = tensor(list(values), requires_grad=True)
    h = x ** 3 if kind == "cube" else (x * x).exp()
    return x, h.sum(), (h ** 2).mean()


def _separate(fn, *, values=(1.0, 2.0), kind="cube", stale=None):
    """Probe: the learner's function on a fresh shared graph (x holding ``stale`` in .grad)."""
    if not callable(fn):
        return fn, None
    x, loss_a, loss_b = _shared_graph(values, kind)
    if stale is not None:
        x.grad = tensor([stale] * len(values))
    return fn, attempt(fn, x, loss_a, loss_b)


@check(probe=_separate, reply=lambda **settings: (ANY, Maybe(Outcome)))
def separate_gradients(fn, outcome, *, values=(1.0, 2.0), kind="cube", stale=None):
    """fn(x, loss_a, loss_b) -> (g_a, g_b): d loss_a/dx and d loss_b/dx from one forward pass;
    ``stale``: an old .grad x holds on entry."""
    __tracebackhide__ = True
    xe, la, lb = _shared_graph(values, kind)
    want_a, = autograd.grad(la, xe, retain_graph=True)
    want_b, = autograd.grad(lb, xe)
    want_a, want_b = want_a._data.astype(np.float64), want_b._data.astype(np.float64)
    if outcome is None:
        fail("`separate_gradients` should be a function (def separate_gradients(x, loss_a, "
             "loss_b): ...).", found=show(fn))
    if outcome.raised:
        error = outcome.error
        if isinstance(error, RuntimeError) and str(error).startswith(
                "Trying to backward through the graph a second time"):
            fail("The second backward found the shared graph freed.",
                 found=f"RuntimeError: {str(error)[:70]}...",
                 misconception="retain-graph-missing")
        fail(f"separate_gradients(...) raised {type(error).__name__}: {error}")
    result = outcome.value
    if not isinstance(result, tuple) or len(result) != 2:
        fail("separate_gradients should return a pair (g_a, g_b).", found=show(result))
    g_a, g_b = result
    if isinstance(g_a, tuple) or isinstance(g_b, tuple):
        fail("`g_a` should be a Tensor, not a tuple.", found=f"g_a = {g_a!r}, g_b = {g_b!r}",
             hint="torch.autograd.grad returns a tuple, one gradient per input: unpack it, "
             "(g_a,) = torch.autograd.grad(...)")
    n = (len(values),)
    found_a = tensor_answer("g_a", g_a, shape=n, requires_grad=False)
    found_b = tensor_answer("g_b", g_b, shape=n, requires_grad=False)
    if g_a is g_b or same_values(found_a, found_b) and not same_values(want_a, want_b):
        fail("g_a and g_b are the same tensor: g_a was x.grad itself, and the second pass "
             "changed it in place.", found=f"g_a = {g_a!r}, g_b = {g_b!r}",
             hint="take a copy (x.grad.clone()), or set x.grad = None instead of zero_(), "
             "or use torch.autograd.grad")
    if stale is not None and same_values(found_a, want_a + stale):
        fail("g_a includes the old gradient x.grad held when your function was called.",
             expected=as_tensor_text(want_a), found=repr(g_a), misconception="forgot-zero-grad")
    if not same_values(found_a, want_a):
        fail("g_a is not d loss_a / dx.", expected=as_tensor_text(want_a), found=repr(g_a))
    if same_values(found_b, want_a + want_b):
        fail("g_b is d loss_a/dx + d loss_b/dx: the second pass added to the first.",
             expected=as_tensor_text(want_b), found=repr(g_b),
             misconception="retain-graph-instead-of-zero")
    if not same_values(found_b, want_b):
        fail("g_b is not d loss_b / dx.", expected=as_tensor_text(want_b), found=repr(g_b))


# ----------------------------------------------------------------------------------------
# an in-place change of a saved tensor
# ----------------------------------------------------------------------------------------
@check
def inplace_fixed(x, h, h_shifted):
    """The lesson's x = [1., 2.], h = x * 2, y = (h * h).sum(), y.backward(), and h + 1
    wanted as well: x.grad = 8x, h_shifted = 2x + 1."""
    __tracebackhide__ = True
    tensor_answer("x", x, shape=(2,))
    tensor_answer("h", h, shape=(2,))
    if x.grad is None:
        if h._version > 0:
            fail("x.grad is None: backward refused, because h, which y saved for its "
                 "backward, was changed in place.", found=f"h is at version {h._version}",
                 misconception="saved-tensor-modified")
        fail("x.grad is None: call y.backward() in your cell.")
    xs = tensor([1.0, 2.0], requires_grad=True)
    hs = xs * 2
    (hs * hs).sum().backward()
    grad = np.asarray(x.grad._data, dtype=np.float64)
    if not same_values(grad, xs.grad._data):
        if same_values(grad, 2 * (2 * xs.detach()._data + 1) * 2):
            fail("x.grad is the gradient of y built from the SHIFTED h: the shift happened "
                 "before y was computed.", expected=repr(xs.grad), found=repr(x.grad),
                 hint="y must use the original h; shift a copy afterwards")
        fail("x.grad is not the gradient of y = (h * h).sum().", expected=repr(xs.grad),
             found=repr(x.grad))
    shifted = tensor_answer("h_shifted", h_shifted, shape=(2,))
    if not same_values(shifted, hs.detach()._data + 1):
        fail("h_shifted should hold h + 1.", expected=repr(hs.detach() + 1),
             found=show(h_shifted))
