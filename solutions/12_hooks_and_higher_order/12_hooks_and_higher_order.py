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
# # Lesson 12 · Hooks, kinks and higher-order gradients
#
# **Time:** about 40 minutes: 12 reading and running the code, 14 predicting and explaining, 12 on exercises. **You will be able to:**
#
# - watch or change a gradient on its way with a hook, on a tensor or on a node;
# - say which gradient PyTorch gives where a function has a kink;
# - differentiate a gradient again: a Hessian-vector product, a gradient penalty.
#
# Lesson 11 decided whether a graph is recorded at all. This one works inside a backward pass
# as it runs: it watches and changes what travels through it, asks what travels where a
# function has no derivative, and records the pass itself, so that a gradient can be
# differentiated in turn.

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
# ## 1. Hooks: a gradient on its way
#
# `t.register_hook(fn)` asks backward to call `fn(grad)` with the gradient that reaches `t`,
# before it travels on. A hook that returns `None` only looks. A hook that returns a tensor
# *replaces* the gradient: the new one flows on to the nodes below (for a leaf, into `.grad`).
#
# ### Predict: what a hook returns
#
# ```python
# xa = torch.tensor([1.0, 2.0], requires_grad=True)
# ya = xa * 3
# ya.register_hook(lambda g: g * 10)
# (ya**2).sum().backward()
#
# def look(g):
#     g = g * 10
#
# xb = torch.tensor([1.0, 2.0], requires_grad=True)
# yb = xb * 3
# yb.register_hook(look)
# (yb**2).sum().backward()
# ```
#
# Predict `xa.grad` and `xb.grad` as `xa_grad` and `xb_grad` (tensors).

# %% nbgrader={"grade": false, "grade_id": "predict_hooks", "locked": false, "schema_version": 3, "solution": true} tags=["prediction"]
### BEGIN SOLUTION
xa_grad = torch.tensor([180.0, 360.0])
xb_grad = torch.tensor([18.0, 36.0])
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "predict_hooks_test", "locked": true, "points": 1, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson12 as check

check.hooks_prediction(xa_grad, xb_grad)

# %% [markdown]
# ### Run

# %%
xa = torch.tensor([1.0, 2.0], requires_grad=True)
ya = xa * 3
ya.register_hook(lambda g: g * 10)
(ya**2).sum().backward()


def look(g):
    g = g * 10


xb = torch.tensor([1.0, 2.0], requires_grad=True)
yb = xb * 3
yb.register_hook(look)
(yb**2).sum().backward()
print(xa.grad, xb.grad)

# %% [markdown]
# `look` rebinds its own name `g` and returns `None`: backward never sees the new tensor.
#
# Nodes have hooks too: `register_prehook(fn)` sees what a node receives, `register_hook(fn)`
# also what it sends on. `retain_grad()` (lesson 01) is a hook that stores what passes.

# %%
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 3
y.retain_grad()
y.grad_fn.register_prehook(lambda received: print("MulBackward0 receives", received))
y.grad_fn.register_hook(lambda sent, received: print("MulBackward0 sends", sent))
(y**2).sum().backward()
print(y.grad, x.grad)

# %% [markdown]
# ### Exercise: clip a gradient on its way
#
# Write `clip_gradient(t, limit)`: it registers on `t` a hook that clamps every element of
# the gradient reaching `t` to the range $[-\text{limit}, \text{limit}]$ (`g.clamp(min, max)`),
# and returns the handle `register_hook` gives back, so that `handle.remove()` undoes it.

# %% nbgrader={"grade": false, "grade_id": "clip_gradient", "locked": false, "schema_version": 3, "solution": true}
def clip_gradient(t, limit):
    ### BEGIN SOLUTION
    return t.register_hook(lambda g: g.clamp(-limit, limit))
    ### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "clip_gradient_test", "locked": true, "points": 3, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson12 as check

check.clipped(clip_gradient)
### BEGIN HIDDEN TESTS
check.clipped(clip_gradient, values=(0.5, -2.0, 1.0, 0.1), limit=2.5)
check.clipped(clip_gradient, values=(-3.0, 4.0), limit=0.5)
### END HIDDEN TESTS

# %% [markdown]
# ### Run

# %%
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 3
handle = clip_gradient(y, 8.0)
(y**2).sum().backward(retain_graph=True)    # y's node runs again below
print(x.grad)
handle.remove()
x.grad = None
(y**2).sum().backward()
print(x.grad)

