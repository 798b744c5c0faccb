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
# # Lesson 06 · Inside backward
#
# **Time:** about 75 minutes: 22 reading and running the code, 10 predicting and explaining, 40 on exercises. **You will be able to:**
#
# - call a graph node yourself and say what goes in and what comes out;
# - follow `next_functions` from a result down to its leaves, and find each leaf's
#   `AccumulateGrad`;
# - say in which order backward runs the nodes, and why a node waits until every gradient
#   meant for it has arrived;
# - write the backward pass yourself, and a new operation with `torch.autograd.Function`.
#
# Until now `backward()` was one call that filled `.grad`. This lesson opens it: you will walk
# a graph by hand, node by node, and then write the loop that does it for any graph.

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
# `x.grad`: it only computes. Where each result goes next is written in `next_functions`, one entry per
# input, in the same order:

# %% tags=["torch-parity"]
print(y.grad_fn.next_functions)

# %% [markdown]
# ## 2. The blog's matrix product, walked by hand
#
# Allu's blog post (lesson 03) multiplies a row vector by a matrix and calls backward
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
# saved (lesson 05), a hand call leaves it alone.
#
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
from autograd_lab.checks import lesson06 as check

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
# ## 4. Fan-out: a node waits for all its gradient
#
# $z = x^2 + x$, so $dz/dx = 2x + 1 = 7$ at $x = 3$. Three edges carry parts of it to the
# `AccumulateGrad` of `x`: 3 and 3 from the multiplication (each factor gets the other one),
# 1 from the addition.
#
# ### Predict
# `z.backward()` runs each node once. Write `order`, the names of the nodes in the order they
# run (a list of strings, `"AccumulateGrad"` for the leaf's node), and `x_grad`, the number
# in `x.grad` afterwards.

# %% nbgrader={"grade": false, "grade_id": "predict_order", "locked": false, "schema_version": 3, "solution": true} tags=["prediction"]
### BEGIN SOLUTION
order = ["AddBackward0", "MulBackward0", "AccumulateGrad"]
x_grad = 7.0
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "predict_order_test", "locked": true, "points": 2, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson06 as check

check.order_prediction(order, x_grad)

# %% [markdown]
# ### Run
# `viz.trace_backward(z)` runs `z.backward()` and records every step. The table lists the
# nodes in the order they ran, what each received and what it sent on; below it, a slider
# replays the pass on the drawing. (The cell makes `z` again, so that it can run twice.)

# %% tags=["course-helper"]
x = torch.tensor(3.0, requires_grad=True)
z = x * x + x
trace = viz.trace_backward(z, names={x: "x", z: "z"})
print(trace.table())
trace

# %% [markdown]
# `AccumulateGrad` ran **once**, with `3 + 3 + 1 = 7`. It could have run as soon as the
# addition sent it its 1, but then the 6 from the multiplication would have come too late.
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
# at once and marks itself done. (It runs under `torch.no_grad()`, so that what the nodes
# compute is not recorded as a graph of its own.) Try it on `a + a`:

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

# %% [markdown] nbgrader={"grade": true, "grade_id": "explain_depth_first", "locked": false, "points": 2, "schema_version": 3, "solution": true}
# `AddBackward0` sends a 1 to `MulBackward0` along each of its two edges. The depth-first walk
# ran `MulBackward0` as soon as the first 1 arrived, passed 2 on to `x`, and marked the node
# done, so the second 1 was dropped. Backward runs `MulBackward0` only after `AddBackward0`,
# its only sender, has delivered both parts: it sums them to 2 first and sends 4 to `x`.

# %% [markdown]
# ## 5. Exercise: your own backward
#
# Write `my_backward(root, gradient)`, which does what `root.backward(gradient)` does, by
# calling the nodes yourself. `root` is a result (it has a `grad_fn`), `gradient` has its shape.
#
# 1. **Find the nodes and count the edges into each.** Start from `root.grad_fn` and follow
#    `next_functions`, with a list of nodes still to visit (a loop, not recursion: graphs
#    can be thousands of nodes deep). Skip `None` entries: an input that needs no gradient.
#    Count every edge, so a node reached twice from one node (`a + a`) has a count of 2.
# 2. **Run the nodes in topological order.** Keep the gradient that has arrived so far at each
#    node (a dictionary from node to tensor; nodes can be dictionary keys). Start with
#    `root.grad_fn` holding `gradient`. When you run a node, call it with its gradient, add
#    each result into the gradient waiting at the matching `next_functions` entry, and
#    take one off that entry's count; a node whose count reaches 0 has all its gradient and
#    is ready to run.
# 3. **At an `AccumulateGrad`** (it has a `.variable`), add the gradient into
#    `node.variable.grad`: set it if `.grad` is `None`, add to it otherwise.
#
# Do the walk inside `with torch.no_grad():`, as the depth-first walk above did.

