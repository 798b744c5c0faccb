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
# # Lesson 06 · retain_graph and the freed graph
#
# **Time:** about 40 minutes: 15 reading and running the code, 11 predicting and explaining, 14 on exercises. **You will be able to:**
#
# - say what backward frees, and predict which graphs can go backward twice;
# - use `retain_graph=True` only where needed, and get two losses' gradients from one graph;
# - fix "modified by an inplace operation", and say why `.detach()` is safe where `.data` is not.

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
# ## 1. The second pass that fails
#
# The autograd notebook runs lesson 05's two-leaf example again without `retain_graph`: one
# backward, then two more in `try`/`except`.

# %% tags=["torch-parity"]
x = torch.tensor([2.0, 2.0], requires_grad=True)
z = torch.tensor([4.0, 4.0], requires_grad=True)
y = x**2 + z**3
w = torch.FloatTensor([1.0, 1.0])

y.backward(w)
print(x.grad)
print(z.grad)

try:
    y.backward(w)
    print(x.grad)
    print(z.grad)
except RuntimeError:
    print("Trying backward a second time when buffers are empty")

try:
    y.backward(w)
except RuntimeError:
    print("Trying backward a second time when buffers are empty")
else:
    print(x.grad)
    print(z.grad)

# %% [markdown]
# The second and third passes raised a `RuntimeError`. PyTorch's own message:

# %% tags=["raises-exception", "torch-parity"]
y.backward(w)

# %% [markdown]
# *Saved intermediate values of the graph are freed when you call `.backward()`* (the
# notebook's older PyTorch said "the buffers have already been freed").
#
# ## 2. What a node saves
#
# Most derivatives need numbers from the forward pass. For $s = x \cdot x$,
# $\partial s/\partial x = 2x$, so `MulBackward0` keeps a reference to `x`: a **saved tensor**,
# which PyTorch lets you peek at as `grad_fn._saved_...`.

# %% tags=["torch-parity"]
x = torch.tensor([1.0, 2.0], requires_grad=True)
sq = x * x
print(sq.grad_fn._saved_self, sq.grad_fn._saved_other)
print(sq.grad_fn._saved_self is x)

dbl = x * 2
print(dbl.grad_fn._saved_other, dbl.grad_fn._saved_self)

inc = x.add(5, alpha=3)      # x + 3 * 5
print(inc.grad_fn._saved_alpha)

# %% [markdown]
# - `x * x` saved `x` twice (the very tensor, not a copy).
# - `x * 2` saved the **2**, the derivative with respect to `x`: not `x`, yet *something*.
# - An addition `x + alpha * other` saved only the number `alpha` (3 here; 1 for a plain
#   `x + 5`), never a tensor: its derivatives do not depend on the inputs.
#
# The drawing shows saved tensors in dashed boxes. After backward, nodes and arrows are still
# there, but the saved tensors are freed (grey): a network saves every layer's activations, and
# backward gives that memory back as soon as it has used it.

# %% tags=["course-helper"]
x = torch.tensor([1.0, 2.0], requires_grad=True)
sq = x * x
s = sq.sum()
s.backward()
viz.draw(s, names={x: "x", sq: "sq", s: "s"}, show_saved=True)

# %% [markdown]
# A second pass would need them: that is the error. Even *reading* them after backward fails:

# %% tags=["raises-exception", "torch-parity"]
x = torch.tensor([1.0, 2.0], requires_grad=True)
sq = x * x
sq.sum().backward()
print(sq.grad_fn.next_functions)
sq.grad_fn._saved_self

# %% [markdown]
# ### Predict: which snippets raise?
# Two more facts first. `retain_graph=True` keeps the saved tensors for one more pass; a call
# without it frees them. And `torch.autograd.grad(y, x)` runs the same backward pass as
# `y.backward()`, freeing the same way, but returns $\partial y/\partial x$ instead of adding it
# into `x.grad`. (`x.exp()`'s node saves its result: $e^x$ is its own derivative.)
#
# Each snippet starts from a fresh `x = torch.tensor([1.0, 2.0], requires_grad=True)`.
#
# | | snippet |
# |---|---|
# | A | `y = (x + 1).sum()`; `y.backward()`; `y.backward()` |
# | B | `y = (x * 2).sum()`; `y.backward()`; `y.backward()` |
# | C | `y = (x * x).sum()`; `y.backward(retain_graph=True)`; `y.backward()` |
# | D | `y = (x * x).sum()`; `y.backward(retain_graph=True)`; `y.backward()`; `y.backward()` |
# | E | `y = (x ** 2).sum()`; `y.backward()`; `y = (x ** 2).sum()`; `y.backward()` |
# | F | `y = x.exp().sum()`; `torch.autograd.grad(y, x)`; `y.backward()` |
#
# Write `raises = {"A": ..., ..., "F": ...}`, `True` for a snippet that raises the
# RuntimeError, `False` for one that runs.