# %% [markdown]
# `y` received $2y = (6, 12)$, clipped to $(6, 8)$; `MulBackward0` then multiplied by 3.
#
# ## 2. Gradients at a kink
#
# $|x|$ has no derivative at 0, nor has `relu`; `max` has none where two elements tie; $\sqrt x$
# is infinitely steep at 0. Backward raises no error there: each operation's backward formula
# gives one value, which PyTorch chose.
#
# ### Predict
#
# ```python
# r = torch.tensor([-1.0, 0.0, 1.0], requires_grad=True)
# r.relu().sum().backward()
# m = torch.tensor([1.0, 3.0, 3.0], requires_grad=True)
# m.max().backward()
# s = torch.tensor(0.0, requires_grad=True)
# s.sqrt().backward()
# ```
#
# Predict `r.grad` and `m.grad` as tensors, and `s.grad` as a number: `relu_grad`,
# `max_grad`, `sqrt_grad` (`float("inf")` and `float("nan")` are numbers too).

# %% nbgrader={"grade": false, "grade_id": "predict_kinks", "locked": false, "schema_version": 3, "solution": true} tags=["prediction"]
### BEGIN SOLUTION
relu_grad = torch.tensor([0.0, 0.0, 1.0])
max_grad = torch.tensor([0.0, 0.5, 0.5])
sqrt_grad = float("inf")
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "predict_kinks_test", "locked": true, "points": 1, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson12 as check

check.kinks_prediction(relu_grad, max_grad, sqrt_grad)

# %% [markdown]
# ### Run

# %%
for name in ["relu", "abs", "sqrt"]:
    t = torch.tensor([-1.0, 0.0, 1.0], requires_grad=True)
    getattr(t, name)().sum().backward()
    print(f"{name:5}", t.grad)

m = torch.tensor([1.0, 3.0, 3.0], requires_grad=True)
m.max().backward()
print("max()     ", m.grad)
m.grad = None
m.max(dim=0).values.backward()
print("max(dim=0)", m.grad)

# %% [markdown]
# At 0, `relu` and `abs` give 0, a *subgradient* (the slope of a line touching the kink from
# below). `sqrt` gives `inf`, $1/(2\sqrt 0)$, and `nan` at $-1$. `max()` shares the gradient
# among tied elements; `max(dim=0)` returns one index and sends it all there.
#
# ## 3. Differentiating a gradient
#
# With `create_graph=True`, `torch.autograd.grad` (lesson 06) *records* the backward pass as
# it runs: the gradient it returns has a `grad_fn`, and can be differentiated again.
#
# ### Predict
#
# ```python
# x = torch.tensor([1.0, 2.0], requires_grad=True)
# (g_plain,) = torch.autograd.grad((x**3).sum(), x)
# (g_graph,) = torch.autograd.grad((x**3).sum(), x, create_graph=True)
# ```
#
# Predict `g_plain.requires_grad` and `g_graph.requires_grad` as `plain_requires_grad` and
# `graph_requires_grad`.

# %% nbgrader={"grade": false, "grade_id": "predict_create_graph", "locked": false, "schema_version": 3, "solution": true} tags=["prediction"]
### BEGIN SOLUTION
plain_requires_grad = False
graph_requires_grad = True
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "predict_create_graph_test", "locked": true, "points": 1, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson12 as check

check.create_graph_prediction(plain_requires_grad, graph_requires_grad)

# %% [markdown]
# ### Run

# %%
x = torch.tensor([1.0, 2.0], requires_grad=True)
(g_plain,) = torch.autograd.grad((x**3).sum(), x)
(g_graph,) = torch.autograd.grad((x**3).sum(), x, create_graph=True)
print(g_plain)
print(g_graph)
v = torch.tensor([1.0, 0.5])
print(torch.autograd.grad(g_graph @ v, x))

# %% [markdown]
# $g = 3x^2$, and the gradient of $g \cdot v$ is $H v$, the Hessian $H = \mathrm{diag}(6x)$
# times $v$: $(6, 6)$. Two backward passes, and the Hessian itself is never built.
#
# ### Exercise: a Hessian-vector product
#
# Write `hvp(f, x, v)`: `f` maps a vector to a scalar, `x` is a leaf that requires grad, `v`
# has `x`'s shape. Return $H v$, the Hessian of `f` at `x` times `v`, with two calls of
# `torch.autograd.grad`.

