"""Wrong answers learners give in lesson 10, the training loop: the solution's step and
parameters with one slip each, and misread broken loops."""
from course import Predicted, Wrong, edited, solution_answers

SOLUTION = solution_answers("10_training_loop")
STEP = SOLUTION["train_step"]
PARAMETERS = SOLUTION["mlp_parameters"]
UPDATE = ("    with torch.no_grad():\n        for p in params:\n            p -= lr * p.grad\n"
          "            p.grad = None\n")
W1 = "(torch.randn(2, 16) * 0.5).requires_grad_()"

WRONG = [
    Wrong("never-zeroed", {"train_step": edited(STEP, ("            p.grad = None\n", ""))},
          misconception="forgot-zero-grad"),
    Wrong("rebinds-parameter", {"train_step": edited(STEP, (
        UPDATE, "    for p in params:\n        p = p - lr * p.grad\n"))},
        misconception="inplace-leaf-update"),
    Wrong("in-place-outside-no-grad", {"train_step": edited(STEP, (
        UPDATE, "    for p in params:\n        p -= lr * p.grad\n        p.grad = None\n"))},
        misconception="inplace-leaf-update"),
    # the update through .data, as code from before PyTorch 0.4 writes it: the numbers come
    # out right, unseen by autograd
    Wrong("update-through-data", {"train_step": edited(STEP, (
        UPDATE, "    for p in params:\n        p.data -= lr * p.grad\n        p.grad = None\n"))},
        misconception="data-not-detach"),
    Wrong("forward-under-no-grad", {"train_step": edited(
        STEP, ("    loss = compute_loss()\n    loss.backward()\n    with torch.no_grad():\n",
               "    with torch.no_grad():\n        loss = compute_loss()\n"
               "        loss.backward()\n"))},
        says="must be recorded"),
    Wrong("zeroed-before-update", {"train_step": edited(STEP, (
        "            p -= lr * p.grad\n            p.grad = None\n",
        "            p.grad.zero_()\n            p -= lr * p.grad\n"))},
        says="zero .grad AFTER the update"),
    Wrong("gradient-ascent", {"train_step": edited(STEP, ("p -= lr", "p += lr"))}, says="uphill"),
    Wrong("no-return", {"train_step": edited(STEP, ("    return loss.item()", ""))},
          says="returned None"),
    # loop A's non-leaf w read as gradients piling up, like loop C's
    Wrong("a-as-zero-grad",
          {"diagnosis": 'diagnosis = {"A": "zero_grad", "B": "requires_grad", "C": "zero_grad"}'},
          misconception="inplace-leaf-update", predicted=True),
    Wrong("b-as-no-grad",
          {"diagnosis": 'diagnosis = {"A": "no_grad", "B": "no_grad", "C": "zero_grad"}'},
          misconception="requires-grad-on-loss", predicted=True),
    Wrong("update-keeps-leaf", {"predict_update": "w_is_leaf = True\nw_grad_fn = None"},
          misconception="inplace-leaf-update", predicted=True),
    Wrong("scaled-after-requires-grad", {"mlp_parameters": edited(
        PARAMETERS, (W1, "torch.randn(2, 16, requires_grad=True) * 0.5"))},
        misconception="not-a-leaf"),
    Wrong("zero-weights", {"mlp_parameters": edited(
        PARAMETERS, (W1, "torch.zeros(2, 16, requires_grad=True)"))},
        says="is the same number"),
    Wrong("weights-without-grad", {"mlp_parameters": edited(
        PARAMETERS, ("(torch.randn(16, 1) * 0.5).requires_grad_()", "torch.randn(16, 1) * 0.5"))},
        says="does not require grad"),
    # a step for the line's two parameters only
    Wrong("two-parameters-only", {"train_step": """def train_step(params, compute_loss, lr):
    w, b = params
    loss = compute_loss()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
        w.grad = None
        b.grad = None
    return loss.item()"""}, hidden_only=True),
    # plainly wrong: the right kind, the wrong numbers
    Wrong("plain-double-lr", {"train_step": edited(STEP, ("p -= lr * p.grad", "p -= 2 * lr * p.grad"))},
          says="the parameters are not where one step of gradient descent"),
    Wrong("plain-biases-of-ones", {"mlp_parameters": edited(PARAMETERS, (
        "b1 = torch.zeros(16, requires_grad=True)", "b1 = torch.ones(16, requires_grad=True)"))},
          says="`b1` should start at zeros."),
]

PREDICTIONS = [
    Predicted("predict_update", 'w_is_leaf = "yes"\nw_grad_fn = None', ("SubBackward0",)),
    Predicted("diagnosis", 'diagnosis = {"A": "the update", "B": "the loss", "C": "the grads"}',
              ("'A': 'no_grad'", "'C': 'zero_grad'")),
]

# answers of the wrong kind and slips that reach the checks' other failures: run in
# process by tests/checks/test_wrong_answers.py, not graded as a class
REFUSED = [
    Wrong("grad-fn-unquoted", {"predict_update": "w_is_leaf = False\nw_grad_fn = 0"},
          says="`w_grad_fn` should be the node's name as a string (or None)."),
    Wrong("backward-twice-a-step", {"train_step": edited(STEP, ("    loss.backward()\n",
                                                                "    loss.backward()\n"
                                                                "    loss.backward()\n"))},
          says="train_step raised RuntimeError: Trying to backward through the graph"),
    Wrong("reads-loss-grad", {"train_step": edited(STEP, ("    loss.backward()\n",
                                                          "    loss.backward()\n"
                                                          "    seen = loss.grad\n"))},
          says="train_step read .grad of a tensor that is not a leaf.",
          misconception="inplace-leaf-update"),
    Wrong("replaces-in-the-list", {"train_step": edited(STEP, (
        "        for p in params:\n            p -= lr * p.grad\n            p.grad = None\n",
        "        for i, p in enumerate(params):\n            params[i] = p - lr * p.grad\n"))},
          says="is no longer a leaf that requires grad.", misconception="inplace-leaf-update"),
    Wrong("returns-twice-the-loss", {"train_step": edited(STEP, ("return loss.item()",
                                                                 "return 2 * loss.item()"))},
          says="not the loss computed in that step."),
    Wrong("train-step-a-number", {"train_step": "train_step = 0.1"},
          says="`train_step` should be a function train_step(params, compute_loss, lr)."),
    Wrong("diagnosis-as-list", {"diagnosis": 'diagnosis = ["no_grad", "requires_grad", "zero_grad"]'},
          says="`diagnosis` should be a dictionary"),
    Wrong("diagnosis-of-one-loop", {"diagnosis": 'diagnosis = {"A": "no_grad"}'},
          says="`diagnosis` has no entry for loop B, C."),
    Wrong("w1-a-list", {"mlp_parameters": edited(PARAMETERS, (W1, "[[0.5] * 16] * 2"))},
          says="`W1` should be a Tensor."),
    Wrong("w1-transposed", {"mlp_parameters": edited(PARAMETERS, (W1, "(torch.randn(16, 2) * 0.5).requires_grad_()"))},
          says="`W1` has the wrong shape."),
    Wrong("w1-float64", {"mlp_parameters": edited(PARAMETERS, (W1, "(torch.randn(2, 16, dtype=torch.float64) * 0.5).requires_grad_()"))},
          says="`W1` should hold float32 numbers."),
    Wrong("w1-unscaled", {"mlp_parameters": edited(PARAMETERS, (W1, "(torch.randn(2, 16) * 5).requires_grad_()"))},
          says="`W1` holds large numbers"),
]
