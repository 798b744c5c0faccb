"""Wrong answers learners give in lesson 05, gradients add up."""
from course import Predicted, Wrong

_LOOP = """def train(x, y, steps=20, lr=0.02):
    w = torch.tensor(0.0, requires_grad=True)
    losses = []
    for step in range(steps):
        loss = ((w * x - y) ** 2).mean()
        loss.backward()
{before}        with torch.no_grad():
            w -= lr * w.grad
{after}        losses.append(loss.item())
    return w, losses
"""

_MICRO = """def accumulate_grad(w, x, y, batch_size):
{start}    n_batches = len(x) // batch_size
    for i in range(0, len(x), batch_size):
{inside}        xb, yb = x[i:i + batch_size], y[i:i + batch_size]
        loss = {loss}
        loss.backward()
"""

WRONG = [
    # .grad is expected to be overwritten by each backward call
    Wrong("grad-overwritten", {"predict_seed": "y_grad = None\n"
                                               "x_grad_1 = torch.tensor([6.0, 192.0])\n"
                                               "x_grad_2 = torch.tensor([6.0, 192.0])"},
          misconception="forgot-zero-grad", predicted=True),
    # the gradient is expected to be stored on the intermediate y too
    Wrong("y-has-grad", {"predict_seed": "y_grad = torch.tensor([3.0, 48.0])\n"
                                         "x_grad_1 = torch.tensor([6.0, 192.0])\n"
                                         "x_grad_2 = torch.tensor([12.0, 384.0])"},
          misconception="nonleaf-grad", predicted=True),
    # only the last step's derivative (2x), as a list rather than a tensor
    Wrong("list-not-tensor", {"predict_seed": "y_grad = None\nx_grad_1 = [6.0, 192.0]\n"
                                              "x_grad_2 = [12.0, 384.0]"},
          says="`x_grad_1` should be a Tensor."),
    # retain_graph=True read as "keep the gradient as it is": one call's worth after three
    Wrong("retain-graph-resets", {"predict_k_calls": "a_grad_3 = torch.tensor([2.0, 2.0])\n"
                                                     "b_grad_3 = 4.0\n"
                                                     "a_grad_4 = torch.tensor([2.0, 2.0])\n"
                                                     "b_grad_4 = 4.0"},
          misconception="retain-graph-instead-of-zero", predicted=True),
    # a.grad.zero_() taken to reset every gradient
    Wrong("zero-resets-all", {"predict_k_calls": "a_grad_3 = torch.tensor([6.0, 6.0])\n"
                                                 "b_grad_3 = 12.0\n"
                                                 "a_grad_4 = torch.tensor([2.0, 2.0])\n"
                                                 "b_grad_4 = 4.0"},
          misconception="forgot-zero-grad", predicted=True),
    # the loop handed in unchanged
    Wrong("loop-never-zeroes", {"fix_loop": _LOOP.format(before="", after="")},
          misconception="forgot-zero-grad"),
    # the update written as a new tensor, outside no_grad: w stops being a leaf, and the next
    # step's w.grad is None (lr * None raises TypeError)
    Wrong("loop-rebinds-w", {"fix_loop": _LOOP.format(before="", after="").replace(
        "        with torch.no_grad():\n            w -= lr * w.grad\n",
        "        w = w - lr * w.grad\n")},
          misconception="inplace-leaf-update"),
    # the same inside no_grad: w becomes a plain tensor, and the next loss has no graph
    Wrong("loop-rebinds-w-no-grad", {"fix_loop": _LOOP.format(before="", after="").replace(
        "            w -= lr * w.grad\n", "            w = w - lr * w.grad\n")},
          misconception="inplace-leaf-update"),
    # zeroed between backward and the update: the update sees zeros
    Wrong("loop-zeroes-too-early", {"fix_loop": _LOOP.format(before="        w.grad.zero_()\n",
                                                             after="")},
          says="w never moved from 0"),
    # zeroed first thing in the step, as optimizer.zero_grad() is: on the first step w.grad
    # is still None, and None has no zero_()
    Wrong("loop-zeroes-first", {"fix_loop": _LOOP.format(before="", after="").replace(
        "        loss = ((w * x - y) ** 2).mean()\n",
        "        w.grad.zero_()\n        loss = ((w * x - y) ** 2).mean()\n")},
          says="On the first step w.grad is still None"),
    # each micro-batch mean treated as the whole batch's loss
    Wrong("micro-unscaled", {"microbatches": _MICRO.format(start="    w.grad = None\n", inside="",
                                                           loss="((w * xb - yb) ** 2).mean()")},
          misconception="microbatch-unscaled"),
    # the habit of the training loop, carried inside the micro-batch loop
    Wrong("micro-zero-each-batch", {"microbatches": _MICRO.format(
        start="", inside="        w.grad = None\n",
        loss="((w * xb - yb) ** 2).mean() / n_batches")},
          misconception="zeroed-too-often"),
    # no zeroing at all: the previous step's gradient is still in w.grad
    Wrong("micro-stale-grad", {"microbatches": _MICRO.format(
        start="", inside="", loss="((w * xb - yb) ** 2).mean() / n_batches")},
          misconception="forgot-zero-grad"),
    # one backward over the full batch: right number, no micro-batches
    Wrong("micro-one-backward", {"microbatches": "def accumulate_grad(w, x, y, batch_size):\n"
                                                 "    w.grad = None\n"
                                                 "    ((w * x - y) ** 2).mean().backward()"},
          says="backward reached w 1 times"),
    # the visible batch's count of micro-batches written in (8 points, 2 at a time)
    Wrong("micro-count-written-in", {"microbatches": """def accumulate_grad(w, x, y, batch_size):
    w.grad = None
    for i in range(0, len(x), batch_size):
        xb, yb = x[i:i + batch_size], y[i:i + batch_size]
        loss = ((w * xb - yb) ** 2).mean() / 4
        loss.backward()"""}, hidden_only=True),
    # one loss of the whole batch, backwarded once per micro-batch: the count is right
    Wrong("whole-batch-n-times", {"microbatches": """def accumulate_grad(w, x, y, batch_size):
    w.grad = None
    n_batches = len(x) // batch_size
    for i in range(n_batches):
        loss = ((w * x - y) ** 2).mean() / n_batches
        loss.backward()"""}, says="did not each go through one micro-batch"),
    # plainly wrong: the right kind, the wrong numbers
    Wrong("plain-double-step", {"fix_loop": _LOOP.format(before="", after="        w.grad = None\n")
                                .replace("w -= lr * w.grad", "w -= 2 * lr * w.grad")},
          says="The losses differ from the lesson's loop from step 1 on."),
    Wrong("plain-halved", {"microbatches": _MICRO.format(
        start="    w.grad = None\n", inside="",
        loss="((w * xb - yb) ** 2).mean() / (2 * n_batches)")},
          says="w.grad is not the full-batch gradient."),
]

