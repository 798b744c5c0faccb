"""Wrong answers learners give in lesson 01, tensors that remember."""
from course import Predicted, Wrong

_HIDDEN = ("x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
           "h = x * 2\n")

WRONG = [
    Wrong("scaled-leaf", {"make_leaves": "lr = torch.tensor(5.0, requires_grad=True) * 0.1\n"
                                         "w_frozen = w.detach()"},
          misconception="not-a-leaf"),
    Wrong("b-is-a-leaf", {"predict_leaves": 'predictions = {"a": (True, True), "b": (True, True),'
                                            ' "c": (False, True), "d": (False, True)}'},
          misconception="not-a-leaf", predicted=True),
    Wrong("loss-requires-grad", {"fix_no_grad": "weight = torch.tensor(2.0)\n"
                                                "loss = (weight * 3 - 1) ** 2\n"
                                                "loss.requires_grad = True\n"
                                                "loss.backward()"},
          misconception="requires-grad-on-loss"),
    Wrong("z-is-a-leaf", {"predict_z": 'z_requires_grad = True\nz_is_leaf = True\n'
                                       'z_grad_fn = None'},
          misconception="not-a-leaf", predicted=True),
    # "results are never leaves": d predicted a non-leaf (a hint, no misconception of its own)
    Wrong("d-not-a-leaf", {"predict_leaves": 'predictions = {"a": (True, True), "b": (True, False),'
                                             ' "c": (False, True), "d": (False, False)}'},
          says="part 1 of the leaf rule", predicted=True),
    Wrong("frozen-still-attached", {"make_leaves": "lr = torch.tensor(0.5, requires_grad=True)\n"
                                                   "w_frozen = w * 1"},
          misconception="copy-in-graph"),
    Wrong("frozen-is-w", {"make_leaves": "lr = torch.tensor(0.5, requires_grad=True)\n"
                                         "w_frozen = w"},
          misconception="copy-in-graph", says="`w_frozen` is w itself"),
    # the numbers through .data, the old way (lesson 06 shows why .detach() is the safe one)
    Wrong("frozen-by-data", {"make_leaves": "lr = torch.tensor(0.5, requires_grad=True)\n"
                                            "w_frozen = w.data"},
          misconception="data-not-detach"),
    Wrong("grad-fn-as-object", {"predict_z": "z_requires_grad = True\nz_is_leaf = False\n"
                                             "z_grad_fn = z.grad_fn"},
          says="`z_grad_fn` should be the node's name as a string"),
    Wrong("backward-twice", {"fix_no_grad": "weight = torch.tensor(2.0, requires_grad=True)\n"
                                            "loss = (weight * 3 - 1) ** 2\n"
                                            "loss.backward(retain_graph=True)\n"
                                            "loss.backward()"},
          misconception="forgot-zero-grad"),
    # reads h.grad without retain_grad()
    Wrong("no-retain-grad", {"hidden_grad": _HIDDEN + "loss = (h ** 2).sum()\nloss.backward()"},
          misconception="nonleaf-grad", says="h is an intermediate result, not a leaf."),
    # retain_grad() after the backward pass: too late
    Wrong("retain-grad-too-late", {"hidden_grad": _HIDDEN + "loss = (h ** 2).sum()\n"
                                                            "loss.backward()\nh.retain_grad()"},
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
    Wrong("hidden-backward-twice", {"hidden_grad": _HIDDEN + "h.retain_grad()\n"
                                                             "loss = (h ** 2).sum()\n"
                                                             "loss.backward(retain_graph=True)\n"
                                                             "loss.backward()"},
          misconception="forgot-zero-grad"),
    # plainly wrong: the right kind, the wrong numbers
    Wrong("plain-cubed-loss", {"hidden_grad": _HIDDEN + "h.retain_grad()\nloss = (h ** 3).sum()\n"
                                                        "loss.backward()"},
          says="h.grad is not d loss / d h."),
    Wrong("plain-lr", {"make_leaves": "lr = torch.tensor(0.05, requires_grad=True)\n"
                                      "w_frozen = w.detach()"}, says="`lr` should hold 0.5."),
    Wrong("plain-loss-changed", {"fix_no_grad": "weight = torch.tensor(2.0, requires_grad=True)\n"
                                                "loss = (weight * 3 + 1) ** 2\nloss.backward()"},
          says="weight.grad is not d loss / d weight."),
]

PREDICTIONS = [
    Predicted("predict_z", 'z_requires_grad = True\nz_is_leaf = "no"\nz_grad_fn = None',
              ("MulBackward0",)),
    # one entry left out
    Predicted("predict_leaves", 'predictions = {"a": (True, True), "b": (True, False), '
                                '"c": (False, True)}', ("(False, True)", "(True, False)")),
]

# answers of the wrong kind and slips that reach the checks' other failures: run in
# process by tests/checks/test_wrong_answers.py, not graded as a class
REFUSED = [
    Wrong("predictions-as-list", {"predict_leaves": "predictions = [(True, True)] * 4"},
          says="`predictions` should be a dictionary"),
    Wrong("predictions-as-numbers", {"predict_leaves": 'predictions = {"a": (1, 1), "b": (1, 0), '
                                                       '"c": (0, 1), "d": (0, 1)}'},
          says="predictions['a'] should be a pair of booleans"),
    Wrong("lr-no-grad", {"make_leaves": "lr = torch.tensor(0.5)\nw_frozen = w.detach()"},
          says="`lr` should require grad"),
    Wrong("frozen-doubled", {"make_leaves": "lr = torch.tensor(0.5, requires_grad=True)\n"
                                            "w_frozen = w.detach() * 2"},
          says="`w_frozen` should hold the same numbers as w."),
    Wrong("weight-no-grad", {"fix_no_grad": "weight = torch.tensor(2.0)\n"
                                            "loss = (weight * 3 - 1) ** 2"},
          says="`weight` does not require grad"),
    Wrong("weight-computed", {"fix_no_grad": "weight = torch.tensor(1.0, requires_grad=True) * 2\n"
                                             "loss = (weight * 3 - 1) ** 2\nloss.backward()"},
          says="`weight` is not a leaf", misconception="not-a-leaf"),
    Wrong("weight-moved", {"fix_no_grad": "weight = torch.tensor(3.0, requires_grad=True)\n"
                                          "loss = (weight * 3 - 1) ** 2\nloss.backward()"},
          says="`weight` should still hold 2.0."),
    Wrong("no-backward", {"fix_no_grad": "weight = torch.tensor(2.0, requires_grad=True)\n"
                                         "loss = (weight * 3 - 1) ** 2"},
          says="weight.grad is None: call loss.backward()"),
    Wrong("x-no-grad", {"hidden_grad": "x = torch.tensor([1.0, 2.0, 3.0])\nh = x * 2\n"
                                       "loss = (h ** 2).sum()"},
          says="`x` should require grad."),
    Wrong("h-detached", {"hidden_grad": "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
                                        "h = (x * 2).detach().requires_grad_()\n"
                                        "loss = (h ** 2).sum()\nloss.backward()"},
          says="`h` is a leaf"),
    Wrong("hidden-no-backward", {"hidden_grad": _HIDDEN + "h.retain_grad()\nloss = (h ** 2).sum()"},
          says="No gradient arrived"),
]
