"""Wrong answers learners give in lesson 00, start here."""
from course import Predicted, Wrong

WRONG = [
    Wrong("a-list", {"make_w": "w = [2.0, -1.0, 3.0]"}, says="`w` should be a Tensor."),
    Wrong("a-numpy-array", {"make_w": "import numpy as np\nw = np.array([2.0, -1.0, 3.0])"},
          says="a numpy array"),
    Wrong("int-tensor", {"make_w": "w = torch.tensor([2, -1, 3])"},
          says="`w` should hold floating-point numbers."),
    Wrong("int-tensor-requires-grad", {"make_w": "w = torch.tensor([2, -1, 3], requires_grad=True)"},
          says="Only Tensors of floating point and complex dtype can require gradients"),
    Wrong("forgot-requires-grad", {"make_w": "w = torch.tensor([2.0, -1.0, 3.0])"},
          says="`w` should require grad."),
    Wrong("scaled-after-requires-grad", {"make_w": "w = torch.tensor([1.0, -0.5, 1.5], "
                                                   "requires_grad=True) * 2"},
          misconception="not-a-leaf"),
    Wrong("real-pytorch", {"make_w": "import torch\n"
                                     "w = torch.tensor([2.0, -1.0, 3.0], requires_grad=True)"},
          says="a real PyTorch object"),
    Wrong("a-row-not-a-vector", {"make_w": "w = torch.tensor([[2.0, -1.0, 3.0]], requires_grad=True)"},
          says="`w` has the wrong shape."),
    # (2 - 1 + 3) ** 2: the product read as the square of the sum
    Wrong("squared-the-sum", {"predict_total": "predicted_total = 16.0"},
          misconception="elementwise-product", predicted=True),
    # plainly wrong: the right kind, the wrong numbers
    Wrong("plain-other-numbers", {"make_w": "w = torch.tensor([3.0, -1.0, 2.0], requires_grad=True)"},
          says="`w` should hold 2, -1 and 3, in that order."),
]

PREDICTIONS = [
    # the sum of squares written as an expression, in quotes
    Predicted("predict_total", "predicted_total = '4 + 1 + 9'", ("14",)),
]

# answers of the wrong kind and slips that reach the checks' other failures: run in
# process by tests/checks/test_wrong_answers.py, not graded as a class
REFUSED = [
    Wrong("total-as-a-vector", {"predict_total": "predicted_total = torch.tensor([4.0, 1.0, 9.0])"},
          says="`predicted_total` should be a single number."),
    Wrong("total-infinite", {"predict_total": "predicted_total = float('inf')"},
          says="`predicted_total` should be a finite number."),
]
