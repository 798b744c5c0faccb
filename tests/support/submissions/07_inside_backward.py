"""Wrong answers learners give in lesson 07, inside backward."""
from course import Predicted, Wrong

# the walk by hand through s = (y * y).sum(), with one slip each
_WALK = """def by_hand(s):
    mul = s.grad_fn.next_functions[0][0]
    from_sum = s.grad_fn(torch.tensor(1.0))
    first, second = mul(from_sum)
    grad_y = {grad_y}
    product = mul.next_functions[0][0]
    grad_x, grad_M = product(grad_y)
{after}    return grad_y, grad_x
"""


def _walk(grad_y="first + second", after=""):
    return {"by_hand": _WALK.format(grad_y=grad_y, after=after)}


WRONG = [
    Wrong("one-use-only", _walk(grad_y="first"), misconception="fan-out-sum"),
    Wrong("grad-x-is-grad-y", _walk(after="    grad_x = grad_y\n"),
          says="not gone through MmBackward0"),
    # the engine's walk, on the lesson's own x and y
    Wrong("by-the-engine", {"by_hand": "def by_hand(s):\n"
                                       "    return torch.autograd.grad(s, [y, x], retain_graph=True)"},
          says="used the engine's own backward"),
    Wrong("grad-as-list", _walk(after="    grad_x = grad_x.tolist()\n"), says="should be a Tensor"),
    # the lesson's numbers written in (its y and x), right for the lesson's s only
    Wrong("typed-the-numbers", {"by_hand": "def by_hand(s):\n"
                                           "    return (torch.tensor([[10., 16.]]),\n"
                                           "            torch.tensor([[42., 94.]]))"},
          hidden_only=True),
    Wrong("next-reversed", {"predict_next": 'add_next = ["AccumulateGrad", "MulBackward0"]\n'
                                            'same_accumulator = True'},
          says="the order of the inputs", predicted=True),
    Wrong("accumulator-per-use", {"predict_next": 'add_next = ["MulBackward0", '
                                                  '"AccumulateGrad"]\nsame_accumulator = False'},
          misconception="one-accumulator", predicted=True),
    # plainly wrong: the right kind, the wrong numbers
    Wrong("plain-grad-x-tripled", _walk(after="    grad_x = 3 * grad_x\n"),
          says="`grad_x` on the lesson's s is not ds/dx."),
]

PREDICTIONS = [
    # the names in one string
    Predicted("predict_next", 'add_next = "a multiplication and a leaf"\nsame_accumulator = True',
              ("MulBackward0", "AccumulateGrad")),
]

# answers of the wrong kind and slips that reach the checks' other failures: run in
# process by tests/checks/test_wrong_answers.py, not graded as a class
REFUSED = [
    Wrong("same-accumulator-as-text", {"predict_next": 'add_next = ["MulBackward0", "AccumulateGrad"]\n'
                                                       'same_accumulator = "yes"'},
          says="`same_accumulator` should be True or False."),
    Wrong("by-hand-not-a-function", {"by_hand": "by_hand = None"},
          says="`by_hand` should be a function by_hand(s)"),
    Wrong("mul-called-twice", {"by_hand": _WALK.format(grad_y="first + second", after="").replace(
        "    first, second = mul(from_sum)\n",
        "    first, _ = mul(from_sum)\n    _, second = mul(from_sum)\n")},
          says="by_hand called a node a second time", misconception="fan-out-sum"),
    Wrong("second-edge-of-the-sum", {"by_hand": _WALK.format(grad_y="first + second", after="")
                                     .replace("s.grad_fn.next_functions[0][0]",
                                              "s.grad_fn.next_functions[1][0]")},
          says="by_hand raised IndexError on the lesson's s"),
    Wrong("grad-y-product", _walk(grad_y="first * second"),
          says="`grad_y` on the lesson's s is not ds/dy."),
    Wrong("returns-grad-x-only", {"by_hand": _WALK.format(grad_y="first + second", after="")
                                  .replace("return grad_y, grad_x", "return grad_x")},
          says="by_hand(s) should return a pair (grad_y, grad_x) on the lesson's s."),
    Wrong("product-of-one-use", {"by_hand": _WALK.format(grad_y="first + second", after="")
                                 .replace("product(grad_y)", "product(first)")},
          says="`grad_x` on the lesson's s is half of ds/dx", misconception="fan-out-sum"),
]
