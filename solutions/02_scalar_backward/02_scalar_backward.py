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
# # Lesson 02 · Scalar backward
#
# **Time:** about 40 minutes: 14 reading and running the code, 8 predicting and explaining, 17 on exercises. **You will be able to:**
#
# - get a derivative out of autograd: build the function from a leaf, call `backward()`, read
#   the leaf's `.grad`;
# - say what the invisible argument of `backward()`, `torch.tensor(1.)`, stands for;
# - follow the chain rule through a graph, node by node, and derive the same result by hand;
# - check any derivative without autograd, with a central finite difference, and choose its
#   step.

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
# ## 1. One number in, one number out
#
# Take $z = x^3$ at $x = 1$. From calculus, $dz/dx = 3x^2$. Autograd gets the same number
# without knowing any formula for the whole function: the graph recorded that `z` came out of a
# power, and the power node knows its own small derivative.
#
# ### Predict
# After the three lines below, what number will `x.grad` hold?
#
# ```python
# x = torch.tensor(1.0, requires_grad=True)
# z = x ** 3
# z.backward()
# ```
#
# Write it as `predicted_grad = ...`.

# %% nbgrader={"grade": false, "grade_id": "predict_cube", "locked": false, "schema_version": 3, "solution": true} tags=["prediction"]
### BEGIN SOLUTION
predicted_grad = 3.0
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "predict_cube_test", "locked": true, "points": 1, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson02 as check

check.cube_prediction(predicted_grad)

# %% [markdown]
# ### Run

# %% tags=["torch-parity"]
x = torch.tensor(1.0, requires_grad=True)
z = x ** 3
z.backward()
print(x.grad.data)

# %% [markdown]
# `tensor(3.)`: $3 \cdot 1^2$. This is the first example of the autograd notebook (lesson 00),
# which took it from the Towards Data Science article; its comment says the cell prints `3`,
# but what PyTorch prints is the tensor, `tensor(3.)`. It prints `x.grad.data`, the numbers of
# `x.grad` without their history; `x.grad` itself prints the same, since a gradient is a plain
# tensor with no history of its own.
#
# Here is the graph `backward()` walked. It starts at `z` and goes down through the node that
# made it, `PowBackward0`, to the `AccumulateGrad` node that writes into `x.grad`.

# %% tags=["course-helper"]
viz.draw(z, names={x: "x", z: "z"})

# %% [markdown]
# ## 2. The invisible `torch.tensor(1.)`
#
# `z.backward()` is short for `z.backward(torch.tensor(1.))`. That argument, `gradient`, is the
# **starting value** of the backward pass: the derivative of *whatever you finally care about*
# with respect to `z`. `z.backward()` says "I care about `z` itself", and $dz/dz = 1$. Each node
# then multiplies by its own local derivative, so `x.grad` is that starting value times
# $dz/dx$.
#
# ### Predict
# Start the pass with 10 instead of 1, on a fresh `x`:
#
# ```python
# x = torch.tensor(1.0, requires_grad=True)
# z = x ** 3
# z.backward(torch.tensor(10.0))
# ```
#
# What will `x.grad` hold? Write `predicted_grad_10 = ...`.

# %% nbgrader={"grade": false, "grade_id": "predict_seed", "locked": false, "schema_version": 3, "solution": true} tags=["prediction"]
### BEGIN SOLUTION
predicted_grad_10 = 30.0
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "predict_seed_test", "locked": true, "points": 1, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson02 as check

check.seed_prediction(predicted_grad_10)

# %% [markdown]
# ### Run

# %% tags=["torch-parity"]
x = torch.tensor(1.0, requires_grad=True)
z = x ** 3
z.backward(torch.tensor(10.0))
print(x.grad)

# %% [markdown]
# ### Explain
# Why is the answer 30? Say in your own words what the `1.` of the default `torch.tensor(1.)`
# stands for, and what starting with 10 means instead. Two or three sentences.

# %% [markdown] nbgrader={"grade": true, "grade_id": "explain_seed", "locked": false, "points": 2, "schema_version": 3, "solution": true}
# The argument of `backward()` is the derivative of the quantity we finally care about with
# respect to `z`. With no argument that quantity is `z` itself, and $dz/dz = 1$. Starting with 10
# means we care about $L = 10z$: the chain rule multiplies 10 by $dz/dx = 3x^2 = 3$, so `x.grad`
# is $dL/dx = 30$.
#
# *Rubric (2 points): 1 for the default `1.` as $dz/dz$, the derivative of the quantity we care
# about (here `z` itself) with respect to `z`; 1 for starting with 10 as caring about
# $L = 10z$, every gradient scaled by 10: $10 \cdot 3x^2 = 30$.*

# %% tags=["course-helper"]
from autograd_lab.checks.written import reveal

reveal("explain_seed")

