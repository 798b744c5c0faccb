"""Checks of lesson 03, vector outputs and weighted backward.

Every expected value is computed here with the engine from the lesson's own expressions: the
gradient ``v`` a loss sends into ``y`` comes from running that loss backward (``y.retain_grad()``),
never from numbers typed in.
"""
import numpy as np

from .. import ones_like, tensor
from . import Prediction, as_tensor_text, check, fail, same_values, show, tensor_answer


def _square():
    """Lesson section 3: x = [1, 2], y = x**2."""
    x = tensor([1.0, 2.0], requires_grad=True)
    return x, x ** 2


def _pairs():
    """The exercise's function: y[i] = x[i] * x[i+1], three outputs from four inputs."""
    x = tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    return x, x[:3] * x[1:]


def _backward(make, v):
    """x.grad after make()'s y.backward(v), on a fresh graph."""
    x, y = make()
    y.backward(v)
    return x.grad._data


# ---------------------------------------------------------------------------------------------
# predictions
# ---------------------------------------------------------------------------------------------
@check
def x_as_gradient_prediction(predicted_grad):
    """x = [1, 2], y = x**2, y.backward(x): what lands in x.grad."""
    __tracebackhide__ = True
    found = tensor_answer("predicted_grad", predicted_grad, floating=False)
    x, y = _square()
    expected = _backward(_square, x.detach())
    verdict = Prediction()
    what = f"x.grad after y.backward(x): you predicted {as_tensor_text(found)}."
    if found.shape != tuple(x.shape):
        verdict.off(what, hint="x.grad always has x's shape: here two numbers")
    elif same_values(found, _backward(_square, ones_like(y))):
        verdict.off(what + " That is dy/dx, what backward(ones) gives; backward(x) weights "
                    "each y[i] by x[i] instead.", misconception="gradient-is-input")
    elif same_values(found, y.detach()._data):
        verdict.off(what, hint="those are the values of y itself; x.grad holds v[i] * "
                    "dy[i]/dx[i] here")
    elif not same_values(found, expected):
        verdict.off(what, hint="backward(v) gives the sum over i of v[i] * dy[i]/dx; here "
                    "v = x and dy[i]/dx[i] = 2 x[i]")
    verdict.tell()


# ---------------------------------------------------------------------------------------------
# choosing v = dL/dy
# ---------------------------------------------------------------------------------------------
def _loss_gradients(loss_of):
    """dL/dy and dL/dx for L = loss_of(y) on the exercise's y: both by running L backward."""
    x, y = _pairs()
    y.retain_grad()
    loss_of(y).backward()
    return x, y, y.grad._data, x.grad._data


def _check_weights(name, v, loss_text, loss_of):
    __tracebackhide__ = True
    x, y, want, dldx = _loss_gradients(loss_of)
    found = tensor_answer(name, v)
    if found.shape == tuple(x.shape) and found.shape != tuple(y.shape):
        if same_values(found, x.detach()._data):
            fail(f"`{name}` is x. The weights of backward are not the input.",
                 expected=f"dL/dy for L = {loss_text}: shape {list(y.shape)}, like y",
                 found=show(v), misconception="gradient-is-input")
        what = ("This is dL/dx, what backward should LEAVE in x.grad; `gradient` is dL/dy. "
                if same_values(found, dldx) else "")
        fail(f"`{name}` has x's shape {list(x.shape)}. {what}y.backward({name}) would raise "
             f"'Mismatch in shape'.", expected=f"shape {list(y.shape)}, like y",
             found=show(v), misconception="gradient-shape")
    if found.shape != tuple(y.shape):
        fail(f"`{name}` must have y's shape: one weight per element of y.",
             expected=f"shape {list(y.shape)}", found=show(v), misconception="gradient-shape")
    if same_values(found, want):
        return
    got = _backward(_pairs, tensor(found.astype(np.float32)))
    ones = same_values(found, np.ones(found.shape))
    fail(f"y.backward({name}) does not leave dL/dx in x.grad for L = {loss_text}.",
         expected=f"x.grad = {as_tensor_text(dldx)}", found=f"x.grad = {as_tensor_text(got)}, "
         f"from {name} = {v!r}",
         misconception="implicit-scalar-only" if ones and "mean" in loss_text else None,
         hint=f"{name}[i] should be dL/dy[i]: how much L grows when y[i] grows by 1")


@check
def weighted_loss_weights(v_weighted):
    __tracebackhide__ = True
    _check_weights("v_weighted", v_weighted, "3 * y[0] + y[2]", lambda y: 3 * y[0] + y[2])


@check
def mean_loss_weights(v_mean):
    __tracebackhide__ = True
    _check_weights("v_mean", v_mean, "y.mean()", lambda y: y.mean())
