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
# # Lesson 00 · Start here
#
# **Time:** about 25 minutes: 16 reading and running the code, 2 predicting and explaining, 5 on exercises. **You will be able to:**
#
# - open a lesson, run its cells, and tell the four kinds of cells apart (the lesson, code
#   answers, written answers, tests);
# - work in the course's rhythm: *read, predict, run, explain*;
# - check your work with the **Validate** button, and hand a lesson in;
# - say what `autograd_lab` is, and why everything you learn with it is PyTorch.
#
# This lesson has two small graded items, an exercise (2 points) and a prediction (1 point),
# so that you meet every part of the machinery once before it matters.

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

# %% [markdown]
# ## 1. Opening and running a lesson
#
# The lessons live in the folder `notebooks/`, one folder each, in order:
# `notebooks/00_start_here/`, `notebooks/01_tensors_that_remember/`, and so on. On Binder,
# JupyterLab is already open. On your own machine, in the course's folder, install the course
# once as its README says (`pip install -e '.[lab]'`, in a virtual environment), then start
# JupyterLab with `jupyter lab notebooks`. Open a lesson from the file browser on the left by
# double-clicking its `.ipynb` file.
#
# A notebook is a list of **cells**. Click a cell and press **Shift+Enter** to run it and move
# to the next one. The number in `[ ]` on its left says in which order cells ran. Cells share
# one Python process, the *kernel*, so a cell sees what earlier cells defined. If things get
# confusing (you ran cells out of order, or edited one above), use
# **Kernel → Restart Kernel and Run All Cells…**: the lessons are written to run top to bottom
# on a fresh kernel.
#
# Run the cell below. It imports the course's engine under the name `torch`, and its drawing
# module.

# %% tags=["course-helper"]
import autograd_lab as torch
from autograd_lab import viz

# %% [markdown]
# ### Four kinds of cells
#
# | you see | what it is | what you do |
# |---|---|---|
# | text and code like the cells above | the lesson | read and run; change the code to experiment if you like |
# | `# YOUR CODE HERE` and `raise NotImplementedError()` | an **answer cell** | delete both lines and write your answer in their place |
# | `YOUR ANSWER HERE` in a text cell | a **written answer** | double-click it and write two or three sentences of your own |
# | a cell that calls `check.something(...)`, which you cannot edit | a **test cell** | run it after your answer: silence means your answer passed the visible test |
#
# A test cell holds *visible* tests that you can run now. When your notebook is graded, the
# same cell also runs **hidden tests** that try your answer on other cases, so a
# solution that only fits the visible case does not earn all the points. Written answers are
# read and graded by a person: neither Validate nor a test cell can judge them. The cell under
# each written answer shows the lesson's model answer and its rubric once you have written and
# saved your own, so that you can judge it yourself when you study alone (a course whose
# instructor grades them leaves the model answers out, and the cell says so).
#
# When a test fails, it does not just say `AssertionError`: it says what it checked, what it
# expected, what it found and, for the mistakes people often make, names the misconception.
# Here is a failing check on purpose (the exercise it belongs to comes in section 5). The cell
# is tagged to show its error without stopping the notebook.

# %% tags=["raises-exception", "course-helper"]
from autograd_lab.checks import lesson00 as check

check.first_tensor([2.0, -1.0, 3.0])

# %% [markdown]
# Read the last lines of such an error first: they are the message written for you. The lines
# above them only say where in the test it happened.

# %% [markdown]
# ## 2. Read, predict, run, explain
#
# Every lesson is built from small steps of the same shape:
#
# 1. **Read** a few lines of explanation and code.
# 2. **Predict** what the next cell will print, write your prediction in an answer cell, and
#    run its test cell *before* you run anything below it.
# 3. **Run** the cell and compare.
# 4. **Explain**, in two or three sentences, what surprised you.
#
# Predicting first is the point of the course, not a formality. A wrong prediction that you then
# explain teaches you more than a right result you only watched appear; and autograd is full of
# results that look wrong until you see why they are right. So a prediction earns its points for
# being committed, right or wrong: its test cell fails only when there is no prediction of the
# kind asked for (a number where a number is asked, say), and then it does not give the answer
# away. Otherwise it passes and tells you whether you were right and, if not, which
# misconception your prediction shows. The points for being right are in the exercises and the
# written explanations.

