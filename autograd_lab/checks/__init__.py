"""The course's checks: what a test cell calls to judge a learner's answer.

A check of an exercise returns nothing when the answer is right and raises :class:`CheckFailed`
when it is not, with a message in the lesson's words: what was checked, what was expected,
what was found, and, for the mistakes learners really make, which misconception it is::

    x.grad after your backward call is not dL/dx.
      expected: tensor([0.2000, 4.0000, 0.0060])
      found:    tensor([2., 8., 18.])
    Misconception [gradient-is-input]: `gradient` is not the input ...

The ``Misconception [id]:`` line is read by the grading tools, which count learners per id.

A check of a prediction fails only for an answer of the wrong kind (and then never says the
answer); a well-formed prediction passes, and its check prints whether it is right and which
misconception a wrong one shows (:class:`Prediction`).

Checks live here, not in the notebooks, so an answer cell cannot pass a test by rebinding a name
the test uses (``abs``, ``isinstance``, ``np``, ``torch``): a test cell imports what it calls,
and a check only uses names of its own module. An answer of the wrong kind (None, a list, a numpy
array, a tensor of the wrong shape) gets a plain message, never a traceback from in here.

Every check has two halves (``@check``): a *probe*, which runs where the learner's answers
live and hands back what the check needs of them (by default the answers themselves; for a
function, what it returned or raised on the check's own inputs), and a *judge*, which decides
on a description of that (``answers.py``: values, dtype, shape, flags, grad_fn names, never
the objects). In a learner's kernel both halves run there. In a graded run the kernel only
ever runs probes, asked for by the grader, and the judge runs in the grader: nothing the
learner's code does in its kernel can reach the verdict, and no expected value enters it.

A check run in a learner's own kernel notes what it said (``NOTED``): ``validate()``, in a
notebook's last cell, reads it to tell which exercises fail, where no Validate button is
(Colab, VS Code; ``notebook.py``, also ``python -m autograd_lab.checks validate NOTEBOOK``).

The engine never imports this package; ``lessonNN`` modules hold each lesson's checks.
"""
import contextlib
import functools
import hmac
import math
import os
import reprlib
import textwrap

import numpy as np

from .._tensor import Tensor
from .answers import Outcome, Remote, attempt, decode, describe, encode, rebuild

__all__ = ["ANY", "CheckFailed", "MISCONCEPTIONS", "Many", "Maybe", "Outcome", "Prediction",
           "Shape", "VerdictPending", "attempt", "called", "check", "conform", "fail",
           "flag_answer", "hidden", "hidden_failure", "is_function", "judging", "number_answer",
           "returned", "same_values", "show", "tensor_answer", "validate"]

#: In a graded run's kernel this is set (by the grader) to "grader": a check called there
#: raises VerdictPending instead of judging (the grader judges, outside).
VERDICTS_ENV = "AUTOGRAD_LAB_VERDICTS"


class _Judging:
    """What the grader tells the checks while it judges a notebook (``judging``, ``hidden``):
    the key a hidden test draws its inputs with, and whether the test running is hidden."""

    key = b"autograd-lab: drawn where no grader is judging"
    hidden = False
    drawn: dict = {}


JUDGING = _Judging()


@contextlib.contextmanager
def judging(key: bytes):
    """While the grader judges one submission: hidden tests draw their inputs with ``key``
    (the grader's, one per learner and lesson, never in the learner's hands), so no answer can
    be written for them in advance, and the same submission graded again draws the same."""
    saved = JUDGING.key, JUDGING.drawn
    JUDGING.key, JUDGING.drawn = key, {}
    try:
        yield
    finally:
        JUDGING.key, JUDGING.drawn = saved


@contextlib.contextmanager
def hidden():
    """While a hidden test runs: checks with ``draw=`` draw their inputs (``_drawn``)."""
    saved, JUDGING.hidden = JUDGING.hidden, True
    try:
        yield
    finally:
        JUDGING.hidden = saved


