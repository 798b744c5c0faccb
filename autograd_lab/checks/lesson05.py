"""Checks of lesson 05, gradients add up.

Expected values are computed here with the engine from the lesson's own expressions (the seed's
x, y = x**2, z = y**3; the 1-D fitting problem), never typed in. The learner's functions are
called on fresh data of the check's own, so an answer cannot be tuned to one example.
"""
import numpy as np

from .. import no_grad, ones, tensor
from . import (Prediction, as_tensor_text as _text, attempt, check, fail, number_answer, returned,
               same_values, show, tensor_answer)
from . import ANY, Many, Maybe, Outcome, conform
from .._tensor import Tensor


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


def _predicted_tensor(name, value):
    """A prediction of a tensor: any Tensor (its values as float64), or a failure that does
    not say the answer."""
    __tracebackhide__ = True
    return tensor_answer(name, value, floating=False)


@check
def seed_prediction(y_grad, x_grad_1, x_grad_2):
    __tracebackhide__ = True
    if y_grad is not None:
        _predicted_tensor("y_grad", y_grad)
    found_1 = _predicted_tensor("x_grad_1", x_grad_1)
    found_2 = _predicted_tensor("x_grad_2", x_grad_2)
    _, first, second = _seed_example()
    verdict = Prediction()
    if y_grad is not None:
        verdict.off(f"y.grad: you predicted {show(y_grad)}.", misconception="nonleaf-grad")
    if not same_values(found_1, first):
        hint = "z = (x**2)**3 = x**6: the chain rule multiplies both steps' derivatives"
        if same_values(found_1, [2.0, 4.0]) or same_values(found_1, [3.0, 48.0]):
            hint = ("that is the derivative of one step only; z = (x**2)**3 = x**6, so "
                    "dz/dx = 6 x**5 (the chain rule multiplies both steps)")
        verdict.off(f"x.grad after the FIRST call: you predicted {_text(found_1)}.", hint=hint)
    if same_values(found_2, found_1) and not same_values(found_1, [0.0, 0.0]):
        verdict.off(f"x.grad after the SECOND call: you predicted {_text(found_2)}, the same "
                    "as after the first.", misconception="forgot-zero-grad")
    elif not same_values(found_2, second):
        verdict.off(f"x.grad after the SECOND call: you predicted {_text(found_2)}.",
                    hint="nothing reset x.grad between the two calls")
    verdict.tell()


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
    found_a3 = _predicted_tensor("a_grad_3", a_grad_3)
    found_b3 = number_answer("b_grad_3", b_grad_3)
    found_a4 = _predicted_tensor("a_grad_4", a_grad_4)
    found_b4 = number_answer("b_grad_4", b_grad_4)
    (a1, b1), (a3, b3), (a4, b4) = _k_calls_example()
    verdict = Prediction()
    one_call = same_values(found_a3, a1) and same_values(found_b3, b1)
    if one_call:
        verdict.off(f"At (1), after three calls, you predicted what ONE call leaves: a.grad = "
                    f"{_text(found_a3)}, b.grad = {found_b3:g}.",
                    misconception="retain-graph-instead-of-zero")
    else:
        if not same_values(found_a3, a3):
            verdict.off(f"a.grad at (1): you predicted {_text(found_a3)}.",
                        hint="d out / d a = b, and each call adds it once more")
        if not same_values(found_b3, b3):
            verdict.off(f"b.grad at (1): you predicted {found_b3:g}.",
                        hint="d out / d b = a[0] + a[1], once per call")
    if same_values(found_a4, a3 + a1) and not one_call:
        verdict.off(f"a.grad at (2): you predicted {_text(found_a4)}, as if nothing had been "
                    "zeroed.", hint="zero_() set a.grad to zeros; the last call added ONE "
                    "gradient to those zeros")
    elif not same_values(found_a4, a4):
        verdict.off(f"a.grad at (2): you predicted {_text(found_a4)}.")
    if same_values(found_b4, b1) and not one_call:
        verdict.off(f"b.grad at (2): you predicted {found_b4:g}, as if b.grad had been zeroed "
                    "too.", misconception="forgot-zero-grad",
                    hint="a.grad.zero_() touches a.grad and nothing else: b.grad kept its "
                    "three gradients and got a fourth. That is why optimizer.zero_grad() "
                    "zeroes every parameter.")
    elif not same_values(found_b4, b4):
        verdict.off(f"b.grad at (2): you predicted {found_b4:g}.", hint="b.grad was not zeroed")
    verdict.tell()


# ----------------------------------------------------------------------------------------
# 3. the training loop that forgets to zero
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


