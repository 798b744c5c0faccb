"""Checks of lesson 04, gradients add up.

Expected values are computed here with the engine from the lesson's own expressions (the seed's
x, y = x**2, z = y**3; the 1-D fitting problem), never typed in. The learner's functions are
called on fresh data of the check's own, so an answer cannot be tuned to one example.
"""
import numpy as np

from .. import no_grad, ones, tensor
from . import as_tensor_text as _text, attempt, check, fail, number_answer, returned, same_values, show, tensor_answer


def _grad(t):
    """t.grad as float64 values (None stays None), read without PyTorch's non-leaf warning."""
    return None if t._grad is None else np.asarray(t._grad, dtype=np.float64)


# ----------------------------------------------------------------------------------------
# 1. the seed's z = (x**2)**3, backward twice
# ----------------------------------------------------------------------------------------
def _seed_example():
    """What the lesson runs: x.grad after one and after two calls, and y's .grad."""
    x = tensor([1.0, 2.0], requires_grad=True)
    y = x ** 2
    z = y ** 3
    seed = ones(2)
    z.backward(seed, retain_graph=True)
    first = _grad(x)
    z.backward(seed, retain_graph=True)
    return _grad(y), first, _grad(x)


@check
def seed_prediction(y_grad, x_grad_1, x_grad_2):
    __tracebackhide__ = True
    _, first, second = _seed_example()
    if y_grad is not None:
        tensor_answer("y_grad", y_grad)
        fail("Your prediction says y.grad holds numbers after z.backward(...).",
             expected="None", found=show(y_grad), misconception="nonleaf-grad")
    found_1 = tensor_answer("x_grad_1", x_grad_1, shape=(2,), requires_grad=False)
    if not same_values(found_1, first):
        hint = None
        if same_values(found_1, [2.0, 4.0]) or same_values(found_1, [3.0, 48.0]):
            hint = ("that is the derivative of one step only; z = (x**2)**3 = x**6, so "
                    "dz/dx = 6 x**5 (the chain rule multiplies both steps)")
        fail("Your x.grad after the FIRST z.backward(...) is not what happens.",
             expected=_text(first), found=show(x_grad_1), hint=hint)
    found_2 = tensor_answer("x_grad_2", x_grad_2, shape=(2,), requires_grad=False)
    if same_values(found_2, first):
        fail("Your x.grad after the SECOND call is the same as after the first.",
             expected=_text(second), found=show(x_grad_2), misconception="forgot-zero-grad")
    if not same_values(found_2, second):
        fail("Your x.grad after the SECOND z.backward(...) is not what happens.",
             expected=_text(second), found=show(x_grad_2),
             hint="nothing reset x.grad between the two calls")


# ----------------------------------------------------------------------------------------
# 2. a.grad and b.grad after k calls, one of them zeroed
# ----------------------------------------------------------------------------------------
def _k_calls_example():
    a = tensor([1.0, 3.0], requires_grad=True)
    b = tensor(2.0, requires_grad=True)
    out = (a * b).sum()
    out.backward(retain_graph=True)
    once = _grad(a), _grad(b)
    for _ in range(2):
        out.backward(retain_graph=True)
    third = _grad(a), _grad(b)
    a.grad.zero_()
    out.backward()
    return once, third, (_grad(a), _grad(b))


@check
def k_calls_prediction(a_grad_3, b_grad_3, a_grad_4, b_grad_4):
    __tracebackhide__ = True
    (a1, b1), (a3, b3), (a4, b4) = _k_calls_example()
    found_a3 = tensor_answer("a_grad_3", a_grad_3, shape=(2,), requires_grad=False)
    found_b3 = number_answer("b_grad_3", b_grad_3)
    if same_values(found_a3, a1) and same_values(found_b3, b1):
        fail("After three calls you predict what ONE call leaves in .grad.",
             expected=f"a.grad = {_text(a3)}, b.grad = {_text(b3)}",
             found=f"a.grad = {_text(found_a3)}, b.grad = {found_b3:g}",
             misconception="retain-graph-instead-of-zero")
    if not same_values(found_a3, a3):
        fail("Your a.grad after three calls is not what happens.", expected=_text(a3),
             found=show(a_grad_3), hint="d out / d a = b, and each call adds it once more")
    if not same_values(found_b3, b3):
        fail("Your b.grad after three calls is not what happens.", expected=f"{float(b3):g}",
             found=f"{found_b3:g}", hint="d out / d b = a[0] + a[1], once per call")
    found_a4 = tensor_answer("a_grad_4", a_grad_4, shape=(2,), requires_grad=False)
    found_b4 = number_answer("b_grad_4", b_grad_4)
    if same_values(found_a4, a3 + a1):
        fail("a.grad after the fourth call: a.grad.zero_() ran before it.", expected=_text(a4),
             found=show(a_grad_4), hint="zero_() set a.grad to zeros; the last call added ONE "
             "gradient to those zeros")
    if not same_values(found_a4, a4):
        fail("Your a.grad after the fourth call is not what happens.", expected=_text(a4),
             found=show(a_grad_4))
    if same_values(found_b4, b1):
        fail("b.grad after the fourth call: only a.grad was zeroed.", expected=f"{float(b4):g}",
             found=f"{found_b4:g}", misconception="forgot-zero-grad",
             hint="a.grad.zero_() touches a.grad and nothing else: b.grad kept its three "
             "gradients and got a fourth. That is why optimizer.zero_grad() zeroes every "
             "parameter.")
    if not same_values(found_b4, b4):
        fail("Your b.grad after the fourth call is not what happens.", expected=f"{float(b4):g}",
             found=f"{found_b4:g}", hint="b.grad was not zeroed")


