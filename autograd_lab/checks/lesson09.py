"""Checks of lesson 09, a node of your own.

Every expected value is computed here with the engine: the prediction from the lesson's own
expression (a cube inside 5 * cube), the custom Function against central differences of its
own forward.
"""
import numpy as np

from .. import autograd, exp, float64, log, sigmoid, tensor
from .._tensor import Tensor
from . import Prediction, attempt, check, fail, number_answer, returned, same_values, show
from . import ANY, Maybe, Outcome


# -- the prediction ------------------------------------------------------------------------
class _Cube(autograd.Function):
    """The lesson's Cube, which also keeps the grad_output it received."""
    seen = []

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        _Cube.seen.append(grad_output.item())
        (x,) = ctx.saved_tensors
        return grad_output * 3 * x ** 2


def _five_cubes():
    """x = 2, L = 5 * Cube.apply(x), L.backward(): (grad_output at the cube, x.grad)."""
    _Cube.seen = []
    x = tensor(2.0, requires_grad=True)
    (5 * _Cube.apply(x)).backward()
    return _Cube.seen[0], x.grad.item()


@check
def grad_output_prediction(grad_output_seen, x_grad):
    """What CubeBackward receives inside L = 5 * cube(x), and x.grad, at x = 2."""
    __tracebackhide__ = True
    seen = number_answer("grad_output_seen", grad_output_seen)
    grad = number_answer("x_grad", x_grad)
    truth_seen, truth_grad = _five_cubes()
    local = truth_grad / truth_seen                 # 3 x**2: the cube's own derivative
    verdict = Prediction()
    if not np.isclose(seen, truth_seen):
        verdict.off(f"grad_output: you predicted {seen:g}.",
                    misconception="backward-ignores-grad-output" if np.isclose(seen, 1.0)
                    else None,
                    hint=None if np.isclose(seen, 1.0) else
                    "grad_output is dL/dz: what the multiplication by 5 sends back to z")
    if not np.isclose(grad, truth_grad):
        forgot = np.isclose(grad, local)
        verdict.off(f"x.grad: you predicted {grad:g}.",
                    misconception="backward-ignores-grad-output" if forgot else None,
                    hint=None if forgot else "x.grad = grad_output * dz/dx, with z = x**3")
    verdict.tell()


# -- the custom Function -------------------------------------------------------------------
def _apply(Softplus, x):
    """Probe side: Softplus.apply(x), as an Outcome."""
    return attempt(Softplus.apply, x)


def _backward_of(Softplus, x_values, v, dtype=None):
    """Probe side: x.grad after Softplus.apply(x).backward(v) on a fresh x, and what the
    two steps did (Outcomes)."""
    x = tensor(x_values, dtype=dtype, requires_grad=True)
    forward = _apply(Softplus, x)
    backward = None
    if not forward.raised and isinstance(forward.value, Tensor) \
            and forward.value.grad_fn is not None:
        backward = attempt(forward.value.backward, tensor(v, dtype=dtype))
    return forward, backward, x.grad


def _is_function_class(Softplus):
    return isinstance(Softplus, type) and issubclass(Softplus, autograd.Function)


_BASIC_X = [-1.0, 0.0, 2.0]
_BASIC_V = [1.0, -2.0, 0.5]         # not ones: a backward that forgets grad_output shows


def _saved(applied):
    """Probe side: how many tensors forward saved, None where it made nothing to ask (or
    reading them raised)."""
    if applied.raised or not isinstance(applied.value, Tensor) or not applied.value.grad_fn:
        return None
    found = attempt(lambda: len(applied.value.grad_fn.saved_tensors))
    return None if found.raised or type(found.value) is not int else found.value


def _softplus_basic(Softplus):
    """Probe: forward at x = [-1., 0., 2.], backward of the weights [1., -2., 0.5], and what
    forward saved."""
    if not _is_function_class(Softplus):
        return Softplus, None
    applied = _apply(Softplus, tensor(_BASIC_X, requires_grad=True))
    return Softplus, (applied, _backward_of(Softplus, _BASIC_X, _BASIC_V), _saved(applied))


