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
# # Lesson 11 · Define-by-run, freezing and grad modes
#
# **Time:** about 35 minutes: 15 reading and running the code, 13 predicting and explaining, 6 on exercises. **You will be able to:**
#
# - say why one function can record a different graph for each input (an `if` or a `while`
#   in the forward pass), and which gradient backward then gives;
# - freeze a parameter with `requires_grad_(False)`;
# - say what `no_grad`, `enable_grad`, `set_grad_enabled` and `inference_mode` each switch
#   off, and why none of them freezes a parameter;
# - say what `model.eval()` changes, and what it leaves as it was.

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
# ## 1. A graph made as the code runs
#
# Every operation on a tensor that requires grad records its node at the moment it runs
# (lesson 01). Nothing else is recorded: not the function, not its loops. Here is a forward
# pass with a loop in it, run on two inputs:
#
# ```python
# def double_until(x, limit=10.0):
#     y = x * 2
#     while y.abs() < limit:
#         y = y * 2
#     return y
#
# a = torch.tensor(3.0, requires_grad=True)
# double_until(a).backward()
# b = torch.tensor(0.5, requires_grad=True)
# double_until(b).backward()
# ```
#
# ### Predict
# Predict `a.grad` and `b.grad`, as numbers: `a_grad` and `b_grad`.

# %% nbgrader={"grade": false, "grade_id": "predict_loop", "locked": false, "schema_version": 3, "solution": true} tags=["prediction"]
### BEGIN SOLUTION
a_grad = 4.0
b_grad = 32.0
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "predict_loop_test", "locked": true, "points": 1, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson11 as check

check.loop_prediction(a_grad, b_grad)

# %% [markdown]
# ### Run

# %%
def double_until(x, limit=10.0):
    y = x * 2
    while y.abs() < limit:
        y = y * 2
    return y


a = torch.tensor(3.0, requires_grad=True)
ya = double_until(a)
ya.backward()
b = torch.tensor(0.5, requires_grad=True)
yb = double_until(b)
yb.backward()
print(ya, a.grad)
print(yb, b.grad)

# %% tags=["course-helper"]
viz.draw(ya, yb, names={a: "a", b: "b", ya: "ya", yb: "yb"})

# %% [markdown]
# One function, two graphs. For `a` the loop ran once (3, 6, 12), for `b` four times (0.5, 1,
# 2, 4, 8, 16): the *values* decided, and each `y * 2` that ran left a `MulBackward0`. Backward
# multiplies along the chain it finds: $2^2 = 4$ for `a`, $2^5 = 32$ for `b`. The test
# `y.abs() < limit` is a yes or a no, and no gradient flows through a decision.
#
# PyTorch calls this **define-by-run**: there is no graph before the code runs; each forward
# pass records its own, which its backward frees (lesson 06). An `if` works the same way:

# %%
def f(x):
    if x > 0:
        return x**2
    return -x


for value in [3.0, -2.0]:
    t = torch.tensor(value, requires_grad=True)
    out = f(t)
    out.backward()
    print(value, out.grad_fn, t.grad)

# %% [markdown]
# Where $x > 0$ the graph is a `PowBackward0` and the gradient $2x = 6$; elsewhere it is a
# `NegBackward0` and the gradient $-1$. A function written in pieces is differentiated in the
# piece its input falls in, and nowhere else.
#
# ## 2. Freezing a parameter
#
# Since autograd records an operation only if one of its inputs requires grad, freezing a
# parameter (training goes on, and leaves it as it is) is one flag: `w1.requires_grad_(False)`.
# Here the first layer of a two-layer model is frozen.

# %%
w1 = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
w2 = torch.tensor([[0.5, -1.0]], requires_grad=True)
x = torch.tensor([1.0, 1.0])

w1.requires_grad_(False)
h = (w1 @ x).relu()
out = (w2 @ h).sum()
out.backward()
print(h.requires_grad, h.grad_fn)
print(w1.grad, w2.grad)

# %% [markdown]
# Nothing that made `h` required grad, so `h` has no history. The graph has no
# `AccumulateGrad` for `w1`, and backward stops one node early: the first layer's gradient is
# never computed, which is what makes freezing cheap.

# %% tags=["course-helper"]
viz.draw(out, names={w2: "w2", h: "h", out: "out"})

