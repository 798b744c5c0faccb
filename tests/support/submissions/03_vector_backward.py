"""Wrong answers learners give in lesson 03, vector outputs and weighted backward."""
from course import Predicted, Wrong

WRONG = [
    Wrong("predicts-the-derivative",
          {"predict_x_as_gradient": "predicted_grad = torch.tensor([2.0, 4.0])"},
          misconception="gradient-is-input", predicted=True),
    Wrong("v-is-x", {"choose_weights": "v_weighted = x\nv_mean = torch.ones(3) / 3"},
          misconception="gradient-is-input"),
    Wrong("v-shaped-like-x", {"choose_weights": "v_weighted = torch.tensor([3.0, 0.0, 1.0, 0.0])\n"
                                                "v_mean = torch.ones(3) / 3"},
          misconception="gradient-shape", says="`v_weighted` has x's shape [4]."),
    Wrong("mean-as-ones", {"choose_weights": "v_weighted = torch.tensor([3.0, 0.0, 1.0])\n"
                                             "v_mean = torch.ones(3)"},
          misconception="implicit-scalar-only"),
    Wrong("prediction-as-list", {"predict_x_as_gradient": "predicted_grad = [2.0, 8.0]"},
          says="should be a Tensor"),
    # plainly wrong: the right kind, the wrong numbers
    Wrong("plain-weights-swapped", {"choose_weights": "v_weighted = torch.tensor([1.0, 0.0, 3.0])\n"
                                                      "v_mean = torch.ones(3) / 3"},
          says="y.backward(v_weighted) does not leave dL/dx in x.grad"),
]

PREDICTIONS = [
    Predicted("predict_x_as_gradient", "predicted_grad = [2.0, 4.0]",
              ("tensor([2., 8.])", "[2., 8.]")),
]

# answers of the wrong kind and slips that reach the checks' other failures: run in
# process by tests/checks/test_wrong_answers.py, not graded as a class
REFUSED = [
    Wrong("two-weights", {"choose_weights": "v_weighted = torch.tensor([3.0, 1.0])\n"
                                            "v_mean = torch.ones(3) / 3"},
          says="`v_weighted` must have y's shape", misconception="gradient-shape"),
]