#: what _backward_of returns: forward's Outcome, backward's (none when forward gave nothing
#: to go back through) and x.grad
_BACKWARD = (Outcome, Maybe(Outcome), Maybe(Tensor))


def _hidden_shape():
    """What _softplus_hidden returns: per hidden point, forward, backward and forward at each
    central-difference point; backward of each one-hot; what forward saved."""
    points = _hidden_points()
    steps = 2 * len(points[-1][0])
    return ANY, Maybe(([(Outcome, _BACKWARD, [Outcome] * steps)] * len(points),
                       [_BACKWARD] * len(points[-1][0]), Maybe(int)))


def _the_class(Softplus, found):
    __tracebackhide__ = True
    if found is not None:
        return
    if getattr(Softplus, "kind", None) != "class":
        fail("`Softplus` should be a class (class Softplus(torch.autograd.Function): ...).",
             found=show(Softplus))
    fail("`Softplus` should subclass torch.autograd.Function "
         "(with `import autograd_lab as torch`).", found=f"bases {list(Softplus._bases)}")


def _forward(outcome, shape):
    """The tensor Softplus.apply(x) returned, or a failure saying what went wrong."""
    __tracebackhide__ = True
    y = returned("Softplus.apply(x)", outcome)
    if not isinstance(y, Tensor) or tuple(y.shape) != tuple(shape):
        fail("Softplus.apply(x) should return one tensor shaped like x.", found=show(y))
    return y


def _gradient(result, shape):
    """x.grad after backward through Softplus, or a failure saying what went wrong."""
    __tracebackhide__ = True
    forward, backward, grad = result
    y = _forward(forward, shape)
    if y.grad_fn is None:
        fail("Softplus.apply(x) has no grad_fn: it was not recorded.", found=show(y))
    returned("backward through Softplus", backward,
             hint="backward(ctx, grad_output) returns one tensor: dL/dx, shaped like x")
    return grad


@check(probe=_softplus_basic, reply=lambda: (ANY, Maybe((Outcome, _BACKWARD, Maybe(int)))))
def softplus_basic(Softplus, found):
    """Forward values at x = [-1., 0., 2.], x.grad after y.backward([1., -2., 0.5]), and
    that forward saved what backward reads with ctx.save_for_backward."""
    __tracebackhide__ = True
    _the_class(Softplus, found)
    applied, backward, saved = found
    values = tensor(_BASIC_X)
    y = _forward(applied, values.shape)
    expected = log(1 + exp(values))
    if not same_values(y.detach()._data, expected._data):
        fail("Softplus.apply(x) should compute log(1 + exp(x)).", expected=repr(expected),
             found=show(y.detach()))
    v = tensor(_BASIC_V)
    _compare_grad(_gradient(backward, values.shape), v * sigmoid(values), values, v)
    _saved_something(saved)


def _saved_something(saved):
    __tracebackhide__ = True
    if not saved:
        fail("forward saved nothing with ctx.save_for_backward.",
             hint="ctx.save_for_backward(x) keeps x for backward and lets autograd check it "
             "was not changed in place since; read it back with ctx.saved_tensors")


def _compare_grad(grad, expected, x, v):
    """x.grad against the expected v^T J; the usual slips named."""
    __tracebackhide__ = True
    if not isinstance(grad, Tensor) or tuple(grad.shape) != tuple(x.shape):
        fail("x.grad after backward through Softplus should be a tensor shaped like x.",
             found=show(grad))
    found = grad.detach()._data
    if same_values(found, expected._data):
        return
    xs, vs = x._data.astype(np.float64), v._data.astype(np.float64)
    if same_values(found, 1 / (1 + np.exp(xs))) or same_values(found, vs / (1 + np.exp(xs))):
        fail("The gradient of log(1 + exp(x)) is off.", expected=repr(expected),
             found=show(grad), misconception="chain-rule-inner",
             hint="your backward takes the derivative of the outside, log(u) at "
             "u = 1 + exp(x), and stops there: what is the derivative of the inside?")
    if same_values(found, 1 / (1 + np.exp(-xs))):
        fail("backward returned the derivative alone, not grad_output times it.",
             expected=repr(expected), found=show(grad),
             misconception="backward-ignores-grad-output")
    fail("The gradient through Softplus does not match central differences of its forward.",
         expected=repr(expected), found=show(grad))