# %% nbgrader={"grade": false, "grade_id": "my_backward", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
def my_backward(root, gradient):
    # 1. every node, and how many edges lead into it
    edges_in = {}
    to_visit, seen = [root.grad_fn], {root.grad_fn}
    while to_visit:
        node = to_visit.pop()
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            edges_in[nxt] = edges_in.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                to_visit.append(nxt)
    # 2. run a node once all its edges have delivered
    arrived = {root.grad_fn: gradient}
    ready = [root.grad_fn]
    with torch.no_grad():
        while ready:
            node = ready.pop()
            grad = arrived.pop(node, None)
            if hasattr(node, "variable"):       # 3. AccumulateGrad: into the leaf's .grad
                if grad is not None:
                    leaf = node.variable
                    leaf.grad = grad if leaf.grad is None else leaf.grad + grad
                continue
            outs = node(grad) if grad is not None else [None] * len(node.next_functions)
            if not isinstance(outs, (tuple, list)):     # one input: a bare tensor
                outs = (outs,)
            for (nxt, _), g in zip(node.next_functions, outs):
                if nxt is None:
                    continue
                if g is not None:
                    arrived[nxt] = g if nxt not in arrived else arrived[nxt] + g
                edges_in[nxt] -= 1
                if edges_in[nxt] == 0:
                    ready.append(nxt)
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "my_backward_test", "locked": true, "points": 4, "schema_version": 3, "solution": false}
from autograd_lab.checks import lesson06 as check

check.my_backward_basic(my_backward)
### BEGIN HIDDEN TESTS
check.my_backward_hidden(my_backward)
### END HIDDEN TESTS

# %% [markdown]
# The hidden tests compare your function with `.backward()` on random graphs, some with
# results used several times, one a few thousand operations deep. Try it on the blog's matrix
# product: with `v = [[1, 1]]` it should give `[[3., 7.]]`.

# %%
x = torch.tensor([[2.0, 1.0]], requires_grad=True)
y = torch.mm(x, torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
my_backward(y, torch.tensor([[1.0, 1.0]]))
print(x.grad)

# %% [markdown]
# ## 6. A node of your own: `torch.autograd.Function`
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
# The node is named after the class, `CubeBackward`, and `backward()` calls your method when it
# reaches it. `grad_output` is 1 here because `z` is the root; deeper in a graph it is whatever
# the nodes above sent down, which is why backward multiplies by it.
#
# Is a hand-written backward right? `torch.autograd.gradcheck(fn, inputs)` asks lesson 02's
# central differences: it nudges each input element by $\epsilon = 10^{-6}$ both ways, measures
# how the output moves, $\big(f(x + \epsilon) - f(x - \epsilon)\big) / 2\epsilon$, and compares
# that *numerical* Jacobian with the *analytical* one your backward gives (one backward call
# per output element, with one-hot weights, as in lesson 03). It returns `True` or raises an
# error that prints both, each with **a row per input element and a column per output
# element** (lesson 03's $J$ turned on its side). It wants float64 inputs: in float32 the
# difference of two nearby values loses too many digits.

# %% tags=["torch-parity"]
x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
print(torch.autograd.gradcheck(Cube.apply, (x,)))

# %% [markdown]
# Here is the same cube with a backward that forgets `grad_output`. With `grad_output` equal to
# 1, as in `z.backward()` above, nobody would notice. `gradcheck` does:

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
# ### Exercise: softplus
# Write `Softplus`, a `torch.autograd.Function` for
# $\operatorname{softplus}(x) = \log(1 + e^x)$, a smooth cousin of ReLU. Save what backward
# needs with `ctx.save_for_backward`, and return $\partial L/\partial x$ from `backward`.
# (Work out $\frac{d}{dx}\log(1 + e^x)$ first; `torch.exp`, `torch.log` and `torch.sigmoid`
# are there if you need them.)

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
from autograd_lab.checks import lesson06 as check

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
# - A node is a function: called with $\partial L/\partial\,\text{output}$, it returns one
#   gradient per input of its operation (`None` for an input that needs none).
#   `next_functions` says, in the same order, which node each of them goes to.
# - Every path ends at an `AccumulateGrad`, one per leaf, shared by all its uses; its
#   `.variable` is the leaf, and running it adds into the leaf's `.grad`.
# - Where a result is used twice the graph fans out, and the gradients coming back are summed.
#   Backward runs the nodes in topological order, so a node runs once, with its whole gradient.
#   A walk that passes gradients on too early loses some.
# - A new operation is a `torch.autograd.Function`: `forward` saves what it needs with
#   `ctx.save_for_backward`, `backward` returns `grad_output` times the local derivative.
#   `torch.autograd.gradcheck` (central differences, in float64) tells you whether it is right.
#
# **Next:** [Lesson 07 · Training a small model](../07_training_loop/07_training_loop.ipynb),
# where all of this runs inside the loop a PyTorch user writes every day.
