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
# # Lesson 08 · Backward, by hand and in order
#
# **Time:** about 45 minutes: 12 reading and running the code, 7 predicting and explaining, 25 on exercises. **You will be able to:**
#
# - say in which order backward runs the nodes, and why a node waits until every gradient
#   meant for it has arrived;
# - tell why a depth-first walk loses gradients where a result is used twice;
# - write the backward pass yourself, as a loop.
#
# Lesson 07 called the nodes by hand, from the root down. Which node to call next was easy to
# see on a graph of three nodes; here you find the rule that decides it on any graph, and
# write the loop that follows it.

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
# ## 1. Fan-out: a node waits for all its gradient
#
# In lesson 07's $z = x \cdot x + x$ at $x = 3$, three edges lead to the `AccumulateGrad` of
# `x`: two from the multiplication, one from the addition. Each carries a part of $dz/dx$.

# %% tags=["course-helper"]
x = torch.tensor(3.0, requires_grad=True)
z = x * x + x
viz.draw(z, names={x: "x", z: "z"})

# %% [markdown]
# ### Predict
# `z.backward()` runs each node once. Write `order`, the names of the nodes in the order they
# run (a list of strings, `"AccumulateGrad"` for the leaf's node), and `x_grad`, the number
# in `x.grad` afterwards.

# %% nbgrader={"grade": false, "grade_id": "predict_order", "locked": false, "schema_version": 3, "solution": true} tags=["prediction"]
### BEGIN SOLUTION
order = ["AddBackward0", "MulBackward0", "AccumulateGrad"]
x_grad = 7.0
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "predict_order_test", "locked": true, "points": 1, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson08 as check

check.order_prediction(order, x_grad)

# %% [markdown]
# ### Run
# `viz.trace_backward(z)` runs `z.backward()` and records every step: which node ran, what it
# received and what it sent on. Shown, it is a slider that replays the pass on the drawing, a
# step at a time, with that step's row; where no slider can move (a web page, a notebook run
# without a front end), it is the table of every step. (The cell makes `z` again, so that it
# can run twice.)

# %% tags=["course-helper"]
x = torch.tensor(3.0, requires_grad=True)
z = x * x + x
trace = viz.trace_backward(z, names={x: "x", z: "z"})
trace

# %% [markdown]
# The last step, drawn: every edge carries the gradient it took, and `AccumulateGrad` (in red)
# runs with what reached it.

# %% tags=["course-helper"]
trace.frame(-1)

# %% [markdown]
# `AccumulateGrad` ran **once**, with `3 + 3 + 1 = 7`: each factor of the multiplication gets
# the other one (3), the addition passes on its 1, and $dz/dx = 2x + 1 = 7$. It could have run
# as soon as the addition sent it its 1, but then the 6 from the multiplication would have
# come too late.
# Backward therefore runs the nodes in a **topological order**: a node runs only after every
# node that sends it a gradient has run, so that by then its gradient is complete. PyTorch
# gets there by counting, for each node, how many edges lead into it, and running a node when
# that count of deliveries has arrived.

# %% tags=["torch-parity"]
x = torch.tensor(3.0, requires_grad=True)
(x * x + x).backward()
print(x.grad)

# %% [markdown]
# Here is a walk that does *not* wait. It goes depth first: each node passes its gradient on
# at once and marks itself done (lesson 07's recipe pairs what a node returns with its
# `next_functions`). It runs under `torch.no_grad()`, so that what the nodes compute is not
# recorded as a graph of its own. Try it on `a + a`:

# %% tags=["torch-parity"]
def depth_first(node, grad, done):
    if node is None or node in done:
        return
    done.add(node)
    if hasattr(node, "variable"):           # an AccumulateGrad: the end of a path
        leaf = node.variable
        leaf.grad = grad if leaf.grad is None else leaf.grad + grad
        return
    outs = node(grad)
    if not isinstance(outs, tuple):     # a node of one input returns a bare tensor
        outs = (outs,)
    for (nxt, _), g in zip(node.next_functions, outs):
        depth_first(nxt, g, done)


x = torch.tensor(1.0, requires_grad=True)
a = x * 2
b = a + a
with torch.no_grad():
    depth_first(b.grad_fn, torch.tensor(1.0), set())
print("depth first:", x.grad)
x.grad = None
b.backward()
print("backward:   ", x.grad)

# %% [markdown]
# ### Explain
# The depth-first walk found 2 where `backward()` finds 4. Which gradient did it lose, and
# why does the order backward uses never lose it? Two or three sentences.

# %% [markdown] nbgrader={"grade": true, "grade_id": "explain_depth_first", "locked": false, "points": 3, "schema_version": 3, "solution": true}
# `AddBackward0` sends a 1 to `MulBackward0` along each of its two edges. The depth-first walk
# ran `MulBackward0` as soon as the first 1 arrived, passed 2 on to `x`, and marked the node
# done, so the second 1 was dropped. Backward runs `MulBackward0` only after `AddBackward0`,
# its only sender, has delivered both parts: it sums them to 2 first and sends 4 to `x`.
#
# *Rubric (3 points): 1 for the lost gradient: the second 1 that `AddBackward0` sends to
# `MulBackward0` along its second edge; 1 for why the walk lost it: `MulBackward0` ran (and was
# marked done) as soon as the first part arrived; 1 for why backward does not: a node runs only
# once every edge into it has delivered (topological order), so its parts are summed first.*

