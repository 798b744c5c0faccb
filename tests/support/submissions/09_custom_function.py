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
]

PREDICTIONS = [
    Predicted("predict_grad_output", "grad_output_seen = None\nx_grad = None", ("60", "5.0")),
]
