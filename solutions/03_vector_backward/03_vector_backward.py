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
# # Lesson 03 · Vector outputs and weighted backward
#
# **Time:** about 35 minutes. **You will be able to:**
#
# - say why `y.backward()` fails when `y` holds more than one number, and what to pass instead;
# - read `y.backward(v)` as the vector–Jacobian product $v^\top J$, and `v` as $\partial L/\partial y$,
#   the gradient of a loss $L$ that comes *after* `y`;
# - choose `v` for a given loss (a weighted sum, a mean), and see why `v = x` is not "the derivative";
# - read a whole Jacobian out of backward, one row per call, and draw it.
#
# The rhythm is the one of lesson 01: **read**, **predict** (graded: commit before you run the
# cells below it), **run**, **explain**. Everything runs with `import autograd_lab as torch`,
# and every number printed here is the number PyTorch 2.13 prints.

# %%
import matplotlib.pyplot as plt

import autograd_lab as torch
from autograd_lab import viz

# %% [markdown]
# ## 1. Backward from a vector
#
# In lesson 02, `z` was a single number and `z.backward()` filled `x.grad` with $dz/dx$. Now
# `y` holds two numbers, one per element of `x`. Ask for its gradient the same way:

# %% tags=["raises-exception", "torch-parity"]
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x ** 2
y.backward()

# %% [markdown]
# Backward always computes the derivative of **one** number with respect to every leaf. For a
# scalar output that number is the output itself, and backward starts the chain rule with
# $\partial z/\partial z = 1$: the hidden `torch.tensor(1.)` of lesson 02. A vector `y` is two
# numbers. The derivative of `y[0]`? Of `y[1]`? Of their sum? PyTorch will not guess: for an
# output with more than one element you pass `gradient`, a tensor shaped like `y` holding one
# weight per element of `y`.
#
# Weights of one, in the old tutorials' spelling (`torch.FloatTensor` is the pre-2018
# constructor of a float32 tensor; today you would write `torch.ones_like(y)`):

# %% tags=["torch-parity"]
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x**2

y.backward(torch.FloatTensor([1.0, 1.0]))  # one weight per element of y
x.grad

# %% [markdown]
# The same call with the weights kept in a variable `w` first (note what is passed: `w`, not `x`):

# %% tags=["torch-parity"]
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x**2

w = torch.FloatTensor([1.0, 1.0])
y.backward(w)
x.grad

# %% [markdown]
# Both give $2x = [2, 4]$: each `y[i]` $= x_i^2$ differentiated with respect to its own `x[i]`.
# That looks like "the derivative of `y`", but only because of the ones and of this particular
# `y`. The next section says what backward really computed.
#
# ## 2. What the weights mean: $v^\top J$, and $v = \partial L / \partial y$
#
# A vector output has a whole **Jacobian**: the matrix $J$ with $J_{ij} = \partial y_i/\partial
# x_j$, one row per element of `y`, one column per element of `x`. Backward never builds $J$.
# Given weights $v$, it computes
#
# $$\texttt{x.grad} = v^\top J, \qquad \texttt{x.grad}_j = \sum_i v_i \,\frac{\partial y_i}{\partial x_j},$$
#
# one vector shaped like `x`: the rows of $J$, weighted by $v$ and added up. For the
# element-wise square, $J$ is diagonal ($\partial y_i/\partial x_j = 0$ for $i \ne j$), so
# weights of one just read off the diagonal. With other weights, each element is scaled:

# %% tags=["torch-parity"]
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
v = torch.tensor([0.1, 1.0, 0.001])
y = x ** 2
y.backward(v)
print(x.grad)

J = torch.autograd.functional.jacobian(lambda t: t ** 2, x)
print(J)
print(v @ J)

# %% [markdown]
# `torch.autograd.functional.jacobian` builds $J$ explicitly (section 5 shows how), and `v @ J`
# agrees with what backward left in `x.grad`.
#
# **Where do the weights come from?** In a real model `y` is rarely the end: some loss $L$ is
# computed from it further down. If backward had started at $L$, the chain rule would have
# reached `y` carrying $\partial L/\partial y_i$ for each $i$, and then gone on to `x` with
# exactly $\sum_i \frac{\partial L}{\partial y_i}\frac{\partial y_i}{\partial x_j}$. So
# `y.backward(v)` means: *"continue backward from here, as if the part of the graph after `y`
# had already sent* $v = \partial L/\partial y$."
#
# Check it: $L = \sum_i v_i\, y_i$ has $\partial L/\partial y = v$. Starting from $L$ gives the
# same `x.grad`:

