"""Wrong answers learners give in lesson 04, gradients add up."""
from course import Wrong

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
          misconception="forgot-zero-grad"),
    # the gradient is expected to be stored on the intermediate y too
    Wrong("y-has-grad", {"predict_seed": "y_grad = torch.tensor([3.0, 48.0])\n"
                                         "x_grad_1 = torch.tensor([6.0, 192.0])\n"
                                         "x_grad_2 = torch.tensor([12.0, 384.0])"},
          misconception="nonleaf-grad"),
    # only the last step's derivative (2x), as a list rather than a tensor
    Wrong("list-not-tensor", {"predict_seed": "y_grad = None\nx_grad_1 = [6.0, 192.0]\n"
                                              "x_grad_2 = [12.0, 384.0]"},
          says="`x_grad_1` should be a Tensor."),
    # retain_graph=True read as "keep the gradient as it is": one call's worth after three
    Wrong("retain-graph-resets", {"predict_k_calls": "a_grad_3 = torch.tensor([2.0, 2.0])\n"
                                                     "b_grad_3 = 4.0\n"
                                                     "a_grad_4 = torch.tensor([2.0, 2.0])\n"
                                                     "b_grad_4 = 4.0"},
          misconception="retain-graph-instead-of-zero"),
    # a.grad.zero_() taken to reset every gradient
    Wrong("zero-resets-all", {"predict_k_calls": "a_grad_3 = torch.tensor([6.0, 6.0])\n"
                                                 "b_grad_3 = 12.0\n"
                                                 "a_grad_4 = torch.tensor([2.0, 2.0])\n"
                                                 "b_grad_4 = 4.0"},
          misconception="forgot-zero-grad"),
    # reads h.grad without retain_grad()
    Wrong("no-retain-grad", {"hidden_grad": "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
                                            "h = x * 2\n"
                                            "loss = (h ** 2).sum()\n"
                                            "loss.backward()"},
          misconception="nonleaf-grad"),
    # x made from scaled numbers: no longer a leaf
    Wrong("x-not-a-leaf", {"hidden_grad": "x = torch.tensor([10.0, 20.0, 30.0], requires_grad=True)"
                                          " / 10\n"
                                          "h = x * 2\n"
                                          "h.retain_grad()\n"
                                          "loss = (h ** 2).sum()\n"
                                          "loss.backward()"},
          misconception="not-a-leaf"),
    # backward run a second time "to be sure", with retain_graph so that it does not raise
    Wrong("backward-twice", {"hidden_grad": "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
                                            "h = x * 2\n"
                                            "h.retain_grad()\n"
                                            "loss = (h ** 2).sum()\n"
                                            "loss.backward(retain_graph=True)\n"
                                            "loss.backward()"},
          misconception="forgot-zero-grad"),
    # the loop handed in unchanged
    Wrong("loop-never-zeroes", {"fix_loop": _LOOP.format(before="", after="")},
          misconception="forgot-zero-grad"),
    # zeroed between backward and the update: the update sees zeros
    Wrong("loop-zeroes-too-early", {"fix_loop": _LOOP.format(before="        w.grad.zero_()\n",
                                                             after="")},
          says="w never moved from 0"),
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
]
