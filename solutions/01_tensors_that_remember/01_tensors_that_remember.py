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
# # Lesson 01 · Tensors that remember
#
# **Time:** about 45 minutes: 15 reading and running the code, 13 predicting and explaining, 17 on exercises. **You will be able to:**
#
# - say, for any tensor, what `requires_grad`, `grad_fn`, `is_leaf`, `.data` and `.grad` hold;
# - tell a leaf from a result by PyTorch's rule, keep a result's gradient with
#   `retain_grad()`, and take a tensor out of the graph with `detach()`;
# - predict which results join the graph and which stay plain numbers;
# - explain why the graph already exists *before* you ask for a gradient;
# - fix the error "element 0 of tensors does not require grad" the right way.
#
# Each section follows the same rhythm: **read** a few lines, **predict** what the next cell will
# print (a prediction earns its points for being committed before you run anything below it,
# right or wrong), **run**, then **explain** what surprised you in two or three sentences.
#
# The code says `import autograd_lab as torch`: `autograd_lab` is this course's small engine,
# and it speaks PyTorch's language. Every line of code you write here runs unchanged with the
# real `import torch`, and prints the same thing.

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
# ## 1. Three tensors
#
# A tensor is an array of numbers. A tensor created with `requires_grad=True` is one you will
# want derivatives *with respect to*: a weight of a model, say. Here `x` is such a tensor,
# `y` is an ordinary one, and `z` is computed from both.

# %% tags=["torch-parity"]
x = torch.tensor(1.0, requires_grad=True)
y = torch.tensor(2.0)
z = x * y

# %% [markdown]
# Five attributes describe how a tensor takes part in differentiation:
#
# | attribute | what it holds |
# |---|---|
# | `.data` | the numbers, without any history (an old way to get them: lesson 06 shows why `.detach()`, below, is the safe one) |
# | `.requires_grad` | whether autograd tracks operations on this tensor |
# | `.grad` | where a derivative lands after a backward pass (`None` until then) |
# | `.grad_fn` | the graph node that *made* this tensor (`None` for a tensor you created yourself) |
# | `.is_leaf` | whether the tensor is a leaf of the graph (the rule below) |
#
# A node is named after its operation: `MulBackward0` is the node a multiplication leaves. The
# number tells apart PyTorch's versions of one operation: `x ** 2` leaves a `PowBackward0`, but
# `x ** x`, whose exponent is a tensor too, a `PowBackward1`.
#
# **The leaf rule.** Going backward from a result, the graph ends at its *leaves*. PyTorch's
# rule for which tensors are leaves has two parts:
#
# 1. every tensor that does **not** require grad is a leaf: nothing is recorded through it;
# 2. a tensor that requires grad is a leaf only if **you created it** (for instance with
#    `torch.tensor(..., requires_grad=True)`). One that came out of an operation is not: its
#    `grad_fn` records that operation, and the graph goes on through it.
#
# ### Predict
# Before running the table below, write down what you expect for `z`. Use `True`/`False`,
# and for `grad_fn` the name of the node as a string, or `None` if you think `z` has none.

# %% nbgrader={"grade": false, "grade_id": "predict_z", "locked": false, "schema_version": 3, "solution": true} tags=["prediction"]
### BEGIN SOLUTION
z_requires_grad = True
z_is_leaf = False
z_grad_fn = "MulBackward0"
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "predict_z_test", "locked": true, "points": 1, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson01 as check

check.z_prediction(z_requires_grad, z_is_leaf, z_grad_fn)

# %% [markdown]
# ### Run
# The loop prints all five attributes of each tensor.

# %% tags=["torch-parity"]
for t, name in zip([x, y, z], "xyz"):
    print(f"{name}\ndata: {t.data}\nrequires_grad: {t.requires_grad}\n"
          f"grad: {t.grad}\ngrad_fn: {t.grad_fn}\nis_leaf: {t.is_leaf}\n")

# %% [markdown]
# Three things to notice:
#
# - `z` requires grad although `y` does not: **one** input that requires grad is enough,
#   because `z` depends on `x`.
# - `z.grad_fn` is a `MulBackward0` object: the node that knows how to send a gradient back
#   through the multiplication. The hexadecimal address is where the object lives in memory;
#   it changes every run (here and in PyTorch).
# - Reading `z.grad` printed a **warning** (in red; it is not an error). `z` is not a leaf, and
#   PyTorch fills `.grad` only on leaves that require grad, so it warns you that this `None` will
#   stay `None`. PyTorch has warned about it since 2020 (the link in the warning is the change
#   that added it). Section 3 shows how to keep a result's gradient.
#
# ### Explain
# Why does `y` have no `grad_fn`, while `z` has one? And why is `x` a leaf but `z` is not?
# Answer in two or three sentences.