# %% tags=["torch-parity"]
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x ** 2
L = (y * v).sum()
L.backward()
print(x.grad)

# %% [markdown]
# The most common loss of all is a plain sum, and $\partial (\sum_i y_i)/\partial y_i = 1$ for
# every $i$: **`y.sum().backward()` is `y.backward(torch.ones_like(y))`**. Weights of one are not
# "no weights"; they are the weights of a sum.

# %% tags=["torch-parity"]
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
(x ** 2).sum().backward()
print(x.grad)

x.grad = None
y = x ** 2
y.backward(torch.ones_like(y))
print(x.grad)

# %% [markdown]
# ## 3. The tempting mistake: `y.backward(x)`
#
# "Backward needs a tensor shaped like `y`... and `x` has that shape." One of the course's
# source documents tries it (its unused `w` is kept, as it wrote it).
#
# ### Predict
# What will `x.grad` be after the cell below runs? Write it as a tensor,
# `predicted_grad = torch.tensor([..., ...])`.
#
# ```python
# x = torch.tensor([1.0, 2.0], requires_grad=True)
# y = x**2
# y.backward(x)
# ```

# %% nbgrader={"grade": false, "grade_id": "predict_x_as_gradient", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
predicted_grad = torch.tensor([2.0, 8.0])
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "predict_x_as_gradient_test", "locked": true, "points": 1, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson03 as check

check.x_as_gradient_prediction(predicted_grad)

# %% [markdown]
# ### Run

# %% tags=["torch-parity"]
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x**2

w = torch.FloatTensor([1.0, 1.0])

y.backward(x)
x.grad

# %% [markdown]
# $[2, 8] = x \cdot 2x$: every $\partial y_i/\partial x_i = 2x_i$ was weighted by $v_i = x_i$.
# The numbers are right for *some* question, just not for "what is $dy/dx$".
#
# ### Explain
# Why is `tensor([2., 8.])` not the derivative of `y = x**2`? Which scalar loss $L$ is it the
# gradient of? Answer in two or three sentences.

# %% [markdown] nbgrader={"grade": true, "grade_id": "explain_x_as_gradient", "locked": false, "points": 1, "schema_version": 3, "solution": true}
# The argument of `backward` is not the point where we differentiate: it is $\partial L/\partial y$,
# one weight per element of `y`, and backward returns the weighted sum $v^\top J$. Passing `x`
# weights each $dy_i/dx_i = 2x_i$ by $x_i$, giving $2x_i^2 = [2, 8]$ instead of $2x = [2, 4]$.
# It is the gradient of $L = \sum_i c_i\, y_i$ with constant weights $c = [1, 2]$ (the values of
# `x`, held fixed), i.e. `(y * x.detach()).sum()`, not of `y` itself.

# %% [markdown]
# ## 4. Your turn: choose `v` for a loss further down
#
# Here `y` has **three** elements computed from **four**: `y[i] = x[i] * x[i+1]`.

# %% tags=["torch-parity"]
x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
y = x[:3] * x[1:]
print(y)

# %% [markdown]
# ### Exercise
# Write the weights `v` such that `y.backward(v)` leaves $\partial L/\partial x$ in `x.grad`, for
#
# - `v_weighted`: $L = 3\,y_0 + y_2$;
# - `v_mean`: $L$ = `y.mean()`.
#
# Each is a float tensor. Think about which shape it must have, and what
# $\partial L/\partial y_i$ is for each $i$.

# %% nbgrader={"grade": false, "grade_id": "choose_weights", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
v_weighted = torch.tensor([3.0, 0.0, 1.0])
v_mean = torch.ones(3) / 3
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "choose_weights_test", "locked": true, "points": 2, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson03 as check

check.weighted_loss_weights(v_weighted)
check.mean_loss_weights(v_mean, shape_only=True)
### BEGIN HIDDEN TESTS
check.mean_loss_weights(v_mean)
### END HIDDEN TESTS

