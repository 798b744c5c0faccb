"""Answers that are right but not the solution's own: the checks must pass them.

(Wrong answers are graded through real nbgrader in test_course.py; these only need the
checks, called directly as a test cell calls them.)"""
import autograd_lab as torch
from autograd_lab.checks import lesson06


def _define(code, name):
    namespace = {"torch": torch}
    exec(code, namespace)
    return namespace[name]


# lesson 06: a walk that runs every node by calling it, AccumulateGrad included (calling it
# adds into the leaf's .grad), and finds the order with an explicit list of ready nodes
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

def test_my_backward_may_call_accumulate_grad():
    my_backward = _define(CALLS_ACCUMULATE_GRAD, "my_backward")
    lesson06.my_backward_basic(my_backward)
    lesson06.my_backward_hidden(my_backward)


def test_softplus_may_save_its_output():
    softplus = _define(SOFTPLUS_FROM_OUTPUT, "Softplus")
    lesson06.softplus_basic(softplus)
    lesson06.softplus_hidden(softplus)

