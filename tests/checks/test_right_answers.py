"""Answers that are right but not the solution's own: the checks must pass them.

(Wrong answers are graded through real nbgrader in test_course.py; these only need the
checks, called directly as a test cell calls them.)"""
import autograd_lab as torch
from autograd_lab import checks
from autograd_lab.checks import (lesson00, lesson02, lesson03, lesson04, lesson07, lesson08,
                                 lesson09, lesson10, lesson11)


def _define(code, name):
    namespace = {"torch": torch}
    exec(code, namespace)
    return namespace[name]


def _hidden(check, *answers, key=b"a learner's key"):
    """A hidden test's call, as the grader makes it: its inputs drawn with a judging key."""
    with checks.judging(key), checks.hidden():
        check(*answers)


# lesson 08: a walk of its own, not the scaffold's: it runs every node by calling it,
# AccumulateGrad included (calling it adds into the leaf's .grad), and finds the order with a
# queue of ready nodes
CALLS_ACCUMULATE_GRAD = '''
def my_backward(root, gradient):
    users, stack, seen = {}, [root.grad_fn], {root.grad_fn}
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is not None:
                users[nxt] = users.get(nxt, 0) + 1
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
    grads, ready = {root.grad_fn: gradient}, [root.grad_fn]
    with torch.no_grad():
        while ready:
            node = ready.pop(0)
            outs = node(grads.pop(node))
            outs = outs if isinstance(outs, tuple) else (outs,)    # one input: a bare tensor
            for (nxt, _), g in zip(node.next_functions, outs):
                if nxt is None:
                    continue
                grads[nxt] = grads[nxt] + g if nxt in grads else g
                users[nxt] -= 1
                if users[nxt] == 0:
                    ready.append(nxt)
'''

SOFTPLUS_FROM_OUTPUT = '''
class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.log(1 + torch.exp(x))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * (1 - torch.exp(-y))      # sigmoid(x) = 1 - e^(-softplus(x))
'''

# lesson 10: zeroing first thing in the step, as loops with optimizer.zero_grad() at the top do
ZERO_FIRST = '''
def train_step(params, compute_loss, lr):
    for p in params:
        p.grad = None
    loss = compute_loss()
    loss.backward()
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad
    return loss
'''


def test_my_backward_may_call_accumulate_grad():
    my_backward = _define(CALLS_ACCUMULATE_GRAD, "my_backward")
    lesson08.my_backward_basic(my_backward)
    _hidden(lesson08.my_backward_hidden, my_backward)


def test_softplus_may_save_its_output():
    softplus = _define(SOFTPLUS_FROM_OUTPUT, "Softplus")
    lesson09.softplus_basic(softplus)
    lesson09.softplus_hidden(softplus)



# lessons 00 and 02: answers written differently from the solution's
def test_w_may_be_made_with_requires_grad_afterwards():
    lesson00.first_tensor(torch.tensor([2.0, -1.0, 3.0]).requires_grad_())
    lesson00.total_prediction(torch.tensor(14))


# lesson 02: the derivative as the leaf's .grad tensor, from a float64 leaf, or by
# autograd.grad
DERIVATIVES = [
    "def derivative(f, x0):\n    t = torch.tensor(x0, requires_grad=True)\n"
    "    f(t).backward()\n    return t.grad",
    "def derivative(f, x0):\n    t = torch.tensor(x0, dtype=torch.float64, requires_grad=True)\n"
    "    y = f(t)\n    y.backward()\n    return float(t.grad)",
    "def derivative(f, x0):\n    t = torch.tensor(float(x0)).requires_grad_()\n"
    "    (d,) = torch.autograd.grad(f(t), t)\n    return d.item()",
]


def test_derivative_may_be_a_tensor_float64_or_from_autograd_grad():
    for code in DERIVATIVES:
        derivative = _define(code, "derivative")
        lesson02.derivative_by_backward(derivative)
        for key in (b"one learner", b"another"):
            _hidden(lesson02.derivative_by_backward, derivative, key=key)


def test_numerical_derivative_may_halve_first_or_take_tensors():
    for code in ["def nd(f, x, h):\n    return 0.5 * (f(x + h) - f(x - h)) / h",
                 "def nd(f, x, h):\n    x = torch.tensor(x, dtype=torch.float64)\n"
                 "    return (f(x + h) - f(x - h)) / (2 * h)"]:
        nd = _define(code, "nd")
        for case in ["square", "cubic", "sine", "bump", "small-step"]:
            lesson02.central_difference(nd, case=case)


def test_chain_rule_may_be_expanded():
    lesson02.chain_rule_formula(lambda x: 6 * x ** 5 + 12 * x ** 3 + 6 * x,
                                points=[1.0, -2.0, 0.0, 1.5, 3.0])


# lesson 04: the Jacobian from autograd.grad (no .grad at all), or from a fresh graph per row
# with x.grad copied and zeroed; weights written other ways than the solution's
JACOBIAN_BY_GRAD = '''
def jacobian_by_rows(f, x):
    x = x.detach().requires_grad_(True)
    n = len(f(x))
    return torch.stack([torch.autograd.grad(f(x), x, e)[0] for e in torch.eye(n)])
'''

JACOBIAN_FRESH_GRAPHS = '''
def jacobian_by_rows(f, x):
    x = x.clone().requires_grad_()
    rows = []
    for i in range(f(x).numel()):
        y = f(x)
        y.backward(torch.eye(y.numel())[i])
        rows.append(x.grad.clone())
        x.grad.zero_()
    return torch.stack(rows)
'''