# %% nbgrader={"grade": false, "grade_id": "hvp", "locked": false, "schema_version": 3, "solution": true}
def hvp(f, x, v):
    ### BEGIN SOLUTION
    (g,) = torch.autograd.grad(f(x), x, create_graph=True)
    (hv,) = torch.autograd.grad(g @ v, x)
    return hv
    ### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "hvp_test", "locked": true, "points": 3, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson12 as check

check.hessian_vector(hvp)
### BEGIN HIDDEN TESTS
check.hessian_vector(hvp, case="tanh", x0=(0.5, -1.0, 2.0), v=(1.0, 2.0, -1.0))
check.hessian_vector(hvp, case="coupled", x0=(1.0, -0.5), v=(0.0, 1.0))
### END HIDDEN TESTS

# %% [markdown]
# ### Run: against finite differences
#
# $H v$ is how fast the gradient changes when $x$ moves along $v$, so a central difference of
# two gradients (lesson 02's formula, in float64) must agree with it.

# %%
def f(p):
    return (p.tanh() * p**2).sum() + p[0] * p[1]


x0 = torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)
v = torch.tensor([1.0, 2.0], dtype=torch.float64)
step = 1e-5
(up,) = torch.autograd.grad(f(x0 + step * v), x0)       # the gradient at x0 + step v
(down,) = torch.autograd.grad(f(x0 - step * v), x0)
print(hvp(f, x0, v))
print((up - down) / (2 * step))

# %% [markdown]
# ### A gradient penalty
#
# A *gradient penalty* (WGAN-GP trains critics with one) is a loss made of a gradient: here it
# pushes $\lVert \partial\, \text{out}/\partial x\rVert$ towards 1.

# %%
w = torch.tensor([0.5, -1.0], requires_grad=True)
x = torch.tensor([1.0, 2.0], requires_grad=True)
out = (w * x.tanh()).sum()
(g,) = torch.autograd.grad(out, x, create_graph=True)
penalty = (g.norm() - 1) ** 2
penalty.backward()
print(g)
print(penalty, w.grad)

# %% tags=["course-helper"]
viz.draw(penalty, names={w: "w", x: "x", g: "g", penalty: "penalty"})

# %% [markdown]
# `g` hangs on `TanhBackwardBackward0`: tanh's backward formula, $g = w\,(1 - \tanh^2 x)$,
# recorded as it ran. Its two inputs lead back to `w` (the gradient that reached tanh) and to
# `x` (the saved $\tanh x$). The norm, the subtraction and the square sit on top of it.
#
# ### Explain
# The penalty never uses `w` directly, yet `w.grad` is not zero. Explain how `w` reaches
# the penalty, and what `penalty.backward()` would do if `g` had been computed without
# `create_graph=True`. (Two or three sentences.)

# %% [markdown] nbgrader={"grade": true, "grade_id": "explain_penalty", "locked": false, "points": 3, "schema_version": 3, "solution": true}
# $g = w\,(1 - \tanh^2 x)$: the gradient of `out` depends on `w`, and with `create_graph=True`
# the backward pass that computed `g` was recorded like any forward pass, so `g`'s history
# leads back to `w` (and to `x`) and the penalty's backward follows it. Without
# `create_graph=True`, `g` would be plain numbers with no `grad_fn`: the penalty would not
# require grad and `penalty.backward()` would raise "element 0 of tensors does not require
# grad and does not have a grad_fn".
#
# *Rubric (3 points): 1 for $g$ depending on `w` (the derivative of `out` contains `w`); 1 for
# `create_graph=True` recording the first backward so that the penalty's graph reaches `w`
# through `g`; 1 for what happens without it: `g` has no history, and backward raises (or,
# said otherwise, nothing can reach `w`).*

# %% tags=["course-helper"]
from autograd_lab.checks.written import reveal

reveal("explain_penalty")

# %% [markdown]
# ## What to remember
#
# - `t.register_hook(fn)`: `fn(grad)` returning `None` looks, returning a tensor replaces the
#   gradient. Nodes have `register_prehook` and `register_hook`; `retain_grad()` is a hook.
# - At a kink PyTorch picks a value: `relu` and `abs` give 0 at 0, `max()` shares a tie,
#   `sqrt` gives `inf` at 0.
# - `create_graph=True` records the backward pass, so a gradient can be differentiated:
#   $Hv$ from two `grad` calls, and losses that contain a gradient.
#
# The course ends here. [Lesson 00 · Start here](../00_start_here/00_start_here.ipynb) is where
# it begins.