def _drawn(name):
    """The random numbers a hidden call of the check ``name`` draws its inputs from: one
    stream per call, from the judging key."""
    count = JUDGING.drawn[name] = JUDGING.drawn.get(name, 0) + 1
    digest = hmac.new(JUDGING.key, f"{name}/{count}".encode(), "sha256").digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "little"))


class CheckFailed(AssertionError):
    """A learner's answer is not right yet; the message says why.

    ``misconception``: the id of the misconception the message names, if any; ``check``: the
    name of the check that failed (set as the failure leaves it). The grader tells a learner
    no more than these two of a hidden test that failed (``hidden``)."""

    misconception = None
    check = None

    def _render_traceback_(self):
        # IPython (a notebook, Validate, `nbgrader validate`) calls this instead of formatting
        # the traceback: the learner's frames, the test cell's line first, and the message.
        # Without it IPython shows the frame that raised, here in the package, even though it
        # hides the others (__tracebackhide__): eight lines of the course's code, the `raise`
        # among them, that say nothing the message does not
        from IPython import get_ipython
        shell = get_ipython()
        if shell is None:
            return [f"{type(self).__name__}: {self}"]
        return shell.InteractiveTB.structured_traceback(type(self), self,
                                                        _outside_package(self.__traceback__))


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _outside_package(tb):
    """The traceback ``tb`` as far as its first frame in this package (a traceback of the
    frames that called the check: IPython's, the cell's)."""
    import types
    kept = []
    while tb is not None and not os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(
            _PACKAGE):
        kept.append(tb)
        tb = tb.tb_next
    outer = None
    for entry in reversed(kept):
        outer = types.TracebackType(outer, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return outer


class VerdictPending(CheckFailed):
    """Raised by a check in a graded run's kernel: the grader decides, outside the kernel.
    (What an honest kernel shows in every test cell of a graded run: it claims no points.)"""

    def _render_traceback_(self):
        # IPython shows this instead of formatting a traceback of its own, which takes 10 to
        # 30 ms a test cell and 0.1 s for the first (its imports): a graded kernel raises this
        # in every test cell, and the grader reads only this line of it, into its log
        return [f"{type(self).__name__}: {self}"]


def _pending(name):
    """What a check does in a graded run's kernel: it fails, the way a wrong answer fails, through
    the machinery every check uses (a comparison, ``fail``), so that an honest kernel claims no
    points for the cell. A kernel whose test cell claims points anyway has had that machinery
    changed (a check replaced, ``fail`` emptied, numpy's comparisons patched, an IPython hook,
    the execute handler wrapped): the grader, which judges outside, flags it."""
    __tracebackhide__ = True
    if same_values(0.0, 1.0) or np.isclose(0.0, 1.0) or np.allclose([0.0], [1.0]):
        return                  # (honestly never: a patched comparison lets the cell claim)
    fail(f"{name}: in a graded run this cell's verdict is decided by the grader, outside your "
         "kernel.", pending=True)


def _the_answers(*answers, **settings):
    """The default probe: the answers themselves, described."""
    return answers


#: what the checks said in this kernel, by the IPython cell they ran in (its index in ``In``):
#: ``{count: [(check name, None or what it raised), ...]}``; ``validate()`` reads it. The
#: latest MAX_NOTED cells are kept.
NOTED = {}
MAX_NOTED = 2000


def _note(name, error):
    """Keep what the check ``name`` said in the cell running now (in IPython only)."""
    import sys
    ipython = sys.modules.get("IPython")
    shell = ipython and ipython.get_ipython()
    history = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    if not isinstance(history, list):
        return
    count = len(history) - 1            # (the running cell's input is stored as it starts)
    said = None if error is None else f"{type(error).__name__}: {error}"
    NOTED.setdefault(count, []).append((name, said))
    while len(NOTED) > MAX_NOTED:
        del NOTED[next(iter(NOTED))]


# ---------------------------------------------------------------------------------------------
# the shape of a probe's reply, owned by the check
# ---------------------------------------------------------------------------------------------
#: any value at all: a learner's answer, whose kind the judge checks and names itself
ANY = object()


class Maybe:
    """None, or a value of shape ``item`` (a probe says None for an answer it could not
    call)."""

    def __init__(self, item):
        self.item = item


class Shape:
    """A shape of a lesson's own: ``expand(value)`` is the plain shape ``value`` must have (a
    list whose length depends on the value itself), after ``refuse(value)`` has said what is
    wrong with it as a whole, if anything."""

    def refuse(self, value):
        return None

    def expand(self, value):
        raise NotImplementedError


class Many(Shape):
    """A list of ``n`` items (any number when ``n`` is None), each of shape ``item``. (A
    Python list of shapes is a list of exactly those, in that order.)"""

    def __init__(self, item, n=None):
        self.item, self.n = item, n

    def refuse(self, value):
        return None if isinstance(value, list) else f"a {type(value).__name__}, not a list"

    def expand(self, value):
        return [self.item] * (len(value) if self.n is None else self.n)


def conform(value, shape, where="the reply"):
    """Raise Malformed (recorded) unless ``value`` has ``shape``: ANY; a class (an instance
    of it; an Outcome also holds an exception or none); a tuple of shapes (a tuple of that
    length, item by item); a list of shapes (a list, likewise); Maybe; a Shape (Many)."""
    __tracebackhide__ = True
    from .answers import malformed

    def refuse(what):
        raise malformed(f"{where} is {what}") from None

    if shape is ANY:
        return
    if isinstance(shape, Maybe):
        if value is not None:
            conform(value, shape.item, where)
        return
    if isinstance(shape, type):
        if shape is int and type(value) is bool or not isinstance(value, shape):
            refuse(f"a {type(value).__name__}, not a {shape.__name__}")
        if shape is Outcome and not (value.error is None
                                     or isinstance(value.error, BaseException)):
            refuse("an outcome whose error is not an exception")
        return
    if isinstance(shape, Shape):
        wrong = shape.refuse(value)
        if wrong:
            refuse(wrong)
        conform(value, shape.expand(value), where)
        return
    kind = type(shape)
    if kind in (tuple, list):
        if type(value) is not kind or len(value) != len(shape):
            size = f" of {len(value)}" if isinstance(value, (tuple, list)) else ""
            refuse(f"a {type(value).__name__}{size}, where a {kind.__name__} of "
                   f"{len(shape)} was asked for")
        for i, (item, part) in enumerate(zip(value, shape)):
            conform(item, part, f"item {i + 1} of {where}")
        return
    raise TypeError(f"not a shape: {shape!r}")


def check(judge=None, *, probe=None, reply=None, draw=None):
    """Make ``judge(*data, **settings)`` a check: called with the learner's answers (and
    keyword settings), it runs ``probe(*answers, **settings)`` where the answers live, and
    judges the description of the tuple the probe returned. A check judges values only: what
    the probe found of the answers, never the learner's code read as text.

    ``draw(rng, **settings)``: the settings a *hidden* call adds or replaces, drawn from
    ``rng`` (``_drawn``): inputs of the check's own making that no answer can know in
    advance, for the exercises about a method (the shortcut then gives a wrong value).
    Outside a hidden test (Validate, a visible test) the settings are the cell's own.

    ``reply(**settings)`` is the shape (``conform``) of what ``probe`` returns for those
    settings: a check with a probe of its own must say it. The check holds every reply to it
    before the judge reads any of it: a judge never trusts the length of a list it did not
    choose. (The default probe returns the answers: a tuple of that many, of any kind.)

    A check's settings are keyword arguments (``points=[1.0]``), literals in the test cell;
    its positional arguments are the learner's names."""
    if judge is None:
        return lambda judge: check(judge, probe=probe, reply=reply, draw=draw)
    if probe is not None and reply is None:
        raise TypeError(f"{judge.__name__}: a check with a probe of its own says the shape of "
                        "its reply (reply=)")
    probe = probe or _the_answers

    @functools.wraps(judge)
    def run(*answers, **settings):
        __tracebackhide__ = True
        if draw is not None and JUDGING.hidden:
            settings = {**settings, **draw(_drawn(judge.__name__), **settings)}
        remote = [isinstance(a, Remote) for a in answers]
        if any(remote):
            if not all(remote):
                raise TypeError(f"{judge.__name__}: a check's settings are keyword arguments")
            data = answers[0].request({
                "op": "probe", "check": f"{judge.__module__}:{judge.__name__}",
                "answers": [a.name for a in answers], "settings": describe(settings)})
            return decide(data, len(answers), settings)
        if os.environ.get(VERDICTS_ENV) == "grader":
            return _pending(judge.__name__)
        try:
            verdict = decide(rebuild(decode(encode(describe(probe(*answers, **settings))))),
                             len(answers), settings)
        except BaseException as error:
            _note(judge.__name__, error)
            raise
        _note(judge.__name__, None)
        return verdict

    def decide(data, count, settings):
        __tracebackhide__ = True
        shape = reply(**settings) if reply is not None else (ANY,) * count
        conform(data, shape, f"the reply to {judge.__name__}")
        try:
            return judge(*data, **settings)
        except CheckFailed as failure:
            failure.check = failure.check or judge.__name__
            raise

    run.probe, run.reply, run.draw = probe, reply, draw
    return run


#: Every misconception a check can name, with what the learner sees. The id is stable: the
#: grading report counts learners per id, across lessons.
MISCONCEPTIONS = {
    "gradient-is-input": (
        "`gradient` is not the input x. It is dL/dy: one weight per element of the OUTPUT y "
        "(how much the final loss changes with each y[i]). backward(x) weights each y[i] by x[i], "
        "so x.grad becomes x * dy/dx, not dy/dx."),
    "gradient-shape": (
        "`gradient` must have the OUTPUT's shape (y.shape), not the input's: it holds dL/dy, "
        "one number per element of y."),
    "vjp-is-jacobian": (
        "backward(v) does not store the Jacobian in x.grad. It stores ONE vector, v^T J: "
        "the rows of J weighted by v and added up. x.grad always has x's shape."),
    "jacobian-transposed": (
        "The rows and columns are swapped. Row i of the Jacobian J is dy[i]/dx: what "
        "backward(one_hot(i)) leaves in x.grad. Stacking those as columns gives J^T."),
    "implicit-scalar-only": (
        "Only a one-element output can call backward() without `gradient` (PyTorch then uses 1). "
        "For a vector output, choose v = dL/dy for the loss you mean: ones for L = y.sum(), "
        "ones/n for L = y.mean()."),
    "forgot-zero-grad": (
        ".grad accumulates: each backward ADDS to it. Without zeroing between passes "
        "(x.grad.zero_() or x.grad = None) the answer after k passes is k times too large."),
    "zeroed-too-often": (
        "Zeroing .grad between micro-batches throws away the earlier batches' gradients. "
        "To accumulate, zero once before the first batch and only after the update."),
    "microbatch-unscaled": (
        "Each micro-batch's loss is a mean over its own points, so adding k of their gradients "
        "gives k times the full batch's gradient. Scale each micro-batch loss by its share of "
        "the batch (batch_size / n, that is 1/k for k equal micro-batches)."),
    "nonleaf-grad": (
        "PyTorch fills .grad only on leaves (tensors you created with requires_grad=True). "
        "An intermediate result's .grad stays None unless you call .retain_grad() on it "
        "before backward."),
    "not-a-leaf": (
        "A tensor that requires grad is a leaf only if you created it; one an operation made "
        "(`... * 0.1`, `torch.randn(2, 16, requires_grad=True) * 0.5`) has a grad_fn and its "
        ".grad stays None. Create it with its final value, then set requires_grad."),
    "copy-in-graph": (
        "A copy made by an operation (w * 1, w + 0, w.clone()) is recorded like any result: it "
        "requires grad and has a grad_fn, so it is still part of the graph. w.detach() gives "
        "the same numbers with no history."),
    "grad-is-value": (
        "After backward, x.grad holds the derivative of the result with respect to x, at x's "
        "current value: how fast the result changes when x moves. It is neither the result's "
        "value nor x's."),
    "gradient-scales": (
        "The argument of backward is dL/dz for the quantity L you care about: the pass starts "
        "with it and every node multiplies by its own derivative, so every .grad is that "
        "starting value times dz/dx. z.backward() means z.backward(torch.tensor(1.))."),
    "elementwise-product": (
        "`*` between two tensors multiplies element by element (w[i] * w[i]); .sum() then adds "
        "the products. It is not the square of the sum."),
    "one-accumulator": (
        "Every leaf that requires grad has exactly one AccumulateGrad node, shared by every "
        "operation that uses the leaf: the gradients of all its uses meet there and are added "
        "into .grad."),
    "fan-out-sum": (
        "A tensor used twice (y * y) is an input of its consumer twice: the consumer's node "
        "returns one gradient for each use, and both go back to the node that made the "
        "tensor. That node's gradient is their SUM; one of them alone is one path's part."),
    "retain-graph-missing": (
        "backward frees the values the graph saved for the backward pass. A second backward "
        "through the same graph needs retain_graph=True on every call but the last."),
    "retain-graph-instead-of-zero": (
        "retain_graph=True keeps the graph's saved values alive; it does not reset .grad. "
        "The repeated passes still add up: zeroing .grad (or building a new graph each time) "
        "is the fix here."),
    "requires-grad-on-loss": (
        "Setting loss.requires_grad = True hides the error but cuts the loss off from the "
        "parameters: nothing reaches their .grad and the model never learns. The real fix is "
        "upstream: the parameters must require grad, and the loss must be computed from them "
        "outside no_grad."),
    "inplace-leaf-update": (
        "An update of a parameter must not be recorded: do it in place inside "
        "`with torch.no_grad():` (w -= lr * w.grad). Outside no_grad the in-place update raises, "
        "and w = w - lr * w.grad makes w a non-leaf whose .grad stays None."),
    "recursive-backward": (
        "A node's gradient is complete only after every path into it has delivered its part. "
        "Visiting nodes depth-first sends a gradient on too early; process nodes in topological "
        "order (every consumer before its producer) and sum what arrives."),
    "backward-ignores-grad-output": (
        "backward(ctx, grad_output) receives dL/d(output), not 1: it must return "
        "grad_output times d(output)/d(input) (the chain rule, one vector-Jacobian product). "
        "The derivative alone is right only when grad_output happens to be all ones."),
    "forward-difference": (
        "(f(x + h) - f(x)) / h is a forward difference: its error shrinks only like h. The "
        "central difference (f(x + h) - f(x - h)) / (2 h) looks both ways, and its error "
        "shrinks like h squared."),
    "finite-difference-step": (
        "A central difference steps h to each side, so the two points are 2 h apart: divide "
        "by 2 * h, and use the h you are given (too large, and curvature spoils the estimate; "
        "too small, and rounding does)."),
    "chain-rule-inner": (
        "The chain rule multiplies by the derivative of the inside too: for y = g(u(x)), "
        "dy/dx = g'(u(x)) * u'(x). Backward does exactly that, one node at a time."),
    "backward-returns-none": (
        "backward() returns None: it does not hand the derivative back, it adds it into the "
        ".grad of every leaf the result was computed from. Call it on its own line, then read "
        "the derivative from the leaf (t.grad)."),
    "data-not-detach": (
        "`.data` is the numbers without their history, but autograd does not see what is done "
        "through it: a change made through .data is not counted in the tensor's version, so "
        "backward cannot tell that a saved value changed and gives a wrong gradient without a "
        "word (lesson 06). Take numbers out of the graph with .detach(); change a parameter "
        "in place under `with torch.no_grad():`."),
    "saved-tensor-modified": (
        "A tensor that the graph saved for backward was changed in place afterwards, so the "
        "backward pass would use the wrong value: PyTorch refuses. Change a copy, or do the "
        "in-place change before the tensor is used."),
    "no-grad-freezes": (
        "torch.no_grad() does not freeze a parameter: it stops recording while the block "
        "runs and changes no tensor's requires_grad. Inside, w still requires grad; after the "
        "block, every operation on w is recorded again. To freeze w, call "
        "w.requires_grad_(False)."),
    "static-graph": (
        "Autograd records the operations that run, for the values at hand; it never sees the "
        "code around them. A Python `while` or `if` in the forward pass decides which "
        "operations run, so another input can record another graph (more nodes, the other "
        "branch), and backward differentiates the graph of that input."),
    "eval-freezes": (
        "model.eval() only sets the model's `training` flag to False, which layers such as "
        "dropout read to take their evaluation branch. Every operation is still recorded and "
        "every parameter still gets its gradient: to evaluate without a graph, add "
        "`with torch.no_grad():`; to freeze a parameter, p.requires_grad_(False)."),
    "detach-freezes": (
        "p.detach() does not change p: it returns a new tensor with p's numbers and no "
        "history, and p itself still requires grad. A name bound to that copy, or a copy "
        "thrown away, leaves the tensor the model uses as it was: freeze the tensor itself, "
        "p.requires_grad_(False)."),
    "hook-result-ignored": (
        "What a tensor hook returns replaces the gradient: the new tensor flows on to the "
        "nodes below (for a leaf, into .grad). To change a gradient, return the changed one; "
        "computing it inside the hook without returning it changes nothing."),
    "hook-returns-nothing": (
        "A hook that returns None leaves the gradient as it was: returning nothing is how a "
        "hook only looks (prints, records). Rebinding the argument (g = g * 10) inside it "
        "changes a local name, not the gradient."),
    "kink-gradient": (
        "Where a function has no derivative, backward neither raises nor gives nan: each "
        "operation's formula gives one value there, PyTorch's choice. relu and abs give 0 at 0, "
        "max() shares the gradient evenly among tied elements (max(dim) sends it to the one "
        "index it returns), and sqrt gives inf at 0."),
    "create-graph-forgotten": (
        "Without create_graph=True the gradient that autograd.grad returns is plain numbers: "
        "the backward pass that made it was not recorded, so it has no grad_fn and cannot be "
        "differentiated again (\"element 0 of tensors does not require grad\"). Pass "
        "create_graph=True to the grad call whose result you differentiate."),
}


def fail(what, expected=None, found=None, misconception=None, hint=None, pending=False):
    """Raise CheckFailed with the course's message layout (VerdictPending: ``pending``)."""
    __tracebackhide__ = True
    lines = [_wrap(what, first=len(f"{CheckFailed.__name__}: "))]
    if expected is not None:
        lines.append(_field("  expected: ", expected))
    if found is not None:
        lines.append(_field("  found:    ", found))
    if misconception is not None:
        lines.append(_wrap(f"Misconception [{misconception}]: {MISCONCEPTIONS[misconception]}"))
    if hint is not None:
        lines.append(_wrap(f"Hint: {hint}"))
    failure = (VerdictPending if pending else CheckFailed)("\n".join(lines))
    failure.misconception = misconception
    raise failure from None


def hidden_failure(check=None, misconception=None) -> CheckFailed:
    """What a learner is told of a hidden test that failed: which check, and the misconception
    it points to; never its inputs, what it expected or found, or anything made of them (the
    grader keeps those for the instructor)."""
    what = f"A hidden test failed: {check}." if check else "A hidden test failed."
    lines = [_wrap(what, first=len(f"{CheckFailed.__name__}: "))]
    if misconception in MISCONCEPTIONS:
        lines.append(_wrap(f"Misconception [{misconception}]: {MISCONCEPTIONS[misconception]}"))
    lines.append(_wrap("What it tried, expected and found stays with the grader: try your "
                       "answer on inputs of your own."))
    failure = CheckFailed("\n".join(lines))
    failure.check, failure.misconception = check, misconception
    return failure


class Prediction:
    """The verdict on a prediction, told rather than raised.

    A prediction earns its points for being committed before the cell that shows the answer:
    its check fails (``fail``) only for an answer of the wrong kind, or none, and then never
    says the answer. A well-formed prediction passes, and the check *prints* whether it is
    right and, part by part, what is off and which misconception that shows::

        Prediction [wrong]: committed (that earns its points), but not what happens.
        - z.is_leaf: you predicted True.
        Misconception [not-a-leaf]: A tensor that requires grad is a leaf only if ...
        Run the next cell, see what happens, and explain it.

    The ``Prediction [right|wrong]`` and ``Misconception [id]`` lines are read by the grading
    report, which counts wrong predictions per misconception next to the exercises.
    """

    def __init__(self):
        self.wrong = []

    def off(self, what, misconception=None, hint=None):
        """One part predicted wrong: ``what`` says which part and what the learner wrote."""
        self.wrong.append((what, misconception, hint))

    def tell(self):
        if not self.wrong:
            print("Prediction [right]: committed, and it is what happens. Run the next cell "
                  "to see it.")
            return
        lines = ["Prediction [wrong]: committed (that earns its points), but not what happens."]
        named = set()
        for what, misconception, hint in self.wrong:
            lines.append(_wrap(f"- {what}"))
            if misconception in named:
                lines.append(f"Misconception [{misconception}], as above.")
            elif misconception is not None:
                named.add(misconception)
                lines.append(_wrap(f"Misconception [{misconception}]: "
                                   f"{MISCONCEPTIONS[misconception]}"))
            if hint is not None:
                lines.append(_wrap(f"Hint: {hint}"))
        lines.append("Run the next cell, see what happens, and explain it.")
        print("\n".join(lines))


#: how wide a line of a message is: `nbgrader validate` shows a failing test's error indented
#: by 4 and cuts every line longer than its width, 90, less 3 (for "..."): 83 are shown whole
WIDTH = 80


def _wrap(text, first=0):
    """``text`` filled to lines that Validate shows whole. ``first``: the width of what comes
    before the first line (a failure's first line follows the exception's name,
    "CheckFailed: ")."""
    return textwrap.fill(text, width=WIDTH, initial_indent=" " * first,
                         subsequent_indent="  ", break_on_hyphens=False)[first:]


def _field(label, value):
    """``label`` and ``value`` (a tensor's lines kept as they are, under one another), a line
    too long for Validate filled to lines that are not."""
    lines = []
    for i, line in enumerate(str(value).split("\n")):
        line = (label if i == 0 else " " * len(label)) + line
        lines.append(line if len(line) <= WIDTH else textwrap.fill(
            line, width=WIDTH, subsequent_indent=" " * len(label), break_on_hyphens=False))
    return "\n".join(lines)


#: how a learner's list, dict or object is shown in a message: shortened at every level (a
#: tensor prints itself, summarised past 1,000 elements as PyTorch does)
_SHORT = reprlib.Repr()
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxset = _SHORT.maxdict = 20
_SHORT.maxstring = _SHORT.maxother = 300
_SHORT.maxlevel = 4


def show(value):
    """A short description of any answer, for 'found:' lines."""
    if value is None:
        return "None"
    if isinstance(value, Tensor):
        extra = [f"shape {list(value.shape)}"]
        if value.dtype.is_floating_point and str(value.dtype) != "torch.float32":
            extra.append(str(value.dtype))
        return f"{value!r} ({', '.join(extra)})"
    if isinstance(value, np.ndarray):
        return f"a numpy array {np.array2string(value, precision=4)} (a Tensor was asked for)"
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} {_SHORT.repr(value)} (a Tensor was asked for)"
    if type(value).__module__.startswith("torch"):
        return (f"{_SHORT.repr(value)} (a real PyTorch object: use autograd_lab, "
                "`import autograd_lab as torch`)")
    return f"{_SHORT.repr(value)} ({type(value).__name__})"


