# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: nbgrader,tags,-all
#     formats: ipynb,py:percent
#     notebook_metadata_filter: kernelspec
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 10 · Training a small model
#
# **Time:** about 45 minutes: 14 reading and running the code, 11 predicting and explaining, 20 on exercises. **You will be able to:**
#
# - write the loop a PyTorch user writes every day: forward, loss, `backward()`, update under
#   `torch.no_grad()`, zero the gradients;
# - tell from the code and the loss which step of a loop is missing or wrong;
# - train a small neural network with the loop you wrote.

# %% tags=["course-install"]
# Colab, or any Python without the course: this cell installs the course's engine, once, from
# the learners' repository. Where the course is installed (JupyterLab, Binder, your machine),
# it does nothing.
import importlib.util
import os
import subprocess
import sys

COURSE = "https://github.com/ourschool/autograd-class"
if importlib.util.find_spec("autograd_lab") is None:
    folder = os.path.abspath(COURSE.rsplit("/", 1)[-1])
    if not os.path.isdir(folder):
        subprocess.run(["git", "clone", "--quiet", "--depth=1", COURSE, folder], check=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "-e", folder], check=True)
    sys.path.insert(0, folder)

# %% tags=["course-helper"]
import autograd_lab as torch
from autograd_lab import viz

# %% [markdown]
# ## 1. Data and a model
#
# Thirty points near the line $y = 2x + 0.5$, with noise (`torch.manual_seed(0)`: PyTorch's
# numbers), and a line to fit, its slope `w` and intercept `b` starting at zero.

# %% tags=["torch-parity"]
torch.manual_seed(0)
x = torch.linspace(-1, 1, 30)
y = 2 * x + 0.5 + 0.2 * torch.randn(30)
w = torch.tensor(0.0, requires_grad=True)
b = torch.tensor(0.0, requires_grad=True)
print(y[:5])

# %% [markdown]
# ## 2. One step, by hand
#
# The loss is lesson 05's mean squared error. In its graph each operation left its node (a
# subtraction `SubBackward0`, a power `PowBackward0`; lesson 01 explained the `0`).

# %% tags=["course-helper"]
loss = ((w * x + b - y) ** 2).mean()
viz.draw(loss, names={w: "w", b: "b", loss: "loss"})

# %% [markdown]
# One step of gradient descent, in the five stages every training loop has:

# %% tags=["torch-parity"]
w = torch.tensor(0.0, requires_grad=True)
b = torch.tensor(0.0, requires_grad=True)
lr = 0.1

loss = ((w * x + b - y) ** 2).mean()   # 1. forward, 2. loss
print(f"{loss.item():.4f}")
loss.backward()                        # 3. backward: fills w.grad and b.grad
print(w.grad, b.grad)
with torch.no_grad():                  # 4. update, in place, not recorded
    w -= lr * w.grad
    b -= lr * b.grad
print(w, b)
w.grad.zero_()                         # 5. zero, or the next backward adds to these
b.grad.zero_()
loss = ((w * x + b - y) ** 2).mean()
print(f"{loss.item():.4f}")

# %% [markdown]
# The loss went down; `w` and `b` are still the same leaves.
#
# ### Predict
# Why `torch.no_grad()` and `-=`? Suppose the update were written with no `no_grad`:
#
# ```python
# w = torch.tensor(1.0, requires_grad=True)
# ((w * 3) ** 2).backward()
# w = w - 0.1 * w.grad
# ```
#
# Predict `w_is_leaf` (`True` or `False`) and `w_grad_fn`, the name of `w.grad_fn` as a
# string (`None` if you think it has none), for the new `w`.

# %% nbgrader={"grade": false, "grade_id": "predict_update", "locked": false, "schema_version": 3, "solution": true} tags=["prediction"]
### BEGIN SOLUTION
w_is_leaf = False
w_grad_fn = "SubBackward0"
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "predict_update_test", "locked": true, "points": 1, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson10 as check

check.update_prediction(w_is_leaf, w_grad_fn)

# %% [markdown]
# ### Run

# %% tags=["torch-parity"]
w = torch.tensor(1.0, requires_grad=True)
((w * 3) ** 2).backward()
w = w - 0.1 * w.grad
print(w, w.is_leaf)

# %% [markdown]
# `w` now names a *new* tensor made by a subtraction: not a leaf, so the next backward leaves
# its `.grad` at `None`, and the original leaf is left unchanged. The in-place `w -= ...` keeps
# the tensor, but outside `no_grad` autograd refuses to change a leaf that requires grad. (Old
# code's `w.data -= ...` is a change autograd never sees: lesson 06.)

# %% tags=["raises-exception", "torch-parity"]
w = torch.tensor(1.0, requires_grad=True)
((w * 3) ** 2).backward()
w -= 0.1 * w.grad