# %% [markdown]
# The flag is a leaf's. A computed tensor's `requires_grad` says whether its history needs
# gradients, and PyTorch refuses to change it; its numbers without the history are `detach()`'s
# (lesson 01).

# %% tags=["raises-exception"]
w = torch.tensor([1.0, -2.0], requires_grad=True)
(w * 2).requires_grad_(False)

# %% [markdown]
# ## 3. Grad modes
#
# ### Predict: is `no_grad` a way to freeze?
#
# ```python
# w = torch.tensor([1.0, -2.0], requires_grad=True)
# x = torch.tensor([3.0, 0.5])
# with torch.no_grad():
#     print(w.requires_grad)      # (1)
#     a = w * x
# b = w * x
# print(b.requires_grad)          # (2)
# ```
#
# Predict the two lines as `w_requires_grad_inside` and `b_requires_grad` (True or False).

# %% nbgrader={"grade": false, "grade_id": "predict_no_grad", "locked": false, "schema_version": 3, "solution": true} tags=["prediction"]
### BEGIN SOLUTION
w_requires_grad_inside = True
b_requires_grad = True
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "predict_no_grad_test", "locked": true, "points": 1, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson11 as check

check.no_grad_prediction(w_requires_grad_inside, b_requires_grad)

# %% [markdown]
# ### Run: the grad modes side by side

# %%
w = torch.tensor([1.0, -2.0], requires_grad=True)
x = torch.tensor([3.0, 0.5])
with torch.no_grad():
    print("no_grad:         ", w.requires_grad, (w * x).requires_grad)
    with torch.enable_grad():
        print("  enable_grad:   ", (w * x).requires_grad)
with torch.set_grad_enabled(False):
    print("set_grad_enabled:", (w * x).requires_grad)
with torch.inference_mode():
    q = w * x
print("inference_mode:  ", q.requires_grad, q.is_inference())
print("after them all:  ", w.requires_grad, (w * x).requires_grad)
try:
    (q * w).sum()
except RuntimeError as e:
    print(e)

# %% [markdown]
# A grad mode switches *recording* off for a block; it never touches a tensor's flag. `w`
# still requires grad inside, and after the block `w * x` is recorded again. `no_grad` is for
# code run for its numbers (an update, an evaluation); `requires_grad_(False)` freezes.
#
# `inference_mode` is `no_grad` made final: what it makes is an *inference tensor*, which
# autograd refuses to save for a later backward (the error above). `no_grad` results may
# join a graph later.
#
# ## 4. `model.eval()` is not a grad mode
#
# A PyTorch model is a `torch.nn.Module`: it holds its parameters and one more flag,
# `training`, which `model.train()` sets and `model.eval()` clears. Some layers read it:
# *dropout*, while training, zeroes each input with probability $p$ and scales the others by
# $1/(1-p)$, and in evaluation passes them through. This engine has no `nn.Module` (lesson 10
# wrote its model as tensors), so here is that much of one, written out: section 2's two
# layers, with dropout ($p = 0.5$) between them.

# %%
class TinyNet:
    """What a torch.nn.Module keeps: parameters, and the training flag."""

    def __init__(self):
        self.w1 = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        self.w2 = torch.tensor([[0.5, -1.0]], requires_grad=True)
        self.training = True

    def parameters(self):
        return [self.w1, self.w2]

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def __call__(self, x):
        h = (self.w1 @ x).relu()
        if self.training:               # dropout: keep each unit with probability 0.5
            h = h * (torch.rand(h.shape) < 0.5) / 0.5
        return (self.w2 @ h).sum()

# %% [markdown]
# ### Predict: is `eval()` a way to freeze?
#
# ```python
# model = TinyNet()
# model.eval()
# out = model(torch.tensor([1.0, 1.0]))
# out.backward()
# ```
#
# Predict `out_requires_grad`, whether `out` requires grad, and `w1_has_grad`, whether
# `model.w1.grad` holds a tensor afterwards (`True`) or is still `None` (`False`).

# %% nbgrader={"grade": false, "grade_id": "predict_eval", "locked": false, "schema_version": 3, "solution": true} tags=["prediction"]
### BEGIN SOLUTION
out_requires_grad = True
w1_has_grad = True
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "predict_eval_test", "locked": true, "points": 1, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson11 as check

check.eval_prediction(out_requires_grad, w1_has_grad)

