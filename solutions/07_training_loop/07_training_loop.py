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
# # Lesson 07 · Training a small model
#
# **Time:** about 35 minutes. **You will be able to:**
#
# - write the training loop a PyTorch user writes every day: forward, loss, `backward()`,
#   update under `torch.no_grad()`, zero the gradients;
# - say what goes wrong when one of those steps is missing or misplaced, from the code and
#   from the symptom;
# - train a line, then a small neural network, and read their loss curves.
#
# Everything from the earlier lessons is at work here: the graph recorded by the forward pass
# (01), the gradient of a scalar loss (02, 03), gradients that add up (04), a graph used once
# and freed (05), and the walk backward does (06).

# %%
import matplotlib.pyplot as plt
import numpy as np

import autograd_lab as torch
from autograd_lab import viz

# %% [markdown]
# ## 1. Data and a model
#
# Thirty points near the line $y = 2x + 0.5$, with some noise. `torch.manual_seed(0)` fixes
# the random numbers: `autograd_lab` draws exactly the numbers PyTorch draws for the same seed.
# The model is a line with two parameters, a slope `w` and an intercept `b`, both starting at
# zero; they are the leaves the gradients will land on.

# %% tags=["torch-parity"]
torch.manual_seed(0)
x = torch.linspace(-1, 1, 30)
y = 2 * x + 0.5 + 0.2 * torch.randn(30)
w = torch.tensor(0.0, requires_grad=True)
b = torch.tensor(0.0, requires_grad=True)
print(y[:5])

# %%
plt.scatter(x.numpy(), y.numpy(), s=12)
plt.xlabel("x")
plt.ylabel("y")
plt.show()

# %% [markdown]
# ## 2. One step, by hand
#
# **Forward and loss.** The prediction is `w * x + b`; the loss is the mean squared error, one
# number that is small when the line is close to the points.

# %% tags=["torch-parity"]
loss = ((w * x + b - y) ** 2).mean()
print(f"{loss.item():.4f}")

# %% [markdown]
# The forward pass recorded this graph. The two leaves at the bottom are the parameters;
# `x` and `y` need no gradient, so they are not drawn.

# %%
viz.draw(loss, names={w: "w", b: "b", loss: "loss"})

# %% [markdown]
# **Backward.** One call fills `w.grad` and `b.grad`: how the loss changes when each parameter
# grows. Both are negative, so both parameters should grow.

# %% tags=["torch-parity"]
loss.backward()
print(w.grad, b.grad)

# %% [markdown]
# **Update.** Gradient descent moves each parameter a little against its gradient:
# $w \leftarrow w - \text{lr}\cdot\partial L/\partial w$. The update must change the leaf
# *itself*, in place, and must not be recorded in the graph: it is not part of the model.
# That is what `torch.no_grad()` is for.

# %% tags=["torch-parity"]
lr = 0.1
with torch.no_grad():
    w -= lr * w.grad
    b -= lr * b.grad
print(w, b)

# %% [markdown]
# `w` and `b` are still leaves that require grad, now with new values. **Zero.** Their `.grad`
# still holds this step's gradient, and the next `backward()` would *add* to it (lesson 04).
# So the last step clears it:

# %% tags=["torch-parity"]
w.grad.zero_()
b.grad.zero_()
loss = ((w * x + b - y) ** 2).mean()
print(f"{loss.item():.4f}")

# %% [markdown]
# The loss went down. That is the whole loop: forward, loss, backward, update, zero, again.
#
# ### Predict
# Why `torch.no_grad()` and `-=`? Suppose the update were written the way one writes
# arithmetic everywhere else, with no `no_grad`:
#
# ```python
# w = torch.tensor(1.0, requires_grad=True)
# ((w * 3) ** 2).backward()
# w = w - 0.1 * w.grad
# ```
#
# Predict `w_is_leaf` (`True` or `False`) and `w_grad_fn`, the name of `w.grad_fn` as a
# string (`None` if you think it has none), for the new `w`.

# %% nbgrader={"grade": false, "grade_id": "predict_update", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
w_is_leaf = False
w_grad_fn = "SubBackward0"
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "predict_update_test", "locked": true, "points": 1, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson07 as check

check.update_prediction(w_is_leaf, w_grad_fn)

# %% [markdown]
# ### Run

# %% tags=["torch-parity"]
w = torch.tensor(1.0, requires_grad=True)
((w * 3) ** 2).backward()
w = w - 0.1 * w.grad
print(w, w.is_leaf)

# %% [markdown]
# The name `w` now points at a *new* tensor, the result of a subtraction, with a `grad_fn`:
# not a leaf, so the next backward leaves its `.grad` at `None`, and the leaf the loss was
# computed from is left behind unchanged. The in-place version, `w -= ...`, keeps the same
# tensor, but outside `no_grad` autograd refuses it: changing a leaf that requires grad in
# place would corrupt the graphs it is part of.