# %% [markdown]
# ## 3. Exercise: the training step
#
# Write `train_step(params, compute_loss, lr)`, one step of gradient descent for any model:
# `params` is a list of parameters (leaves that require grad), `compute_loss` a function without
# arguments that runs the forward pass and returns the loss (for the line:
# `lambda: ((w * x + b - y) ** 2).mean()`), `lr` the learning rate. The step computes the loss,
# runs backward, updates every parameter in place under `torch.no_grad()`, keeps this step's
# gradients from adding up with the next step's, and returns `loss.item()`.

# %% nbgrader={"grade": false, "grade_id": "train_step", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
def train_step(params, compute_loss, lr):
    loss = compute_loss()
    loss.backward()
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad
            p.grad = None
    return loss.item()
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "train_step_test", "locked": true, "points": 4, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson10 as check

check.train_step_basic(train_step)
### BEGIN HIDDEN TESTS
check.train_step_hidden(train_step)
### END HIDDEN TESTS

# %% [markdown]
# ## 4. Three broken loops
#
# Each loop below has a bug learners really write.
#
# ```python
# # loop A
# w = torch.tensor(0.0, requires_grad=True)
# b = torch.tensor(0.0, requires_grad=True)
# for step in range(3):
#     loss = ((w * x + b - y) ** 2).mean()
#     loss.backward()
#     w = w - 0.1 * w.grad
#     b = b - 0.1 * b.grad
#
# # loop B: the first version raised "element 0 of tensors does not require grad",
# # and one line made the error go away
# w = torch.tensor(0.0)
# b = torch.tensor(0.0)
# for step in range(3):
#     loss = ((w * x + b - y) ** 2).mean()
#     loss.requires_grad = True
#     loss.backward()
#     ...
#
# # loop C
# w = torch.tensor(0.0, requires_grad=True)
# b = torch.tensor(0.0, requires_grad=True)
# for step in range(40):
#     loss = ((w * x + b - y) ** 2).mean()
#     loss.backward()
#     with torch.no_grad():
#         w -= 0.1 * w.grad
#         b -= 0.1 * b.grad
# ```
#
# ### Predict
# Name each loop's bug with one of these labels:
#
# - `"zero_grad"`: the gradients are never zeroed, so they pile up from step to step;
# - `"no_grad"`: the update is not done in place under `torch.no_grad()`;
# - `"requires_grad"`: the parameters do not require grad, and setting it on the loss hides that.
#
# Write `diagnosis = {"A": ..., "B": ..., "C": ...}`.

# %% nbgrader={"grade": false, "grade_id": "diagnosis", "locked": false, "schema_version": 3, "solution": true} tags=["prediction"]
### BEGIN SOLUTION
diagnosis = {"A": "no_grad", "B": "requires_grad", "C": "zero_grad"}
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "diagnosis_test", "locked": true, "points": 1, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson10 as check

check.diagnosis(diagnosis)

# %% [markdown]
# ### Run
# **Loop A.** The first step makes `w` a new, non-leaf tensor; the second backward leaves its
# `.grad` at `None`, reading it warns, and the update fails.

# %% tags=["raises-exception", "torch-parity"]
w = torch.tensor(0.0, requires_grad=True)
b = torch.tensor(0.0, requires_grad=True)
for step in range(3):
    loss = ((w * x + b - y) ** 2).mean()
    loss.backward()
    print(step, f"{loss.item():.4f}", "w is a leaf:", w.is_leaf)
    w = w - 0.1 * w.grad
    b = b - 0.1 * b.grad

# %% [markdown]
# **Loop B.** No error, and nothing learned: the loss became a leaf of its own, cut off from
# `w` and `b`: no gradient reaches them.

# %% tags=["torch-parity"]
w = torch.tensor(0.0)
b = torch.tensor(0.0)
loss = ((w * x + b - y) ** 2).mean()
loss.requires_grad = True
loss.backward()
print(loss.grad_fn, loss.is_leaf, w.grad, b.grad)

# %% [markdown]
# **Loop C.** Each step uses the sum of every gradient so far, and the loss swings (lesson 05).

