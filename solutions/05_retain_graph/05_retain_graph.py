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
# # Lesson 05 · retain_graph and the freed graph
#
# **Time:** about 35 minutes. **You will be able to:**
#
# - say what a backward pass throws away (the *saved tensors*) and what it keeps;
# - predict which graphs can go backward twice: `x + 1` can, `x * x` and even `x * 2` cannot;
# - use `retain_graph=True` where a second pass is really needed, and nowhere else;
# - get the gradients of two losses that share part of their graph, with `backward` or
#   `torch.autograd.grad`;
# - read the error "modified by an inplace operation" and fix it.
#
# Same rhythm: **read**, **predict** (graded), **run**, **explain**.

# %%
import autograd_lab as torch
from autograd_lab import viz

# %% [markdown]
# ## 1. The second pass that fails
#
# Lesson 04 called `backward` several times on one graph, always with `retain_graph=True`.
# Here is the same two-leaf example without it: one backward, then two more attempts, each
# wrapped in `try`/`except` so the cell runs to the end.

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
# The first pass worked; the other two raised a `RuntimeError` and printed the cell's own
# message. Here is what PyTorch itself says (the cell is tagged to show the error without
# stopping the notebook):

# %% tags=["raises-exception", "torch-parity"]
y.backward(w)

# %% [markdown]
# Read it slowly: *saved intermediate values of the graph are freed when you call
# `.backward()`*. (The older PyTorch of the source example said "the buffers have already
# been freed" and suggested `retain_graph=True` "when calling backward the first time";
# PyTorch 2.13 words it as above.) Note also that `x.grad` is still `[4., 4.]`: the failed
# passes added nothing.
#
# So what *are* these saved values, and why does backward throw them away?
#
# ## 2. What a node saves
#
# To send a gradient back, each node evaluates a derivative, and most derivatives need
# numbers from the forward pass. For $s = x \cdot x$ the node needs $x$ (because
# $\partial s/\partial x = 2x$), so `MulBackward0` keeps a reference to it. These references
# are the node's **saved tensors**; PyTorch lets you peek at them as `grad_fn._saved_...`.

# %% tags=["torch-parity"]
x = torch.tensor([1.0, 2.0], requires_grad=True)
sq = x * x
print(sq.grad_fn._saved_self, sq.grad_fn._saved_other)
print(sq.grad_fn._saved_self is x)

dbl = x * 2
print(dbl.grad_fn._saved_other, dbl.grad_fn._saved_self)

inc = x + 1
print(inc.grad_fn._saved_alpha)

# %% [markdown]
# - `x * x` saved `x` twice (the very same tensor, not a copy).
# - `x * 2` saved the **2**: the derivative with respect to `x` is that other factor. Nothing
#   about `x` is needed, and yet *something* was saved.
# - `x + 1` saved no tensor at all, only the number `alpha` (the 1 in `x + alpha * other`):
#   the derivative of a sum is 1 whatever the inputs are.
#
# The drawing shows saved tensors in dashed boxes. Draw `sq.sum()` before backward...

# %%
s = sq.sum()
viz.draw(s, names={x: "x", sq: "sq", s: "s"}, show_saved=True)

# %% [markdown]
# ...then step through its backward pass, and draw it again.

# %%
trace = viz.trace_backward(s, names={x: "x", sq: "sq", s: "s"})
print(trace.table())

# %%
trace   # the slider: one frame per step

# %%
viz.draw(s, names={x: "x", sq: "sq", s: "s"}, show_saved=True)

# %% [markdown]
# The nodes and their arrows are all still there (`next_functions` still works); only the
# saved tensors are gone (grey). Backward frees them as soon as it has used them, because a
# real network saves every layer's activations and that memory is wanted back at once. A
# second pass would need them again: that is the error. Even *reading* them after backward
# fails. The same steps once more, in plain PyTorch code:

