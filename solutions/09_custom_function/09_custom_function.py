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
# # Lesson 09 · A node of your own
#
# **Time:** about 25 minutes: 10 reading and running the code, 7 predicting and explaining, 7 on exercises. **You will be able to:**
#
# - write a new operation as a `torch.autograd.Function`: its forward, what it saves for
#   backward, and its backward;
# - say what arrives in `grad_output`, and why a backward must multiply by it;
# - check a hand-written backward with `torch.autograd.gradcheck`, and read what it prints
#   when the backward is wrong.
#
# Lesson 07 called the nodes PyTorch's operations record. Here you write one.

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
# ## 1. Two halves
#
# Every operation you have used comes in two halves: the forward computes the result, and the
# node it records knows the backward, the vector-Jacobian product. `torch.autograd.Function`
# lets you write both halves for an operation of your own. `forward(ctx, ...)` computes the
# result and keeps what backward will need with `ctx.save_for_backward`; `backward(ctx,
# grad_output)` receives $\partial L/\partial\,\text{output}$ and returns
# $\partial L/\partial\,\text{input}$. Both are static methods, and you use the operation
# through `.apply`. Here is $x^3$, on the autograd notebook's `x ** 3` example (lesson 02):

# %% tags=["torch-parity"]
class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 3 * x ** 2     # the chain rule: dL/dx = dL/dz * dz/dx


x = torch.tensor(1.0, requires_grad=True)
z = Cube.apply(x)
print(z)
z.backward()
print(x.grad)

# %% [markdown]
# The node is named after the class, `CubeBackward`, and `backward()` calls your method when
# it reaches it. In the drawing it sits where `PowBackward0` sat in lesson 02:

# %% tags=["course-helper"]
viz.draw(z, names={x: "x", z: "z"})

# %% [markdown]
# ## 2. What arrives in `grad_output`
#
# Above, `z` was the root, so `grad_output` was the `1` that `z.backward()` starts with. Deeper
# in a graph, it is whatever the nodes after your operation sent back. `CubeTold` is `Cube`
# with a backward that prints what it receives before doing `Cube`'s work:

# %% tags=["torch-parity"]
class CubeTold(Cube):
    @staticmethod
    def backward(ctx, grad_output):
        print("CubeBackward receives grad_output =", grad_output)
        return Cube.backward(ctx, grad_output)

# %% [markdown]
# ### Predict
# ```python
# x = torch.tensor(2.0, requires_grad=True)
# L = 5 * CubeTold.apply(x)
# L.backward()
# print(x.grad)
# ```
#
# What number will `grad_output` hold when `backward` reaches the cube's node, and what
# number will `x.grad` hold? Write `grad_output_seen = ...` and `x_grad = ...`.

# %% nbgrader={"grade": false, "grade_id": "predict_grad_output", "locked": false, "schema_version": 3, "solution": true} tags=["prediction"]
### BEGIN SOLUTION
grad_output_seen = 5.0
x_grad = 60.0
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "predict_grad_output_test", "locked": true, "points": 1, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson09 as check

check.grad_output_prediction(grad_output_seen, x_grad)

# %% [markdown]
# ### Run

# %% tags=["torch-parity"]
x = torch.tensor(2.0, requires_grad=True)
L = 5 * CubeTold.apply(x)
L.backward()
print(x.grad)

# %% [markdown]
# The multiplication by 5 ran first and sent $\partial L/\partial z = 5$ back to the cube's node:
# that is `grad_output`. The cube multiplied it by its own derivative $3x^2 = 12$, so
# `x.grad` $= 60$. A backward that returned $3x^2$ alone would have left 12: right for
# `z.backward()`, wrong anywhere else.
#
# ## 3. Is a backward right? `gradcheck`
#
# `torch.autograd.gradcheck(fn, inputs)` asks lesson 02's central differences: it nudges each
# input element by $\epsilon = 10^{-6}$ both ways, measures how the output moves,
# $\big(f(x + \epsilon) - f(x - \epsilon)\big) / 2\epsilon$, and compares that *numerical*
# Jacobian with the *analytical* one your backward gives (one backward call per output element,
# with one-hot weights, as in lesson 04). It returns `True` or raises an error that prints
# both, each with **a row per input element and a column per output element** (lesson 04's
# $J$ turned on its side). It wants float64 inputs: in float32 the difference of two nearby
# values loses too many digits.

# %% tags=["torch-parity"]
x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
print(torch.autograd.gradcheck(Cube.apply, (x,)))

# %% [markdown]
# Here is the same cube with a backward that forgets `grad_output`. With `grad_output` equal to
# 1, as in `z.backward()` of section 1, nobody would notice. `gradcheck` does:

