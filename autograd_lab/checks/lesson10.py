"""Checks of lesson 10, the training loop.

``train_step`` is judged against the step written out here, on the same small problems built
twice: after every step the parameters must be where gradient descent puts them, and still
leaves that require grad. Where the zeroing happens (after the update, or first thing in the
next step) is the learner's choice: only its effect on the parameters is checked.
"""
import numpy as np

from .. import no_grad, tanh, tensor
from .._tensor import Tensor
from . import Prediction, attempt, check, fail, number_answer, same_values, show
from . import ANY, Maybe, Outcome, Shape
from .answers import snapshot


def _node_name(node):
    return None if node is None else type(node).__name__


@check
def update_prediction(w_is_leaf, w_grad_fn):
    """The lesson's w = w - 0.1 * w.grad, outside no_grad."""
    __tracebackhide__ = True
    if not isinstance(w_is_leaf, bool):
        fail("`w_is_leaf` should be True or False.", found=show(w_is_leaf))
    if w_grad_fn is not None and not isinstance(w_grad_fn, str):
        fail("`w_grad_fn` should be the node's name as a string (or None).",
             found=show(w_grad_fn), hint="write the name you expect between quotes")
    w = tensor(1.0, requires_grad=True)
    ((w * 3) ** 2).backward()
    w = w - 0.1 * w.grad
    verdict = Prediction()
    if w_is_leaf != w.is_leaf:
        verdict.off(f"w.is_leaf after the update: you predicted {w_is_leaf}.",
                    misconception="inplace-leaf-update")
    if w_grad_fn != _node_name(w.grad_fn):
        verdict.off(f"w.grad_fn after the update: you predicted {w_grad_fn!r}.",
                    hint="w - 0.1 * w.grad is a subtraction, recorded like any other")
    verdict.tell()


# -- train_step ----------------------------------------------------------------------------
def _line(seed):
    """A line to fit: parameters w, b (leaves at 0) and the closure that computes the loss."""
    rng = np.random.default_rng(seed)
    x = tensor(np.linspace(-1, 1, 12).astype(np.float32))
    y = tensor((1.5 * x._data - 0.3 + 0.1 * rng.standard_normal(12)).astype(np.float32))
    w = tensor(0.0, requires_grad=True)
    b = tensor(0.0, requires_grad=True)
    return [w, b], lambda: ((w * x + b - y) ** 2).mean()


def _mlp(seed):
    """A tiny 2-4-1 tanh network on random points: matrices, vectors, broadcasting."""
    rng = np.random.default_rng(seed)
    X = tensor(rng.standard_normal((10, 2)).astype(np.float32))
    t = tensor(rng.choice([-1.0, 1.0], 10).astype(np.float32))
    W1 = tensor((0.5 * rng.standard_normal((2, 4))).astype(np.float32), requires_grad=True)
    b1 = tensor(np.zeros(4, np.float32), requires_grad=True)
    W2 = tensor((0.5 * rng.standard_normal((4,))).astype(np.float32), requires_grad=True)
    b2 = tensor(np.zeros((), np.float32), requires_grad=True)

    def compute_loss():
        score = tanh(X @ W1 + b1) @ W2 + b2
        return ((score - t) ** 2).mean()
    return (W1, b1, W2, b2), compute_loss


def _reference_step(params, compute_loss, lr):
    loss = compute_loss()
    loss.backward()
    with no_grad():
        for p in params:
            p -= lr * p.grad
            p.grad = None
    return loss.item()


def _learner_step(train_step, params, compute_loss, lr):
    """Probe side: one call of the learner's train_step: its Outcome, and the parameters as
    they are after it (frozen: the next step changes them in place)."""
    outcome = attempt(train_step, params, compute_loss, lr)
    return outcome, snapshot(list(params))


def _run_steps(train_step, cases):
    """Probe: for each case (problem, seed, lr, steps), the parameters before the first step
    and after each step of the learner's train_step, until a step raises."""
    if not callable(train_step):
        return train_step, None
    runs = []
    for build, seed, lr, n in cases:
        params, compute_loss = _PROBLEMS[build](seed)
        steps = [snapshot(list(params))]
        for _ in range(n):
            outcome, after = _learner_step(train_step, params, compute_loss, lr)
            steps.append((outcome, after))
            if outcome.raised:
                break
        runs.append(steps)
    return train_step, runs


class _Steps(Shape):
    """A run of ``n`` training steps as _run_steps returns it: the parameters before (so many
    tensors), then (Outcome, the parameters after) per step, ending early only at a step
    that raised."""

    def __init__(self, n, params):
        self.n, self.params = n, params

    def refuse(self, value):
        if not isinstance(value, list) or not 2 <= len(value) <= self.n + 1:
            return f"not a run of 1 to {self.n} steps"
        last = value[-1]
        if len(value) <= self.n and isinstance(last, tuple) and last \
                and isinstance(last[0], Outcome) and not last[0].raised:
            return f"a run that stops after step {len(value) - 1} of {self.n}, which did not raise"
        return None

    def expand(self, value):
        params = [Tensor] * self.params
        return [params] + [(Outcome, params)] * (len(value) - 1)


