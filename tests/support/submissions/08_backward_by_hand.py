"""Wrong answers learners give in lesson 08, backward by hand and in order."""
from course import Predicted, Wrong, edited, solution_answers

SOLUTION = solution_answers("08_backward_by_hand")

# my_backward, the way a first attempt often goes: depth first, each node marked done the
# first time a gradient reaches it (micrograd's walk without its topological sort)
DEPTH_FIRST = '''
def my_backward(root, gradient):
    done = set()

    def visit(node, grad):
        if node is None or node in done:
            return
        done.add(node)
        if hasattr(node, "variable"):
            leaf = node.variable
            leaf.grad = grad if leaf.grad is None else leaf.grad + grad
            return
        outs = node(grad)
        if not isinstance(outs, tuple):     # one input: a bare tensor
            outs = (outs,)
        for (nxt, _), g in zip(node.next_functions, outs):
            visit(nxt, g)

    with torch.no_grad():
        visit(root.grad_fn, gradient)
'''

# every path on its own: right numbers, but a node runs once per path into it
EVERY_PATH = '''
def my_backward(root, gradient):
    queue = [(root.grad_fn, gradient)]
    with torch.no_grad():
        while queue:
            node, grad = queue.pop(0)
            if hasattr(node, "variable"):
                leaf = node.variable
                leaf.grad = grad if leaf.grad is None else leaf.grad + grad
                continue
            outs = node(grad)
            if not isinstance(outs, tuple):     # one input: a bare tensor
                outs = (outs,)
            for (nxt, _), g in zip(node.next_functions, outs):
                if nxt is not None:
                    queue.append((nxt, g))
'''

# the same, recursive and memo-free: right on small graphs, out of stack on a deep one
RECURSIVE = '''
def my_backward(root, gradient):
    def visit(node, grad):
        if hasattr(node, "variable"):
            leaf = node.variable
            leaf.grad = grad if leaf.grad is None else leaf.grad + grad
            return
        outs = node(grad)
        if not isinstance(outs, tuple):     # one input: a bare tensor
            outs = (outs,)
        for (nxt, _), g in zip(node.next_functions, outs):
            if nxt is not None:
                visit(nxt, g)

    with torch.no_grad():
        visit(root.grad_fn, gradient)
'''

# micrograd's way: a recursive topological sort, then one sweep. Right, until the graph is
# deeper than Python's recursion limit
RECURSIVE_SORT = '''
def my_backward(root, gradient):
    order, seen = [], set()

    def build(node):
        if node is not None and node not in seen:
            seen.add(node)
            for nxt, _ in node.next_functions:
                build(nxt)
            order.append(node)

    build(root.grad_fn)
    arrived = {root.grad_fn: gradient}
    with torch.no_grad():
        for node in reversed(order):
            grad = arrived.pop(node, None)
            if grad is None:
                continue
            if hasattr(node, "variable"):
                leaf = node.variable
                leaf.grad = grad if leaf.grad is None else leaf.grad + grad
                continue
            outs = node(grad)
            if not isinstance(outs, tuple):     # one input: a bare tensor
                outs = (outs,)
            for (nxt, _), g in zip(node.next_functions, outs):
                if nxt is not None and g is not None:
                    arrived[nxt] = g if nxt not in arrived else arrived[nxt] + g
'''

# the solution's topological sort, with one slip each
KAHN = SOLUTION["my_backward"]
OVERWRITES_FAN_OUT = edited(KAHN, ("arrived[nxt] = g if nxt not in arrived else arrived[nxt] + g",
                                   "arrived[nxt] = g"))
OVERWRITES_GRAD = edited(KAHN, ("leaf.grad = grad if leaf.grad is None else leaf.grad + grad",
                                "leaf.grad = grad"))
RECORDED = edited(KAHN, ("    with torch.no_grad():\n        while ready:",
                         "    if True:\n        while ready:"))
NO_NONE_CHECK = edited(KAHN, ("                if nxt is None:\n                    continue\n"
                              "                arrived", "                arrived"))
# section 1's recipe left out: a node of one input returns a bare tensor, and zip pairs
# next_functions with its elements
NO_TUPLE = edited(KAHN, ("            if not isinstance(outs, tuple):     # one input: a bare "
                         "tensor\n                outs = (outs,)\n", ""))
# ready as soon as one gradient has arrived: the count is never consulted
READY_AT_ONCE = edited(KAHN, ("                edges_in[nxt] -= 1\n"
                              "                if edges_in[nxt] == 0:\n"
                              "                    ready.append(nxt)",
                              "                if nxt not in ready:\n"
                              "                    ready.append(nxt)"))
CALLS_BACKWARD = "def my_backward(root, gradient):\n    root.backward(gradient)\n"
# the engine's backward, bound under another name before any check can refuse it
ENGINE_RENAMED = ("from autograd_lab._core.backward import backward as engine_backward\n\n\n"
                  "def my_backward(root, gradient):\n    engine_backward(root, gradient)\n")

SEQUENCE_ORDER = '''
def my_backward(root, gradient):
    nodes, stack, seen = [], [root.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        nodes.append(node)
        stack.extend(nxt for nxt, _ in node.next_functions)

    def newest_first(node):
        if hasattr(node, "variable"):
            return -1
        return getattr(node, "_sequence_nr", lambda: -1)()

    nodes.sort(key=newest_first, reverse=True)
    arrived = {root.grad_fn: gradient}
    with torch.no_grad():
        for node in nodes:
            grad = arrived.pop(node, None)
            if grad is None:
                continue
            if hasattr(node, "variable"):
                leaf = node.variable
                leaf.grad = grad if leaf.grad is None else leaf.grad + grad
                continue
            outs = node(grad)
            if not isinstance(outs, tuple):
                outs = (outs,)
            for (nxt, _), g in zip(node.next_functions, outs):
                if nxt is not None:
                    arrived[nxt] = g if nxt not in arrived else arrived[nxt] + g
'''

