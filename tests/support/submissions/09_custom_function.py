"""Wrong answers learners give in lesson 09, a node of your own."""
from course import Predicted, Wrong, edited, solution_answers

SOLUTION = solution_answers("09_custom_function")
SOFTPLUS = SOLUTION["softplus"]
RETURN = "return grad_output * torch.sigmoid(x)"

WRONG = [
    Wrong("softplus-derivative-alone",
          {"softplus": edited(SOFTPLUS, (RETURN, "return torch.sigmoid(x)"))},
          misconception="backward-ignores-grad-output"),
    Wrong("softplus-no-inner-derivative",
          {"softplus": edited(SOFTPLUS, (RETURN, "return grad_output / (1 + torch.exp(x))"))},
          misconception="chain-rule-inner", says="and stops there"),
    Wrong("softplus-ctx-attribute",
          {"softplus": edited(SOFTPLUS, ("ctx.save_for_backward(x)", "ctx.x = x"),
                              ("(x,) = ctx.saved_tensors", "x = ctx.x"))},
          says="saved nothing with ctx.save_for_backward"),
    # the output saved, and the derivative taken of it as if it were the input
    Wrong("softplus-sigmoid-of-output",
          {"softplus": edited(SOFTPLUS,
                              ("ctx.save_for_backward(x)\n        return torch.log(1 + torch.exp(x))",
                               "y = torch.log(1 + torch.exp(x))\n"
                               "        ctx.save_for_backward(y)\n        return y"),
                              ("(x,) = ctx.saved_tensors", "(y,) = ctx.saved_tensors"),
                              (RETURN, "return grad_output * torch.sigmoid(y)"))},
          says="does not match central differences"),
    # grad_output taken to be 1, as at the root
    Wrong("grad-output-is-one", {"predict_grad_output": "grad_output_seen = 1.0\nx_grad = 12.0"},
          misconception="backward-ignores-grad-output", predicted=True),
    # forward made float32 whatever x is: right in float32, its central differences lost in
    # float64 (as gradcheck takes them)
    Wrong("forward-in-float32", {"softplus": edited(
        SOFTPLUS, ("return torch.log(1 + torch.exp(x))",
                   "return torch.log(1 + torch.exp(x.float()))"))}, hidden_only=True),
    # plainly wrong: the right kind, the wrong numbers
    Wrong("plain-log-of-x", {"softplus": SOFTPLUS.replace("torch.log(1 + torch.exp(x))",
                                                          "torch.log(1 + x * x)")},
          says="Softplus.apply(x) should compute log(1 + exp(x))."),
]

PREDICTIONS = [
    Predicted("predict_grad_output", "grad_output_seen = None\nx_grad = None", ("60", "5.0")),
]

# answers of the wrong kind and slips that reach the checks' other failures: run in
# process by tests/checks/test_wrong_answers.py, not graded as a class
REFUSED = [
    Wrong("softplus-not-a-class", {"softplus": "Softplus = None"},
          says="`Softplus` should be a class"),
    Wrong("softplus-plain-class", {"softplus": SOFTPLUS.replace("class Softplus(torch.autograd.Function):",
                                                                "class Softplus:")},
          says="`Softplus` should subclass torch.autograd.Function"),
    Wrong("forward-summed", {"softplus": SOFTPLUS.replace("return torch.log(1 + torch.exp(x))",
                                                          "return torch.log(1 + torch.exp(x)).sum()")},
          says="Softplus.apply(x) should return one tensor shaped like x."),
    Wrong("non-differentiable", {"softplus": SOFTPLUS.replace(
        "        return torch.log(1 + torch.exp(x))",
        "        y = torch.log(1 + torch.exp(x))\n        ctx.mark_non_differentiable(y)\n"
        "        return y")},
          says="Softplus.apply(x) has no grad_fn"),
    Wrong("backward-none", {"softplus": SOFTPLUS.replace(RETURN, "return None")},
          says="x.grad after backward through Softplus should be a tensor shaped like x."),
    # large x taken as x (softplus's asymptote) from too small a threshold on
    Wrong("asymptote-too-soon", {"softplus": SOFTPLUS.replace(
        "return torch.log(1 + torch.exp(x))",
        "return torch.where(x > 2, x, torch.log(1 + torch.exp(x)))")},
          says="Softplus.apply(x) should compute log(1 + exp(x)).", hidden_only=True),
    # a gradient with zeros in it taken for "no gradient given", as if it were ones
    Wrong("zeros-taken-for-ones", {"softplus": SOFTPLUS.replace(
        RETURN, "if (grad_output == 0).any():\n            return torch.sigmoid(x)\n"
                "        " + RETURN)},
          says="Softplus does not pass torch.autograd.gradcheck", hidden_only=True),
]