# %% tags=["raises-exception", "torch-parity"]
class CubeForgetful(Cube):
    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2


torch.autograd.gradcheck(CubeForgetful.apply, (x,))

# %% [markdown]
# Every **column** of the analytical Jacobian is the same, $3x^2 = [0.75, 3, 12]$: whichever
# output element the one-hot `grad_output` picked, this backward returned all of $3x^2$. The
# numerical Jacobian is diagonal, as it must be for an operation that acts element by element.
#
# ### Explain
# `CubeForgetful` gives the right `x.grad` after `z.backward()` on its own output. Why is its
# backward still wrong, and why do `gradcheck`'s one-hot weights show it at once? Two or three
# sentences.

# %% [markdown] nbgrader={"grade": true, "grade_id": "explain_forgetful", "locked": false, "points": 2, "schema_version": 3, "solution": true}
# `backward` receives $\partial L/\partial z$ for whatever loss the pass started from and must
# return $\partial L/\partial x = \partial L/\partial z \cdot 3x^2$; `CubeForgetful` returns
# $3x^2$ alone, which is right only when $\partial L/\partial z$ is 1, as when `z` itself is
# the root. `gradcheck` calls backward with one-hot weights, mostly zeros: the right backward
# then returns one element of $3x^2$ and zeros, the forgetful one all of $3x^2$, so its
# Jacobian is off everywhere but the diagonal.
#
# *Rubric (2 points): 1 for saying that backward must multiply the incoming gradient
# $\partial L/\partial z$ (`grad_output`) by the local derivative, so that the answer is right
# only when it is 1; 1 for saying that gradcheck's weights are not all ones (one-hot), so the
# missing factor shows (off-diagonal entries, or every column the same).*

# %% tags=["course-helper"]
from autograd_lab.checks.written import reveal

reveal("explain_forgetful")

# %% [markdown]
# ## 4. Exercise: softplus
#
# Write `Softplus`, a `torch.autograd.Function` for
# $\operatorname{softplus}(x) = \log(1 + e^x)$, a smooth cousin of ReLU. Save what backward
# needs with `ctx.save_for_backward`, and return $\partial L/\partial x$ from `backward`.
# (Work out $\frac{d}{dx}\log(1 + e^x)$ first, by the chain rule; `torch.exp`, `torch.log`
# and `torch.sigmoid` are there if you need them.) The visible test sends weights other than
# ones back through it.

# %% nbgrader={"grade": false, "grade_id": "softplus", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.log(1 + torch.exp(x))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # d/dx log(1 + e^x) = e^x / (1 + e^x) = sigmoid(x)
        return grad_output * torch.sigmoid(x)
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "softplus_test", "locked": true, "points": 3, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson09 as check

check.softplus_basic(Softplus)
### BEGIN HIDDEN TESTS
check.softplus_hidden(Softplus)
### END HIDDEN TESTS

# %% [markdown]
# The hidden test is a gradient check with random `grad_output`s. Run `gradcheck` on yours,
# and compare with central differences done by hand; your node appears in the drawing under
# its own name.

# %%
x = torch.tensor([-2.0, 0.5, 3.0], dtype=torch.float64, requires_grad=True)
print("gradcheck:", torch.autograd.gradcheck(Softplus.apply, (x,)))
y = Softplus.apply(x)
y.sum().backward()
eps = 1e-6
with torch.no_grad():
    numeric = (Softplus.apply(x + eps) - Softplus.apply(x - eps)) / (2 * eps)
print("backward:           ", x.grad)
print("central differences:", numeric)

# %% tags=["course-helper"]
viz.draw(y, names={x: "x", y: "y"})

# %% [markdown]
# ## What to remember
#
# - A new operation is a `torch.autograd.Function`: `forward(ctx, ...)` computes the result and
#   saves what backward needs with `ctx.save_for_backward`; `backward(ctx, grad_output)` reads
#   it back from `ctx.saved_tensors`. Use it through `.apply`; its node is named after it.
# - `grad_output` is $\partial L/\partial\,\text{output}$, whatever came back from the rest of
#   the graph; backward returns `grad_output` times the local derivative (one vector-Jacobian
#   product). It is 1 only when the output is the root.
# - `torch.autograd.gradcheck` (central differences, in float64, one-hot weights) tells you
#   whether a backward is right, and prints both Jacobians when it is not.
#
# **Next:** [Lesson 10 · Training a small model](../10_training_loop/10_training_loop.ipynb),
# where all of this runs inside the loop a PyTorch user writes every day.