# %% tags=["raises-exception", "torch-parity"]
w = torch.tensor(1.0, requires_grad=True)
((w * 3) ** 2).backward()
w -= 0.1 * w.grad

# %% [markdown]
# ## 3. Exercise: the training step
#
# Write `train_step(params, compute_loss, lr)`, one step of gradient descent for any model:
#
# - `params` is a list (or tuple) of parameters: leaves that require grad;
# - `compute_loss` is a function without arguments that runs the forward pass and returns the
#   loss, a one-element tensor (for the line: `lambda: ((w * x + b - y) ** 2).mean()`);
# - `lr` is the learning rate.
#
# The step computes the loss, runs backward, updates every parameter in place under
# `torch.no_grad()`, makes sure no gradient of this step adds up with the next step's
# (`.zero_()` or `= None`, after the update here; many PyTorch loops zero first thing in the
# step instead), and returns the loss as a Python number (`loss.item()`). (PyTorch's optimizers take a
# `closure` like `compute_loss` in `optimizer.step(closure)`, for methods that need to
# evaluate the loss more than once.)

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
from autograd_lab.checks import lesson07 as check

check.train_step_basic(train_step)
### BEGIN HIDDEN TESTS
check.train_step_hidden(train_step)
### END HIDDEN TESTS

# %% [markdown]
# Now fit the line: 100 steps from zero, the loss recorded at each.

# %%
w = torch.tensor(0.0, requires_grad=True)
b = torch.tensor(0.0, requires_grad=True)
losses = [train_step([w, b], lambda: ((w * x + b - y) ** 2).mean(), lr=0.1)
          for step in range(100)]
print(f"w = {w.item():.4f}, b = {b.item():.4f}, loss = {losses[-1]:.4f}")

# %%
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.5))
left.plot(losses)
left.set(xlabel="step", ylabel="loss", yscale="log", title="loss")
right.scatter(x.numpy(), y.numpy(), s=12)
right.plot(x.numpy(), (w * x + b).detach().numpy(), color="C1")
right.set(xlabel="x", ylabel="y", title=f"y = {w.item():.2f} x + {b.item():.2f}")
plt.show()

# %% [markdown]
# The noise keeps the fit from reaching 2 and 0.5 exactly: these are the slope and intercept
# that fit these thirty points best.
#
# ## 4. Three broken loops
#
# Each loop below fits the same line, and each has one bug that learners (and not only
# learners) really write. Read them before running anything.
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
# For each loop, name its bug with one of these labels:
#
# - `"zero_grad"`: the gradients are never zeroed, so they pile up from step to step;
# - `"no_grad"`: the update is not done in place under `torch.no_grad()`;
# - `"requires_grad"`: the parameters do not require grad, and setting it on the loss hides that.
#
# Write `diagnosis = {"A": ..., "B": ..., "C": ...}`.

# %% nbgrader={"grade": false, "grade_id": "diagnosis", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
diagnosis = {"A": "no_grad", "B": "requires_grad", "C": "zero_grad"}
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "diagnosis_test", "locked": true, "points": 2, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson07 as check

check.diagnosis(diagnosis)

# %% [markdown]
# ### Run
# **Loop A.** The first step goes through; by then `w` is a new, non-leaf tensor. The second
# backward leaves its `.grad` at `None`, reading it warns (lesson 04), and the update fails.

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
# **Loop B.** No error at all, and nothing learned: the loss was made a leaf of its own, cut
# off from `w` and `b`. Backward has nowhere to go, and no gradient ever arrives.

# %% tags=["torch-parity"]
w = torch.tensor(0.0)
b = torch.tensor(0.0)
loss = ((w * x + b - y) ** 2).mean()
loss.requires_grad = True
loss.backward()
print(loss.grad_fn, loss.is_leaf, w.grad, b.grad)

# %% [markdown]
# **Loop C.** It runs and the loss moves, but each step's gradient is the sum of every gradient
# so far. The steps keep growing in directions that no longer point downhill, and the loss
# swings instead of settling. Here it is next to the correct loop, which differs by two lines.