def _runs_shape(cases):
    """What _run_steps returns for ``cases``: a run of each case's steps."""
    return ANY, Maybe([_Steps(n, len(_PROBLEMS[build](seed)[0])) for build, seed, lr, n in cases])


def _step_failure(k, outcome):
    """A failure for a step that raised, or warned that it read a non-leaf's .grad."""
    __tracebackhide__ = True
    non_leaf = any("not a leaf Tensor" in w for w in outcome.warnings)
    if outcome.raised:
        error, text = outcome.error, str(outcome.error)
        if isinstance(error, RuntimeError):
            if "leaf Variable that requires grad" in text:
                fail(f"train_step raised: {text}", misconception="inplace-leaf-update")
            if "does not require grad" in text:
                fail(f"train_step raised: {text}", hint="only the UPDATE goes inside "
                     "`with torch.no_grad():`; the forward (compute_loss()) must be "
                     "recorded, or there is no graph for backward")
        fail(f"train_step raised {type(error).__name__}: {error}",
             misconception="inplace-leaf-update" if non_leaf else None)
    if non_leaf:
        fail(f"In step {k}, train_step read .grad of a tensor that is not a leaf.",
             misconception="inplace-leaf-update")


def _state(params):
    return [p.detach()._data.copy() for p in params]


def _text(state):
    """Parameter values for a message: rounded numbers, not numpy reprs."""
    return ", ".join(np.array2string(a, precision=4, separator=", ") for a in state)


def _judge_steps(runs, cases):
    """The learner's steps against the reference's, on the same problems built here."""
    __tracebackhide__ = True
    for steps, (build, seed, lr, _n) in zip(runs, cases, strict=True):
        ref, ref_loss = _PROBLEMS[build](seed)
        before = steps[0]
        for k, (outcome, after) in enumerate(steps[1:], start=1):
            _step_failure(k, outcome)
            expected_loss = _reference_step(ref, ref_loss, lr)
            _judge(k, after, ref, _state(before), outcome.value, expected_loss, lr)
            _not_through_data(k, before, after)
            before = after


def _not_through_data(k, before, after):
    """Fail if a parameter changed while its version did not: an update made in place under
    no_grad counts in the parameter's version, one made through ``.data`` does not (a tensor
    with a version counter of its own), so autograd never sees it. (The numbers are the same
    either way.)"""
    __tracebackhide__ = True
    for i, (b, a) in enumerate(zip(before, after, strict=True)):
        if not np.array_equal(b.detach()._data, a.detach()._data) and a._version == b._version:
            fail(f"In step {k}, parameter {i} changed without autograd seeing it: the update "
                 "went through `.data`. The numbers come out right, but autograd never sees "
                 "the change.", misconception="data-not-detach",
                 hint="update the parameter itself, in place, inside `with torch.no_grad():` "
                 "(p -= lr * p.grad)")


def _judge(k, mine, ref, before, got, expected_loss, lr):
    __tracebackhide__ = True
    for i, p in enumerate(mine):
        if not isinstance(p, Tensor) or not p.is_leaf or not p.requires_grad:
            fail(f"After step {k}, parameter {i} is no longer a leaf that requires grad.",
                 found=show(p), misconception="inplace-leaf-update")
    after = _state(mine)
    if all(np.array_equal(a, b) for a, b in zip(after, before)):
        if all(p.grad is None or not np.any(p.grad.detach()._data) for p in mine):
            fail(f"Step {k} did not change the parameters, and their .grad is empty.",
                 found=f"parameters {_text(before)}", hint="zero .grad AFTER the update has used it")
        fail(f"Step {k} did not change the parameters.", found=f"parameters {_text(before)}",
             hint="`p = p - lr * p.grad` only rebinds the name p to a new tensor; change the "
             "parameter itself: `p -= lr * p.grad` inside `with torch.no_grad():`",
             misconception="inplace-leaf-update")
    expected = [r.detach()._data for r in ref]
    if not all(same_values(a, e, rtol=1e-4, atol=1e-6)
               for a, e in zip(after, expected, strict=True)):
        moved = [a - b for a, b in zip(after, before)]
        wanted = [e - b for e, b in zip(expected, before)]
        if all(same_values(m, -w, rtol=1e-4, atol=1e-6) for m, w in zip(moved, wanted)):
            fail(f"Step {k} moved the parameters uphill.", found=_text(after),
                 expected=_text(expected), hint="gradient DEscent subtracts: p -= lr * p.grad")
        if k > 1 and any(p.grad is not None and np.any(p.grad.detach()._data) for p in mine):
            fail(f"After step {k}, the parameters are not where gradient descent puts them: "
                 "this step used the gradients of the earlier steps too.",
                 expected=_text(expected), found=_text(after), misconception="forgot-zero-grad")
        fail(f"After step {k}, the parameters are not where one step of gradient descent "
             "(p -= lr * p.grad) puts them.", expected=_text(expected), found=_text(after))
    if got is None:
        fail(f"Step {k} returned None.", hint="return the loss as a number: loss.item()")
    loss = number_answer("the value train_step returns", got)
    if not np.isclose(loss, expected_loss, rtol=1e-4, atol=1e-6):
        fail(f"Step {k} returned {loss}, not the loss computed in that step.",
             expected=expected_loss, found=loss, hint="return loss.item()")