# %% tags=["raises-exception", "torch-parity"]
x = torch.tensor([1.0, 2.0], requires_grad=True)
sq = x * x
sq.sum().backward()
print(x.grad)
print(sq.grad_fn.next_functions)
sq.grad_fn._saved_self

# %% [markdown]
# ### Predict: which snippets raise?
# Each snippet below starts from a fresh `x = torch.tensor([1.0, 2.0], requires_grad=True)`.
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
# (`torch.autograd.grad(y, x)` computes $\partial y/\partial x$ and returns it, without
# touching `x.grad`; section 3 uses it.) Write `raises = {"A": ..., ..., "F": ...}`, `True`
# for a snippet that raises the RuntimeError, `False` for one that runs.

# %% nbgrader={"grade": false, "grade_id": "predict_raises", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
raises = {"A": False, "B": True, "C": False, "D": True, "E": False, "F": True}
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "predict_raises_test", "locked": true, "points": 3, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson05 as check

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
# The rule behind all six: **a graph can go backward again only if no node in it saved a
# tensor, or if every earlier pass said `retain_graph=True`.** `retain_graph=True` means
# "do not free the saved tensors this time"; the last pass may free them (D shows that each
# call decides for itself). A new forward pass (E) builds a new graph with fresh saved
# tensors, which is what a training loop does every step, so it never needs `retain_graph`.
# And `autograd.grad` (F) frees like `backward` does. A passes twice: nothing to free, and
# `x.grad` shows both passes added up.
#
# ### Exercise: catch the error
# The source example caught the error and printed a sentence of its own. Keep the error
# instead: rebuild the two-leaf example (`x = [2., 2.]`, `z = [4., 4.]`, `y = x**2 + z**3`,
# weights `w` of ones), call `y.backward(w)` once, then call it a second time inside
# `try`/`except RuntimeError` and store the exception object in `error`. Print it.
# (Careful: Python deletes the name after `as` when the `except` block ends.)

# %% nbgrader={"grade": false, "grade_id": "catch_error", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
x = torch.tensor([2.0, 2.0], requires_grad=True)
z = torch.tensor([4.0, 4.0], requires_grad=True)
y = x**2 + z**3
w = torch.ones(2)
y.backward(w)
error = None
try:
    y.backward(w)
except RuntimeError as e:
    error = e
print(error)
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "catch_error_test", "locked": true, "points": 1, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson05 as check

check.caught_error(error, x)

# %% [markdown]
# ### Explain
# Why can `(x + 1).sum()` go backward twice while `(x * 2).sum()` cannot, although neither
# derivative depends on `x`? Say what backward frees and why it frees it. (Two or three
# sentences.)

# %% [markdown] nbgrader={"grade": true, "grade_id": "explain_freed", "locked": false, "points": 2, "schema_version": 3, "solution": true}
# Backward frees each node's *saved tensors*, the forward-pass values its derivative formula
# needs, as soon as it has used them, to give that memory back (a network saves every
# layer's activations). `MulBackward0` in `x * 2` saved the other factor, the tensor `2`, so
# after the first pass that saved value is gone and a second pass has nothing to multiply
# by. `AddBackward0` saved no tensor at all (the derivative of a sum is always 1), so there
# is nothing to free and a second pass simply runs again and adds to `x.grad`.

# %% [markdown]
# ## 3. Two losses, one shared graph
#
# A common real case: two losses computed from one shared intermediate result, say a
# network's features `h`, and you want each loss's gradient. Both backward passes go
# through the nodes that made `h`, and the first pass frees what those nodes saved.

# %% tags=["torch-parity"]
x = torch.tensor([1.0, 2.0], requires_grad=True)
h = x ** 3                     # shared: PowBackward0 saves x
loss_a = h.sum()
loss_b = (h ** 2).mean()

# %%
viz.draw(loss_a, loss_b, names={x: "x", h: "h", loss_a: "loss_a", loss_b: "loss_b"},
         show_saved=True)

# %% tags=["raises-exception", "torch-parity"]
loss_a.backward()
print(x.grad)
loss_b.backward()