# ----------------------------------------------------------------------------------------
# 3. retain_grad(): the gradient of an intermediate result
# ----------------------------------------------------------------------------------------
@check
def hidden_grad(x, h, loss):
    """The lesson's x = [1, 2, 3] (leaf), h = x * 2, loss = (h ** 2).sum(), one backward."""
    __tracebackhide__ = True
    tensor_answer("x", x, shape=(3,))
    tensor_answer("h", h, shape=(3,))
    tensor_answer("loss", loss, shape=())
    if not x.is_leaf:
        fail("`x` is not a leaf: it was computed, so x.grad is never filled.",
             found=f"{x!r}", misconception="not-a-leaf")
    if not x.requires_grad:
        fail("`x` should require grad.", found=show(x), hint="create it with requires_grad=True")
    if h.is_leaf:
        fail("`h` is a leaf: it is not computed from x any more, so the loss cannot reach x "
             "through it.", found=show(h),
             hint="keep h = x * 2 (an intermediate result) and ask it to keep its gradient")
    if not h.retains_grad:
        fail("h.grad is None after backward: h is an intermediate result, not a leaf.",
             found=f"h.retains_grad = {h.retains_grad}", misconception="nonleaf-grad",
             hint="call h.retain_grad() BEFORE loss.backward()")
    if x.grad is None or h._grad is None:
        fail("No gradient arrived: call loss.backward() (once) in your cell.",
             found=f"x.grad = {x.grad}")
    xs = tensor([1.0, 2.0, 3.0], requires_grad=True)
    hs = xs * 2
    hs.retain_grad()
    (hs ** 2).sum().backward()
    expected = {"h": _grad(hs), "x": _grad(xs)}
    found = {"h": _grad(h), "x": _grad(x)}
    if all(same_values(found[k], 2 * expected[k]) for k in found):
        fail("h.grad and x.grad are twice what one backward gives: backward ran twice.",
             expected=f"h.grad = {_text(expected['h'])}, x.grad = {_text(expected['x'])}",
             found=f"h.grad = {_text(found['h'])}, x.grad = {_text(found['x'])}",
             misconception="forgot-zero-grad")
    for k in ("h", "x"):
        if not same_values(found[k], expected[k]):
            fail(f"{k}.grad is not d loss / d {k}.", expected=_text(expected[k]),
                 found=_text(found[k]),
                 hint="x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True), h = x * 2, "
                 "loss = (h ** 2).sum()")


# ----------------------------------------------------------------------------------------
# 4. the training loop that forgets to zero
# ----------------------------------------------------------------------------------------
def _reference_train(x, y, steps, lr, zero_grad=True):
    """The lesson's loop: w starts at 0, loss = mean squared error of w * x against y."""
    w = tensor(0.0, requires_grad=True)
    losses = []
    for _ in range(steps):
        loss = ((w * x - y) ** 2).mean()
        loss.backward()
        with no_grad():
            w -= lr * w.grad
        if zero_grad:
            w.grad.zero_()
        losses.append(loss.item())
    return float(w.item()), losses


def _train(train, *, data=(1.0, 2.0, 3.0, 4.0), slope=2.0, steps=20, lr=0.02):
    """Probe: the learner's train on the check's data."""
    if not callable(train):
        return train, None
    x = tensor(list(data))
    return train, attempt(train, x, x * slope, steps=steps, lr=lr)