def _is_function(train_step, runs):
    __tracebackhide__ = True
    if runs is None:
        fail("`train_step` should be a function train_step(params, compute_loss, lr).",
             found=show(train_step))


_PROBLEMS = {"line": _line, "mlp": _mlp}
_BASIC = (("line", 0, 0.1, 2),)                                  # two steps on a line fit
_MORE = (("line", 1, 0.3, 5), ("mlp", 2, 0.05, 4))   # more steps, other rates, a network


@check(probe=lambda train_step: _run_steps(train_step, _BASIC), reply=lambda: _runs_shape(_BASIC))
def train_step_basic(train_step, runs):
    """Two steps on a line fit, lr 0.1; the update not made through .data (through .data the
    numbers come out the same, but the parameters' versions do not count it)."""
    __tracebackhide__ = True
    _is_function(train_step, runs)
    _judge_steps(runs, _BASIC)


@check(probe=lambda train_step: _run_steps(train_step, _MORE), reply=lambda: _runs_shape(_MORE))
def train_step_hidden(train_step, runs):
    """More steps, other learning rates, and a small network whose parameters are a tuple of
    matrices and vectors."""
    __tracebackhide__ = True
    _is_function(train_step, runs)
    _judge_steps(runs, _MORE)


# -- the broken loops ----------------------------------------------------------------------
BUGS = {"zero_grad": "forgot-zero-grad", "no_grad": "inplace-leaf-update",
        "requires_grad": "requires-grad-on-loss"}
LOOPS = {"A": "no_grad", "B": "requires_grad", "C": "zero_grad"}


@check
def diagnosis(found):
    __tracebackhide__ = True
    if not isinstance(found, dict):
        fail("`diagnosis` should be a dictionary from loop (\"A\", \"B\", \"C\") to its bug.",
             found=show(found))
    missing = sorted(set(LOOPS) - set(found))
    if missing:
        fail(f"`diagnosis` has no entry for loop {', '.join(missing)}.",
             found=f"entries for {sorted(found, key=str)}",
             hint=f"name the bug of each of the loops {', '.join(LOOPS)}")
    for loop in LOOPS:
        if found[loop] not in BUGS:
            fail(f"diagnosis[{loop!r}] should be one of {sorted(BUGS)}.",
                 found=show(found[loop]))
    verdict = Prediction()
    for loop, bug in LOOPS.items():
        if found[loop] != bug:
            verdict.off(f"Loop {loop}: you named {found[loop]!r}; its bug is another.",
                        misconception=BUGS[bug])
    verdict.tell()


# -- the network's parameters --------------------------------------------------------------
@check
def mlp_parameters(W1, b1, W2, b2):
    __tracebackhide__ = True
    shapes = {"W1": (2, 16), "b1": (16,), "W2": (16, 1), "b2": (1,)}
    given = {"W1": W1, "b1": b1, "W2": W2, "b2": b2}
    for name, shape in shapes.items():
        p = given[name]
        if not isinstance(p, Tensor):
            fail(f"`{name}` should be a Tensor.", found=show(p))
        if tuple(p.shape) != shape:
            fail(f"`{name}` has the wrong shape.", expected=f"shape {list(shape)}",
                 found=f"shape {list(p.shape)}")
        if str(p.dtype) != "torch.float32":
            fail(f"`{name}` should hold float32 numbers.", found=show(p))
        if not p.requires_grad:
            fail(f"`{name}` does not require grad: training would never change it.",
                 found=show(p), hint="call .requires_grad_() on it once it holds its values")
        if not p.is_leaf:
            fail(f"`{name}` requires grad but is not a leaf, so its .grad stays None.",
                 found=f"made by {_node_name(p.grad_fn)}", misconception="not-a-leaf")
    for name in ("W1", "W2"):
        values = given[name].detach()._data
        if np.all(values == values.flat[0]):
            fail(f"Every entry of `{name}` is the same number.", found=show(given[name]),
                 hint="then every hidden unit computes the same thing and receives the same "
                 "gradient, so they stay copies of each other forever: start the weights "
                 "from random numbers (torch.randn), scaled by 0.5")
        if np.abs(values).max() > 3:
            fail(f"`{name}` holds large numbers: tanh saturates and learning stalls.",
                 found=show(given[name]), hint="scale torch.randn(...) by 0.5")
    for name in ("b1", "b2"):
        if np.any(given[name].detach()._data):
            fail(f"`{name}` should start at zeros.", found=show(given[name]))