# %% [markdown]
# ### Three things `backward()` does not do
#
# **It does not reset `.grad`.** It *adds* its result to what `.grad` already holds. In a
# notebook this bites when you run a cell again: the graph is rebuilt, but `x` is the same
# tensor as before, so its `.grad` grows. The loop below does what running a cell twice does.

# %% tags=["torch-parity"]
x = torch.tensor(1.0, requires_grad=True)
for run in range(2):
    z = x ** 3
    z.backward()
    print(x.grad)

# %% [markdown]
# The second line is not a new derivative: $dz/dx$ is still 3, and `.grad` holds it added
# twice. Lesson 05 is about this accumulation (why it is there, and how to zero it). For now:
# create the leaf in the same cell as the backward call, and a cell run twice gives the same
# answer twice.
#
# **It does not fill `.grad` on results.** `z` is not a leaf, so `z.grad` stays `None` (with
# the warning of lesson 01).
#
# **It does not return the derivative.** `z.backward()` returns `None`: what it computes goes
# into the leaves' `.grad`, so `d = z.backward()` leaves `d` empty. Call it on its own line,
# then read `x.grad`.

# %% [markdown]
# ## 3. Exercise: a derivative from autograd
#
# Write `derivative(f, x0)`: the derivative of a function `f` at the number `x0`, taken from
# autograd. Make a leaf holding `x0` that requires grad, compute `f` of it, call `backward()`,
# and return the number autograd left in the leaf's `.grad` (not a formula of your own). For
# $g(t) = t^4 - 3t$, `derivative(g, 2.0)` is $dg/dt$ at $t = 2$.
#
# The hidden tests hand it functions and points of their own, chosen when your notebook is
# graded: only autograd can know their derivatives.

# %% nbgrader={"grade": false, "grade_id": "autograd_derivative", "locked": false, "schema_version": 3, "solution": true}
def derivative(f, x0):
    ### BEGIN SOLUTION
    t = torch.tensor(x0, requires_grad=True)
    f(t).backward()
    return t.grad.item()
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "autograd_derivative_test", "locked": true, "points": 2, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson02 as check

check.derivative_by_backward(derivative)
### BEGIN HIDDEN TESTS
check.derivative_by_backward(derivative)
### END HIDDEN TESTS

# %% [markdown]
# With $g'(t) = 4t^3 - 3$, the derivative at 2 is $4 \cdot 8 - 3 = 29$:

# %%
def g(t):
    return t ** 4 - 3 * t


print(derivative(g, 2.0))

# %% [markdown]
# ## 4. The chain rule, node by node
#
# A graph with more than one node multiplies local derivatives on its way back. Take
# $u = 3x + 1$ and $y = u^2$ at $x = 2$, so $u = 7$. By the chain rule,
# $\frac{dy}{dx} = \frac{dy}{du}\cdot\frac{du}{dx} = 2u \cdot 3 = 42$.
#
# Autograd gets the same number:

# %% tags=["torch-parity"]
x = torch.tensor(2.0, requires_grad=True)
y = (3 * x + 1) ** 2
y.backward()
print(x.grad)

# %% [markdown]
# `viz.trace_backward` runs `backward()` and records every step: what gradient arrived at each
# node, and what it sent on. Follow the 1 from the root: `PowBackward0` multiplies it by
# $2u = 14$; `AddBackward0` passes it on unchanged ($du/d(3x) = 1$); `MulBackward0` multiplies
# by 3; `AccumulateGrad` writes 42 into `x.grad`. Move the slider to watch it on the graph,
# a step at a time, with the step's row (where no slider can move, as on a web page, the cell
# shows the table of every step).

# %% tags=["course-helper"]
x = torch.tensor(2.0, requires_grad=True)
u = 3 * x + 1
y = u ** 2
trace = viz.trace_backward(y, names={x: "x", u: "u", y: "y"})
trace

# %% [markdown]
# The last step, drawn: each edge carries the gradient it took.

# %% tags=["course-helper"]
trace.frame(-1)

# %% [markdown]
# ### Exercise: the chain rule by hand
# Let $y = (x^2 + 1)^3$. Derive $dy/dx$ **by hand** with the chain rule and write it as a Python
# function `dy_dx(x)` that takes a number `x` and returns the derivative at `x` (a formula in
# `x`, no autograd inside). The test compares your formula with autograd at several points.

# %% nbgrader={"grade": false, "grade_id": "chain_rule", "locked": false, "schema_version": 3, "solution": true}
def dy_dx(x):
    ### BEGIN SOLUTION
    return 3 * (x ** 2 + 1) ** 2 * 2 * x
    ### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "chain_rule_test", "locked": true, "points": 2, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson02 as check

