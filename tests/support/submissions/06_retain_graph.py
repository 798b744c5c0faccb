"""Wrong answers learners give in lesson 06, retain_graph and the freed graph."""
from course import Predicted, Wrong


def _raises(**changes):
    answer = {"A": False, "B": True, "C": False, "D": True, "E": False, "F": True, **changes}
    return {"predict_raises": f"raises = {answer!r}"}


_TWO = "def separate_gradients(x, loss_a, loss_b):\n{body}    return g_a, g_b\n"

_INPLACE = "x = torch.tensor([1.0, 2.0], requires_grad=True)\nh = x * 2\n{rest}"

WRONG = [
    # "x * 2 does not depend on x, so nothing is saved"
    Wrong("times-two-is-free", _raises(B=False), misconception="retain-graph-missing",
          predicted=True),
    # "every second backward fails"
    Wrong("add-also-raises", _raises(A=True), says="Snippet A: you predicted it raises.",
          predicted=True),
    # retain_graph=True taken to protect every later call
    Wrong("retain-once-is-forever", _raises(D=False), misconception="retain-graph-missing",
          predicted=True),
    # autograd.grad taken to leave the graph alone
    Wrong("grad-does-not-free", _raises(F=False), misconception="retain-graph-missing",
          predicted=True),
    # two backward passes, the first one freeing the shared part
    Wrong("two-losses-no-retain", {"two_losses": _TWO.format(body=(
        "    x.grad = None\n"
        "    loss_a.backward()\n"
        "    g_a = x.grad.clone()\n"
        "    x.grad = None\n"
        "    loss_b.backward()\n"
        "    g_b = x.grad.clone()\n"))},
          misconception="retain-graph-missing"),
    # retain_graph added, but the second gradient lands on top of the first
    Wrong("two-losses-no-reset", {"two_losses": _TWO.format(body=(
        "    x.grad = None\n"
        "    loss_a.backward(retain_graph=True)\n"
        "    g_a = x.grad.clone()\n"
        "    loss_b.backward()\n"
        "    g_b = x.grad.clone()\n"))},
          misconception="retain-graph-instead-of-zero"),
    # g_a is x.grad itself, zeroed in place before the second pass
    Wrong("two-losses-alias", {"two_losses": _TWO.format(body=(
        "    x.grad = None\n"
        "    loss_a.backward(retain_graph=True)\n"
        "    g_a = x.grad\n"
        "    x.grad.zero_()\n"
        "    loss_b.backward()\n"
        "    g_b = x.grad\n"))},
          says="g_a and g_b are the same tensor"),
    # the old .grad x came in with is never cleared
    Wrong("two-losses-stale-grad", {"two_losses": _TWO.format(body=(
        "    loss_a.backward(retain_graph=True)\n"
        "    g_a = x.grad.clone()\n"
        "    x.grad = None\n"
        "    loss_b.backward()\n"
        "    g_b = x.grad\n"))},
          misconception="forgot-zero-grad"),
    # autograd.grad returns tuples: returned as they are
    Wrong("two-losses-tuples", {"two_losses": _TWO.format(body=(
        "    g_a = torch.autograd.grad(loss_a, x, retain_graph=True)\n"
        "    g_b = torch.autograd.grad(loss_b, x)\n"))},
          says="`g_a` should be a Tensor, not a tuple."),
    # the cell handed in as it was: h changed in place after y saved it
    Wrong("inplace-kept", {"fix_inplace": _INPLACE.format(rest=(
        "y = (h * h).sum()\n"
        "h.add_(1)\n"
        "h_shifted = h\n"
        "y.backward()"))},
          misconception="saved-tensor-modified"),
    # the shift moved before y: backward works, but for the wrong y
    Wrong("inplace-too-early", {"fix_inplace": _INPLACE.format(rest=(
        "h.add_(1)\n"
        "h_shifted = h\n"
        "y = (h * h).sum()\n"
        "y.backward()"))},
          says="the shift happened"),
    # the visible test's old .grad (1.0) taken away by hand instead of not reading .grad
    Wrong("stale-subtracted", {"two_losses": """def separate_gradients(x, loss_a, loss_b):
    loss_a.backward(retain_graph=True)
    g_a = x.grad.detach().clone() - 1.0
    x.grad = None
    loss_b.backward()
    return g_a, x.grad.detach().clone()"""}, hidden_only=True),
    # plainly wrong: the right kind, the wrong numbers
    Wrong("plain-g-b-doubled", {"two_losses": _TWO.format(body=(
        "    (g_a,) = torch.autograd.grad(loss_a, x, retain_graph=True)\n"
        "    (g_b,) = torch.autograd.grad(loss_b, x)\n    g_b = 2 * g_b\n"))},
          says="g_b is not d loss_b / dx."),
    Wrong("plain-cubed", {"fix_inplace": _INPLACE.format(
        rest="y = (h * h * h).sum()\nh_shifted = h + 1\ny.backward()")},
          says="x.grad is not the gradient of y = (h * h).sum()."),
]

PREDICTIONS = [
    # only the snippets the learner was sure of
    Predicted("predict_raises", 'raises = {"A": False, "B": True}', ("'D': True", "'F': True")),
]

# answers of the wrong kind and slips that reach the checks' other failures: run in
# process by tests/checks/test_wrong_answers.py, not graded as a class
REFUSED = [
    Wrong("raises-as-list", {"predict_raises": "raises = [False, True, False, True, False, True]"},
          says="`raises` should be a dictionary"),
    Wrong("raises-as-numbers", {"predict_raises": 'raises = {"A": 0, "B": 1, "C": 0, "D": 1, '
                                                  '"E": 0, "F": 1}'},
          says="raises['A'] should be True or False."),
    Wrong("separate-not-a-function", {"two_losses": "separate_gradients = None"},
          says="`separate_gradients` should be a function"),
    Wrong("grad-of-a-loss", {"two_losses": _TWO.format(body=(
        "    (g_a,) = torch.autograd.grad(loss_a, loss_b)\n    g_b = g_a\n"))},
          says="separate_gradients(...) raised RuntimeError"),
    Wrong("returns-g-a-only", {"two_losses": _TWO.format(body=(
        "    (g_a,) = torch.autograd.grad(loss_a, x, retain_graph=True)\n"
        "    (g_b,) = torch.autograd.grad(loss_b, x)\n")).replace("return g_a, g_b", "return g_a")},
          says="separate_gradients should return a pair (g_a, g_b)."),
    Wrong("inplace-no-backward", {"fix_inplace": _INPLACE.format(
        rest="y = (h * h).sum()\nh_shifted = h + 1")},
          says="x.grad is None: call y.backward() in your cell."),
    Wrong("shifted-by-two", {"fix_inplace": _INPLACE.format(
        rest="y = (h * h).sum()\nh_shifted = h + 2\ny.backward()")},
          says="h_shifted should hold h + 1."),
]
