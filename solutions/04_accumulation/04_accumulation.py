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
# # Lesson 04 · Gradients add up
#
# **Time:** about 35 minutes. **You will be able to:**
#
# - predict what `.grad` holds after several backward calls (the gradients are *added*);
# - reset it at the right moment, with `grad.zero_()` or `grad = None`;
# - say why an intermediate result has no `.grad`, and get one with `retain_grad()`;
# - find and fix a training loop that forgets to zero;
# - use accumulation on purpose: micro-batches whose gradients add up to the full batch's.
#
# Same rhythm as before: **read**, **predict** (graded: commit before you run the cells below
# it), **run**, **explain**.

# %%
import autograd_lab as torch
from autograd_lab import viz

# %% [markdown]
# ## 1. Two backward calls, one `.grad`
#
# Here is a graph of two steps: $y = x^2$, then $z = y^3$, so $z = x^6$ element by element.
# `z` is a vector, so `backward` needs a weight per element of `z` (lesson 03): ones, which
# makes `x.grad` hold $dz_i/dx_i$. The cell calls `z.backward` **twice** on the same graph.
# `retain_graph=True` is what makes a second pass over one graph possible at all (lesson 05
# is about why); today we only look at what lands in `.grad`.
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
# Write down what the cell prints: `y_grad`, what `print(y.grad)` shows (a tensor, or `None`);
# `x_grad_1` and `x_grad_2`, the tensors `x.grad` holds after the first and after the second
# call (write them as `torch.tensor([..., ...])`).

# %% nbgrader={"grade": false, "grade_id": "predict_seed", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
y_grad = None
x_grad_1 = torch.tensor([6.0, 192.0])
x_grad_2 = torch.tensor([12.0, 384.0])
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "predict_seed_test", "locked": true, "points": 2, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson04 as check

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
# Two things happened.
#
# - **`x.grad` doubled.** $6x^5$ at $x = (1, 2)$ is $(6, 192)$, and the second call did not
#   *replace* that: it *added* the same gradient again. Backward never overwrites a leaf's
#   `.grad`; it adds into it.
# - **`y.grad` is `None`**, both times. `y` was computed (it has a `grad_fn`), so it is not a
#   leaf, and PyTorch only keeps gradients on leaves. The gradient did flow *through* `y` (it
#   had to, to reach `x`), it just was not stored there. PyTorch 2.13 also prints a
#   `UserWarning` each time you read `.grad` of a non-leaf; the older PyTorch the example
#   comes from printed `None` silently.
#
# ## 2. Where the adding happens
#
# The same experiment with two leaves, $y = x^2 + z^3$: three calls, three prints of each
# gradient. $\partial y/\partial x = 2x = 4$ and $\partial y/\partial z = 3z^2 = 48$.

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
# Each pass adds one more copy: 4, 8, 12 and 48, 96, 144. No second derivative is involved;
# it is the *same* first derivative, summed three times. In the drawing, each leaf (blue)
# hangs below an `AccumulateGrad` node: that node is the only place where backward touches
# `.grad`.

# %%
viz.draw(y, names={x: "x", z: "z", y: "y"}, gradient=w)

# %% [markdown]
# Step through a fourth call and watch the two `AccumulateGrad` steps: each one says what it
# received and what the leaf's `.grad` became. The gradients arriving are the same as in the
# first call; only the stored sum grows.

# %%
trace = viz.trace_backward(y, w, retain_graph=True, names={x: "x", z: "z", y: "y"})
print(trace.table())

# %%
trace   # the slider: one frame per step of the backward pass

# %% [markdown]
# ## 3. Zeroing, one tensor at a time
#
# Two ways to start a leaf's gradient afresh:
#
# - `x.grad.zero_()` fills the existing `.grad` tensor with zeros, in place;
# - `x.grad = None` drops it; the next backward creates a new one. This is what
#   `optimizer.zero_grad()` does by default in PyTorch.
#
# Either way, only **that** tensor is reset. Watch `z.grad` below: nobody zeroes it.