# the same order, and a gradient that arrives at a node already run sends it on again
LATE_RUN_AGAIN = edited(SEQUENCE_ORDER, (
    "        for node in nodes:\n            grad", "        while nodes:\n"
    "            node = nodes.pop(0)\n            grad"), (
    "                    arrived[nxt] = g if nxt not in arrived else arrived[nxt] + g\n",
    "                    arrived[nxt] = g if nxt not in arrived else arrived[nxt] + g\n"
    "                    if nxt not in nodes:\n                        nodes.append(nxt)\n"))
# only the nodes that carry a sequence number (and the leaves' accumulators) taken as the graph
NUMBERED_ONLY = edited(SEQUENCE_ORDER, ("    nodes.sort(", "    nodes = [n for n in nodes if "
                                        "hasattr(n, '_sequence_nr') or hasattr(n, 'variable')]\n"
                                        "    nodes.sort("))

WRONG = [
    Wrong("depth-first-walk", {"my_backward": DEPTH_FIRST}, misconception="recursive-backward"),
    Wrong("every-path-separately", {"my_backward": EVERY_PATH},
          misconception="recursive-backward"),
    Wrong("recursive-walk", {"my_backward": RECURSIVE}, misconception="recursive-backward"),
    Wrong("recursive-sort", {"my_backward": RECURSIVE_SORT}, says="runs out of stack on a deep graph"),
    Wrong("fan-out-overwritten", {"my_backward": OVERWRITES_FAN_OUT},
          misconception="recursive-backward"),
    Wrong("grad-overwritten", {"my_backward": OVERWRITES_GRAD}, says="ADDS into .grad"),
    Wrong("walk-recorded", {"my_backward": RECORDED}, says="carries a grad_fn"),
    Wrong("none-edges-followed", {"my_backward": NO_NONE_CHECK}, says="(None, 0)"),
    Wrong("calls-backward", {"my_backward": CALLS_BACKWARD}, says="called the engine (.backward() or torch.autograd.grad): it should walk"),
    Wrong("engine-renamed", {"my_backward": ENGINE_RENAMED}, says="handed the graph to the engine"),
    Wrong("one-input-not-wrapped", {"my_backward": NO_TUPLE},
          says="returns a bare tensor, not a tuple"),
    Wrong("ready-at-once", {"my_backward": READY_AT_ONCE}, misconception="recursive-backward"),
    Wrong("accumulate-per-edge",
          {"predict_order": 'order = ["AddBackward0", "AccumulateGrad", "MulBackward0", '
                            '"AccumulateGrad"]\nx_grad = 7.0'},
          misconception="recursive-backward", predicted=True),
    Wrong("one-path-only", {"predict_order": 'order = ["AddBackward0", "MulBackward0", '
                                             '"AccumulateGrad"]\nx_grad = 6.0'},
          misconception="recursive-backward", predicted=True),
    # the recursive sort, given a recursion limit deep enough for the visible chain only
    Wrong("recursion-limit-raised", {"my_backward": "import sys\nsys.setrecursionlimit(3200)\n"
                                                    + RECURSIVE_SORT}, hidden_only=True),
    # plainly wrong: the right kind, the wrong numbers
    Wrong("plain-twice-the-seed", {"my_backward": KAHN.replace("arrived = {root.grad_fn: gradient}",
                                                              "arrived = {root.grad_fn: 2 * gradient}")},
          says="times the right one: start the walk from `gradient` itself"),
]

PREDICTIONS = [
    # the derivative as a formula, in quotes
    Predicted("predict_order", 'order = ["AddBackward0"]\nx_grad = "2x + 1"',
              ("7.0", "'AddBackward0', 'MulBackward0'")),
]

# answers of the wrong kind and slips that reach the checks' other failures: run in
# process by tests/checks/test_wrong_answers.py, not graded as a class
REFUSED = [
    Wrong("x-grad-a-tensor", {"predict_order": 'order = ["AddBackward0", "MulBackward0", '
                                                '"AccumulateGrad"]\nx_grad = torch.tensor(7.0)'},
          says="`x_grad` should be a plain number (like 1.5), not a tensor."),
    Wrong("leaves-left-out", {"my_backward": edited(KAHN, (
        "                leaf = node.variable\n"
        "                leaf.grad = grad if leaf.grad is None else leaf.grad + grad\n", ""))},
          says="leaf x.grad is not a tensor."),
    Wrong("my-backward-a-number", {"my_backward": "my_backward = 0"},
          says="`my_backward` should be a function my_backward(root, gradient)."),
    # the nodes in PyTorch's engine's order, the newest first (by sequence number): the
    # check's own nodes have none, and their order is then the order they were found in
    Wrong("by-sequence-number", {"my_backward": SEQUENCE_ORDER},
          says="is not what a right walk gives.", misconception="recursive-backward"),
    Wrong("late-gradient-run-again", {"my_backward": LATE_RUN_AGAIN},
          says="my_backward called a node a second time.", misconception="recursive-backward"),
    Wrong("numbered-nodes-only", {"my_backward": NUMBERED_ONLY},
          says="of the check's own making, leaf x.grad is not a tensor."),
]
