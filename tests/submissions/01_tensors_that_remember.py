"""Wrong answers learners give in lesson 01, tensors that remember."""
from course import Wrong

WRONG = [
    Wrong("scaled-leaf", {"make_leaves": "lr = torch.tensor(5.0, requires_grad=True) * 0.1\n"
                                         "w_frozen = w.detach()"},
          misconception="not-a-leaf"),
    Wrong("b-is-a-leaf", {"predict_leaves": 'predictions = {"a": (True, True), "b": (True, True),'
                                            ' "c": (False, True), "d": (False, True)}'},
          misconception="not-a-leaf"),
    Wrong("loss-requires-grad", {"fix_no_grad": "weight = torch.tensor(2.0)\n"
                                                "loss = (weight * 3 - 1) ** 2\n"
                                                "loss.requires_grad = True\n"
                                                "loss.backward()"},
          misconception="requires-grad-on-loss"),
    Wrong("z-is-a-leaf", {"predict_z": 'z_requires_grad = True\nz_is_leaf = True\n'
                                       'z_grad_fn = None'},
          misconception="not-a-leaf"),
    Wrong("frozen-still-attached", {"make_leaves": "lr = torch.tensor(0.5, requires_grad=True)\n"
                                                   "w_frozen = w * 1"},
          says="`w_frozen` is still part of the graph."),
    Wrong("grad-fn-as-object", {"predict_z": "z_requires_grad = True\nz_is_leaf = False\n"
                                             "z_grad_fn = z.grad_fn"},
          says="`z_grad_fn` should be the node's name as a string"),
    Wrong("backward-twice", {"fix_no_grad": "weight = torch.tensor(2.0, requires_grad=True)\n"
                                            "loss = (weight * 3 - 1) ** 2\n"
                                            "loss.backward(retain_graph=True)\n"
                                            "loss.backward()"},
          misconception="forgot-zero-grad"),
]
