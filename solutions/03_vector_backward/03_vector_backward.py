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
# **Time:** about 25 minutes: 9 reading and running the code, 6 predicting and explaining, 6 on exercises. **You will be able to:**
#
# - pass `gradient` to the backward of a vector, choose it for a given loss, and say why
#   `y.backward(x)` is not "the derivative";
# - read `y.backward(v)` as $v^\top J$ with $v = \partial L/\partial y$, and split a backward
#   pass in two;
# - say why backward never builds the Jacobian.

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
# ## 1. Backward from a vector
#
# Lesson 02's `z` was one number; this `y` holds two:

# %% tags=["raises-exception", "torch-parity"]
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x ** 2
y.backward()

# %% [markdown]
# Backward differentiates **one** number, starting from $\partial z/\partial z = 1$; `y` is
# two. Rather than guess which (or their sum), PyTorch wants `gradient`: a tensor shaped like
# `y`, one weight per element. The autograd notebook passes ones, directly and in a variable
# (`torch.FloatTensor` is the old way to make a float32 tensor):

# %% tags=["torch-parity"]
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x**2
y.backward(torch.FloatTensor([1.0, 1.0]))  # one weight per element of y
print(x.grad)

x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x**2
w = torch.FloatTensor([1.0, 1.0])
y.backward(w)                              # the same weights, kept in a variable
print(x.grad)

# %% [markdown]
# Both give $2x = [2, 4]$: "the derivative of `y`", it seems, but only thanks to the ones.
#
# ## 2. What the weights mean: $v^\top J$, and $v = \partial L/\partial y$
#
# The **Jacobian** $J$ of `y` has $J_{ij} = \partial y_i/\partial x_j$: a row per element of
# `y`, a column per element of `x`. Backward adds up the rows of $J$ weighted by $v$:
#
# $$\texttt{x.grad} = v^\top J, \qquad \texttt{x.grad}_j = \sum_i v_i \,\frac{\partial y_i}{\partial x_j}.$$
#
# For an element-wise square, $J$ is diagonal:

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
# `v @ J` is what backward left in `x.grad`. Weights of one add up the rows:
# `y.backward(torch.ones_like(y))` is `y.sum().backward()`, the weights of a **sum**.
#
# ### Where the weights come from: a backward pass in two halves
# The key idea of Allu's blog post: see `y` as a layer inside a network (its "4th layer") with a
# loss $L$ further on. Backward from $L$ reaches `y` carrying
# $v_i = \partial L/\partial y_i$, then goes on to `x` with exactly $v^\top J$: `y.backward(v)`
# *continues from `y`*. Here $L = \sum_i x_i^4$, cut at $y = x^2$; the second half
# starts from a new leaf with `y`'s numbers (lesson 01's `detach()`, then `requires_grad_()`).

# %% tags=["torch-parity"]
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x ** 2                                 # first half: x -> y
y_start = y.detach().requires_grad_()      # second half: a leaf with y's numbers -> L
L = (y_start ** 2).sum()
L.backward()
v = y_start.grad                           # dL/dy: what the second half sends back
print(v)
y.backward(v)                              # the first half, from v on
print(x.grad)

# %% [markdown]
# $dL/dx = 4x^3 = [4, 32, 108]$, as from $L$ in one piece.
#
# **Why backward never builds $J$.** For 1,000 inputs and outputs, $J$ holds a million numbers.
# $v^\top J$ needs none of them: each node applies its own short rule to what arrives (for
# `x ** 2`, $v \cdot 2x$), so a backward pass costs a small constant multiple of the forward
# pass (for a typical network about twice), however many parameters a model has: never a
# factor of their number, as building $J$ would.
#
# ## 3. The tempting mistake: `y.backward(x)`
#
# `x` has `y`'s shape here, and the autograd notebook tries it (its unused `w` kept).
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

