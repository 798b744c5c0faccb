"""Wrong answers learners give in lesson 04, the Jacobian, row by row."""
from course import Predicted, Wrong

# jacobian_by_rows, as learners write it: the solution's loop with one thing changed
_LOOP = '''def jacobian_by_rows(f, x):
    x = x.detach().requires_grad_(True)
    y = f(x)
    rows = []
    for i in range(len(y)):
        one_hot = torch.zeros_like(y)
        one_hot[i] = 1.0
{reset}        y.backward(one_hot, retain_graph=True)
        rows.append({row})
{after}    return {result}
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
    Wrong("mm-columns", {"predict_mm": "mm_grad_prediction = torch.tensor([[6.0, 10.0]])"},
          misconception="jacobian-transposed", predicted=True),
    Wrong("mm-as-matrix",
          {"predict_mm": "mm_grad_prediction = torch.tensor([[3.0, 9.0], [2.0, 4.0]])"},
          misconception="vjp-is-jacobian", predicted=True),
]

PREDICTIONS = [
    Predicted("predict_mm", "mm_grad_prediction = [[1.0, 3.0]]", ("[[ 5., 13.]]", "13")),
]