# %% [markdown]
# See for yourself: backward from `y` with your weights, then backward from the loss itself.
# (`retain_graph=True` keeps the graph for a second pass: lesson 05 explains why it is needed.)

# %%
y.backward(v_weighted, retain_graph=True)
print("y.backward(v_weighted):", x.grad)
x.grad = None
(3 * y[0] + y[2]).backward()
print("(3*y[0] + y[2]).backward():", x.grad)

# %% [markdown]
# A learner who meets "grad can be implicitly created only for scalar outputs" often "fixes"
# it with `y.backward(torch.ones_like(y))`. That silently computes the gradient of `y.sum()`:
# right only if the sum was the loss you meant. For a mean, every gradient comes out $n$ times
# too large.
#
# ## 5. One-hot weights read the Jacobian, row by row
#
# Weights that are 1 at position $i$ and 0 elsewhere (a **one-hot** vector $e_i$) pick a single
# row: $e_i^\top J$ is row $i$ of $J$, $\partial y_i/\partial x$. A Stack Overflow answer shows
# it with $z = 2x$. It is old code: `Variable` was the wrapper that gave a tensor its
# gradient before PyTorch 0.4 (today it simply returns the tensor), and `x.grad.data.zero_()`
# resets `x.grad` between calls, because backward *adds* into `.grad` (lesson 04).

# %% tags=["torch-parity"]
from autograd_lab.autograd import Variable  # in PyTorch: from torch.autograd import Variable

x = Variable(torch.FloatTensor([[1, 2, 3, 4]]), requires_grad=True)
z = 2*x
loss = z.sum(dim=1)

# do backward for the first element of z
z.backward(torch.FloatTensor([[1, 0, 0, 0]]), retain_graph=True)
print(x.grad.data)
x.grad.data.zero_()  # remove the gradient in x.grad, or it accumulates

# do backward for the second element of z
z.backward(torch.FloatTensor([[0, 1, 0, 0]]), retain_graph=True)
print(x.grad.data)
x.grad.data.zero_()

# all elements of z, with weights dloss/dz = 1 each
z.backward(torch.FloatTensor([[1, 1, 1, 1]]), retain_graph=True)
print(x.grad.data)
x.grad.data.zero_()

# or backward from the loss itself
loss.backward()
print(x.grad.data)

# %% [markdown]
# `loss` has shape `[1]`: one element, so `loss.backward()` needs no `gradient` (PyTorch accepts
# any one-element output). Its result equals the weights of ones, as section 2 predicted.
#
# $z = 2x$ has a boring Jacobian ($2$ on the diagonal). The exercise's function
# `y[i] = x[i] * x[i+1]` has a more interesting one: 3 rows (outputs) by 4 columns (inputs).
# Below, `jacobian` computes the whole of it, and a single backward call with $e_1$ gives
# row 1:

# %% tags=["torch-parity"]
def f(t):
    return t[:3] * t[1:]

x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
J = torch.autograd.functional.jacobian(f, x)
print(J)

y = f(x)
y.backward(torch.tensor([0.0, 1.0, 0.0]))
print(x.grad)

# %% [markdown]
# The heat map shows $J$ as a picture: rows are outputs, columns are inputs, and
# $y_i = x_i x_{i+1}$ depends on two neighbouring inputs only, so every row has two non-zero
# entries, $x_{i+1}$ and $x_i$. The row framed in red is the one `y.backward(e_1)` returned,
# drawn again below it.

# %%
def show_matrix(ax, matrix, rows):
    ax.imshow(matrix.tolist(), cmap="Blues", vmin=0, vmax=J.max().item())
    for i, row in enumerate(matrix.tolist()):
        for j, value in enumerate(row):
            dark = value > J.max().item() / 2
            ax.text(j, i, f"{value:g}", ha="center", va="center", color="white" if dark else "black")
    ax.set_xticks(range(matrix.shape[1]), [f"x[{j}]" for j in range(matrix.shape[1])])
    ax.set_yticks(range(matrix.shape[0]), rows)

fig, (top, bottom) = plt.subplots(2, 1, figsize=(5, 4.5), height_ratios=[3, 1])
show_matrix(top, J, [f"y[{i}]" for i in range(3)])
top.add_patch(plt.Rectangle((-0.5, 0.5), 4, 1, fill=False, edgecolor="red", linewidth=3))
top.set_title("J = jacobian(f, x): row i is dy[i]/dx")
show_matrix(bottom, x.grad.reshape(1, 4), ["x.grad"])
bottom.set_title("after y.backward(torch.tensor([0., 1., 0.]))")
fig.tight_layout()

