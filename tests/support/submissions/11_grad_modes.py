"""Wrong answers learners give in lesson 11, define-by-run, freezing and grad modes."""
from course import Predicted, Wrong

WRONG = [
    # one graph taken to serve every input: the loop's doublings counted once, for a
    Wrong("loop-same-graph", {"predict_loop": "a_grad = 4.0\nb_grad = 4.0"},
          misconception="static-graph", predicted=True),
    # ... or the loop taken to be no part of the graph at all
    Wrong("loop-not-recorded", {"predict_loop": "a_grad = 2.0\nb_grad = 2.0"},
          misconception="static-graph", predicted=True),
    # the values double_until returns, given for its gradients
    Wrong("loop-values", {"predict_loop": "a_grad = 12.0\nb_grad = 16.0"}, predicted=True),
    # b's doublings miscounted by one
    Wrong("loop-miscount", {"predict_loop": "a_grad = 4.0\nb_grad = 16.0"}, predicted=True),
    # no_grad taken for a way to freeze w
    Wrong("no-grad-freezes", {"predict_no_grad": "w_requires_grad_inside = False\n"
                                                 "b_requires_grad = True"},
          misconception="no-grad-freezes", predicted=True),
    # ... and for one that lasts beyond the block
    Wrong("no-grad-lasts", {"predict_no_grad": "w_requires_grad_inside = False\n"
                                               "b_requires_grad = False"},
          misconception="no-grad-freezes", predicted=True),
    # eval() taken for a way to freeze the model
    Wrong("eval-freezes", {"predict_eval": "out_requires_grad = False\nw1_has_grad = False"},
          misconception="eval-freezes", predicted=True),
    # ... a graph recorded, and taken to stop short of the parameters
    Wrong("eval-stops-short", {"predict_eval": "out_requires_grad = True\nw1_has_grad = False"},
          misconception="eval-freezes", predicted=True),
    # the grad mode switched off, for the whole kernel, to freeze
    Wrong("freeze-grad-mode-off", {"freeze": "def freeze(params):\n"
                                             "    torch.set_grad_enabled(False)"},
          misconception="no-grad-freezes"),
    # a name bound to a detached copy, which leaves the tensor itself as it was
    Wrong("freeze-detach-rebinds", {"freeze": "def freeze(params):\n    for p in params:\n"
                                              "        p = p.detach()"},
          misconception="detach-freezes"),
    # detach() taken to work in place, its result thrown away
    Wrong("freeze-detach-discarded", {"freeze": "def freeze(params):\n    for p in params:\n"
                                                "        p.detach()"},
          misconception="detach-freezes"),
    # params indexed as a list: right for a list or a tuple, a TypeError for a generator
    Wrong("freeze-by-index", {"freeze": "def freeze(params):\n"
                                        "    for i in range(len(params)):\n"
                                        "        params[i].requires_grad_(False)"},
          hidden_only=True),
    # plainly wrong: the right kind, and only the first tensor frozen
    Wrong("plain-freeze-first", {"freeze": "def freeze(params):\n"
                                           "    params[0].requires_grad_(False)"},
          says="the tensors at positions [1] still require grad"),
]

PREDICTIONS = [
    # not answered yet
    Predicted("predict_loop", "a_grad = None\nb_grad = None", ("32", "MulBackward0")),
    # strings where True or False is asked for
    Predicted("predict_no_grad", 'w_requires_grad_inside = "yes"\nb_requires_grad = "yes"',
              ("still requires grad", "recorded again")),
    Predicted("predict_eval", 'out_requires_grad = "True"\nw1_has_grad = None',
              ("SumBackward0", "evaluation branch")),
]

# answers of the wrong kind and slips that reach the checks' other failures: run in
# process by tests/checks/test_wrong_answers.py, not graded as a class
REFUSED = [
    Wrong("freeze-not-a-function", {"freeze": "freeze = None"},
          says="`freeze` should be a function"),
    # the list asked for a flag of its own
    Wrong("freeze-the-list", {"freeze": "def freeze(params):\n"
                                        "    params.requires_grad_(False)"},
          says="raised AttributeError: 'list' object has no attribute 'requires_grad_'"),
]
