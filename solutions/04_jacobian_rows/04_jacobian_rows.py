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
# # Lesson 04 · The Jacobian, row by row
#
# **Time:** about 45 minutes: 9 reading and running the code, 6 predicting and explaining, 30 on exercises. **You will be able to:**
#
# - get any row of a Jacobian from one backward call with one-hot weights;
# - build a whole Jacobian from backward calls, resetting `.grad` between them;
# - say why one backward with the weights $[1, 1]$ gives the sum of two rows, and read the rows
#   of $J$ off the code that made `y`.
#
# Lesson 03 ended with backward computing $v^\top J$, one weighted sum of the rows of the
# Jacobian, without ever building $J$. This lesson turns that around: with the right weights,
# one backward call hands you one row, and a loop of them the whole matrix.

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
# ## 1. One-hot weights read the Jacobian, row by row
#
# A **one-hot** $e_i$ (1 at $i$, 0 elsewhere) picks row $i$ of $J$. The autograd notebook shows
# it on $z = 2x$, in code from the Stack Overflow answer it cites. `Variable` gave a tensor its
# gradient before PyTorch 0.4 (today it returns the tensor); `retain_graph=True` lets one graph
# go backward again (lesson 06); `x.grad.data.zero_()` resets `x.grad` between calls, as
# backward *adds* into `.grad` (lesson 05).

# %% tags=["torch-parity"]
from autograd_lab.autograd import Variable  # in PyTorch: from torch.autograd import Variable

x = Variable(torch.FloatTensor([[1, 2, 3, 4]]), requires_grad=True)
z = 2*x
loss = z.sum(dim=1)

z.backward(torch.FloatTensor([[1, 0, 0, 0]]), retain_graph=True)
print(x.grad.data)
x.grad.data.zero_()  # or it accumulates

z.backward(torch.FloatTensor([[0, 1, 0, 0]]), retain_graph=True)
print(x.grad.data)
x.grad.data.zero_()

z.backward(torch.FloatTensor([[1, 1, 1, 1]]), retain_graph=True)
print(x.grad.data)
x.grad.data.zero_()

loss.backward()  # one element: no weights needed
print(x.grad.data)

# %% [markdown]
# Lesson 03's last `y`, `y[i] = x[i] * x[i+1]`, has a $J$ of 3 rows and 4 columns; `jacobian`
# builds it, and $e_1$ gives row 1:

# %% tags=["torch-parity"]
x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
print(torch.autograd.functional.jacobian(lambda t: t[:3] * t[1:], x))

y = x[:3] * x[1:]
y.backward(torch.tensor([0.0, 1.0, 0.0]))
print(x.grad)

# %% [markdown]
# ### Exercise: the Jacobian from backward calls
# Write `jacobian_by_rows(f, x)`: for a function `f` from a 1-D tensor `x` to a 1-D tensor
# `y = f(x)`, return the Jacobian as one tensor of shape `[len(y), len(x)]`, built from one
# `backward` call per row (not with `torch.autograd.functional.jacobian`), for any such `f`.
#
# Things to think of: `x` may not require grad (make a leaf that does, e.g.
# `x.detach().requires_grad_(True)`); call `f` afresh for every row: each call makes a graph
# of its own, for one backward (the tests' functions allow one backward per call, as a graph
# that its backward frees does; lesson 06 keeps a graph for several); `.grad` adds up, and
# `x.grad` is one tensor that backward updates in place; `torch.stack(rows)` turns a list of
# rows into a matrix. The hidden tests try functions of their own, chosen when your notebook
# is graded.

# %% nbgrader={"grade": false, "grade_id": "jacobian_by_rows", "locked": false, "schema_version": 3, "solution": true} tags=["algorithm"]
### BEGIN SOLUTION
def jacobian_by_rows(f, x):
    x = x.detach().requires_grad_(True)
    rows = []
    for i in range(len(f(x))):
        y = f(x)                        # a graph of its own for this row
        one_hot = torch.zeros_like(y)
        one_hot[i] = 1.0
        x.grad = None                   # backward adds into .grad: each row starts afresh
        y.backward(one_hot)
        rows.append(x.grad)
    return torch.stack(rows)
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "jacobian_by_rows_test", "locked": true, "points": 3, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson04 as check

check.jacobian_of_lesson_function(jacobian_by_rows)
### BEGIN HIDDEN TESTS
check.jacobian_of_other_functions(jacobian_by_rows)
### END HIDDEN TESTS

