"""Wrong answers learners give in lesson 04, the Jacobian, row by row."""
from course import Predicted, Wrong

# jacobian_by_rows, as learners write it: the solution's loop with one thing changed
_LOOP = '''def jacobian_by_rows(f, x):
    x = x.detach().requires_grad_(True)
    rows = []
    for i in range(len(f(x))):
        y = f(x)
        one_hot = torch.zeros_like(y)
        one_hot[i] = 1.0
{reset}        y.backward(one_hot)
        rows.append({row})
{after}    return {result}
'''

# the seed's way, one graph and retain_graph=True: right for the lesson's function, refused by
# a function whose graph goes backward once
ONE_GRAPH = '''def jacobian_by_rows(f, x):
    x = x.detach().requires_grad_(True)
    y = f(x)
    rows = []
    for i in range(len(y)):
        one_hot = torch.zeros_like(y)
        one_hot[i] = 1.0
        x.grad = None
        y.backward(one_hot, retain_graph=True)
        rows.append(x.grad)
    return torch.stack(rows)
'''

# the engine's own Jacobian, bound under another name before any check can refuse it
RENAMED = '''from autograd_lab.autograd.functional import jacobian as whole_jacobian


def jacobian_by_rows(f, x):
    return whole_jacobian(f, x)
'''

# the visible cases' Jacobians written in
TYPED = '''def jacobian_by_rows(f, x):
    if len(x) == 4:
        return torch.tensor([[2., 1., 0., 0.], [0., 3., 2., 0.], [0., 0., 4., 3.]])
    return torch.tensor([[1., -2., 0.5], [3., 1., -1.]])
'''


def _jacobian(reset="        x.grad = None\n", row="x.grad", after="", result="torch.stack(rows)"):
    return {"jacobian_by_rows": _LOOP.format(reset=reset, row=row, after=after, result=result)}


WRONG = [
    Wrong("columns-not-rows", _jacobian(result="torch.stack(rows, dim=1)"),
          misconception="jacobian-transposed"),
    Wrong("one-backward-with-ones", {"jacobian_by_rows": "def jacobian_by_rows(f, x):\n"
                                                         "    x = x.detach().requires_grad_(True)\n"
                                                         "    y = f(x)\n"
                                                         "    y.backward(torch.ones_like(y))\n"
                                                         "    return x.grad"},
          misconception="vjp-is-jacobian"),
    Wrong("never-zeroes", _jacobian(reset="", row="x.grad.clone()"),
          misconception="forgot-zero-grad"),
    Wrong("rows-alias-grad", _jacobian(reset="", row="x.grad", after="        x.grad.zero_()\n"),
          says="is the same vector"),
    Wrong("rows-as-a-list", _jacobian(result="rows"), says="not one Tensor"),
    Wrong("one-graph-retained", {"jacobian_by_rows": ONE_GRAPH},
          says="went backward through one graph of f twice"),
    Wrong("jacobian-renamed", {"jacobian_by_rows": RENAMED},
          says="went backward through one graph of f twice"),
    Wrong("typed-jacobians", {"jacobian_by_rows": TYPED}, hidden_only=True),
    Wrong("returns-a-number", _jacobian(result="3.0"), says="should be a Tensor"),
    Wrong("mm-columns", {"predict_mm": "mm_grad_prediction = torch.tensor([[6.0, 10.0]])"},
          misconception="jacobian-transposed", predicted=True),
    Wrong("mm-as-matrix",
          {"predict_mm": "mm_grad_prediction = torch.tensor([[3.0, 9.0], [2.0, 4.0]])"},
          misconception="vjp-is-jacobian", predicted=True),
    # plainly wrong: the right kind, the wrong numbers
    Wrong("plain-doubled", {"jacobian_by_rows": "def jacobian_by_rows(f, x):\n    x = x.detach().requires_grad_(True)\n    rows = []\n    for i in range(len(f(x))):\n        y = f(x)\n        one_hot = torch.zeros_like(y)\n        one_hot[i] = 1.0\n        x.grad = None\n        y.backward(one_hot)\n        rows.append(x.grad)\n    return 2 * torch.stack(rows)"},
          says="is not the Jacobian of f at x."),
]

PREDICTIONS = [
    Predicted("predict_mm", "mm_grad_prediction = [[1.0, 3.0]]", ("[[ 5., 13.]]", "13")),
]

# answers of the wrong kind and slips that reach the checks' other failures: run in
# process by tests/checks/test_wrong_answers.py, not graded as a class
REFUSED = [
    Wrong("functional-jacobian", {"jacobian_by_rows": "def jacobian_by_rows(f, x):\n"
                                                     "    return torch.autograd.functional.jacobian(f, x)"},
          says="called torch.autograd.functional.jacobian"),
    Wrong("no-return", {"jacobian_by_rows": "def jacobian_by_rows(f, x):\n    x = x.detach().requires_grad_(True)\n    rows = []\n    for i in range(len(f(x))):\n        y = f(x)\n        one_hot = torch.zeros_like(y)\n        one_hot[i] = 1.0\n        x.grad = None\n        y.backward(one_hot)\n        rows.append(x.grad)\n    torch.stack(rows)"}, says="returned None."),
    Wrong("last-row-left-out", {"jacobian_by_rows": "def jacobian_by_rows(f, x):\n    x = x.detach().requires_grad_(True)\n    rows = []\n    for i in range(len(f(x))):\n        y = f(x)\n        one_hot = torch.zeros_like(y)\n        one_hot[i] = 1.0\n        x.grad = None\n        y.backward(one_hot)\n        rows.append(x.grad)\n    return torch.stack(rows[:-1])"}, says="has the wrong shape: J has one row per element of y = f(x)"),
    Wrong("jacobian-a-tensor", {"jacobian_by_rows": "jacobian_by_rows = torch.eye(3)"},
          says="`jacobian_by_rows` should be a function of (f, x)."),
    Wrong("jacobian-in-a-graph", {"jacobian_by_rows": "def jacobian_by_rows(f, x):\n    x = x.detach().requires_grad_(True)\n    rows = []\n    for i in range(len(f(x))):\n        y = f(x)\n        one_hot = torch.zeros_like(y)\n        one_hot[i] = 1.0\n        x.grad = None\n        y.backward(one_hot)\n        rows.append(x.grad)\n    return torch.stack(rows).requires_grad_()"},
          says="should be a plain tensor of numbers, not part of a graph."),
]