def tensor_answer(name, value, shape=None, requires_grad=None, floating=True):
    """Check an answer is a Tensor of the right kind; return its values as a float64 array.

    ``requires_grad=False`` also accepts a tensor that requires grad only if it is detached
    first, and says so: a number checked against a graph still attached is a learner's slip.
    """
    __tracebackhide__ = True
    if not isinstance(value, Tensor):
        fail(f"`{name}` should be a Tensor.", found=show(value),
             hint="build it with torch.tensor(...), or from tensors you already have")
    if shape is not None and tuple(value.shape) != tuple(shape):
        fail(f"`{name}` has the wrong shape.", expected=f"shape {list(shape)}",
             found=f"shape {list(value.shape)}: {value!r}")
    if floating and not value.dtype.is_floating_point:
        fail(f"`{name}` should hold floating-point numbers.", found=show(value),
             hint="write the numbers with a decimal point (1.0, not 1), or pass dtype=torch.float32")
    if requires_grad is not None and value.requires_grad != requires_grad:
        if requires_grad:
            fail(f"`{name}` should require grad.", found=show(value),
                 hint="create it with requires_grad=True")
        fail(f"`{name}` should be a plain tensor of numbers, not part of a graph.",
             found=show(value), hint="use .detach() (or take it from .grad) before answering")
    return np.asarray(value.detach()._data, dtype=np.float64)