# %% [markdown]
# `loss_a.backward()` worked and freed the saved `x` of the shared `PowBackward0`; `loss_b`'s
# pass needs it and fails. In the drawing, the shared node's saved tensor is now grey, while
# `loss_b`'s own `PowBackward0 #2` still holds its `h`:

# %%
viz.draw(loss_a, loss_b, names={x: "x", h: "h", loss_a: "loss_a", loss_b: "loss_b"},
         show_saved=True)

# %% [markdown]
# Three ways to get it right, from a fresh forward pass:
#
# 1. `loss_a.backward(retain_graph=True)`, then `loss_b.backward()`: `x.grad` ends up with
#    the **sum** of both gradients (it accumulates, lesson 04).
# 2. `(loss_a + loss_b).backward()`: the same sum, in one pass, no `retain_graph` needed.
# 3. `torch.autograd.grad(loss_a, x, retain_graph=True)` and then
#    `torch.autograd.grad(loss_b, x)`: each gradient **separately**, returned as a tuple,
#    without touching `x.grad`.

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
# `x` may arrive with an old `.grad` from earlier; what `x.grad` holds when you return does
# not matter. Use `backward` or `torch.autograd.grad`, as you like.

# %% nbgrader={"grade": false, "grade_id": "two_losses", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
def separate_gradients(x, loss_a, loss_b):
    # the first pass must keep the shared part's saved tensors for the second
    (g_a,) = torch.autograd.grad(loss_a, x, retain_graph=True)
    (g_b,) = torch.autograd.grad(loss_b, x)
    return g_a, g_b
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "two_losses_test", "locked": true, "points": 3, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson05 as check

check.separate_gradients(separate_gradients)
### BEGIN HIDDEN TESTS
check.separate_gradients(separate_gradients, values=(0.5, -1.0, 2.0), stale=5.0)
check.separate_gradients(separate_gradients, values=(0.3, -0.7), kind="exp")
### END HIDDEN TESTS

# %% [markdown]
# A version with `backward` works too: `loss_a.backward(retain_graph=True)`, copy
# `x.grad`, reset it, `loss_b.backward()`. Adding `retain_graph=True` alone is not enough
# there: without the reset, the second gradient lands **on top of** the first.
#
# ## 4. A saved tensor changed in place
#
# Saved tensors are references, not copies (`_saved_self is x` was `True`). So if you
# change a saved tensor in place after the forward pass, the backward pass would compute
# with the new numbers and give a wrong gradient. PyTorch prevents that: every tensor has
# a version counter that each in-place operation bumps, every node remembers the version
# it saved, and backward compares.

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
from autograd_lab.checks import lesson05 as check

check.inplace_fixed(x, h, h_shifted)

# %% [markdown]
# ## What to remember
#
# - Nodes **save** the forward values their derivative needs (`grad_fn._saved_self`, ...).
#   Backward frees them once used; the nodes themselves stay.
# - A second backward through a graph raises "Trying to backward through the graph a second
#   time" if any node on the way saved a tensor: `x * x`, `x ** 2`, even `x * 2`, but not
#   `x + 1`.
# - `retain_graph=True` keeps the saved tensors for one more pass; every call but the last
#   needs it. It does **not** reset `.grad`: passes still add up.
# - A training loop builds a new graph every step and never needs `retain_graph`. If you
#   reach for it there, look for a tensor computed once outside the loop, or a second
#   `backward` on the same loss.
# - Two losses over one shared graph: `(loss_a + loss_b).backward()`, or `retain_graph=True`
#   on the first, or `torch.autograd.grad` to get each gradient on its own.
# - Changing a saved tensor in place makes backward refuse ("modified by an inplace
#   operation"): change a copy (`h + 1`), or change it after backward.
#
# **Next:** [Lesson 06 · Inside backward](../06_inside_backward/06_inside_backward.ipynb):
# walk the graph by hand and write your own backward.