# %% nbgrader={"grade": false, "grade_id": "predict_x_as_gradient", "locked": false, "schema_version": 3, "solution": true} tags=["prediction"]
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
# $[2, 8] = x \cdot 2x$: each $\partial y_i/\partial x_i = 2x_i$ weighted by $v_i = x_i$. Right
# for *some* question, not for "what is $dy/dx$".
#
# ### Explain
# Why is `tensor([2., 8.])` not the derivative of `y = x**2`? It is the gradient of a scalar
# loss $L$ that weights each $y_i$ by a fixed number, a constant that does not change when `x`
# does: which $L$? Answer in two or three sentences.

# %% [markdown] nbgrader={"grade": true, "grade_id": "explain_x_as_gradient", "locked": false, "points": 1, "schema_version": 3, "solution": true}
# The argument of `backward` is not the point where we differentiate: it is $\partial L/\partial y$,
# one weight per element of `y`, and backward returns the weighted sum $v^\top J$. Passing `x`
# weights each $dy_i/dx_i = 2x_i$ by $x_i$, giving $2x_i^2 = [2, 8]$ instead of $2x = [2, 4]$.
# It is the gradient of $L = \sum_i c_i\, y_i$ with constant weights $c = [1, 2]$ (the values of
# `x`, held fixed), i.e. `(y * x.detach()).sum()`, not of `y` itself.
#
# *Rubric (1 point): for both halves: the argument of `backward` is a weight per element of `y`
# ($\partial L/\partial y$), so `backward(x)` returns $x_i \cdot 2x_i$, not $2x_i$; and the loss
# it is the gradient of, $L = \sum_i c_i y_i$ with $c$ = the values of `x` held fixed. Half a
# point for one of them.*

# %% tags=["course-helper"]
from autograd_lab.checks.written import reveal

reveal("explain_x_as_gradient")

# %% [markdown]
# ## 4. Your turn: choose `v` for a loss further down
#
# Here `y` has **three** elements computed from **four**: `y[i] = x[i] * x[i+1]`. `v` holds
# $\partial L/\partial y$, so it has `y`'s shape, whatever `x`'s is; weights shaped like `x`
# are refused:

# %% tags=["raises-exception", "torch-parity"]
x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
y = x[:3] * x[1:]
print(y)
y.backward(torch.ones(4))

# %% [markdown]
# ### Exercise
# Write the weights `v` such that `y.backward(v)` leaves $\partial L/\partial x$ in `x.grad`, for
#
# - `v_weighted`: $L = 3\,y_0 + y_2$;
# - `v_mean`: $L$ = `y.mean()`.
#
# Each is a float tensor. What is $\partial L/\partial y_i$ for each $i$?

# %% nbgrader={"grade": false, "grade_id": "choose_weights", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
v_weighted = torch.tensor([3.0, 0.0, 1.0])
v_mean = torch.ones(3) / 3
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "choose_weights_test", "locked": true, "points": 2, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson03 as check

check.weighted_loss_weights(v_weighted)
check.mean_loss_weights(v_mean)

# %% [markdown]
# The usual "fix" of "grad can be implicitly created only for scalar outputs",
# `y.backward(torch.ones_like(y))`, is the gradient of `y.sum()`: $n$ times too large for a mean.
#
# Here is that `y`'s graph. Whatever weights you pass enter at `MulBackward0`; each
# `SliceBackward0` puts its three numbers back in their places among `x`'s four, and the one
# `AccumulateGrad` of `x` adds both into `x.grad`.

# %% tags=["course-helper"]
x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
y = x[:3] * x[1:]
viz.draw(y, names={x: "x", y: "y"})

# %% [markdown]
# ## What to remember
#
# - A vector output needs `gradient`, shaped like the **output**: $v = \partial L/\partial y$.
# - Backward computes $v^\top J$ without building $J$, at a small constant multiple of the
#   forward pass's cost; `y.backward(v)` continues a pass that stopped at `y`.
# - Ones are the weights of a **sum**, `ones / n` of a mean; `y.backward(x)` is not $dy/dx$.
#
# **Next:** [Lesson 04 · The Jacobian, row by row](../04_jacobian_rows/04_jacobian_rows.ipynb).