_EPS = 1e-6


def _hidden_points():
    """The hidden check's points x and weights v: float64, five each, three times."""
    rng = np.random.default_rng(6)
    return [(rng.uniform(-3, 3, size=5), rng.uniform(-2, 2, size=5)) for _ in range(3)]


def _steps(xs):
    """xs moved by +eps and -eps in one coordinate at a time: the points of the central
    differences, in the order (+e_0, -e_0, +e_1, ...)."""
    out = []
    for i in range(len(xs)):
        step = np.zeros(len(xs))
        step[i] = _EPS
        out += [xs + step, xs - step]
    return out


def _softplus_hidden(Softplus):
    """Probe: at each hidden point, the forward, the backward of v, and the forward at the
    central-difference points; then the backward of every one-hot (the Jacobian's rows, as
    gradcheck builds them) and how many tensors forward saved."""
    if not _is_function_class(Softplus):
        return Softplus, None
    found = []
    for xs, vs in _hidden_points():
        found.append((_apply(Softplus, tensor(xs, dtype=float64)),
                      _backward_of(Softplus, xs, vs, float64),
                      [_apply(Softplus, tensor(p, dtype=float64)) for p in _steps(xs)]))
    xs = _hidden_points()[-1][0]
    rows = [_backward_of(Softplus, xs, np.eye(len(xs))[i], float64) for i in range(len(xs))]
    applied = _apply(Softplus, tensor(xs, dtype=float64, requires_grad=True))
    return Softplus, (found, rows, _saved(applied))


@check(probe=_softplus_hidden, reply=lambda: _hidden_shape())
def softplus_hidden(Softplus, found):
    """A gradient check in float64: forward against log(1 + exp(x)), backward(v) against
    central differences of the learner's own forward, for random x and v; the whole Jacobian
    as gradcheck checks it; then what forward saved."""
    __tracebackhide__ = True
    _the_class(Softplus, found)
    points, rows, saved = found
    for (xs, vs), (applied, backward, stepped) in zip(_hidden_points(), points, strict=True):
        y = _forward(applied, xs.shape)
        if not same_values(y._data, np.log1p(np.exp(xs))):
            fail("Softplus.apply(x) should compute log(1 + exp(x)).",
                 expected=repr(log(1 + exp(tensor(xs, dtype=float64)))), found=show(y))
        x, v = tensor(xs, dtype=float64), tensor(vs, dtype=float64)
        grad = _gradient(backward, xs.shape)
        # v^T J by central differences of the learner's own forward, one input at a time
        # (softplus acts elementwise, but the check does not assume it)
        values = [_forward(o, xs.shape).detach()._data for o in stepped]
        numeric = np.array([vs @ (values[2 * i] - values[2 * i + 1]) / (2 * _EPS)
                            for i in range(len(xs))])
        _compare_grad(grad, tensor(numeric, dtype=float64), x, v)
    # the Jacobian both ways, with gradcheck's tolerances (row i: backward of e_i)
    xs = _hidden_points()[-1][0]
    analytic = np.array([_gradient(r, xs.shape).detach()._data for r in rows])
    values = [_forward(o, xs.shape).detach()._data for o in points[-1][2]]
    numeric = np.array([(values[2 * j] - values[2 * j + 1]) / (2 * _EPS)
                        for j in range(len(xs))]).T
    if not np.allclose(analytic, numeric, rtol=1e-3, atol=1e-5):
        fail("Softplus does not pass torch.autograd.gradcheck: its backward and central "
             "differences of its forward disagree.", found=f"x = {tensor(xs, dtype=float64)!r}")
    _saved_something(saved)