# %% [markdown]
# ## 2. Allu's example: `x @ M`, row by row
#
# The blog post runs this (`print('\n')` spacers left out). The 2018 output did not show
# `requires_grad=True` and `grad_fn=<MmBackward0>`.

# %% tags=["torch-parity"]
x = Variable(torch.FloatTensor([[2,1]]), requires_grad=True)
print(x)
M = Variable(torch.FloatTensor([[1,2],[3,4]]))
print(M)
y = torch.mm(x, M)
print(y)
y.backward(torch.FloatTensor([[1,0]]), retain_graph = True)
print(x.grad.data)
x.grad.data.zero_()
y.backward(torch.FloatTensor([[0,1]]), retain_graph = True)
print(x.grad.data)
x.grad.data.zero_()
y.backward(torch.FloatTensor([[1,1]]), retain_graph = True)
print(x.grad.data)

# %% [markdown]
# Its author wondered why the third result is the sum of the first two.
#
# ### Explain
# Why must `[3., 7.]` be the sum of `[1., 3.]` and `[2., 4.]`, whatever `x` is? And why are
# those two rows the columns of `M`? Answer in two or three sentences.

# %% [markdown] nbgrader={"grade": true, "grade_id": "explain_sum_of_rows", "locked": false, "points": 2, "schema_version": 3, "solution": true}
# Backward computes $v^\top J$, which is linear in $v$: the weights $[1, 1]$ are $e_0 + e_1$, so
# they give row 0 plus row 1 of $J$, the two results before. The rows themselves come from
# $y_j = \sum_i x_i M_{ij}$: $\partial y_j/\partial x_i = M_{ij}$, so row $j$ of $J$ is column $j$
# of $M$, numbers that do not depend on `x` (backward computes $vM^\top$).
#
# *Rubric (2 points): 1 for linearity: $v^\top J$ with $v = e_0 + e_1$ is the sum of the rows
# that $e_0$ and $e_1$ give; 1 for the rows: $\partial y_j/\partial x_i = M_{ij}$, so row $j$ of
# $J$ is column $j$ of $M$, whatever `x` is.*

# %% tags=["course-helper"]
from autograd_lab.checks.written import reveal

reveal("explain_sum_of_rows")

# %% [markdown]
# ### Predict
# Now the weights $v$ = `[[3., 1.]]`. What will `x.grad` be after
# `y.backward(torch.tensor([[3., 1.]]))` (with `x.grad` zeroed first)? Write a tensor,
# `mm_grad_prediction = torch.tensor(...)`, with the shape `x.grad` has.

# %% nbgrader={"grade": false, "grade_id": "predict_mm", "locked": false, "schema_version": 3, "solution": true} tags=["prediction"]
### BEGIN SOLUTION
mm_grad_prediction = torch.tensor([[5.0, 13.0]])
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "predict_mm_test", "locked": true, "points": 1, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson04 as check

check.mm_prediction(mm_grad_prediction)

# %% [markdown]
# ### Run

# %% tags=["torch-parity"]
x.grad.zero_()
y.backward(torch.tensor([[3.0, 1.0]]), retain_graph=True)
print(x.grad)

# %% [markdown]
# ## 3. The 60-minute blitz, read with new eyes
#
# The blog post began with this snippet of PyTorch's "60 Minute Blitz" tutorial. Its `x` was
# random; `torch.manual_seed(0)` fixes ours (PyTorch's numbers) with as many doublings.

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
# The blog's `y` was `[-590.4467, 97.6760, 921.0221]`, its `x.grad` the same
# $[51.2, 512, 0.0512]$ (printed here in scientific notation). Each step doubles: $y = 2^k x$,
# $J = 2^k I$, `x.grad` $= 2^k v$ whatever `x` is. The graph shows $k = 9$.

# %% tags=["course-helper"]
viz.draw(y, names={x: "x", y: "y"})

# %% [markdown]
# ## What to remember
#
# - One-hot $e_i$ gives row $i$ of $J$: $J$ takes one backward call per output.
# - Reset `.grad` between such calls (`x.grad = None`), or the rows add up; keep each row, not
#   `x.grad` itself, which backward updates in place.
# - Backward is linear in its weights: the weights $e_0 + e_1$ give row 0 plus row 1.
#
# **Next:** [Lesson 05 · Gradients add up](../05_accumulation/05_accumulation.ipynb).