# %% nbgrader={"grade": false, "grade_id": "predict_raises", "locked": false, "schema_version": 3, "solution": true} tags=["prediction"]
### BEGIN SOLUTION
raises = {"A": False, "B": True, "C": False, "D": True, "E": False, "F": True}
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "predict_raises_test", "locked": true, "points": 1, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson06 as check

check.raises_prediction(raises)

# %% [markdown]
# ### Run

# %% tags=["torch-parity"]
snippets = {
    "A": "y = (x + 1).sum()\ny.backward()\ny.backward()",
    "B": "y = (x * 2).sum()\ny.backward()\ny.backward()",
    "C": "y = (x * x).sum()\ny.backward(retain_graph=True)\ny.backward()",
    "D": "y = (x * x).sum()\ny.backward(retain_graph=True)\ny.backward()\ny.backward()",
    "E": "y = (x ** 2).sum()\ny.backward()\ny = (x ** 2).sum()\ny.backward()",
    "F": "y = x.exp().sum()\ntorch.autograd.grad(y, x)\ny.backward()",
}
for name, code in snippets.items():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    try:
        exec(code)
        print(f"{name} runs; x.grad = {x.grad}")
    except RuntimeError as error:
        print(f"{name} raises: {str(error)[:50]} ...")

# %% [markdown]
# The rule: **a graph can go backward again only if no node on the way saved a tensor, or if
# every earlier pass said `retain_graph=True`.** A new forward pass (E) makes a new graph: what
# a training loop does every step, so a step with one loss and one backward call does not need
# `retain_graph`. A step that goes backward twice through a shared part of its graph does:
# two losses on one forward pass, each with its own backward (section 3), or a GAN's step,
# when the discriminator's loss and then the generator's both go back through the same
# generated batch (unless the first pass starts from `fake.detach()`).
#
# ### Explain
# Why can `(x + 1).sum()` go backward twice while `(x * 2).sum()` cannot, although neither
# derivative depends on `x`? Say what backward frees and why it frees it. (Two or three
# sentences.)

# %% [markdown] nbgrader={"grade": true, "grade_id": "explain_freed", "locked": false, "points": 3, "schema_version": 3, "solution": true}
# Backward frees each node's *saved tensors*, the forward-pass values its derivative formula
# needs, as soon as it has used them, to give that memory back (a network saves every
# layer's activations). `MulBackward0` in `x * 2` saved the other factor, the tensor `2`, so
# after the first pass that saved value is gone and a second pass has nothing to multiply
# by. `AddBackward0` saved no tensor at all (the derivative of a sum is always 1), so there
# is nothing to free and a second pass simply runs again and adds to `x.grad`.
#
# *Rubric (3 points): 1 for what backward frees: the saved tensors, values of the forward
# pass a node's derivative needs; 1 for why: to give their memory back as soon as they are
# used; 1 for the contrast: `MulBackward0` saved a tensor (the 2) even though the derivative
# does not depend on `x`, while `AddBackward0` saved none, so only the multiplication's second
# pass finds something missing.*

# %% tags=["course-helper"]
from autograd_lab.checks.written import reveal

reveal("explain_freed")

# %% [markdown]
# ## 3. Two losses, one shared graph
#
# Two losses from one shared result `h`: both passes go through the nodes that made `h`, and
# the first frees what they saved.

# %% tags=["raises-exception", "torch-parity"]
x = torch.tensor([1.0, 2.0], requires_grad=True)
h = x ** 3                     # shared: PowBackward0 saves x
loss_a = h.sum()
loss_b = (h ** 2).mean()
loss_a.backward()
print(x.grad)
loss_b.backward()

# %% [markdown]
# Three ways to get it right, from a fresh forward pass:
#
# 1. `loss_a.backward(retain_graph=True)`, then `loss_b.backward()`: `x.grad` holds the **sum**
#    of both gradients (lesson 05);
# 2. `(loss_a + loss_b).backward()`: the same sum in one pass;
# 3. `torch.autograd.grad(loss_a, x, retain_graph=True)`, then `torch.autograd.grad(loss_b, x)`:
#    each gradient **on its own**, as a tuple, `x.grad` untouched.

# %% tags=["torch-parity"]
x = torch.tensor([1.0, 2.0], requires_grad=True)
h = x ** 3
loss_a = h.sum()
loss_b = (h ** 2).mean()
loss_a.backward(retain_graph=True)
loss_b.backward()
print("both, added up:", x.grad)

