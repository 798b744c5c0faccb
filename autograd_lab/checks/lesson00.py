"""Checks of lesson 00, start here: one tensor that requires grad, and one prediction.

Expected values are computed with the engine from the lesson's own expressions.
"""
import numpy as np

from .. import tensor
from . import Prediction, check, fail, number_answer, same_values, show, tensor_answer


def _lesson_w():
    return tensor([2.0, -1.0, 3.0], requires_grad=True)


@check
def first_tensor(w):
    """w: the floats 2, -1, 3, a leaf that requires grad."""
    __tracebackhide__ = True
    expected = _lesson_w()
    values = tensor_answer("w", w, shape=tuple(expected.shape), requires_grad=True)
    if not w.is_leaf:
        fail("`w` requires grad but is not a leaf, so w.grad would stay None.",
             found=f"{w!r}, made by {type(w.grad_fn).__name__}", misconception="not-a-leaf")
    if not same_values(values, expected.detach()._data):
        fail("`w` should hold 2, -1 and 3, in that order.", expected=repr(expected),
             found=show(w))


@check
def total_prediction(predicted_total):
    """The lesson's (w * w).sum(): the sum of the squares."""
    __tracebackhide__ = True
    found = number_answer("predicted_total", predicted_total)
    w = _lesson_w().detach()
    verdict = Prediction()
    if np.isclose(found, w.sum().item() ** 2):
        verdict.off(f"You predicted {found:g}: the square of the sum.",
                    misconception="elementwise-product")
    elif np.isclose(found, w.sum().item()):
        verdict.off(f"You predicted {found:g}: that is w.sum().",
                    hint="each element is multiplied by itself before the sum")
    elif not np.isclose(found, (w * w).sum().item()):
        verdict.off(f"You predicted {found:g}.", hint="square 2, -1 and 3, then add")
    verdict.tell()