# %% tags=["torch-parity"]
w = torch.tensor(0.0, requires_grad=True)
b = torch.tensor(0.0, requires_grad=True)
for step in range(40):
    loss = ((w * x + b - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        b -= 0.1 * b.grad
    if step % 5 == 0:
        print(step, f"{loss.item():.4f}")

# %% [markdown]
# ### Explain
# Loop B printed no error, and `loss.backward()` ran. Why does setting
# `loss.requires_grad = True` not make the model learn, and what is the real fix? Two or three
# sentences.

# %% [markdown] nbgrader={"grade": true, "grade_id": "explain_requires_grad", "locked": false, "points": 3, "schema_version": 3, "solution": true}
# `w` and `b` did not require grad, so the forward pass recorded nothing and `loss` has no
# `grad_fn`: it is not connected to the parameters. Setting `loss.requires_grad = True` only
# turns the loss into a leaf of its own, so backward starts and stops there, and `w.grad`,
# `b.grad` stay `None`. The fix is upstream: create the parameters with `requires_grad=True`,
# so that the loss computed from them carries the graph back to them.
#
# *Rubric (3 points): 1 for the cause: `w` and `b` do not require grad, so nothing was
# recorded and `loss` has no `grad_fn`; 1 for what the flag does: it makes `loss` a leaf of its
# own, so backward reaches no parameter and their `.grad` stays `None`; 1 for the fix: the
# parameters must be created with `requires_grad=True` (outside `no_grad`).*

# %% tags=["course-helper"]
from autograd_lab.checks.written import reveal

reveal("explain_requires_grad")

# %% [markdown]
# ## 5. A small neural network
#
# A problem a line cannot solve: 200 points, labelled 1 inside the unit circle, 0 outside. The
# model, $\text{score} = \tanh(XW_1 + b_1)\,W_2 + b_2$ with 16 hidden units, should be positive
# inside.

# %% tags=["torch-parity"]
torch.manual_seed(0)
X = torch.randn(200, 2)
label = ((X[:, 0] ** 2 + X[:, 1] ** 2) < 1.0).float()
target = 2 * label - 1          # +1 inside, -1 outside
print(X.shape, label[:10], int(label.sum().item()))

# %% [markdown]
# ### Exercise: the network's parameters
# Create the four parameters, right after the `torch.manual_seed(1)` line:
#
# - `W1`, shape `(2, 16)`, and `W2`, shape `(16, 1)`: numbers from `torch.randn`, times 0.5;
# - `b1`, shape `(16,)`, and `b2`, shape `(1,)`: zeros;
#
# all four **leaves** that require grad (lesson 01: mind *when* `requires_grad` is set).

# %% nbgrader={"grade": false, "grade_id": "mlp_parameters", "locked": false, "schema_version": 3, "solution": true}
torch.manual_seed(1)
### BEGIN SOLUTION
W1 = (torch.randn(2, 16) * 0.5).requires_grad_()
b1 = torch.zeros(16, requires_grad=True)
W2 = (torch.randn(16, 1) * 0.5).requires_grad_()
b2 = torch.zeros(1, requires_grad=True)
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "mlp_parameters_test", "locked": true, "points": 2, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson10 as check

check.mlp_parameters(W1, b1, W2, b2)

# %% [markdown]
# `b1` has 16 numbers, but `X @ W1` has 200 rows of 16: `+ b1` *broadcasts*, adding `b1` to
# every row. Every row's gradient reaches the same `b1` and they add up: a broadcast tensor's
# gradient is the **sum over the dimensions it was repeated along**, shaped like `b1`. In small:

# %% tags=["torch-parity"]
bias = torch.zeros(3, requires_grad=True)
rows = torch.ones(4, 3) + bias        # bias added to each of the 4 rows
(rows * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
print(rows.shape, bias.grad)          # 4 rows, each sending 1, 2, 3

# %% [markdown]
# The loss is the mean of $\log(1 + e^{-t\cdot\text{score}})$ (with $t = \pm 1$): small when
# the score has the target's sign. `train_step` trains a copy of your parameters (so the cell
# can run again). The picture (matplotlib's): the score over the plane, black where it is 0.

# %%
import matplotlib.pyplot as plt
import numpy as np


def mlp(X, W1, b1, W2, b2):
    return (torch.tanh(X @ W1 + b1) @ W2 + b2).squeeze(1)


params = [p.detach().clone().requires_grad_() for p in (W1, b1, W2, b2)]


def logistic_loss():
    return torch.log(1 + torch.exp(-target * mlp(X, *params))).mean()


mlp_losses = [train_step(params, logistic_loss, lr=0.5) for step in range(500)]
print(f"loss {mlp_losses[0]:.4f} -> {mlp_losses[-1]:.4f}")

ticks = np.linspace(-4.5, 4.5, 121)
grid = torch.tensor(np.stack(np.meshgrid(ticks, ticks), axis=-1), dtype=torch.float32)
with torch.no_grad():
    scores = mlp(grid.reshape(-1, 2), *params).reshape(121, 121).numpy()
plt.contourf(ticks, ticks, scores, levels=20, cmap="RdBu", alpha=0.6)
plt.contour(ticks, ticks, scores, levels=[0], colors="k")
plt.scatter(X[:, 0].numpy(), X[:, 1].numpy(), c=label.numpy(), cmap="RdBu", s=10)
plt.show()

# %% [markdown]
# ## What to remember
#
# - The loop: **forward**, **loss**, **backward**, **update** in place under `torch.no_grad()`,
#   **zero**, and again (`torch.optim`'s `step()` and `zero_grad()` do the last two).
# - Never zeroing: the loss swings. `w = w - lr * w.grad` outside `no_grad`: a new non-leaf `w`;
#   `w -= ...` outside `no_grad`: an error. `loss.requires_grad = True`: nothing learns; the
#   parameters must require grad.
# - A broadcast parameter's gradient is summed over the dimensions it was repeated along.
#
# **Next:** [Lesson 11 · Define-by-run, freezing and grad modes](../11_grad_modes/11_grad_modes.ipynb).
