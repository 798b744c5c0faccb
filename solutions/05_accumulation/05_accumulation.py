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
# # Lesson 05 · Gradients add up
#
# **Time:** about 45 minutes: 11 reading and running the code, 13 predicting and explaining, 16 on exercises. **You will be able to:**
#
# - predict what `.grad` holds after several backward calls, and reset it at the right moment;
# - write a gradient-descent loop, and fix one that forgets to zero;
# - add up micro-batches' gradients into the full batch's.

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
# ## 1. Two backward calls, one `.grad`
#
# The autograd notebook builds $z = (x^2)^3$ and calls `z.backward` **twice**, with weights of
# one (lesson 03). `retain_graph=True` makes a second pass possible at all (lesson 06 says why).
#
# ```python
# x = torch.tensor([1.0, 2.0], requires_grad=True)
# y = x**2
# z = y**3
# w = torch.FloatTensor([1.0, 1.0])
#
# z.backward(w, retain_graph=True)
# print(y.grad)
# print(x.grad)
#
# z.backward(w, retain_graph=True)
# print(y.grad)
# print(x.grad)
# ```
#
# ### Predict
# `y_grad`: what `print(y.grad)` shows (a tensor, or `None`); `x_grad_1`, `x_grad_2`: `x.grad`
# after the first and the second call, as `torch.tensor([..., ...])`.

# %% nbgrader={"grade": false, "grade_id": "predict_seed", "locked": false, "schema_version": 3, "solution": true} tags=["prediction"]
### BEGIN SOLUTION
y_grad = None
x_grad_1 = torch.tensor([6.0, 192.0])
x_grad_2 = torch.tensor([12.0, 384.0])
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "predict_seed_test", "locked": true, "points": 1, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson05 as check

check.seed_prediction(y_grad, x_grad_1, x_grad_2)

# %% [markdown]
# ### Run

# %% tags=["torch-parity"]
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x**2
z = y**3
w = torch.FloatTensor([1.0, 1.0])

z.backward(w, retain_graph=True)
print(y.grad)
print(x.grad)

z.backward(w, retain_graph=True)
print(y.grad)
print(x.grad)

# %% [markdown]
# `x.grad` doubled: $6x^5 = (6, 192)$, and the second call *added* it again. Backward never
# overwrites a leaf's `.grad`; it adds into it. `y.grad` is `None`: `y` is not a leaf, so the
# gradient flowed *through* it without being kept (lesson 01's `retain_grad()` would keep it).
#
# ## 2. Where the adding happens
#
# The autograd notebook's next example (from the javatpoint tutorial): two leaves, three calls,
# $\partial y/\partial x = 2x = 4$ and $\partial y/\partial z = 3z^2 = 48$.

# %% tags=["torch-parity"]
x = torch.tensor([2.0, 2.0], requires_grad=True)
z = torch.tensor([4.0, 4.0], requires_grad=True)
y = x**2 + z**3
w = torch.FloatTensor([1.0, 1.0])

y.backward(w, retain_graph=True)
print(x.grad)
print(z.grad)

y.backward(w, retain_graph=True)
print(x.grad)
print(z.grad)

y.backward(w, retain_graph=True)
print(x.grad)
print(z.grad)

# %% [markdown]
# The *same* first derivative, summed three times. The adding happens in each leaf's
# `AccumulateGrad` node, drawn above the leaf: the one place where backward touches `.grad`.

# %% tags=["course-helper"]
viz.draw(y, names={x: "x", z: "z", y: "y"}, gradient=w)

# %% [markdown]
# ## 3. Zeroing
#
# `x.grad.zero_()` fills `.grad` with zeros; `x.grad = None` drops it (what
# `optimizer.zero_grad()` does). Either resets that one tensor only: lesson 04 zeroed `x.grad`
# between its one-hot calls.
#
# ### Predict: after k calls
# A new graph: `out` depends on the vector `a` and the number `b`.
#
# ```python
# a = torch.tensor([1.0, 3.0], requires_grad=True)
# b = torch.tensor(2.0, requires_grad=True)
# out = (a * b).sum()
#
# for _ in range(3):
#     out.backward(retain_graph=True)
# # (1) here
#
# a.grad.zero_()
# out.backward()
# # (2) here
# ```
#
# Predict `a.grad` and `b.grad` at (1), as `a_grad_3` and `b_grad_3`, and at (2), as
# `a_grad_4` and `b_grad_4`: `a`'s as tensors, `b`'s as numbers.

