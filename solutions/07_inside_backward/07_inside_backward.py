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
# # Lesson 07 · Inside backward
#
# **Time:** about 35 minutes: 14 reading and running the code, 7 predicting and explaining, 11 on exercises. **You will be able to:**
#
# - call a graph node yourself and say what goes in and what comes out;
# - follow `next_functions` from a result down to its leaves, and find each leaf's
#   `AccumulateGrad`;
# - do a backward pass by hand, node by node.
#
# Until now `backward()` was one call that filled `.grad`. This lesson opens it: you will call
# its nodes yourself and walk a graph by hand. Lesson 08 turns the walk into a loop that works
# for any graph.

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
# ## 1. A node is a function
#
# `y.grad_fn` is an object, and you can call it. Give it the gradient of the loss with respect
# to its output, $\partial L/\partial y$, and it returns the gradient with respect to each input
# of the operation that made `y`: one vector-Jacobian product, for this one operation.

# %% tags=["torch-parity"]
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 2
print(y.grad_fn(torch.ones(2)))

# %% [markdown]
# The multiplication had two inputs, `x` and the number `2`, so the node returns two things:
# `tensor([2., 2.])` for `x` (each $y_i = 2x_i$, so a 1 arriving at $y_i$ becomes a 2 at $x_i$),
# and `None` for the `2`, which needs no gradient. Calling `MulBackward0` does not touch
# `x.grad`: it only computes. Where each result goes next is written in `next_functions`, one
# entry per input, in the same order:

# %% tags=["torch-parity"]
print(y.grad_fn.next_functions)

# %% [markdown]
# A node whose operation has **one** input returns its one gradient as it is, a bare tensor,
# not a tuple of one. A sum has one input:

# %% tags=["torch-parity"]
s = x.sum()
print(s.grad_fn(torch.tensor(1.0)))
print(s.grad_fn.next_functions)

# %% [markdown]
# That is PyTorch's own convention (a node computes a list of gradients, and calling it from
# Python unwraps a list of one), and code that runs on real PyTorch must live with it. So code
# that walks *any* node, pairing what it returns with `next_functions`, first turns a bare
# tensor into a tuple of one:
#
# ```python
# outs = node(grad)
# if not isinstance(outs, tuple):     # one input: a bare tensor
#     outs = (outs,)
# for (nxt, _), g in zip(node.next_functions, outs):
#     ...
# ```
#
# Without it, `zip` would pair the node's one input with the *first element* of the tensor
# instead of the whole gradient (and a one-number tensor cannot be walked through at all).

# %% [markdown]
# ## 2. The blog's matrix product, walked by hand
#
# Allu's blog post (lesson 04) multiplies a row vector by a matrix and calls backward
# three times, with three different `gradient` arguments. Here is its forward pass:

# %% tags=["torch-parity"]
x = torch.tensor([[2.0, 1.0]], requires_grad=True)
M = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
y = torch.mm(x, M)
print(x)
print(M)
print(y)

# %% [markdown]
# The graph has two nodes: `MmBackward0`, which made `y`, and the `AccumulateGrad` of `x`.
# `M` does not require grad, so no arrow leads to it.

# %% tags=["course-helper"]
viz.draw(y, names={x: "x", y: "y"})

# %% tags=["torch-parity"]
mm = y.grad_fn
acc = mm.next_functions[0][0]
print(mm.next_functions)
print(acc.variable is x)

# %% [markdown]
# `acc.variable` is the leaf itself: that is how the end of the walk knows whose `.grad` to
# fill. Now do backward's job by hand. For each `v`, call `MmBackward0` with it, hand the
# gradient it returns for `x` to `AccumulateGrad` (calling that node adds its input into
# `x.grad`), print, and zero `x.grad` for the next round, as the blog did.

# %% tags=["torch-parity"]
for v in ([[1.0, 0.0]], [[0.0, 1.0]], [[1.0, 1.0]]):
    grad_x, grad_M = mm(torch.tensor(v))
    acc(grad_x)
    print(v, "->", x.grad, grad_M)
    x.grad.zero_()