# %% [markdown] nbgrader={"grade": true, "grade_id": "explain_grad_fn", "locked": false, "points": 2, "schema_version": 3, "solution": true}
# A `grad_fn` records the operation that produced a tensor from tensors that require grad. `y`
# was created directly (and does not require grad), so no operation made it and nothing needs
# to be sent back through it. `z = x * y` came out of a multiplication involving `x`, so it
# carries the `MulBackward0` node. `x` requires grad and we created it, so it is a leaf, where
# the graph ends; `z` requires grad but was produced by an operation, so it is not.
#
# *Rubric (2 points): 1 for saying that a `grad_fn` is the record of the operation that made a
# tensor from one that requires grad, which `y` (created by us, not requiring grad) lacks and
# `z` (a product with `x`) has; 1 for the leaf rule applied: `x` requires grad and was created
# by us, `z` requires grad but an operation made it.*

# %% tags=["course-helper"]
from autograd_lab.checks.written import reveal

reveal("explain_grad_fn")

# %% [markdown]
# ## 2. The graph is built as you compute
#
# No gradient has been asked for yet, and still `z` knows how it was made. Every operation on a
# tensor that requires grad **records a node** at the moment it runs. The drawing below shows
# that record. Read it from the top: the node `MulBackward0` made `z`; its arrows lead to what
# the multiplication used: `x` through an `AccumulateGrad` node (the node that will write into
# `x.grad`), and `y`, which needs nothing, so no arrow is drawn for it.

# %% tags=["course-helper"]
viz.draw(z, names={x: "x", y: "y", z: "z"})

# %% [markdown]
# `grad_fn.next_functions` is that same picture as data: one `(node, index)` pair per input of
# the multiplication, `None` for the input that needs no gradient.

# %% tags=["torch-parity"]
print(z.grad_fn.next_functions)

# %% [markdown]
# Now ask for the derivative. `z.backward()` walks the recorded graph backwards and leaves
# $\partial z / \partial x = y = 2$ in `x.grad`. Lesson 02 is all about this step. (The cell
# makes `x`, `y` and `z` again, so that running it twice gives the same answer twice.)

# %% tags=["torch-parity"]
x = torch.tensor(1.0, requires_grad=True)
y = torch.tensor(2.0)
z = x * y
z.backward()
print(x.grad)

# %% [markdown]
# ## 3. A result's gradient: `retain_grad()`
#
# The gradient passed *through* `z` on its way to `x`, but `z.grad` is still `None`: backward
# keeps gradients on leaves only, as keeping every intermediate one would cost memory. To keep
# one, call `t.retain_grad()` on it **before** the backward pass. Here $z = 5y$ and
# $y = x^2$ at $x = 3$:

# %% tags=["torch-parity"]
x = torch.tensor(3.0, requires_grad=True)
y = x ** 2
z = y * 5
y.retain_grad()
z.backward()
print(y.grad)    # dz/dy = 5
print(x.grad)    # dz/dx = 5 * 2x = 30

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
from autograd_lab.checks import lesson01 as check

check.hidden_grad(x, h, loss)

# %% [markdown]
# ## 4. Leaves, and tensors that only look like leaves
#
# A leaf that requires grad is what a model calls a *parameter*: the thing whose `.grad` you
# want. Everything computed from parameters is an intermediate result, with a `grad_fn` and no
# `.grad` of its own.
#
# Sometimes you want a result's numbers *without* its history: to print or plot them, or to
# keep a value that later updates must not reach through the graph. `t.detach()` gives a tensor
# with the same numbers (the same memory, not a copy) that does not require grad and has no
# `grad_fn`: by part 1 of the rule, a leaf.

# %% tags=["torch-parity"]
p = torch.tensor([1.0, 2.0], requires_grad=True)
q = p * 10
r = q.detach()
print(q)
print(r, r.requires_grad, r.grad_fn, r.is_leaf)

# %% [markdown]
# ### Predict
# Each line below creates one tensor. For each, predict `(requires_grad, is_leaf)` as a pair of
# booleans, in a dictionary:
# `predictions = {"a": (..., ...), "b": (..., ...), "c": (..., ...), "d": (..., ...)}`.
#
# ```python
# a = torch.tensor(5.0, requires_grad=True)
# b = torch.tensor(5.0, requires_grad=True) * 0.1
# c = b.detach()
# d = torch.tensor([1.0, 2.0]) * 3
# ```