# %% nbgrader={"grade": false, "grade_id": "predict_k_calls", "locked": false, "schema_version": 3, "solution": true} tags=["prediction"]
### BEGIN SOLUTION
a_grad_3 = torch.tensor([6.0, 6.0])
b_grad_3 = 12.0
a_grad_4 = torch.tensor([2.0, 2.0])
b_grad_4 = 16.0
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "predict_k_calls_test", "locked": true, "points": 1, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson05 as check

check.k_calls_prediction(a_grad_3, b_grad_3, a_grad_4, b_grad_4)

# %% [markdown]
# ### Run

# %% tags=["torch-parity"]
a = torch.tensor([1.0, 3.0], requires_grad=True)
b = torch.tensor(2.0, requires_grad=True)
out = (a * b).sum()

for _ in range(3):
    out.backward(retain_graph=True)
print("(1)", a.grad, b.grad)

a.grad.zero_()
out.backward()
print("(2)", a.grad, b.grad)

# %% [markdown]
# Zeroing `a.grad` left `b.grad` counting: 4 per call, four calls.
#
# ## 4. Accumulation as a bug: a loop that forgets to zero
#
# **Gradient descent** repeats one step: compute the loss's gradient and move each parameter a
# little *against* it, $w \leftarrow w - \text{lr}\cdot\partial L/\partial w$ (lr, the learning
# rate, sets how far). Here $\hat y = w\,x$ is fitted to four points of $y = 2x$ (best $w$: 2),
# the loss their **mean squared error** `((w * x - y) ** 2).mean()`. The update is
#
# ```python
# with torch.no_grad():
#     w -= lr * w.grad
# ```
#
# (`-=` keeps `w` the same leaf; `no_grad()` keeps the change out of the graph: lesson 10.) This
# loop has a bug no error catches: it never resets `w.grad`.

