"""Wrong answers learners give in lesson 12, hooks, kinks and higher-order gradients."""
from course import Predicted, Wrong

WRONG = [
    # a hook's result taken to be thrown away, as a print's is
    Wrong("hook-result-dropped", {"predict_hooks": "xa_grad = torch.tensor([18.0, 36.0])\n"
                                                   "xb_grad = torch.tensor([18.0, 36.0])"},
          misconception="hook-result-ignored", predicted=True),
    # rebinding g inside the hook taken to change the gradient
    Wrong("hook-rebinds-g", {"predict_hooks": "xa_grad = torch.tensor([180.0, 360.0])\n"
                                              "xb_grad = torch.tensor([180.0, 360.0])"},
          misconception="hook-returns-nothing", predicted=True),
    # relu'(0) taken as 1 (x >= 0), and a tie sent to the first maximum
    Wrong("kink-first-max", {"predict_kinks": "relu_grad = torch.tensor([0.0, 1.0, 1.0])\n"
                                              "max_grad = torch.tensor([0.0, 1.0, 0.0])\n"
                                              "sqrt_grad = float('inf')"},
          misconception="kink-gradient", predicted=True),
    # no derivative, so nan
    Wrong("kink-nan", {"predict_kinks": "relu_grad = torch.tensor([0.0, 0.0, 1.0])\n"
                                        "max_grad = torch.tensor([0.0, 0.5, 0.5])\n"
                                        "sqrt_grad = float('nan')"},
          misconception="kink-gradient", predicted=True),
    # every gradient taken to be differentiable
    Wrong("plain-grad-differentiable", {"predict_create_graph": "plain_requires_grad = True\n"
                                                                "graph_requires_grad = True"},
          misconception="create-graph-forgotten", predicted=True),
    # the hook computes the clipped gradient and forgets to return it
    Wrong("clip-not-returned", {"clip_gradient": "def clip_gradient(t, limit):\n"
                                                 "    def hook(g):\n"
                                                 "        g = g.clamp(-limit, limit)\n"
                                                 "    return t.register_hook(hook)"},
          misconception="hook-result-ignored"),
    # the handle is not returned: the hook cannot be removed
    Wrong("clip-no-handle", {"clip_gradient": "def clip_gradient(t, limit):\n"
                                              "    t.register_hook(lambda g: g.clamp(-limit, "
                                              "limit))"},
          says="clip_gradient returned None"),
    # create_graph forgotten: the gradient cannot be differentiated again
    Wrong("hvp-no-create-graph", {"hvp": "def hvp(f, x, v):\n"
                                         "    (g,) = torch.autograd.grad(f(x), x)\n"
                                         "    (hv,) = torch.autograd.grad(g @ v, x)\n"
                                         "    return hv"},
          misconception="create-graph-forgotten"),
    # the gradient weighted by v, taken for H v
    Wrong("hvp-gradient-times-v", {"hvp": "def hvp(f, x, v):\n"
                                          "    (g,) = torch.autograd.grad(f(x), x)\n"
                                          "    return g * v"},
          says="returned the gradient of f (times v), not H v"),
    # the visible test's limit written in, `limit` never used
    Wrong("limit-written-in", {"clip_gradient": """def clip_gradient(t, limit):
    return t.register_hook(lambda g: g.clamp(-4.0, 4.0))"""}, hidden_only=True),
    # plainly wrong: the right kind, the wrong numbers
    Wrong("plain-clip-to-half", {"clip_gradient": "def clip_gradient(t, limit):\n    return t.register_hook(lambda g: g.clamp(-limit / 2, limit / 2))"},
          says="x.grad is not 3 times y's gradient clamped"),
    Wrong("plain-hvp-doubled", {"hvp": "def hvp(f, x, v):\n"
                                      "    (g,) = torch.autograd.grad(f(x), x, create_graph=True)\n"
                                      "    (hv,) = torch.autograd.grad(g @ v, x)\n    return 2 * hv"},
          says="is not H v."),
]

PREDICTIONS = [
    # a list where a tensor is asked for
    Predicted("predict_hooks", "xa_grad = [1.0, 2.0]\nxb_grad = None", ("180", "tensor([18")),
    # sqrt_grad left out
    Predicted("predict_kinks", "relu_grad = torch.tensor([0.0, 1.0, 1.0])\n"
                               "max_grad = torch.tensor([0.0, 1.0, 0.0])\nsqrt_grad = None",
              ("inf", "0.5000")),
    # not answered yet
    Predicted("predict_create_graph", "plain_requires_grad = None\ngraph_requires_grad = None",
              ("grad_fn=", "create_graph=True records")),
]

# answers of the wrong kind and slips that reach the checks' other failures: run in
# process by tests/checks/test_wrong_answers.py, not graded as a class
REFUSED = [
    Wrong("clip-not-a-function", {"clip_gradient": "clip_gradient = None"},
          says="`clip_gradient` should be a function"),
    Wrong("clip-on-the-leaf", {"clip_gradient": "def clip_gradient(t, limit):\n    leaf = t.grad_fn.next_functions[0][0].variable\n"
                                              "    return leaf.register_hook(lambda g: g.clamp(-limit, limit))"},
          says="but the hook belongs on y"),
    Wrong("clip-two-hooks", {"clip_gradient": "def clip_gradient(t, limit):\n    t.register_hook(lambda g: g.clamp(-limit, limit))\n"
                                            "    return t.register_hook(lambda g: g)"},
          says="After handle.remove(), backward still clips the gradient."),
    Wrong("sqrt-grad-a-vector", {"predict_kinks": "relu_grad = torch.tensor([0.0, 0.0, 1.0])\n"
                                                "max_grad = torch.tensor([0.0, 0.5, 0.5])\n"
                                                "sqrt_grad = torch.tensor([1.0, 2.0])"},
          says="`sqrt_grad` should be a single number."),
    Wrong("hvp-not-a-function", {"hvp": "hvp = None"}, says="`hvp` should be a function"),
]