@check(probe=_train)
def fixed_loop(train, outcome, *, data=(1.0, 2.0, 3.0, 4.0), slope=2.0, steps=20, lr=0.02):
    """train(x, y, steps, lr) -> (w, losses), with .grad zeroed every step."""
    __tracebackhide__ = True
    if outcome is None:
        fail("`train` should be a function (def train(...): ...).", found=show(train))
    x = tensor(list(data))
    y = x * slope
    result = returned("train(x, y, steps, lr)", outcome)
    if not isinstance(result, tuple) or len(result) != 2:
        fail("train(...) should return a pair: (w, losses).", found=show(result))
    w, losses = result
    tensor_answer("w (returned by train)", w, shape=())
    if not w.is_leaf:
        fail("The w that train returns is not a leaf any more.", found=show(w),
             misconception="inplace-leaf-update")
    if not isinstance(losses, list) or len(losses) != steps:
        fail(f"losses should be a list of {steps} numbers, one per step.", found=show(losses))
    found_losses = [number_answer("each loss", v) for v in losses]
    found_w = float(w.detach().item())
    good_w, good_losses = _reference_train(x, y, steps, lr)
    bad_w, bad_losses = _reference_train(x, y, steps, lr, zero_grad=False)
    if same_values(found_losses, bad_losses) and np.isclose(found_w, bad_w):
        fail("Your loop still lets w.grad add up: each step uses the sum of all gradients so "
             "far.", expected=f"w = {good_w:.4f}", found=f"w = {found_w:.4f}",
             misconception="forgot-zero-grad")
    if np.isclose(found_w, 0.0) and not np.isclose(good_w, 0.0):
        fail("w never moved from 0: the update used a .grad that was already zeroed.",
             expected=f"w = {good_w:.4f}", found=f"w = {found_w:.4f}",
             hint="zero .grad AFTER the update has used it (or before the next backward)")
    if not same_values(found_losses, good_losses, rtol=1e-3, atol=1e-5):
        first = next(i for i, (a, b) in enumerate(zip(found_losses, good_losses))
                     if not np.isclose(a, b, rtol=1e-3, atol=1e-5))
        fail(f"The losses differ from the lesson's loop from step {first} on.",
             expected=f"{good_losses[first]:.4f}", found=f"{found_losses[first]:.4f}",
             hint="keep the loop as it was (w from 0, mean squared error, w -= lr * w.grad "
             "under no_grad, loss.item() appended) and only add the zeroing")
    if not np.isclose(found_w, good_w, rtol=1e-4, atol=1e-6):
        fail("The final w is not where the loop ends.", expected=f"{good_w:.4f}",
             found=f"{found_w:.4f}")


# ----------------------------------------------------------------------------------------
# 5. micro-batches that add up to the full batch
# ----------------------------------------------------------------------------------------
def _mse_grad(w0, x, y):
    w = tensor(w0, requires_grad=True)
    ((w * x - y) ** 2).mean().backward()
    return float(w.grad.item())


_BATCH = dict(w0=0.5, data=(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0), bias=1.0, batch_size=2,
              stale=None)


def _accumulate(accumulate_grad, **settings):
    """Probe: the learner's accumulate_grad on a fresh w (holding ``stale`` in .grad):
    what it did, w afterwards, and how many times backward reached w."""
    if not callable(accumulate_grad):
        return accumulate_grad, None, None, 0
    s = dict(_BATCH, **settings)
    x = tensor(list(s["data"]))
    w = tensor(s["w0"], requires_grad=True)
    if s["stale"] is not None:
        w.grad = tensor(s["stale"])
    calls = []
    w.register_hook(lambda g: calls.append(1))
    outcome = attempt(accumulate_grad, w, x, 2 * x + s["bias"], s["batch_size"])
    return accumulate_grad, outcome, w, len(calls)


@check(probe=_accumulate)
def microbatches(accumulate_grad, outcome, w, calls, *, w0=0.5,
                 data=(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0), bias=1.0, batch_size=2,
                 stale=None):
    """accumulate_grad(w, x, y, batch_size) leaves in w.grad the full-batch gradient of the
    mean squared error, with one backward per micro-batch; ``stale``: a .grad w holds on entry
    (left over from an earlier step)."""
    __tracebackhide__ = True
    if outcome is None:
        fail("`accumulate_grad` should be a function (def accumulate_grad(...): ...).",
             found=show(accumulate_grad))
    x = tensor(list(data))
    y = 2 * x + bias
    returned("accumulate_grad(w, x, y, batch_size)", outcome)
    if w.grad is None:
        fail("w.grad is None after accumulate_grad(w, x, y, batch_size).",
             hint="call backward() on each micro-batch's loss inside the function; change "
             "w.grad, do not make a new w")
    found = float(w.grad.detach().item())
    full = _mse_grad(w0, x, y)
    n_batches = len(data) // batch_size
    parts = [_mse_grad(w0, x[i:i + batch_size], y[i:i + batch_size])
             for i in range(0, len(data), batch_size)]
    if not np.isclose(found, full, rtol=1e-4):
        found_text = f"w.grad = {found:.4f}"
        if stale is not None and np.isclose(found, stale + full, rtol=1e-4):
            fail("w.grad still holds the old gradient it came in with, plus the new one.",
                 expected=f"{full:.4f}", found=found_text, misconception="forgot-zero-grad",
                 hint="zero w.grad once, before the first micro-batch")
        if np.isclose(found, n_batches * full, rtol=1e-4):
            fail(f"w.grad is {n_batches} times the full-batch gradient: each micro-batch's "
                 f"mean counted as if it were the whole batch.", expected=f"{full:.4f}",
                 found=found_text, misconception="microbatch-unscaled")
        if any(np.isclose(found, p * s, rtol=1e-4) for p in parts[-1:] for s in (1, 1 / n_batches)):
            fail("w.grad holds only the last micro-batch's gradient.", expected=f"{full:.4f}",
                 found=found_text, misconception="zeroed-too-often")
        fail("w.grad is not the full-batch gradient.", expected=f"{full:.4f}", found=found_text)
    if calls != n_batches:
        fail(f"backward reached w {calls} times; one backward per micro-batch means "
             f"{n_batches} here (batch size {batch_size}, {len(data)} points).",
             expected=n_batches, found=calls,
             hint="the point of micro-batches is never to build the whole batch's graph at once")