# %% tags=["torch-parity"]
def fit(zero, steps=40, lr=0.1):
    w = torch.tensor(0.0, requires_grad=True)
    b = torch.tensor(0.0, requires_grad=True)
    losses = []
    for step in range(steps):
        loss = ((w * x + b - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
        if zero:
            w.grad.zero_()
            b.grad.zero_()
        losses.append(loss.item())
    return losses


with_zeroing, without_zeroing = fit(zero=True), fit(zero=False)
for step in (0, 10, 20, 30, 39):
    print(step, f"{with_zeroing[step]:.4f}", f"{without_zeroing[step]:.4f}")

# %%
plt.plot(with_zeroing, label="zeroed every step")
plt.plot(without_zeroing, label="never zeroed")
plt.xlabel("step")
plt.ylabel("loss")
plt.yscale("log")
plt.legend()
plt.show()

# %% [markdown]
# ### Explain
# Loop B printed no error, and `loss.backward()` ran. Why does setting
# `loss.requires_grad = True` not make the model learn, and what is the real fix? Two or three
# sentences.

# %% [markdown] nbgrader={"grade": true, "grade_id": "explain_requires_grad", "locked": false, "points": 2, "schema_version": 3, "solution": true}
# `w` and `b` did not require grad, so the forward pass recorded nothing and `loss` has no
# `grad_fn`: it is not connected to the parameters. Setting `loss.requires_grad = True` only
# turns the loss into a leaf of its own, so backward starts and stops there, and `w.grad`,
# `b.grad` stay `None`. The fix is upstream: create the parameters with `requires_grad=True`,
# so that the loss computed from them carries the graph back to them.

# %% [markdown]
# ## 5. A small neural network
#
# Now a problem a line cannot solve: 200 points in the plane, labelled 1 inside the circle of
# radius 1 and 0 outside. The model is a network with one hidden layer of 16 tanh units:
# $\text{score} = \tanh(XW_1 + b_1)\,W_2 + b_2$, one number per point, positive for "inside".

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
from autograd_lab.checks import lesson07 as check

check.mlp_parameters(W1, b1, W2, b2)

# %% [markdown]
# The loss is the logistic loss $\log(1 + e^{-t\cdot\text{score}})$, averaged over the points,
# with $t = \pm 1$: small when the score has the target's sign, and large when it does not.
# (It is lesson 06's softplus, of $-t\cdot\text{score}$.) Your `train_step` trains it, as it
# trained the line.

# %%
def mlp(X):
    return (torch.tanh(X @ W1 + b1) @ W2 + b2).squeeze(1)


def logistic_loss():
    return torch.log(1 + torch.exp(-target * mlp(X))).mean()


mlp_losses = [train_step([W1, b1, W2, b2], logistic_loss, lr=0.5) for step in range(500)]
with torch.no_grad():
    accuracy = ((mlp(X) > 0).float() == label).float().mean()
print(f"loss {mlp_losses[0]:.4f} -> {mlp_losses[-1]:.4f}, accuracy {accuracy.item():.3f}")

# %% [markdown]
# One step's loss, as a graph: the same five stages run through every node of it, whatever
# the model.

# %%
viz.draw(logistic_loss(), names={W1: "W1", b1: "b1", W2: "W2", b2: "b2"}, show_values=False)

# %% [markdown]
# The loss curve, and what the network learned: the colour is its score over the plane, the
# black line where the score is 0, its decision boundary.

# %%
ticks = np.linspace(-4.5, 4.5, 121)
grid = np.stack(np.meshgrid(ticks, ticks), axis=-1)     # (121, 121, 2): every (x1, x2)
with torch.no_grad():
    scores = mlp(torch.tensor(grid.reshape(-1, 2), dtype=torch.float32)).numpy()
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
left.plot(mlp_losses)
left.set(xlabel="step", ylabel="loss", title="logistic loss")
right.contourf(grid[..., 0], grid[..., 1], scores.reshape(121, 121), levels=20, cmap="RdBu",
               alpha=0.6)
right.contour(grid[..., 0], grid[..., 1], scores.reshape(121, 121), levels=[0], colors="k")
right.scatter(X[:, 0].numpy(), X[:, 1].numpy(), c=label.numpy(), cmap="RdBu", s=10,
              edgecolors="k", linewidths=0.3)
right.set(aspect="equal", title="decision boundary")
plt.show()

# %% [markdown]
# ## What to remember
#
# - The loop: **forward** (`compute_loss()`), **backward** (`loss.backward()`), **update** in
#   place under `with torch.no_grad():` (`p -= lr * p.grad`), **zero** (`p.grad = None` or
#   `p.grad.zero_()`), and again. `torch.optim`'s `step()` and `zero_grad()` do the last two.
# - Never zeroing lets every step's gradient pile up: the loss swings instead of settling.
# - `w = w - lr * w.grad` outside `no_grad` makes `w` a new non-leaf tensor, whose `.grad` stays
#   `None`; `w -= lr * w.grad` outside `no_grad` raises. Inside `no_grad`, `-=` is right.
# - "element 0 of tensors does not require grad" means the parameters do not require grad.
#   `loss.requires_grad = True` hides the error and the model never learns.
# - Parameters are leaves: give them their values first, then `.requires_grad_()`.
#
# This is the last lesson of the course. To start again from the beginning, or to pass it on:
# [Lesson 00 · Start here](../00_start_here/00_start_here.ipynb).