check.chain_rule_formula(dy_dx, points=[1.5])
### BEGIN HIDDEN TESTS
check.chain_rule_formula(dy_dx, points=[-2.0, 0.0, 0.5, 3.0])
### END HIDDEN TESTS

# %% [markdown]
# ## 5. Checking a derivative without autograd
#
# How do we know autograd is right? A derivative is a slope, and a slope can be *measured*:
# step a small $h$ to each side of $x$ and divide the rise by the run,
#
# $$f'(x) \approx \frac{f(x + h) - f(x - h)}{2h}.$$
#
# This **central difference** looks to both sides, so the curvature's error cancels and what
# is left shrinks like $h^2$; the one-sided $\frac{f(x+h) - f(x)}{h}$ is off by an amount that
# shrinks only like $h$.
#
# ### Exercise: `numerical_derivative`
# Write `numerical_derivative(f, x, h)`: the central-difference estimate of $f'(x)$ for a
# function `f` of one number, at the number `x`, with the step `h` you are given. Return a
# number. (Hidden tests try other functions, points and steps.)

# %% nbgrader={"grade": false, "grade_id": "numerical_derivative", "locked": false, "schema_version": 3, "solution": true}
def numerical_derivative(f, x, h):
    ### BEGIN SOLUTION
    return (f(x + h) - f(x - h)) / (2 * h)
    ### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "numerical_derivative_test", "locked": true, "points": 3, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson02 as check

check.central_difference(numerical_derivative, case="cubic")
### BEGIN HIDDEN TESTS
for case in ["square", "sine", "bump", "small-step"]:
    check.central_difference(numerical_derivative, case=case)
### END HIDDEN TESTS

# %% [markdown]
# ### How good is it?
# For $f(x) = x^3 - 3x$ at $x = 2$ the exact derivative is $3 \cdot 2^2 - 3 = 9$. Watch the
# error of your estimate as $h$ shrinks.

# %%
def f(x):
    return x ** 3 - 3 * x


for h in [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-8]:
    estimate = numerical_derivative(f, 2.0, h)
    print(f"h = {h:g}: estimate {estimate:.10f}, error {estimate - 9:.1e}")

# %% [markdown]
# Down to $h = 10^{-5}$, each tenfold smaller step cuts the error a hundredfold: the $h^2$ of
# the central difference. Below that, $f(x+h)$ and $f(x-h)$ agree in so many digits that the
# rounding in their difference (a float64 number carries about 16) takes over, and the error
# grows again: $8 \cdot 10^{-10}$ at $h = 10^{-6}$, $10^{-7}$ at $h = 10^{-8}$. The best step
# lies in between, around $10^{-5}$. Autograd needs no step at all: it applies the exact
# derivative of each operation.
#
# ## 6. A picture: f and f′
#
# The derivative at every point is a function. Below, $f$ and the slope autograd computes at
# 41 points (one small graph and one `backward()` each), drawn over the hand formula
# $f'(x) = 3x^2 - 3$. Where $f$ turns ($x = \pm 1$), $f'$ crosses zero. The drawing is
# matplotlib's (`plt`), imported here, where the lesson first needs it.

# %%
import matplotlib.pyplot as plt

xs = [i / 10 for i in range(-20, 21)]
slopes = []
for x0 in xs:
    x = torch.tensor(x0, requires_grad=True)
    f(x).backward()
    slopes.append(x.grad.item())      # .item(): a one-element tensor's number

plt.plot(xs, [f(x0) for x0 in xs], label="f(x) = x³ − 3x")
plt.plot(xs, [3 * x0 ** 2 - 3 for x0 in xs], label="f′(x) = 3x² − 3 (by hand)")
plt.plot(xs, slopes, "o", markersize=3, label="x.grad from autograd")
plt.axhline(0, color="grey", linewidth=0.5)
plt.legend()
plt.show()

# %% [markdown]
# ## What to remember
#
# - `y.backward()` on a one-number result walks the graph back and **adds** $dy/dx$ into the
#   `.grad` of every leaf that requires grad. Results (non-leaves) get no `.grad`.
# - `y.backward()` means `y.backward(torch.tensor(1.))`: the 1 is $dy/dy$, the starting value.
#   A different start $v$ multiplies every gradient by $v$.
# - Backward is the chain rule: each node multiplies what arrives by its own local derivative.
# - A central difference $\frac{f(x+h) - f(x-h)}{2h}$ checks any derivative without autograd.
#   Its error shrinks like $h^2$ until rounding takes over: in float64, $h$ around $10^{-5}$
#   is best. (PyTorch's `torch.autograd.gradcheck` does the same check for whole functions;
#   lesson 09 uses it.)
#
# **Next:** [Lesson 03 · Vector outputs and weighted backward](../03_vector_backward/03_vector_backward.ipynb),
# where `y` holds many numbers and the starting value becomes a whole tensor.