@check(probe=_train, reply=lambda **settings: (ANY, Maybe(Outcome)))
def fixed_loop(train, outcome, *, data=(1.0, 2.0, 3.0, 4.0), slope=2.0, steps=20, lr=0.02):
    """train(x, y, steps, lr) -> (w, losses), with .grad zeroed every step."""
    __tracebackhide__ = True
    if outcome is None:
        fail("`train` should be a function (def train(...): ...).", found=show(train))
    x = tensor(list(data))
    y = x * slope
    if outcome.raised:
        error, non_leaf = outcome.error, any("not a leaf Tensor" in w for w in outcome.warnings)
        if non_leaf or isinstance(error, RuntimeError) and "does not require grad" in str(error):
            # w = w - lr * w.grad: outside no_grad a non-leaf whose .grad stays None (lr * None
            # then raises TypeError), inside it a plain tensor the next loss cannot reach
            fail(f"train(x, y, steps, lr) raised {type(error).__name__}: {error}",
                 misconception="inplace-leaf-update",
                 hint="the update `w = w - lr * w.grad` makes a NEW tensor w: keep the loop's "
                 "`w -= lr * w.grad` inside `with torch.no_grad():`")
        if isinstance(error, AttributeError) and "zero_" in str(error):
            # zeroed first thing in the step, as optimizer.zero_grad() is: before the first
            # backward there is no .grad to zero
            fail(f"train(x, y, steps, lr) raised AttributeError: {error}",
                 hint="On the first step w.grad is still None: no backward has run yet, so "
                 "there is nothing to zero. Zeroing before the backward is fine if it allows "
                 "for that: `w.grad = None` (what optimizer.zero_grad() does), or "
                 "`if w.grad is not None:` before `w.grad.zero_()`")
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
# 4. micro-batches that add up to the full batch
# ----------------------------------------------------------------------------------------
def _mse_grad(w0, x, y):
    w = tensor(w0, requires_grad=True)
    ((w * x - y) ** 2).mean().backward()
    return float(w.grad.item())


_BATCH = dict(w0=0.5, data=(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0), bias=1.0, batch_size=2,
              stale=None)


def _accumulate(accumulate_grad, **settings):
    """Probe: the learner's accumulate_grad on a fresh w (holding ``stale`` in .grad): what it
    did, w afterwards, and the gradient each backward pass sent to w (a hook's record)."""
    if not callable(accumulate_grad):
        return accumulate_grad, None, None, []
    s = dict(_BATCH, **settings)
    x = tensor(list(s["data"]))
    w = tensor(s["w0"], requires_grad=True)
    if s["stale"] is not None:
        w.grad = tensor(s["stale"])
    passes = []
    w.register_hook(lambda g: passes.append(float(g.detach().item())))
    outcome = attempt(accumulate_grad, w, x, 2 * x + s["bias"], s["batch_size"])
    return accumulate_grad, outcome, w, passes


def _draw_batch(rng, **settings):
    """A batch no one knows before: its points, w's start and the line's offset (the batch
    size, and a stale .grad, are the cell's)."""
    n = int(settings.get("batch_size", _BATCH["batch_size"])) * int(rng.integers(2, 5))
    return {"data": tuple(rng.uniform(-3, 3, size=n).round(2).tolist()),
            "w0": round(float(rng.uniform(-1.5, 1.5)), 2),
            "bias": round(float(rng.uniform(-2, 2)), 2)}


@check(probe=_accumulate,
       reply=lambda **settings: (ANY, Maybe(Outcome), Maybe(Tensor), ANY),
       draw=_draw_batch)
def microbatches(accumulate_grad, outcome, w, passes, *, w0=0.5,
                 data=(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0), bias=1.0, batch_size=2,
                 stale=None):
    """accumulate_grad(w, x, y, batch_size) leaves in w.grad the full-batch gradient of the
    mean squared error, with one backward per micro-batch: each pass sends w that batch's
    share of the full gradient (its squared errors' sum's gradient over the whole batch's
    size), which a hook on w records; ``stale``: a .grad w holds on entry (left over from an
    earlier step). (In the hidden test the batch is drawn for each learner.)"""
    __tracebackhide__ = True
    # (how many passes there were is the learner's code's doing: any number of numbers)
    conform(passes, Many(float), "the record of the backward passes")
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
    n_batches = -(-len(data) // batch_size)
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
    # what each pass must send w: its batch's share of the full batch's gradient
    shares = sorted(p * min(batch_size, len(data) - i) / len(data)
                    for p, i in zip(parts, range(0, len(data), batch_size)))
    hint = "the point of micro-batches is never to build the whole batch's graph at once"
    if len(passes) != n_batches:
        fail(f"backward reached w {len(passes)} times; one backward per micro-batch means "
             f"{n_batches} here (batch size {batch_size}, {len(data)} points).",
             expected=n_batches, found=len(passes), hint=hint)
    if not same_values(sorted(passes), shares, rtol=1e-3, atol=1e-6):
        fail("The backward passes did not each go through one micro-batch: what reached w in "
             "each pass is not a micro-batch's share of the gradient.",
             expected=", ".join(f"{v:.4f}" for v in shares),
             found=", ".join(f"{v:.4f}" for v in sorted(passes)), hint=hint)