# %% [markdown]
# ### Run

# %%
torch.manual_seed(0)
model = TinyNet()
x = torch.tensor([1.0, 1.0])
print("training:", model(x), model(x))
model.eval()
out = model(x)
print("eval:    ", out, model(x))
out.backward()
print(out.requires_grad, model.w1.grad)

# %% [markdown]
# In training, each call drew the units it drops afresh, and the output changed (3, then
# -11); after `eval()` every call gives $-5.5$. The output still has its `grad_fn`, though, and
# backward filled `w1.grad`: `eval()` changed *which* operations the forward pass runs (the
# `if self.training:` branch: define-by-run again), not *whether* they are recorded. It
# freezes nothing, and saves no memory. Code that evaluates a model therefore says both:

# %%
model.eval()
with torch.no_grad():
    score = model(x)
print(score, score.requires_grad)

# %% [markdown]
# ### Explain
# Without `model.eval()`, what would go wrong in that evaluation; and without
# `torch.no_grad()`? Say what each of the two changes. (Two or three sentences.)

# %% [markdown] nbgrader={"grade": true, "grade_id": "explain_eval", "locked": false, "points": 3, "schema_version": 3, "solution": true}
# `model.eval()` clears the model's `training` flag, so the forward pass takes its evaluation
# branch: without it, dropout would still zero random units and the score would change from
# one call to the next. `torch.no_grad()` switches recording off: without it, every operation
# of the evaluation would be recorded, a graph with its saved tensors built for a backward
# that never comes (the score would require grad). `eval()` changes what is computed,
# `no_grad()` whether it is recorded; neither does the other's work.
#
# *Rubric (3 points): 1 for `eval()`: it sets `training` to False, and without it dropout
# keeps dropping units at random (scores differ from call to call, or are the training
# branch's); 1 for `no_grad()`: it stops recording, and without it a graph is built and its
# tensors kept, memory spent for nothing (the result requires grad); 1 for saying that each
# does only its own part: `eval()` records as before, `no_grad()` runs the training branch.*

# %% tags=["course-helper"]
from autograd_lab.checks.written import reveal

reveal("explain_eval")

# %% [markdown]
# ## 5. Exercise: freeze
#
# Write `freeze(params)`: it freezes every tensor of `params`, leaves that require grad, given
# as a list or as anything else that yields them one by one (a module's `parameters()` does
# that), so that no later operation on them is recorded and no backward reaches their
# `.grad`. It returns nothing. (A name bound to a copy freezes nothing: the tensors that
# `params` holds are the ones the model uses.)

# %% nbgrader={"grade": false, "grade_id": "freeze", "locked": false, "schema_version": 3, "solution": true}
def freeze(params):
    ### BEGIN SOLUTION
    for p in params:
        p.requires_grad_(False)
    ### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "freeze_test", "locked": true, "points": 2, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson11 as check

check.frozen(freeze)
### BEGIN HIDDEN TESTS
check.frozen(freeze, given="generator")
check.frozen(freeze, given="tuple")
### END HIDDEN TESTS

# %% [markdown]
# ### Run: training the last layer alone
#
# Fine-tuning a trained model often means this: freeze every parameter, then let the last
# layer learn again.

# %%
model = TinyNet().eval()
freeze(model.parameters())
model.w2.requires_grad_(True)
out = model(x)
out.backward()
print(model.w1.grad, model.w2.grad)

# %% [markdown]
# ## What to remember
#
# - The graph is what ran: an `if` or a `while` in a forward pass picks the operations, each
#   call records a graph of its own, and backward differentiates the branch that was taken.
# - Freeze a leaf with `p.requires_grad_(False)`: no `AccumulateGrad`, and backward stops
#   early. A computed tensor has no such flag; `detach()` gives its numbers alone.
# - `no_grad`, `set_grad_enabled(False)` and `inference_mode` switch recording off for a
#   block and change no tensor's flag; `enable_grad` switches it back on inside one;
#   inference tensors never join a graph.
# - `model.eval()` clears `training`: the forward pass takes its evaluation branch, recorded
#   as ever. Evaluate with `model.eval()` and `torch.no_grad()` together.
#
# **Next:** [Lesson 12 · Hooks, kinks and higher-order gradients](../12_hooks_and_higher_order/12_hooks_and_higher_order.ipynb).