# %% nbgrader={"grade": false, "grade_id": "predict_leaves", "locked": false, "schema_version": 3, "solution": true} tags=["prediction"]
### BEGIN SOLUTION
predictions = {
    "a": (True, True),
    "b": (True, False),
    "c": (False, True),
    "d": (False, True),
}
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "predict_leaves_test", "locked": true, "points": 1, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson01 as check

check.leaf_predictions(predictions)

# %% [markdown]
# ### Run

# %% tags=["torch-parity"]
a = torch.tensor(5.0, requires_grad=True)
b = torch.tensor(5.0, requires_grad=True) * 0.1
c = b.detach()
d = torch.tensor([1.0, 2.0]) * 3
for name, t in {"a": a, "b": b, "c": c, "d": d}.items():
    print(name, t, "requires_grad:", t.requires_grad, "is_leaf:", t.is_leaf)

# %% [markdown]
# `b` is the one that catches people out. It *looks* like "a 0.5 that requires grad", but the
# multiplication by `0.1` happened after `requires_grad=True`, so `b` is the output of a
# `MulBackward0` node (part 2 of the rule). The real leaf, the tensor holding 5.0, has no name
# left to reach it by, and `b.grad` will stay `None` after any backward pass. `d` is a result
# too, and still a leaf: nothing in it requires grad, so no graph was recorded, and part 1 of
# the rule applies. `c = b.detach()` shares `b`'s numbers but has left the graph.
#
# ### Exercise: a learning rate and a frozen copy
# Create
# - `lr`: a **leaf** tensor holding `0.5` that requires grad (a learning rate whose gradient
#   we want: a backward pass would then say in `lr.grad` how the loss changes with it);
# - `w_frozen`: a tensor with the same numbers as `w` below that is **not** part of the graph
#   (changing the graph's parameters must not reach it through autograd).

# %%
w = torch.tensor([0.5, -1.5], requires_grad=True) * 2

# %% nbgrader={"grade": false, "grade_id": "make_leaves", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
lr = torch.tensor(0.5, requires_grad=True)
w_frozen = w.detach()
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "make_leaves_test", "locked": true, "points": 2, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson01 as check

check.learning_rate_leaf(lr)
check.frozen_copy(w_frozen, w)

# %% [markdown]
# ## 5. "element 0 of tensors does not require grad"
#
# This is the error every PyTorch user meets. Here the weight was created without
# `requires_grad=True`, so nothing was recorded and there is no graph to walk back through.
# The cell is tagged to show its error without stopping the notebook.

# %% tags=["raises-exception", "torch-parity"]
weight = torch.tensor(2.0)
loss = (weight * 3 - 1) ** 2
loss.backward()

# %% [markdown]
# ### Exercise: fix it
# Rewrite the three lines so that `loss.backward()` runs **and** fills `weight.grad` with
# $\partial\,\text{loss}/\partial\,\text{weight}$. Keep the names `weight` and `loss`, and keep
# `weight` holding 2.0. (Think about *where* the graph must start.)

# %% nbgrader={"grade": false, "grade_id": "fix_no_grad", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
weight = torch.tensor(2.0, requires_grad=True)
loss = (weight * 3 - 1) ** 2
loss.backward()
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "fix_no_grad_test", "locked": true, "points": 2, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson01 as check

check.fixed_backward(weight, loss)

# %% [markdown]
# ## What to remember
#
# - A tensor that requires grad records every operation done with it: each result gets a
#   `grad_fn` node, and the nodes form the backward graph **during the forward pass**.
# - A result requires grad as soon as one input does.
# - The leaf rule: a tensor that does not require grad is always a leaf; one that requires
#   grad is a leaf only if you created it, never if an operation made it.
# - `.grad` is filled on **leaves that require grad** only; on anything else it stays `None`
#   (and PyTorch warns when you read it on a non-leaf), unless you call `.retain_grad()` on it
#   before backward.
# - `t * 0.1` after `requires_grad=True` is not a leaf; `t.detach()` is the same numbers outside
#   the graph, a leaf.
# - "element 0 of tensors does not require grad" means the graph never started: make the
#   *parameters* require grad. Setting `loss.requires_grad = True` only silences the error.
#
# **Next:** [Lesson 02 · Scalar backward](../02_scalar_backward/02_scalar_backward.ipynb), where
# `backward()` turns this graph into derivatives.