# %% [markdown]
# ### Exercise: the Jacobian from backward calls
# Write `jacobian_by_rows(f, x)`: for a function `f` from a 1-D tensor `x` to a 1-D tensor
# `y = f(x)`, return the Jacobian as one tensor of shape `[len(y), len(x)]`, built from one
# `backward` call per row (not with `torch.autograd.functional.jacobian`). Hidden tests try
# other functions, with other shapes.
#
# Things to think of: `x` may not require grad (make a leaf that does, e.g.
# `x.detach().requires_grad_(True)`); several backward calls over one graph need
# `retain_graph=True`; `.grad` adds up, and `x.grad` is one tensor that backward updates in
# place; `torch.stack(rows)` turns a list of rows into a matrix.

# %% nbgrader={"grade": false, "grade_id": "jacobian_by_rows", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
def jacobian_by_rows(f, x):
    x = x.detach().requires_grad_(True)
    y = f(x)
    rows = []
    for i in range(len(y)):
        one_hot = torch.zeros_like(y)
        one_hot[i] = 1.0
        x.grad = None
        y.backward(one_hot, retain_graph=True)
        rows.append(x.grad)
    return torch.stack(rows)
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "jacobian_by_rows_test", "locked": true, "points": 3, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson03 as check

check.jacobian_of_lesson_function(jacobian_by_rows)
### BEGIN HIDDEN TESTS
check.jacobian_of_other_functions(jacobian_by_rows)
### END HIDDEN TESTS

# %% [markdown]
# ## 6. The blog's example: `x @ M`, row by row
#
# A 2018 blog post, written by someone who found `backward(v)` baffling, runs this (its
# `print('\n')` spacers left out). Modern PyTorch prints `requires_grad=True` and
# `grad_fn=<MmBackward0>` after a tensor's values, which its 2018 output did not show.

# %% tags=["torch-parity"]
x = Variable(torch.FloatTensor([[2,1]]), requires_grad=True)
print(x)
M = Variable(torch.FloatTensor([[1,2],[3,4]]))
print(M)
y = torch.mm(x, M)
print(y)

# %% [markdown]
# The backward graph: `MmBackward0` made `y`, and leads to `x`'s `AccumulateGrad`. `M` does not
# require grad, so backward has nothing to deliver to it and it is not drawn.

# %%
viz.draw(y, names={x: "x", M: "M", y: "y"})

# %% [markdown]
# Now the blog's three backward calls, zeroing `x.grad` in between:

# %% tags=["torch-parity"]
y.backward(torch.FloatTensor([[1,0]]), retain_graph = True)
print(x.grad.data)
x.grad.data.zero_()
y.backward(torch.FloatTensor([[0,1]]), retain_graph = True)
print(x.grad.data)
x.grad.data.zero_()
y.backward(torch.FloatTensor([[1,1]]), retain_graph = True)
print(x.grad.data)

# %% [markdown]
# The blog's author noticed that the third result is the sum of the first two and wondered why.
# With $v^\top J$ it has to be. Written out, $y = [2 \cdot 1 + 1 \cdot 3,\ 2 \cdot 2 + 1 \cdot 4] =
# [5, 8]$, and $y_j = \sum_i x_i M_{ij}$, so
#
# - $\partial y_0/\partial x = [M_{00}, M_{10}] = [1, 3]$: row 0 of $J$, what $[1, 0]$ gave;
# - $\partial y_1/\partial x = [M_{01}, M_{11}] = [2, 4]$: row 1 of $J$, what $[0, 1]$ gave;
# - $[1, 1]$ adds the two rows: $[3, 7]$.
#
# The rows of $J$ are the **columns** of $M$: $J = M^\top$. (`jacobian` on this `x` of shape
# `[1, 2]` would return shape `[1, 2, 1, 2]`, `y`'s shape followed by `x`'s.)
#
# ### Predict
# Now the weights $v$ = `[[3., 1.]]`. What will `x.grad` be after
# `y.backward(torch.tensor([[3., 1.]]))` (with `x.grad` zeroed first)? Write a tensor,
# `mm_grad_prediction = torch.tensor(...)`, with the shape `x.grad` has.

