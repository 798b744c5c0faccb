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
]

PREDICTIONS = [
    # the names in one string
    Predicted("predict_next", 'add_next = "a multiplication and a leaf"\nsame_accumulator = True',
              ("MulBackward0", "AccumulateGrad")),
]