x = torch.tensor([1.0, 2.0], requires_grad=True)
h = x ** 3
loss_a = h.sum()
loss_b = (h ** 2).mean()
print("d loss_a/dx:", torch.autograd.grad(loss_a, x, retain_graph=True))
print("d loss_b/dx:", torch.autograd.grad(loss_b, x))
print("x.grad:", x.grad)

# %% [markdown]
# ### Exercise: two gradients from one forward pass
# Write `separate_gradients(x, loss_a, loss_b)`. `loss_a` and `loss_b` were both computed
# from `x` through a shared part of the graph (like above), in **one** forward pass. Return
# the pair `(g_a, g_b)`: $\partial\,\text{loss}_a/\partial x$ and
# $\partial\,\text{loss}_b/\partial x$, each on its own, as tensors that do not require grad.
# `x` may arrive with an old `.grad`; what `x.grad` holds when you return does not matter.

# %% nbgrader={"grade": false, "grade_id": "two_losses", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
def separate_gradients(x, loss_a, loss_b):
    # the first pass must keep the shared part's saved tensors for the second
    (g_a,) = torch.autograd.grad(loss_a, x, retain_graph=True)
    (g_b,) = torch.autograd.grad(loss_b, x)
    return g_a, g_b
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "two_losses_test", "locked": true, "points": 4, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson06 as check

check.separate_gradients(separate_gradients, stale=1.0)
### BEGIN HIDDEN TESTS
check.separate_gradients(separate_gradients, values=(0.5, -1.0, 2.0), stale=5.0)
check.separate_gradients(separate_gradients, values=(0.3, -0.7), kind="exp")
### END HIDDEN TESTS

# %% [markdown]
# ## 4. A saved tensor changed in place
#
# Saved tensors are references, not copies: changed in place, they would give backward wrong
# numbers. So every tensor has a **version counter** that each in-place operation bumps, each
# node remembers the versions it saved, and backward compares.

# %% tags=["raises-exception", "torch-parity"]
x = torch.tensor([1.0, 2.0], requires_grad=True)
h = x * 2
y = (h * h).sum()          # MulBackward0 saves h (version 0)
print(h._version)
h.add_(1)                  # we also want h + 1 later: in place, version 1
print(h._version)
y.backward()

# %% [markdown]
# ### Exercise: keep the saved tensor intact
# Rewrite the cell so that `y.backward()` works and puts $\partial y/\partial x$ for
# $y = \sum_i h_i^2$, $h = 2x$ (the *original* `h`) in `x.grad`, and `h_shifted` holds
# `h + 1`. Keep the names `x`, `h`, `y` and `h_shifted`.

# %% nbgrader={"grade": false, "grade_id": "fix_inplace", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
x = torch.tensor([1.0, 2.0], requires_grad=True)
h = x * 2
y = (h * h).sum()
h_shifted = h + 1          # a new tensor: the saved h stays at version 0
y.backward()
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "fix_inplace_test", "locked": true, "points": 2, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson06 as check

check.inplace_fixed(x, h, h_shifted)

# %% [markdown]
# ### `.detach()` or `.data`?
# Both give a tensor's numbers without its history, sharing its memory. `.detach()` shares the
# version counter too, so an in-place change through it is caught. `.data` (lesson 01's table,
# from before PyTorch 0.4) does not. `x.exp()` saves its result `y`; zero `y` through each:

# %% tags=["raises-exception", "torch-parity"]
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x.exp()
y.detach().zero_()         # bumps y's version: backward refuses
y.sum().backward()

# %% tags=["torch-parity"]
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x.exp()
y.data.zero_()             # the same change, unseen
y.sum().backward()
print(x.grad)              # e^x would be [2.7183, 7.3891]

# %% [markdown]
# An error, then a wrong gradient without a word. Use `.detach()`.
#
# ## What to remember
#
# - Nodes **save** what their derivative needs; backward frees it. A second pass through a
#   node that saved a tensor (`x * x`, even `x * 2`; not `x + 1`) raises, unless every earlier
#   pass said `retain_graph=True`. A training loop makes a new graph every step; it needs
#   `retain_graph` only where a step goes backward twice through a shared part (two losses,
#   each with its own backward; a GAN's two players).
# - Two losses, one graph: `(loss_a + loss_b).backward()`, `retain_graph=True` on the first, or
#   `torch.autograd.grad` for each gradient on its own.
# - A saved tensor changed in place makes backward refuse: change a copy (`h + 1`). Through
#   `.data` the change goes unseen: use `.detach()`.
#
# **Next:** [Lesson 07 · Inside backward](../07_inside_backward/07_inside_backward.ipynb).