def test_jacobian_by_rows_may_use_autograd_grad_or_fresh_graphs():
    for code in (JACOBIAN_BY_GRAD, JACOBIAN_FRESH_GRAPHS):
        jacobian_by_rows = _define(code, "jacobian_by_rows")
        lesson04.jacobian_of_lesson_function(jacobian_by_rows)
        _hidden(lesson04.jacobian_of_other_functions, jacobian_by_rows)


def test_weights_and_predictions_may_be_written_other_ways():
    y = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)[:3] * 1
    lesson03.weighted_loss_weights(torch.tensor([3.0, 0.0, 1.0], dtype=torch.float64))
    lesson03.mean_loss_weights(torch.ones_like(y) / y.numel())
    lesson03.mean_loss_weights(torch.tensor([1 / 3, 1 / 3, 1 / 3]))
    lesson03.x_as_gradient_prediction(torch.tensor([2, 8]))           # integers: a prediction
    lesson04.mm_prediction(torch.tensor([[5, 13]]))


def test_train_step_may_zero_first_and_return_the_loss_tensor():
    train_step = _define(ZERO_FIRST, "train_step")
    lesson10.train_step_basic(train_step)
    _hidden(lesson10.train_step_hidden, train_step)


# lesson 11: other ways to freeze a leaf: the flag set as an attribute, detach_() (which, on a
# leaf, turns requires_grad off in place), a comprehension, under no_grad (a grad mode does not
# stop a flag from being set)
FREEZES = [
    "def freeze(params):\n    for p in params:\n        p.requires_grad = False",
    "def freeze(params):\n    for p in params:\n        p.detach_()",
    "def freeze(params):\n    [p.requires_grad_(False) for p in params]",
    "def freeze(params):\n    with torch.no_grad():\n        for p in params:\n"
    "            p.requires_grad_(False)",
]


def test_freeze_may_set_the_flag_another_way():
    for code in FREEZES:
        freeze = _define(code, "freeze")
        lesson11.frozen(freeze)
        for given in ("generator", "tuple", "list"):
            _hidden(lesson11.frozen, freeze)
            lesson11.frozen(freeze, given=given)


# lesson 08: the scaffold's frame with a heart of another shape: every node called,
# AccumulateGrad included, and only the nodes with a gradient counted down
SCAFFOLD_HEART = '''
def count_edges(root_node):
    edges_in = {}
    to_visit, seen = [root_node], {root_node}
    while to_visit:
        node = to_visit.pop()
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            edges_in[nxt] = edges_in.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                to_visit.append(nxt)
    return edges_in


def my_backward(root, gradient):
    edges_in = count_edges(root.grad_fn)
    arrived = {root.grad_fn: gradient}
    ready = [root.grad_fn]
    with torch.no_grad():
        while ready:
            node = ready.pop()
            grad = arrived.pop(node)
            outs = node(grad)
            outs = outs if isinstance(outs, tuple) else (outs,)
            for (nxt, _), g in zip(node.next_functions, outs):
                if nxt is not None:
                    arrived[nxt] = arrived[nxt] + g if nxt in arrived else g
                    edges_in[nxt] -= 1
                    if not edges_in[nxt]:
                        ready.append(nxt)
'''


def test_the_scaffold_may_be_filled_another_way():
    my_backward = _define(SCAFFOLD_HEART, "my_backward")
    lesson08.my_backward_basic(my_backward)
    _hidden(lesson08.my_backward_hidden, my_backward)


# lesson 07: the nodes found by their names, and AccumulateGrad's part left to .grad
BY_NAME = '''
def by_hand(s):
    nodes = {}
    todo = [s.grad_fn]
    while todo:
        node = todo.pop()
        nodes[node.name()] = node
        todo.extend(n for n, _ in node.next_functions if n is not None and n not in todo)
    parts = nodes["MulBackward0"](nodes["SumBackward0"](torch.tensor(1.0)))
    grad_y = parts[0] + parts[1]
    return grad_y, nodes["MmBackward0"](grad_y)[0]
'''


def test_by_hand_may_find_the_nodes_by_name():
    by_hand = _define(BY_NAME, "by_hand")
    lesson07.by_hand(by_hand)
    _hidden(lesson07.by_hand, by_hand)


def test_a_right_prediction_written_another_way_is_right(capsys):
    """Predictions of another form than the solution's (an int for a float, PyTorch's own
    name of AccumulateGrad, a tensor for a number) are judged right, and said to be."""
    from autograd_lab.checks import lesson01, lesson05, lesson06, lesson07
    lesson01.z_prediction(True, False, "MulBackward0")
    lesson02.cube_prediction(3)
    lesson02.seed_prediction(torch.tensor(30.0))
    lesson05.k_calls_prediction(torch.tensor([6, 6]), 12, torch.tensor([2.0, 2.0]),
                                torch.tensor(16.0))
    lesson06.raises_prediction({"F": True, "E": False, "D": True, "C": False, "B": True,
                                "A": False})
    lesson07.next_prediction(("MulBackward0", "torch::autograd::AccumulateGrad"), True)
    lesson08.order_prediction(["AddBackward0", "MulBackward0", "AccumulateGrad"], 7)
    lesson09.grad_output_prediction(5, torch.tensor(60.0))
    lesson10.update_prediction(False, "SubBackward0")
    lesson11.loop_prediction(4, torch.tensor(32.0))
    printed = capsys.readouterr().out.splitlines()
    assert printed == [printed[0]] * 10 and printed[0].startswith("Prediction [right]")