# %% [markdown]
# `[1, 3]`, `[2, 4]`, `[3, 7]`: the blog's numbers. You can read them off the matrix:
# $y = xM$, so $\partial y_j/\partial x_i = M_{ij}$, and `MmBackward0` computes $vM^\top$.
# The one-hot `v = [1, 0]` picks the first column of $M$, `[0, 1]` the second, and `[1, 1]`
# their sum. And here is the blog's own code, with `backward`, which gives the same three
# results:

# %% tags=["torch-parity"]
for v in ([[1.0, 0.0]], [[0.0, 1.0]], [[1.0, 1.0]]):
    y.backward(torch.tensor(v), retain_graph=True)
    print(x.grad)
    x.grad.zero_()

# %% [markdown]
# Calling the nodes by hand needed no `retain_graph`: only `backward()` frees what the nodes
# saved (lesson 06), a hand call leaves it alone.
#
# ### Explain
# Each call of `MmBackward0` returned two things, and the second, `grad_M`, was always `None`;
# its `next_functions` ends with `(None, 0)`. Why `None` for `M`, and what does that entry tell
# a walk through the graph? Two or three sentences.

# %% [markdown] nbgrader={"grade": true, "grade_id": "explain_no_gradient", "locked": false, "points": 2, "schema_version": 3, "solution": true}
# `M` was made without `requires_grad`, so no gradient is wanted for it: nothing will ever be
# added into an `M.grad`, and `MmBackward0` does not even compute the product that would give
# it. The entry `(None, 0)` in `next_functions` is that input's edge with no node at its end:
# a walk skips it, since there is no node to call and nothing to send it.
#
# *Rubric (2 points): 1 for why: `M` does not require grad, so no gradient is asked for it (and
# none is computed); 1 for the edge: `(None, 0)` means no node to send a gradient to, and a walk
# passes over it.*

# %% tags=["course-helper"]
from autograd_lab.checks.written import reveal

reveal("explain_no_gradient")

# %% [markdown]
# ## 3. AccumulateGrad: one per leaf
#
# Every path from a root ends at a leaf, and every leaf that requires grad has exactly one
# `AccumulateGrad` node. Two operations that use the same leaf share it:

# %% tags=["torch-parity"]
a = x * 2
b = x * 3
print(a.grad_fn.next_functions[0][0] is b.grad_fn.next_functions[0][0])
print(acc.name(), acc.next_functions)

# %% [markdown]
# It has no `next_functions`: it is where gradients stop. (Its `.name()` carries PyTorch's C++
# namespace, `torch::autograd::AccumulateGrad`; its class is called `AccumulateGrad`.)
#
# ### Predict
# Take `x = torch.tensor(3.0, requires_grad=True)` and `z = x * x + x`. Predict
#
# - `add_next`: the names of the nodes in `z.grad_fn.next_functions`, in order, as a list of
#   strings (for example `["PowBackward0", "AccumulateGrad"]`);
# - `same_accumulator`: whether the two entries of the multiplication's `next_functions` are
#   the same object (`True` or `False`).

# %% nbgrader={"grade": false, "grade_id": "predict_next", "locked": false, "schema_version": 3, "solution": true} tags=["prediction"]
### BEGIN SOLUTION
add_next = ["MulBackward0", "AccumulateGrad"]
same_accumulator = True
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "predict_next_test", "locked": true, "points": 1, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson07 as check

check.next_prediction(add_next, same_accumulator)

# %% [markdown]
# ### Run

# %% tags=["torch-parity"]
x = torch.tensor(3.0, requires_grad=True)
z = x * x + x
mul = z.grad_fn.next_functions[0][0]
print(z.grad_fn.next_functions)
print(mul.next_functions)
print(mul.next_functions[0][0] is mul.next_functions[1][0] is z.grad_fn.next_functions[1][0])