PREDICTIONS = [
    # a number where a tensor of two is asked for
    Predicted("predict_seed", "y_grad = None\nx_grad_1 = 6.0\nx_grad_2 = 12.0",
              ("192", "384")),
    # (1) left unanswered
    Predicted("predict_k_calls", "a_grad_3 = None\nb_grad_3 = None\n"
                                 "a_grad_4 = torch.tensor([2.0, 2.0])\nb_grad_4 = 16.0",
              ("tensor([6., 6.])", "12")),
]

# answers of the wrong kind and slips that reach the checks' other failures: run in
# process by tests/checks/test_wrong_answers.py, not graded as a class
REFUSED = [
    Wrong("train-not-a-function", {"fix_loop": "train = None"},
          says="`train` should be a function"),
    Wrong("returns-w-only", {"fix_loop": _LOOP.format(before="", after="        w.grad = None\n")
                             .replace("return w, losses", "return w")},
          says="train(...) should return a pair: (w, losses)."),
    Wrong("returns-a-copy", {"fix_loop": _LOOP.format(before="", after="        w.grad = None\n")
                             .replace("return w, losses", "return w * 1, losses")},
          says="The w that train returns is not a leaf any more.",
          misconception="inplace-leaf-update"),
    Wrong("losses-a-tuple", {"fix_loop": _LOOP.format(before="", after="        w.grad = None\n")
                             .replace("return w, losses", "return w, tuple(losses)")},
          says="losses should be a list of 20 numbers, one per step."),
    Wrong("w-rounded", {"fix_loop": _LOOP.format(before="", after="        w.grad = None\n")
                        .replace("return w, losses",
                                 "return torch.tensor(round(w.item(), 1)), losses")},
          says="The final w is not where the loop ends."),
    Wrong("accumulate-not-a-function", {"microbatches": "accumulate_grad = 0"},
          says="`accumulate_grad` should be a function"),
    Wrong("micro-no-backward", {"microbatches": _MICRO.format(
        start="    w.grad = None\n", inside="", loss="((w * xb - yb) ** 2).mean() / n_batches")
        .replace("        loss.backward()\n", "")},
          says="w.grad is None after accumulate_grad(w, x, y, batch_size)."),
]