def flag_answer(name, value):
    """Check an answer is True or False; return it."""
    __tracebackhide__ = True
    if not isinstance(value, bool):
        fail(f"`{name}` should be True or False.", found=show(value))
    return value


def number_answer(name, value):
    """Check an answer is a real number (a Python number or a one-element tensor)."""
    __tracebackhide__ = True
    if isinstance(value, Tensor):
        if value.numel() != 1:
            fail(f"`{name}` should be a single number.", found=show(value))
        return float(value.detach().item())
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        fail(f"`{name}` should be a number.", found=show(value))
    if not math.isfinite(float(value)):
        fail(f"`{name}` should be a finite number.", found=show(value))
    return float(value)


def called(fn, *args_lists):
    """A probe's calls of a learner's function: ``(fn, [Outcome per args], )``, or
    ``(fn, None)`` when ``fn`` cannot be called (the judge says so with ``returned``)."""
    if not callable(fn):
        return fn, None
    return fn, [attempt(fn, *args) for args in args_lists]


def is_function(name, fn, outcomes, signature):
    """Fail unless the learner's ``name`` was a function the probe could call."""
    __tracebackhide__ = True
    if outcomes is None:
        fail(f"`{name}` should be a function ({signature}).", found=show(fn))


def returned(call, outcome, hint=None):
    """What one call of a learner's function returned; a failure saying what it raised (the
    learner's bug, in one line: no traceback of ours) when it raised."""
    __tracebackhide__ = True
    if outcome.raised:
        error = outcome.error
        fail(f"`{call}` raised {type(error).__name__}: {error}", hint=hint)
    return outcome.value


def same_values(found, expected, rtol=1e-4, atol=1e-6):
    """Whether two arrays (or numbers) agree to float32 precision, shapes included."""
    found, expected = np.asarray(found, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    return found.shape == expected.shape and bool(np.allclose(found, expected, rtol, atol))


def as_tensor_text(values):
    """How PyTorch would print these float32 values (for 'expected:' lines)."""
    from .._tensor import tensor
    return repr(tensor(np.asarray(values, dtype=np.float32)))


from .notebook import validate  # noqa: E402  (it reads NOTED, above)