# %% [markdown]
# ## 3. What `autograd_lab` is
#
# PyTorch computes derivatives for you: that is its *autograd*. Its engine is written in C++ and
# hard to read. `autograd_lab` is a small engine written in Python on top of numpy for this
# course, which does the same thing the same way: the same tensors, the same graph nodes with the
# same names, the same `.grad`, the same warnings and errors. Every lesson starts with
#
# ```python
# import autograd_lab as torch
# ```
#
# so the code you write **is** PyTorch code. Replace that line with `import torch` (in a notebook
# where PyTorch is installed) and every code cell that uses only PyTorch's API prints exactly the
# same thing; the course's own tests check that, cell by cell, against PyTorch 2.13.
#
# Two things only the course has: `autograd_lab.viz`, which draws the graph autograd records, and
# `autograd_lab.checks`, which the test cells call. When you want to see *how* autograd does
# something, the engine is there to read: `autograd_lab/_core/tensor.py` is the tensor,
# `autograd_lab/_core/engine.py` is the backward pass.
#
# ### Where the examples come from
# The course is built on two public documents by people who were learning autograd themselves.
# Every example in them appears in some lesson, printing the numbers PyTorch 2.13 prints (where
# that differs from what they printed, the lesson says so):
#
# - **The autograd notebook**, a notebook of small experiments with `backward()`, written for an
#   older PyTorch (it still uses `Variable` and `torch.FloatTensor`). It borrows examples from
#   three pages and names each: an
#   [article on Towards Data Science](https://towardsdatascience.com/pytorch-autograd-understanding-the-heart-of-pytorchs-magic-2686cd94ec95),
#   a [javatpoint tutorial](https://www.javatpoint.com/gradient-with-pytorch) and a
#   [Stack Overflow answer](https://stackoverflow.com/a/47026836/5270873). Lessons 01 to 06.
# - **Allu's blog post**: Saihimal Allu,
#   [*How exactly does torch.autograd.backward( ) work?*](https://medium.com/@saihimalallu/how-exactly-does-torch-autograd-backward-work-f0a671556dc4)
#   (2018), by a newcomer puzzled by the argument of `backward()`. Lessons 03, 04 and 07.
#
# A first taste. These lines would run unchanged with `import torch`:

# %% tags=["torch-parity"]
a = torch.tensor([1.0, 2.0, 3.0])
print(a)
print(a * 2)
print(a.sum())
print(a.shape, a.dtype)

# %% [markdown]
# ## 4. A first look at a drawn graph
#
# Autograd works by *recording*. When a tensor is created with `requires_grad=True`, every
# operation done with it is written down, and the record is a graph. Take the area of a
# rectangle:

# %% tags=["torch-parity"]
length = torch.tensor(3.0, requires_grad=True)
width = torch.tensor(2.0, requires_grad=True)
area = length * width
print(area)

# %% [markdown]
# `area` printed a `grad_fn`: the multiplication left a node behind. `viz.draw` shows the whole
# record. Read it from the top: `area` (green, with its value 6 and its shape `()`, a single
# number) was made by a `MulBackward0` node, the multiplication seen from the backward side.
# Its arrows lead back to the two tensors it used (blue), each through an `AccumulateGrad`
# node: the node that will write into that tensor's `.grad`.

# %% tags=["course-helper"]
viz.draw(area, names={length: "length", width: "width", area: "area"})

# %% [markdown]
# Asking for derivatives means walking that graph backwards: `area.backward()` does it, and
# leaves in `length.grad` how fast the area grows with the length (the width, 2) and in
# `width.grad` how fast it grows with the width (the length, 3). Lessons 01 and 02 take this
# apart slowly; for now, just see that the drawing now shows the gradients on the tensors.
# (The cell makes the tensors again, so that it gives the same answer however often you run
# it: lesson 02 shows what happens otherwise.)

# %% tags=["torch-parity"]
length = torch.tensor(3.0, requires_grad=True)
width = torch.tensor(2.0, requires_grad=True)
area = length * width
area.backward()
print(length.grad, width.grad)

# %% tags=["course-helper"]
viz.draw(area, names={length: "length", width: "width", area: "area"})

