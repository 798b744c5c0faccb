"""Wrong answers learners give in lesson 07, inside backward."""
from course import Predicted, Wrong

# the walk by hand through s = (y * y).sum(), with one slip each
_WALK = """mul = s.grad_fn.next_functions[0][0]
from_sum = s.grad_fn(torch.tensor(1.0))
first, second = mul(from_sum)
grad_y = {grad_y}
grad_x, grad_M = y.grad_fn(grad_y)
{after}"""


def _walk(grad_y="first + second", after=""):
    return {"by_hand": _WALK.format(grad_y=grad_y, after=after)}


WRONG = [
    Wrong("one-use-only", _walk(grad_y="first"), misconception="fan-out-sum"),
    Wrong("grad-x-is-grad-y", _walk(after="grad_x = grad_y"), says="not gone through MmBackward0"),
    Wrong("by-the-engine", {"by_hand": "y.retain_grad()\ns.backward()\ngrad_y = y.grad\n"
                                       "grad_x = x.grad"}, says="the engine did the walk"),
    Wrong("grad-as-list", _walk(after="grad_x = grad_x.tolist()"), says="should be a Tensor"),
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