# %% tags=["torch-parity"]
x = torch.tensor([2.0, 2.0], requires_grad=True)
z = torch.tensor([4.0, 4.0], requires_grad=True)
y = x**2 + z**3
y.backward(w, retain_graph=True)
y.backward(w, retain_graph=True)
print(x.grad, z.grad)

x.grad.zero_()
print(x.grad)
y.backward(w, retain_graph=True)
print(x.grad, z.grad)

x.grad = None
print(x.grad)
y.backward(w)
print(x.grad, z.grad)

# %% [markdown]
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
# Predict `a.grad` and `b.grad` at point (1), as `a_grad_3` and `b_grad_3`, and at point (2),
# as `a_grad_4` and `b_grad_4`. Write the `a` gradients as tensors, the `b` gradients as
# numbers (or 0-d tensors).

# %% nbgrader={"grade": false, "grade_id": "predict_k_calls", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
a_grad_3 = torch.tensor([6.0, 6.0])
b_grad_3 = 12.0
a_grad_4 = torch.tensor([2.0, 2.0])
b_grad_4 = 16.0
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "predict_k_calls_test", "locked": true, "points": 2, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson04 as check

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
# `retain_graph=True` kept the graph usable; it did nothing to `.grad`. Three calls, three
# copies. Zeroing `a.grad` reset `a` only, so `b.grad` kept counting: 4 per call, four calls.
#
# ## 4. Gradients of intermediate results: `retain_grad()`
#
# Why does PyTorch not keep `.grad` on every tensor? A network computes thousands of
# intermediate tensors per step and you almost never want their gradients; storing them
# would double the memory. When you do want one (to inspect a layer, to debug), ask for it
# **before** the backward pass with `t.retain_grad()`.

# %% tags=["torch-parity"]
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x**2
z = y**3
y.retain_grad()
z.backward(torch.ones(2))
print(y.grad)    # dz/dy = 3 y**2 at y = (1, 4)
print(x.grad)

# %% [markdown]
# In the drawing, `y` now carries its `.grad` too (the green box: a tensor that is not a leaf).

# %%
viz.draw(z, names={x: "x", y: "y", z: "z"})

# %% [markdown]
# ### Exercise: keep a hidden gradient
# Build
#
# ```python
# x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
# h = x * 2
# loss = (h ** 2).sum()
# ```
#
# so that **one** `loss.backward()` leaves $\partial\,\text{loss}/\partial h$ in `h.grad` and
# $\partial\,\text{loss}/\partial x$ in `x.grad`. Keep the names `x`, `h` and `loss`.

# %% nbgrader={"grade": false, "grade_id": "hidden_grad", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
h = x * 2
h.retain_grad()
loss = (h ** 2).sum()
loss.backward()
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "hidden_grad_test", "locked": true, "points": 2, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson04 as check

check.hidden_grad(x, h, loss)

# %% [markdown]
# ## 5. Accumulation as a bug: a loop that forgets to zero
#
# A one-number model: fit $\hat y = w\,x$ to four points on the line $y = 2x$, by gradient
# descent on the mean squared error. The best $w$ is 2. Here is a loop with a bug that gets
# past every error message: it never resets `w.grad`.

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
# The loss falls, then climbs back to where it started, falls again, and never settles:
# after 20 steps $w$ is 1.23, nowhere near 2.
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
from autograd_lab.checks import lesson04 as check

check.fixed_loop(train)
### BEGIN HIDDEN TESTS
check.fixed_loop(train, data=(0.5, -1.0, 2.0), slope=-3.0, steps=12, lr=0.1)
check.fixed_loop(train, data=(1.0, 1.0, 2.0, 3.0, 5.0), slope=0.5, steps=7, lr=0.01)
### END HIDDEN TESTS

# %% [markdown]
# ### Run: both loss curves

# %%
import matplotlib.pyplot as plt

w_fixed, fixed_losses = train(x_data, y_data)
plt.figure(figsize=(6, 3.5))
plt.semilogy(buggy_losses, "o-", label="without zeroing (w.grad adds up)")
plt.semilogy(fixed_losses, "o-", label="zeroed every step")
plt.xlabel("step")
plt.ylabel("loss (log scale)")
plt.legend()
plt.tight_layout()
plt.show()
print(f"w without zeroing: {w_buggy.item():.4f}   w zeroed: {w_fixed.item():.4f}")