# %% [markdown]
# Three edges lead to one node: both inputs of the multiplication are `x`, and the addition
# uses `x` once more. The drawing shows it.

# %% tags=["course-helper"]
viz.draw(z, names={x: "x", z: "z"})

# %% [markdown]
# ## 4. Exercise: a backward pass by hand
#
# Take the blog's product one step further, to one number: $s = \sum_j y_j^2$ with
# $y = xM$. Its graph has three nodes above the leaf: `SumBackward0`, `MulBackward0` (for
# `y * y`, whose two inputs are both `y`) and `MmBackward0`.

# %% tags=["torch-parity"]
x = torch.tensor([[2.0, 1.0]], requires_grad=True)
M = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
y = torch.mm(x, M)
s = (y * y).sum()
print(s)
print(s.grad_fn.next_functions)

# %% tags=["course-helper"]
viz.draw(s, names={x: "x", y: "y", s: "s"})

# %% [markdown]
# Write `by_hand(s)`, for an `s` made this way: without `backward()` or `torch.autograd.grad`,
# by calling the nodes yourself, starting from `s.grad_fn` with $\partial s/\partial s = 1$
# (`torch.tensor(1.0)`), return the pair `(grad_y, grad_x)`:
#
# - `grad_y`: the gradient of `s` with respect to `y`, all of what reaches `MmBackward0`;
# - `grad_x`: the gradient of `s` with respect to `x`, what `MmBackward0` sends to the leaf.
#
# Use section 1: what each node returns, a tuple or a bare tensor, and where `next_functions`
# sends each part; reach each node from the one before it through `next_functions`. Where two
# parts go to the same node, that node's gradient is their sum. The tests also hand it an `s`
# whose graph is of their own making, with numbers chosen when your notebook is graded: its
# nodes have what a walk by hand uses (`next_functions`, a call with the gradient), and the
# engine's backward cannot walk them.

# %% nbgrader={"grade": false, "grade_id": "by_hand", "locked": false, "schema_version": 3, "solution": true}
def by_hand(s):
    ### BEGIN SOLUTION
    mul = s.grad_fn.next_functions[0][0]
    from_sum = s.grad_fn(torch.tensor(1.0))     # one input: a bare tensor
    first, second = mul(from_sum)               # y * y: one part for each use of y
    grad_y = first + second
    product = mul.next_functions[0][0]          # both edges of the product lead to it
    grad_x, grad_M = product(grad_y)            # None for M: it needs no gradient
    return grad_y, grad_x
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "by_hand_test", "locked": true, "points": 2, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson07 as check

check.by_hand(by_hand)
### BEGIN HIDDEN TESTS
check.by_hand(by_hand)
### END HIDDEN TESTS

# %%
grad_y, grad_x = by_hand(s)
print(grad_y)
print(grad_x)

# %% [markdown]
# The engine's own pass agrees. (`torch.autograd.grad` returns the gradients instead of adding
# them into `.grad`; `retain_graph=True` keeps the graph for another run: lesson 06.)

# %% tags=["torch-parity"]
print(torch.autograd.grad(s, x, retain_graph=True))

# %% [markdown]
# ## What to remember
#
# - A node is a function: called with $\partial L/\partial\,\text{output}$, it returns one
#   gradient per input of its operation (`None` for an input that needs none): a tuple when
#   the operation has several inputs, a bare tensor when it has one, as in PyTorch.
#   `next_functions` says, in the same order, which node each of them goes to; `(None, 0)` is
#   an input with nowhere to go.
# - Every path ends at an `AccumulateGrad`, one per leaf, shared by all its uses; its
#   `.variable` is the leaf, and running it adds into the leaf's `.grad`.
# - Calling the nodes from the root down, and summing the parts that reach the same node, is
#   backward done by hand.
#
# **Next:** [Lesson 08 · Backward, by hand and in order](../08_backward_by_hand/08_backward_by_hand.ipynb),
# where the walk becomes a loop that works on any graph.
