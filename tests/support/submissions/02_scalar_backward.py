"""Wrong answers learners give in lesson 02, scalar backward."""
from course import Predicted, Wrong

WRONG = [
    # first with a misconception: the Validate test expects the visible test to name it
    Wrong("forward-difference", {"numerical_derivative": "def numerical_derivative(f, x, h):\n"
                                                         "    return (f(x + h) - f(x)) / h"},
          misconception="forward-difference"),
    Wrong("divides-by-h", {"numerical_derivative": "def numerical_derivative(f, x, h):\n"
                                                   "    return (f(x + h) - f(x - h)) / h"},
          misconception="finite-difference-step"),
    Wrong("ignores-h", {"numerical_derivative": "def numerical_derivative(f, x, h):\n"
                                                "    h = 1e-5\n"
                                                "    return (f(x + h) - f(x - h)) / (2 * h)"},
          misconception="finite-difference-step"),
    Wrong("backward-twice", {"autograd_derivative": "def derivative(f, x0):\n"
                                                    "    t = torch.tensor(x0, requires_grad=True)\n"
                                                    "    for attempt in range(2):  # ran twice\n"
                                                    "        f(t).backward()\n"
                                                    "    return t.grad"},
          misconception="forgot-zero-grad"),
    Wrong("grad-of-the-result", {"autograd_derivative": "def derivative(f, x0):\n"
                                                        "    t = torch.tensor(x0, requires_grad=True)\n"
                                                        "    y = f(t)\n"
                                                        "    y.backward()\n"
                                                        "    return y.grad"},
          misconception="nonleaf-grad"),
    Wrong("scaled-leaf", {"autograd_derivative": "def derivative(f, x0):\n"
                                                 "    t = torch.tensor(x0 * 10, requires_grad=True) * 0.1\n"
                                                 "    f(t).backward()\n"
                                                 "    return t.grad.item()"},
          misconception="nonleaf-grad"),
    # backward() taken to return the derivative: it returns None
    Wrong("backward-returned", {"autograd_derivative": "def derivative(f, x0):\n"
                                                       "    t = torch.tensor(x0, requires_grad=True)\n"
                                                       "    return f(t).backward()"},
          misconception="backward-returns-none"),
    # the visible cases' numbers written in: the hidden test's functions are drawn at grading
    Wrong("typed-the-numbers", {"autograd_derivative": "def derivative(f, x0):\n"
                                                       "    return {2.0: 29.0, 1.5: 6.75}[x0]"},
          hidden_only=True),
    Wrong("value-not-derivative", {"autograd_derivative": "def derivative(f, x0):\n"
                                                          "    return f(torch.tensor(x0)).item()"},
          misconception="grad-is-value"),
    Wrong("returns-text", {"autograd_derivative": "def derivative(f, x0):\n"
                                                  "    return 'the slope of f'"},
          says="should be a number."),
    Wrong("outer-derivative-only", {"chain_rule": "def dy_dx(x):\n"
                                                  "    return 3 * (x ** 2 + 1) ** 2"},
          misconception="chain-rule-inner"),
    # the inside's derivative 2x written as 2, or as x
    Wrong("inner-derivative-2", {"chain_rule": "def dy_dx(x):\n"
                                               "    return 3 * (x ** 2 + 1) ** 2 * 2"},
          says="multiplies the outer derivative by 2"),
    Wrong("inner-derivative-x", {"chain_rule": "def dy_dx(x):\n"
                                               "    return 3 * (x ** 2 + 1) ** 2 * x"},
          says="multiplies the outer derivative by x"),
    Wrong("seed-ignored", {"predict_seed": "predicted_grad_10 = 3.0"},
          misconception="gradient-scales", predicted=True),
    Wrong("cube-value", {"predict_cube": "predicted_grad = 1.0"},
          misconception="grad-is-value", predicted=True),
    Wrong("returns-a-list", {"numerical_derivative": "def numerical_derivative(f, x, h):\n"
                                                     "    return [f(x + h), f(x - h)]"},
          says="should be a number."),
    # plainly wrong: the right kind, the wrong numbers
    Wrong("plain-off-by-one", {"autograd_derivative": "def derivative(f, x0):\n"
                                                      "    t = torch.tensor(x0, requires_grad=True)\n"
                                                      "    f(t).backward()\n"
                                                      "    return t.grad.item() + 1"},
          says="is not f'(x0)."),
    Wrong("plain-power-one", {"chain_rule": "def dy_dx(x):\n    return 6 * x * (x ** 2 + 1)"},
          says="does not match autograd's dy/dx."),
    Wrong("plain-shifted", {"numerical_derivative": "def numerical_derivative(f, x, h):\n"
                                                    "    return (f(x + h) - f(x - h)) / (2 * h) + h"},
          says="Hint: (f(x + h) - f(x - h)) / (2 * h)"),
]

PREDICTIONS = [
    # the derivative as a formula, in quotes
    Predicted("predict_cube", "predicted_grad = '3 * x ** 2'", ("3.0", "tensor(3.)")),
    Predicted("predict_seed", "predicted_grad_10 = '10 times x.grad'", ("30",)),
]

# answers of the wrong kind and slips that reach the checks' other failures: run in
# process by tests/checks/test_wrong_answers.py, not graded as a class
REFUSED = [
    Wrong("no-backward-call", {"autograd_derivative": "def derivative(f, x0):\n    t = torch.tensor(x0, requires_grad=True)\n    f(t)\n    return t.grad.item()"},
          says="make the leaf with torch.tensor(x0, requires_grad=True)"),
    Wrong("derivative-a-number", {"autograd_derivative": "derivative = 29.0"},
          says="`derivative` should be a function (def derivative(f, x0): ...)."),
]