# %% [markdown]
# ### Explain
# Without zeroing, the loss swings up and down forever instead of settling. Using what
# `w.grad` holds at step $t$, explain why $w$ overshoots the best value 2 and keeps swinging.
# (Two or three sentences.)

# %% [markdown] nbgrader={"grade": true, "grade_id": "explain_swing", "locked": false, "points": 2, "schema_version": 3, "solution": true}
# At step $t$, `w.grad` holds the **sum** of all gradients since step 0, not the gradient at
# the current `w`. All the early gradients pointed towards larger `w`, so when `w` reaches 2
# the sum still pushes it up, past the minimum; only after enough gradients of the opposite
# sign have been added does the sum change sign, and then it overshoots the other way. The
# update behaves like a ball on a spring with no friction: it never loses its "memory" of
# old gradients, so it never settles. Zeroing makes each update use only the current slope.

# %% [markdown]
# ## 6. Accumulation as a feature: micro-batches
#
# Sometimes the batch you want does not fit in memory. Accumulation is the way out: split
# the batch into **micro-batches**, run forward and backward on each one (its graph is freed
# right after), and let the gradients add up in `.grad`; update once at the end.
#
# Gradients are linear: the gradient of a sum of losses is the sum of their gradients. So the
# adding is exactly right, *if* the pieces add up to the loss you mean. The full batch's loss
# is a **mean** over all $n$ points; with $k$ micro-batches of equal size, it is the average
# of the $k$ micro-batch means, which is each micro-batch's mean times $1/k$.
#
# Here is the full-batch gradient we want to reproduce, for $\hat y = w\,x$ on eight points
# of the line $y = 2x + 1$, at $w = 0.5$:

# %% tags=["torch-parity"]
x8 = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
y8 = 2 * x8 + 1
w = torch.tensor(0.5, requires_grad=True)
((w * x8 - y8) ** 2).mean().backward()
print(f"full batch: {w.grad.item():.4f}")

# %% [markdown]
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

# %% nbgrader={"grade": true, "grade_id": "microbatches_test", "locked": true, "points": 3, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson04 as check

check.microbatches(accumulate_grad)
### BEGIN HIDDEN TESTS
check.microbatches(accumulate_grad, stale=7.0)
check.microbatches(accumulate_grad, w0=-1.0, data=(0.5, 1.5, -2.0, 3.0, 1.0, 0.0), bias=-2.0,
                   batch_size=3, stale=-4.0)
check.microbatches(accumulate_grad, batch_size=1)
check.microbatches(accumulate_grad, batch_size=8)
### END HIDDEN TESTS

# %% [markdown]
# ### Run: the same gradient, four pieces at a time

# %%
w = torch.tensor(0.5, requires_grad=True)
for size in (8, 4, 2, 1):
    accumulate_grad(w, x8, y8, size)
    print(f"micro-batches of {size}: {w.grad.item():.4f}")

# %% [markdown]
# The same number for every split (up to float32 rounding in the last digits): the adding
# that wrecked the loop of section 5 is, here, exactly what we want. The difference is only
# *when* you zero: once per update, never in between.
#
# ## What to remember
#
# - Every backward call **adds** into each leaf's `.grad`; it never replaces it. After $k$
#   calls on the same graph, `.grad` holds $k$ times the gradient.
# - Reset with `t.grad.zero_()` or `t.grad = None` (what `optimizer.zero_grad()` does), once
#   per update, for **every** parameter: zeroing one tensor leaves the others adding up.
# - `retain_graph=True` keeps the graph alive for another pass; it does not reset `.grad`.
# - Intermediate results have no `.grad` (PyTorch 2.13 warns when you read it); call
#   `t.retain_grad()` before backward to keep one.
# - A loop that forgets to zero runs without an error and learns badly; micro-batches use the
#   same adding on purpose, with each micro-batch loss scaled by its share of the batch.
#
# **Next:** [Lesson 05 · retain_graph and the freed graph](../05_retain_graph/05_retain_graph.ipynb):
# why the second pass needed `retain_graph=True`, and what backward throws away.