# %% nbgrader={"grade": false, "grade_id": "predict_mm", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
mm_grad_prediction = torch.tensor([[5.0, 13.0]])
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "predict_mm_test", "locked": true, "points": 1, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson03 as check

check.mm_prediction(mm_grad_prediction)

# %% [markdown]
# ### Run

# %% tags=["torch-parity"]
x.grad.zero_()
y.backward(torch.tensor([[3.0, 1.0]]), retain_graph=True)
print(x.grad)

# %% [markdown]
# ### Step through it
# `viz.trace_backward(root, gradient)` runs the same backward pass and records every step. The
# table lists them: `MmBackward0` receives $v$ = `[[3., 1.]]` and sends $v M^\top$ = `[[5., 13.]]`
# on to `x`'s `AccumulateGrad`, which adds it into `x.grad` (reset first, so the table shows
# this pass alone).

# %%
x.grad = None
trace = viz.trace_backward(y, torch.tensor([[3.0, 1.0]]), names={x: "x", M: "M", y: "y"})
print(trace.table())

# %% [markdown]
# Move the slider: each frame is the graph while one step runs, the running node in red, the
# gradients already sent written on the edges.

# %%
trace

# %% [markdown]
# ## 7. The 60-minute blitz, read with new eyes
#
# The blog started from a snippet of PyTorch's "60 Minute Blitz" tutorial that made no sense to
# its author: a random `x`, doubled until the norm of `y` passes 1000, then a backward with odd
# weights. The blog's `x` was random, so ours is different: `torch.manual_seed(0)` fixes it, and
# `autograd_lab` draws exactly the numbers PyTorch draws. The seed was picked because it needs
# the same number of doublings as the blog's run.

# %% tags=["torch-parity"]
torch.manual_seed(0)
x = torch.randn(3, requires_grad=True)
y = x * 2
while y.data.norm() < 1000:
    y = y * 2
print(y)
gradients = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
y.backward(gradients)
print(x.grad)

# %% [markdown]
# The blog printed `y = [-590.4467, 97.6760, 921.0221]` for its own random `x`, and then the
# same `x.grad` as here: $[51.2, 512, 0.0512]$. PyTorch 2.13 writes it as
# `tensor([5.1200e+01, 5.1200e+02, 5.1200e-02])`, switching to scientific notation because
# the values span more than a factor of 1000; the 2018 version printed
# `tensor([ 51.2000, 512.0000, 0.0512])`.
#
# Why does the random `x` not matter? Every step multiplies by 2, so $y = 2^k x$ and
# $J = 2^k I$: `x.grad` $= 2^k v$, whatever `x` is. Only the number of doublings $k$ depends
# on `x`. Dividing by the weights shows $2^k$:

# %% tags=["torch-parity"]
print(x)
print(x.grad / gradients)

# %% [markdown]
# $2^9 = 512$: nine multiplications. The graph shows them, one `MulBackward0` per pass through
# the loop: the graph records what ran, not the code that ran it.

# %%
viz.draw(y, names={x: "x", y: "y"})

# %% [markdown]
# ## What to remember
#
# - `backward()` without arguments only works for a one-element output: PyTorch starts from
#   $\partial L/\partial L = 1$. Otherwise you get "grad can be implicitly created only for
#   scalar outputs", and you must pass `gradient`.
# - `gradient` has the **output's** shape and means $\partial L/\partial y$ for a loss $L$ further
#   down. `y.backward(v)` gives the same `x.grad` as `(y * v).sum().backward()`.
# - Backward computes the vector–Jacobian product $v^\top J$, one vector shaped like `x`; it never
#   builds $J$. Weights of one are the weights of a **sum**; a mean needs `ones / n`.
# - `y.backward(x)` is not $dy/dx$: it weights each row of $J$ by the values of `x`.
# - One-hot weights $e_i$ give row $i$ of $J$; `torch.autograd.functional.jacobian` does
#   exactly that, once per row. Between calls, reset `.grad`: it adds up.
#
# **Next:** [Lesson 04 · Gradient accumulation](../04_accumulation/04_accumulation.ipynb), where
# `.grad` adding up becomes the topic.