# %% [markdown]
# ## 5. Your first graded exercise
#
# ### Exercise: a tensor that requires grad
# Create `w`, a tensor holding the numbers **2, -1 and 3**, in that order, as floating-point
# numbers, that **requires grad** (autograd should record what is done with it).
# Use `torch` as imported above.

# %% nbgrader={"grade": false, "grade_id": "make_w", "locked": false, "schema_version": 3, "solution": true} tags=["torch-parity"]
### BEGIN SOLUTION
w = torch.tensor([2.0, -1.0, 3.0], requires_grad=True)
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "make_w_test", "locked": true, "points": 2, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson00 as check

check.first_tensor(w)

# %% [markdown]
# ### Predict
# The next cell will print `(w * w).sum()`. `*` between two tensors multiplies them element
# by element, and `.sum()` adds up all the elements. What **number** will it hold? Write it as
# `predicted_total = ...` (a plain number, worked out in your head, not computed with `w`).

# %% nbgrader={"grade": false, "grade_id": "predict_total", "locked": false, "schema_version": 3, "solution": true} tags=["prediction"]
### BEGIN SOLUTION
predicted_total = 14.0
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "predict_total_test", "locked": true, "points": 1, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson00 as check

check.total_prediction(predicted_total)

# %% [markdown]
# ### Run

# %% tags=["torch-parity"]
total = (w * w).sum()
print(total)

# %% [markdown]
# Besides the number, the result carries `grad_fn=<SumBackward0>`: the last operation was
# the sum, and because `w` requires grad, the record goes on. Lesson 01 starts right there.

# %% [markdown]
# ## 6. Validate, then hand in
#
# **Validate.** In the notebook's toolbar there is a **Validate** button. It saves the notebook,
# runs it from top to bottom in a fresh kernel, and runs every test cell, the way grading will
# (without the hidden tests, which only grading has). It answers either
# *"Success! Your notebook passes all the tests."* or *"VALIDATION FAILED ON 1 CELL(S)!"*
# followed by each failing test cell and its message. Click it now: this notebook should pass.
# Validate before you hand in every lesson; an answer that only worked because of cells you ran
# out of order shows up here.
#
# An answer cell you have not answered yet shows up as a failing test (its test finds no
# `w`, say: `NameError`). Two things Validate cannot catch: a hidden test your answer fails, and
# a written answer left as `YOUR ANSWER HERE`.
#
# Outside JupyterLab (in Colab, or VS Code) there is no Validate button: end the notebook with a
# cell `from autograd_lab.checks import validate; validate()` and run it after all the others.
# It lists, in Validate's words, every test cell that failed when it last ran in your kernel.
#
# **Hand in.** Save the notebook (Ctrl+S), and hand in the `.ipynb` file the way your course
# collects work, usually by uploading it to your course's site. Keep the file name, and do
# not delete or copy test cells: grading puts back any test cell it does not find and ignores
# edits made to them. The instructor grades all notebooks with nbgrader (`nbgrader autograde`),
# which runs your notebook in a fresh kernel with the hidden tests, and sends you a feedback page
# with every test's result and message. If you work through the course on your own, Validate
# is your grader: there is nothing to hand in.
#
# **On Binder, download before you leave.** Binder lends you a machine for the session only: when
# you close the tab, or leave it idle for a while, the machine and everything you wrote on it
# are thrown away. Before you close the tab, save and download your notebook with
# **File → Download**. To go on later, start Binder again and drag the downloaded file into the
# file browser on the left.

# %% [markdown]
# ## What to remember
#
# - Run cells top to bottom; when in doubt, **Restart Kernel and Run All Cells**.
# - Answer cells: replace `# YOUR CODE HERE` and `raise NotImplementedError()` with your answer.
#   Test cells: run them; silence is a pass; a failure's last lines tell you what to fix.
# - Predict before you run: a prediction earns its points for being committed, right or
#   wrong, and its test cell then tells you which misconception a wrong one shows.
# - **Validate** before you hand in; hidden tests and a person's reading of your written answers
#   come on top.
# - `import autograd_lab as torch`: what you write is PyTorch code, and prints what PyTorch prints.
#
# **Next:** [Lesson 01 · Tensors that remember](../01_tensors_that_remember/01_tensors_that_remember.ipynb),
# where we look at what `requires_grad`, `grad_fn` and `.grad` really hold.