# %% tags=["course-helper"]
from autograd_lab.checks.written import reveal

reveal("explain_depth_first")

# %% [markdown]
# ## 2. Exercise: your own backward
#
# Now the walk that waits. It needs to know, for every node, how many edges lead into it:
# a node is ready once that many gradients have arrived. `count_edges` finds every node
# reachable from a root node and counts the edges into each, with a list of nodes still to
# visit (a loop, not recursion: graphs can be thousands of nodes deep). It skips `None`
# entries, inputs that need no gradient, and counts every edge, so that `a + a` counts 2.

# %% tags=["torch-parity"]
def count_edges(root_node):
    edges_in = {}
    to_visit, seen = [root_node], {root_node}
    while to_visit:
        node = to_visit.pop()
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            edges_in[nxt] = edges_in.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                to_visit.append(nxt)
    return edges_in


x = torch.tensor(3.0, requires_grad=True)
z = x * x + x
print({type(node).__name__: n for node, n in count_edges(z.grad_fn).items()})

# %% [markdown]
# `my_backward(root, gradient)` below does what `root.backward(gradient)` does, by calling the
# nodes itself. Its frame is written: the counts, a dictionary `arrived` of the gradient each
# node has received so far (nodes can be dictionary keys), the list `ready` of nodes whose
# every edge has delivered, starting with `root.grad_fn` holding `gradient`, and the loop that
# takes a ready node and its gradient. **Write the heart of the loop**, what happens to
# `node` and `grad`:
#
# - **an `AccumulateGrad`** (it has a `.variable`): add `grad` into `node.variable.grad` (set
#   it if `.grad` is `None`, add to it otherwise), and go on with the next ready node;
# - **any other node**: call it with `grad` (lesson 07's recipe); for each entry of its
#   `next_functions` that is not `None`, add what it returned into `arrived` for that node, and
#   take one off that node's count. A node whose count reaches 0 has all its gradient: put it in
#   `ready`.
#
# The visible test tries `x * x + x`, the `a + a` of section 1, a chain 3,000 operations
# deep, and two graphs of the test's own making: their nodes have what your walk uses
# (`next_functions`, a call with the gradient, an `AccumulateGrad`'s `.variable`) and
# nothing the engine's backward needs, and each runs once only. In one of them the leaves
# hold a `.grad` already.

# %% nbgrader={"grade": false, "grade_id": "my_backward", "locked": false, "schema_version": 3, "solution": true} tags=["algorithm"]
def my_backward(root, gradient):
    edges_in = count_edges(root.grad_fn)    # how many edges lead into each node
    arrived = {root.grad_fn: gradient}      # the gradient each node has received so far
    ready = [root.grad_fn]                  # nodes whose every edge has delivered
    with torch.no_grad():
        while ready:
            node = ready.pop()
            grad = arrived.pop(node)
            ### BEGIN SOLUTION
            if hasattr(node, "variable"):       # an AccumulateGrad: into the leaf's .grad
                leaf = node.variable
                leaf.grad = grad if leaf.grad is None else leaf.grad + grad
                continue
            outs = node(grad)
            if not isinstance(outs, tuple):     # one input: a bare tensor
                outs = (outs,)
            for (nxt, _), g in zip(node.next_functions, outs):
                if nxt is None:
                    continue
                arrived[nxt] = g if nxt not in arrived else arrived[nxt] + g
                edges_in[nxt] -= 1
                if edges_in[nxt] == 0:
                    ready.append(nxt)
            ### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "my_backward_test", "locked": true, "points": 4, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson08 as check

check.my_backward_basic(my_backward)
### BEGIN HIDDEN TESTS
check.my_backward_hidden(my_backward)
### END HIDDEN TESTS

# %% [markdown]
# The hidden tests compare your function with `.backward()` on random graphs, some with
# results used several times, one of them deeper still, and with a right walk on graphs of
# their own making, chosen when your notebook is graded. Try it on the blog's matrix product:
# with `v = [[1, 1]]` it should give `[[3., 7.]]`.

# %%
x = torch.tensor([[2.0, 1.0]], requires_grad=True)
y = torch.mm(x, torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
my_backward(y, torch.tensor([[1.0, 1.0]]))
print(x.grad)

# %% [markdown]
# ## What to remember
#
# - Where a result is used twice the graph fans out, and the gradients coming back are summed.
# - Backward runs the nodes in topological order: it counts the edges into each node and runs
#   a node once they have all delivered, so a node runs once, with its whole gradient.
# - A walk that passes gradients on too early loses some, or runs a node once per path; a loop
#   with a list of ready nodes, not recursion, handles graphs of any depth.
#
# **Next:** [Lesson 09 · A node of your own](../09_custom_function/09_custom_function.ipynb),
# where you write the backward of a new operation.