# %% tags=["torch-parity"]
def train_without_zeroing(x, y, steps=20, lr=0.02):
    w = torch.tensor(0.0, requires_grad=True)
    losses = []
    for step in range(steps):
        loss = ((w * x - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
        losses.append(loss.item())
    return w, losses


x_data = torch.tensor([1.0, 2.0, 3.0, 4.0])
y_data = 2 * x_data
w_buggy, buggy_losses = train_without_zeroing(x_data, y_data)
print(w_buggy)
print([f"{v:.4f}" for v in buggy_losses])

# %% [markdown]
# The loss falls, climbs back, falls again and never settles: $w$ ends at 1.23, not 2.
#
# ### Exercise: fix the loop
# Write `train(x, y, steps=20, lr=0.02)`: the same loop, returning `(w, losses)` the same
# way, but with `w.grad` reset so that every update uses **this step's** gradient only.
# Change nothing else.

# %% nbgrader={"grade": false, "grade_id": "fix_loop", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
def train(x, y, steps=20, lr=0.02):
    w = torch.tensor(0.0, requires_grad=True)
    losses = []
    for step in range(steps):
        loss = ((w * x - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
        w.grad = None       # the next step's backward starts from nothing
        losses.append(loss.item())
    return w, losses
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "fix_loop_test", "locked": true, "points": 3, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson05 as check

check.fixed_loop(train)
### BEGIN HIDDEN TESTS
check.fixed_loop(train, data=(0.5, -1.0, 2.0), slope=-3.0, steps=12, lr=0.1)
check.fixed_loop(train, data=(1.0, 1.0, 2.0, 3.0, 5.0), slope=0.5, steps=7, lr=0.01)
### END HIDDEN TESTS

# %% [markdown]
# ### Run: both loss curves
#
# Drawn with matplotlib, imported where the lesson first draws a curve.

# %%
import matplotlib.pyplot as plt

w_fixed, fixed_losses = train(x_data, y_data)
plt.semilogy(buggy_losses, "o-", label="without zeroing")
plt.semilogy(fixed_losses, "o-", label="zeroed every step")
plt.xlabel("step")
plt.ylabel("loss")
plt.legend()
plt.show()
print(f"w without zeroing: {w_buggy.item():.4f}   w zeroed: {w_fixed.item():.4f}")

# %% [markdown]
# ### Explain
# Without zeroing, the loss swings up and down forever instead of settling. Using what
# `w.grad` holds at step $t$, explain why $w$ overshoots the best value 2 and keeps swinging.
# (Two or three sentences.)

# %% [markdown] nbgrader={"grade": true, "grade_id": "explain_swing", "locked": false, "points": 3, "schema_version": 3, "solution": true}
# At step $t$, `w.grad` holds the **sum** of all gradients since step 0, not the gradient at
# the current `w`. All the early gradients pointed towards larger `w`, so when `w` reaches 2
# the sum still pushes it up, past the minimum; only after enough gradients of the opposite
# sign have been added does the sum change sign, and then it overshoots the other way. The
# update behaves like a ball on a spring with no friction: it never loses its "memory" of
# old gradients, so it never settles. Zeroing makes each update use only the current slope.
#
# *Rubric (3 points): 1 for saying that `w.grad` at step $t$ holds the sum of every gradient
# since the start, not the slope at the current `w`; 1 for explaining the overshoot: at
# $w = 2$ the sum is still dominated by the early gradients that pushed `w` up; 1 for the
# swing: the sum changes sign only after enough opposite gradients have been added, so `w`
# overshoots back and forth (a frictionless spring, momentum that never decays).*

# %% tags=["course-helper"]
from autograd_lab.checks.written import reveal

reveal("explain_swing")

# %% [markdown]
# ## 5. Accumulation as a feature: micro-batches
#
# A batch too big for memory is split into **micro-batches**: forward and backward on each,
# gradients adding up in `.grad`, one update at the end. The gradient of a sum is the sum of
# the gradients, so this is exact *if* the pieces add up to the loss you mean: the full batch's
# **mean** is, for $k$ equal micro-batches, the sum of their means times $1/k$.
#
# ### Exercise: accumulate over micro-batches
# Write `accumulate_grad(w, x, y, batch_size)`. It must leave in `w.grad` the gradient of the
# **full-batch** mean squared error `((w * x - y) ** 2).mean()`, calling `backward()` once
# per micro-batch of `batch_size` consecutive points (`x[i:i + batch_size]`; `batch_size`
# divides `len(x)`). Careful: `w` may arrive with an old `.grad` from an earlier step.
# It returns nothing.

# %% nbgrader={"grade": false, "grade_id": "microbatches", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
def accumulate_grad(w, x, y, batch_size):
    w.grad = None                       # once per step: the batches must add up together
    n_batches = len(x) // batch_size
    for i in range(0, len(x), batch_size):
        xb, yb = x[i:i + batch_size], y[i:i + batch_size]
        loss = ((w * xb - yb) ** 2).mean() / n_batches
        loss.backward()
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "microbatches_test", "locked": true, "points": 4, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson05 as check

check.microbatches(accumulate_grad, stale=7.0)
### BEGIN HIDDEN TESTS
check.microbatches(accumulate_grad)
check.microbatches(accumulate_grad, w0=-1.0, data=(0.5, 1.5, -2.0, 3.0, 1.0, 0.0), bias=-2.0,
                   batch_size=3, stale=-4.0)
check.microbatches(accumulate_grad, batch_size=1)
check.microbatches(accumulate_grad, batch_size=8)
### END HIDDEN TESTS

# %% [markdown]
# ### Run: the full batch's gradient, then in pieces of every size
# For $\hat y = w\,x$ on eight points of $y = 2x + 1$, at $w = 0.5$:

# %% tags=["torch-parity"]
x8 = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
y8 = 2 * x8 + 1
w = torch.tensor(0.5, requires_grad=True)
((w * x8 - y8) ** 2).mean().backward()
print(f"full batch: {w.grad.item():.4f}")

for size in (8, 4, 2, 1):
    accumulate_grad(w, x8, y8, size)
    print(f"micro-batches of {size}: {w.grad.item():.4f}")

# %% [markdown]
# The same number every time (up to float32 rounding): the adding that wrecked section 4's
# loop is what we want here. Only *when* you zero differs.
#
# ## What to remember
#
# - Every backward call **adds** into each leaf's `.grad`; `retain_graph=True` does not reset it.
# - Reset with `t.grad.zero_()` or `t.grad = None`, once per update, for **every** parameter.
# - Intermediate results have no `.grad` (lesson 01's `t.retain_grad()` keeps one).
# - Gradient descent: `with torch.no_grad(): w -= lr * w.grad`, then zero. Forgetting to zero
#   raises no error and learns badly; micro-batches add up on purpose, each loss scaled.
#
# **Next:** [Lesson 06 · retain_graph and the freed graph](../06_retain_graph/06_retain_graph.ipynb).
