"""PyTorch 2.13 autograd behaviours (error and warning texts, node names, printing, VJP and
accumulation rules), as runnable snippets.

``CASES`` maps a case name to a snippet; tests/engine/test_parity.py runs each one under PyTorch and
under autograd_lab (``torch`` is bound to either) and compares what they print, the exception
they end with and the warnings they raise. A snippet shows identity facts (``is``) by printing
booleans, since printed values alone cannot tell a tensor from its copy.

``FRESH`` names the snippets that must run in a new process: PyTorch shows some warnings only
once per process. ``XFAIL`` maps a case name to the reason autograd_lab cannot match it yet.
"""

CASES = {}
FRESH = set()
XFAIL = {}


def _add(section, snippets):
    for name, code in snippets.items():
        key = f"{section}/{name}"
        assert key not in CASES, key
        CASES[key] = code


# ----------------------------------------------------------------------------------------
# (a) a second backward through a freed graph
# ----------------------------------------------------------------------------------------
_add("second_backward", {
    "mul_self": """
x = torch.tensor([1., 2.], requires_grad=True)
y = (x * x).sum()
y.backward()
print(x.grad)
y.backward()
""",
    "pow": """
x = torch.tensor([1., 2.], requires_grad=True)
y = (x ** 2).sum()
y.backward()
y.backward()
""",
    "mul_number_saves_the_number": """
x = torch.tensor([1., 2.], requires_grad=True)
y = (x * 2).sum()
print(y.grad_fn.next_functions[0][0]._saved_other)
y.backward()
y.backward()
""",
    "autograd_grad_twice": """
x = torch.tensor([1., 2.], requires_grad=True)
y = (x * x).sum()
print(torch.autograd.grad(y, x))
torch.autograd.grad(y, x)
""",
    "saved_self_after_backward": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * x
print(y.grad_fn._saved_self)
y.sum().backward()
y.grad_fn._saved_self
""",
    "nothing_saved_runs_again_and_accumulates": """
x = torch.tensor([1., 2.], requires_grad=True)
y = (x + 1).sum()
y.backward()
y.backward()
print(x.grad)
""",
    "issue_11192_case_3_now_raises": """
t = torch.tensor(1., requires_grad=True)
k = 2 * t
(2 * k).backward()
print(t.grad)
(3 * k).backward()
""",
    "retain_graph_then_plain": """
x = torch.tensor(3., requires_grad=True)
y = x ** 2
y.backward(retain_graph=True)
print(x.grad)
y.backward()
print(x.grad)
y.backward()
""",
    "retain_graph_twice_then_plain": """
x = torch.tensor(3., requires_grad=True)
y = x ** 2
y.backward(retain_graph=True)
y.backward(retain_graph=True)
y.backward()
print(x.grad)
""",
    "retain_graph_defaults_to_create_graph": """
x = torch.tensor(3., requires_grad=True)
y = x ** 3
print(torch.autograd.grad(y, x, create_graph=True))
print(torch.autograd.grad(y, x))
torch.autograd.grad(y, x)
""",
    "explicit_retain_false_with_create_graph": """
x = torch.tensor(3., requires_grad=True)
y = x ** 3
print(torch.autograd.grad(y, x, create_graph=True, retain_graph=False))
torch.autograd.grad(y, x)
""",
    "saved_attribute_readable_after_retained_backward": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * x
y.sum().backward(retain_graph=True)
print(y.grad_fn._saved_self)
""",
})

# ----------------------------------------------------------------------------------------
# (b) an implicit gradient needs a one-element output
# ----------------------------------------------------------------------------------------
_add("implicit_grad", {
    "vector_backward": """
x = torch.tensor([1., 2.], requires_grad=True)
(x * 2).backward()
""",
    "vector_autograd_grad": """
x = torch.tensor([1., 2.], requires_grad=True)
torch.autograd.grad(x * 2, x)
""",
    "one_element_vector": """
x = torch.tensor([[1., 2.]], requires_grad=True)
y = (x * 2).sum(dim=1)
print(y.shape)
y.backward()
print(x.grad)
""",
    "one_by_one_matrix": """
x = torch.ones(1, 1, requires_grad=True)
(x * 2).backward()
print(x.grad)
""",
})

# ----------------------------------------------------------------------------------------
# (c) backward from something that does not require grad
# ----------------------------------------------------------------------------------------
_add("no_grad_fn", {
    "plain_tensor": """
torch.tensor(1.).backward()
""",
    "op_on_plain_tensors": """
a = torch.tensor([1., 2.])
(a * 2).sum().backward()
""",
    "made_under_no_grad": """
x = torch.tensor([1., 2.], requires_grad=True)
with torch.no_grad():
    y = (x * 2).sum()
y.backward()
""",
    "detached": """
x = torch.tensor([1., 2.], requires_grad=True)
(x * 2).sum().detach().backward()
""",
    "second_root_of_several": """
x = torch.tensor([1., 2.], requires_grad=True)
a = (x * 2).sum()
b = torch.tensor(1.)
torch.autograd.backward([a, b])
""",
    "autograd_grad_of_plain_output": """
x = torch.tensor([1., 2.], requires_grad=True)
torch.autograd.grad(torch.tensor(1.), x)
""",
})

# ----------------------------------------------------------------------------------------
# (d) the gradient handed to backward
# ----------------------------------------------------------------------------------------
_add("gradient_arg", {
    "longer": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
y.backward(torch.tensor([1., 1., 1.]))
""",
    "does_not_broadcast": """
w = torch.ones(2, 2, requires_grad=True)
y = w * 2
y.backward(torch.tensor([1., 1.]))
""",
    "vector_for_scalar_output": """
x = torch.tensor([1., 2.], requires_grad=True)
y = (x * 2).sum()
y.backward(torch.tensor([1., 1.]))
""",
    "autograd_grad_outputs": """
x = torch.tensor([1., 2.], requires_grad=True)
torch.autograd.grad(x * 2, x, grad_outputs=torch.ones(3))
""",
    "list": """
x = torch.tensor([1., 2.], requires_grad=True)
(x * 2).backward([1.0, 1.0])
""",
    "int_tensor_accepted": """
x = torch.tensor([1., 2.], requires_grad=True)
(x * 2).backward(torch.tensor([1, 1]))
print(x.grad, x.grad.dtype)
""",
})

# ----------------------------------------------------------------------------------------
# (e) a saved tensor changed in place
# ----------------------------------------------------------------------------------------
_add("inplace_saved", {
    "add_after_mul": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 1
z = y * y
y.add_(1)
print(y.grad_fn, y._version)
z.sum().backward()
""",
    "mul_after_exp": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x.exp()
y.mul_(2)
y.sum().backward()
""",
    "iadd_after_sigmoid": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x.sigmoid()
y += 1
y.sum().backward()
""",
    "anomaly_mode": """
import warnings
torch.autograd.set_detect_anomaly(True)
try:
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x.exp()
    y.mul_(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            y.sum().backward()
        except RuntimeError as e:
            print(e)
    print([str(w.message).splitlines()[0] for w in caught])
finally:
    torch.autograd.set_detect_anomaly(False)
""",
    "detach_shares_the_version_counter": """
x = torch.tensor([1., 2.], requires_grad=True)
y = (x * x).sum()
x.detach().zero_()
print(x._version)
y.backward()
""",
    "each_saved_tensor_unpacks_alone": """
a = torch.tensor([1., 2.], requires_grad=True)
b = torch.tensor([3., 4.], requires_grad=True)
p, q = a * 1, b * 1
z = p * q
with torch.no_grad():
    q.mul_(2)
print(z.grad_fn._saved_self)
try:
    print(z.grad_fn._saved_other)
except RuntimeError as e:
    print(e)
z.sum().backward()
""",
    "data_is_not_tracked": """
x = torch.tensor([1., 2.], requires_grad=True)
y = (x * x).sum()
x.data.zero_()
print(x._version)
y.backward()
print(x.grad)
""",
})

# anomaly detection, which the in-place error's own hint tells a learner to switch on
_add("anomaly", {
    "flags_and_context_managers": """
print(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
with torch.autograd.detect_anomaly():
    print(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
with torch.autograd.set_detect_anomaly(True, check_nan=False):
    print(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
print(torch.is_anomaly_enabled())
torch.autograd.set_detect_anomaly(True)
print(torch.is_anomaly_enabled())
torch.autograd.set_detect_anomaly(False)
print(torch.is_anomaly_enabled())
""",
    "nan_gradient_raises_and_says_where_it_was_made": """
import warnings
x = torch.tensor([0., 1.], requires_grad=True)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with torch.autograd.detect_anomaly():
        z = x / x
        try:
            z.sum().backward()
        except RuntimeError as e:
            print(e)
for w in caught:
    lines = str(w.message).splitlines()
    print(lines[0])
    print([line.strip() for line in lines if "<snippet>" in line])  # line 7: z = x / x
""",
    "no_nan_check_without_check_nan": """
x = torch.tensor([0., 1.], requires_grad=True)
with torch.autograd.set_detect_anomaly(True, check_nan=False):
    (x / x).sum().backward()
print(x.grad)
""",
    "error_in_a_node_says_where_it_was_made": """
import warnings
x = torch.tensor([1., 2.], requires_grad=True)
with torch.autograd.set_detect_anomaly(True):
    y = x.sigmoid()
    y += 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            y.sum().backward()
        except RuntimeError as e:
            print(e)
    lines = str(caught[0].message).splitlines()
    print(lines[0])
    print(lines[-2].strip())    # the forward line that made the failing node
""",
})

# ----------------------------------------------------------------------------------------
# related error strings (the table), one case a row
# ----------------------------------------------------------------------------------------
_add("error_strings", {
    "leaf_inplace": """
x = torch.tensor([1., 2.], requires_grad=True)
x.add_(1)
""",
    "requires_grad__false_on_non_leaf": """
x = torch.tensor([1., 2.], requires_grad=True)
(x * 2).requires_grad_(False)
""",
    "requires_grad_true_on_non_leaf": """
x = torch.tensor([1., 2.], requires_grad=True)
(x * 2).requires_grad = True
""",
    "requires_grad__on_int": """
torch.tensor([1, 2]).requires_grad_()
""",
    "int_tensor_with_requires_grad": """
torch.tensor([1, 2], requires_grad=True)
""",
    "retain_grad_without_requires_grad": """
torch.tensor(1.).retain_grad()
""",
    "hook_without_requires_grad": """
torch.tensor([1.]).register_hook(lambda g: g)
""",
    "unused_input": """
x = torch.tensor([1., 2.], requires_grad=True)
w = torch.tensor([1., 2.], requires_grad=True)
torch.autograd.grad((x * 3).sum(), [x, w])
""",
    "input_without_requires_grad": """
x = torch.tensor([1., 2.], requires_grad=True)
y = (x * 2).sum()
torch.autograd.grad(y, torch.tensor(1.))
""",
    "grad_of_wrong_size": """
x = torch.tensor([1., 2.], requires_grad=True)
x.grad = torch.tensor([1., 2., 3.])
""",
    "numpy_with_requires_grad": """
v = torch.tensor([1., 2.], requires_grad=True)
v.numpy()
""",
    "item_of_two": """
v = torch.tensor([1., 2.])
v.item()
""",
    "float_of_two_requiring_grad": """
v = torch.tensor([1., 2.], requires_grad=True)
float(v)
""",
    "float_of_two": """
v = torch.tensor([1., 2.])
float(v)
""",
    "bool_of_two": """
v = torch.tensor([1., 2.])
bool(v)
""",
    "format_spec_of_vector": """
v = torch.tensor([1., 2.])
print(f"{torch.tensor(3.14159):.2f}")
f"{v:.2f}"
""",
})
FRESH.add("error_strings/float_of_two_requiring_grad")

# gradcheck's module imported before anything reads `autograd.gradcheck`: the name is still the
# function (a fresh process, so that nothing before it has read the name)
_add("gradcheck_module", {"imported_first": """import torch.autograd.gradcheck
from torch.autograd.gradcheck import GradcheckError
x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
print(callable(torch.autograd.gradcheck), callable(torch.autograd.gradgradcheck))
print(torch.autograd.gradcheck(lambda t: t * t, (x,)), GradcheckError.__name__)
"""})
FRESH.add("gradcheck_module/imported_first")

# the nodes' sequence numbers, counted from a fresh process's first node: an AccumulateGrad
# takes none (PyTorch makes it with the highest), under create_graph too
_add("sequence_nr", {"fresh_process": """x = torch.tensor([1.0, 2.0], requires_grad=True)
w = torch.tensor([3.0, 4.0], requires_grad=True)
y = (x * w).sum()
print(y.grad_fn._sequence_nr(), y.grad_fn.next_functions[0][0]._sequence_nr())
print(y.grad_fn.next_functions[0][0].next_functions[0][0]._sequence_nr())
gx, gw = torch.autograd.grad(y, (x, w), create_graph=True)
print(gx.grad_fn.name(), gx.grad_fn._sequence_nr(), gw.grad_fn._sequence_nr())
z = (gx * gw).sum()
print(z.grad_fn._sequence_nr())
"""})
FRESH.add("sequence_nr/fresh_process")

# ----------------------------------------------------------------------------------------
# warnings
# ----------------------------------------------------------------------------------------
_add("warnings", {
    "non_leaf_grad": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
y.sum().backward()
print(y.grad)
print(x.grad)
""",
    "non_leaf_grad_every_time": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
for _ in range(2):
    y.grad
""",
    "leaf_without_requires_grad_is_silent": """
print(torch.tensor([1.]).grad)
""",
    "retained_non_leaf_is_silent": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
y.retain_grad()
print(y.grad)
""",
    "float_of_requires_grad_once_per_process": """
x = torch.tensor(3., requires_grad=True)
print(float(x))
print(float(x * 2))
""",
    "float_of_plain_is_silent": """
print(float(torch.tensor(3.)), int(torch.tensor(3.7)))
""",
    "item_is_silent": """
x = torch.tensor(3., requires_grad=True)
print(x.item())
""",
    "create_graph_backward_once_per_process": """
x = torch.tensor(3., requires_grad=True)
y = x ** 3
y.backward(create_graph=True)
print(x.grad)
(x ** 3).backward(create_graph=True)
print(x.grad)
""",
})
FRESH.update({"warnings/float_of_requires_grad_once_per_process",
              "warnings/create_graph_backward_once_per_process"})

# ----------------------------------------------------------------------------------------
# grad_fn classes and next_functions: the table, generated
# ----------------------------------------------------------------------------------------
# Prints the node of ``y`` and, indented, every node behind it: repr, class name, name(),
# and the output index of each edge.
_WALK = """
x = torch.tensor([1., 2.], requires_grad=True)
w = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
c = torch.tensor([3., 4.])


def walk(node, index=0, depth=0):
    pad = "  " * depth
    if node is None:
        print(pad, None, index)
        return
    print(pad, node, type(node).__name__, node.name(), index)
    for nxt, i in node.next_functions:
        walk(nxt, i, depth + 1)


y = {expr}
print(y.grad_fn.next_functions)
walk(y.grad_fn)
"""

GRAD_FN_EXPRESSIONS = [
    "x*2", "x.mul(2)", "x*torch.tensor(2.)", "-1*x", "x*x", "c*x", "x+1", "1.0+x", "x+x",
    "x.add(x)", "x-1", "1-x", "x/2", "2/x", "-x", "x**2", "x.pow(3)", "x.square()", "x**0.5",
    "x**x", "x.pow(torch.tensor(2.))", "2**x", "x.sum()", "x.sum(0)", "x.sum(dim=0)", "w.sum(1)",
    "w.sum(1, keepdim=True)", "x.mean()", "w.mean(0)", "w@w", "w.mm(w)", "w.matmul(w)",
    "torch.mm(w, w)", "w@x", "torch.matmul(w, x)", "x@x", "x.dot(x)", "torch.matmul(x[None], w)",
    "w@w.T", "x.exp()", "x.log()", "x.relu()", "x.tanh()", "x.sigmoid()", "x.sin()", "x.abs()",
    "x.sqrt()", "x.view(2, 1)", "x.reshape(1, 2)", "w.T.reshape(4)", "w.t()", "w.T", "x[0]",
    "x.unsqueeze(0)", "x.expand(3, 2)", "x.clone()", "x.max()", "x.max(dim=0).values",
    "x.norm()", "x.prod()", "torch.cat([x, x])", "torch.stack([x, x])", "x.double()",
    # not in the table, but one step away from it
    "x.sub(1)", "x.div(x)", "x.cos()", "x.min()", "torch.sum(x)", "x.t()", "x.T",
    "x.double().float()", "torch.exp(x)",
    # indexing: one view node per index item, left to right
    "x[None]", "x[:, None]", "w[None, 0]", "w[0, None]", "w[0, 1]", "w[:, 0]", "w[..., 0]",
    "w[..., None]", "x[1:]", "x[:]", "w[:, :]", "x[...]", "x[::2]", "x[-1]", "x[[0, 1]]",
    "x[x > 1]", "w[w > 1]",
]
_add("grad_fn", {e: _WALK.format(expr=e) for e in GRAD_FN_EXPRESSIONS})
FRESH.add("grad_fn/x.T")     # PyTorch deprecates ``.T`` of a vector, once per process

# ----------------------------------------------------------------------------------------
# matmul: PyTorch builds it out of dot, mv, mm or bmm and views, and which it picks depends on
# the dimensions, on which operand requires grad, and on the layout of a batch. Each case
# prints the whole graph, the result (its version and whether it is a view), the gradients,
# and a second derivative.
# ----------------------------------------------------------------------------------------
_MATMUL = """
def walk(node, depth=0):
    print("  " * depth, None if node is None else node.name())
    for nxt, _ in getattr(node, "next_functions", ()):
        walk(nxt, depth + 1)


def leaf(*shape, requires_grad=True):
    n = 1
    for s in shape:
        n *= s
    values = ((torch.arange(n * 1.) - 2) / 2).reshape(shape).tolist()
    return torch.tensor(values, requires_grad=requires_grad)


a = leaf{a}
b = leaf{b}
y = {expr}
print(y, y._version, y._base is None)
walk(y.grad_fn)
inputs = [t for t in (a, b) if t.requires_grad]
grads = torch.autograd.grad(y, inputs, torch.ones_like(y) * 0.5, create_graph=True)
print([g.detach() for g in grads])      # (their grad_fn names are kept different: README)
square = sum((g * g).sum() for g in grads)
if square.requires_grad:
    print(torch.autograd.grad(square, inputs, allow_unused=True))
"""

MATMUL_CASES = {
    # name: (a's shape and requires_grad, b's, the product)
    "1d@1d": ("(3)", "(3)", "a @ b"),
    "1d@2d": ("(3)", "(3, 2)", "a @ b"),
    "1d@2d_b_only": ("(3, requires_grad=False)", "(3, 2)", "torch.matmul(a, b)"),
    "2d@1d": ("(2, 3)", "(3)", "a @ b"),
    "2d@2d": ("(2, 3)", "(3, 2)", "a @ b"),
    "3d@1d": ("(2, 2, 3)", "(3)", "a @ b"),
    "3d@1d_batch_transposed": ("(2, 2, 3)", "(3, requires_grad=False)", "a.transpose(0, 1) @ b"),
    "3d@1d_batch_transposed_vector_grad": ("(2, 2, 3)", "(3)", "a.transpose(0, 1) @ b"),
    "1d@3d": ("(2)", "(4, 2, 3)", "a @ b"),
    "1d@3d_batch_only": ("(2, requires_grad=False)", "(4, 2, 3)", "a @ b"),
    "1d@3d_one_batch": ("(2)", "(1, 2, 3)", "a @ b"),
    "3d@2d": ("(4, 2, 3)", "(3, 2)", "a @ b"),
    "3d@2d_matrix_only": ("(4, 2, 3, requires_grad=False)", "(3, 2)", "a @ b"),
    "3d@2d_batch_only": ("(4, 2, 3)", "(3, 2, requires_grad=False)", "a @ b"),
    "3d@2d_transposed_batch_only": ("(2, 4, 3)", "(3, 2, requires_grad=False)",
                                    "a.transpose(0, 1) @ b"),
    "2d@3d": ("(3, 2)", "(4, 2, 3)", "a @ b"),
    "2d@3d_batch_only": ("(3, 2, requires_grad=False)", "(4, 2, 3)", "a @ b"),
    "2d@3d_one_column": ("(3, 2)", "(4, 2, 1)", "a @ b"),
    "2d@3d_one_batch": ("(3, 2)", "(1, 2, 3)", "a @ b"),
    "3d@3d": ("(4, 2, 3)", "(4, 3, 2)", "a @ b"),
    "3d@3d_one_operand": ("(4, 2, 3, requires_grad=False)", "(4, 3, 2)", "a @ b"),
    "4d@2d": ("(2, 3, 2, 3)", "(3, 2)", "a @ b"),
    "4d@1d": ("(2, 3, 2, 3)", "(3)", "a @ b"),
    # batches that broadcast
    "3d@3d_broadcast_left": ("(1, 2, 3)", "(4, 3, 2)", "a @ b"),
    "3d@3d_broadcast_left_no_grad": ("(1, 2, 3, requires_grad=False)", "(4, 3, 2)", "a @ b"),
    "3d@3d_broadcast_right": ("(4, 2, 3)", "(1, 3, 2)", "a @ b"),
    "3d@3d_broadcast_right_no_grad": ("(4, 2, 3)", "(1, 3, 2, requires_grad=False)", "a @ b"),
    "3d@4d_broadcast": ("(4, 2, 3)", "(2, 1, 3, 2)", "a @ b"),
    "4d@3d_broadcast": ("(2, 1, 2, 3)", "(4, 3, 2)", "a @ b"),
    "4d@4d_broadcast": ("(2, 1, 2, 3)", "(1, 3, 3, 2)", "a @ b"),
    "1d@4d_broadcast": ("(3, requires_grad=False)", "(2, 1, 3, 2)", "a @ b"),
    "expanded@1d": ("(1, 2, 3)", "(3, requires_grad=False)", "a.expand(4, 2, 3) @ b"),
}
_add("matmul", {name: _MATMUL.format(a=sa, b=sb, expr=e)
                for name, (sa, sb, e) in MATMUL_CASES.items()})

_add("grad_fn_facts", {
    "nodes_take_no_new_attributes_tensors_do": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
y.note = "a tensor takes one"
print(y.note)
for node in (y.grad_fn, y.grad_fn.next_functions[0][0], y.tanh().grad_fn, (y ** 2).grad_fn):
    try:
        node.note = 1
    except AttributeError as e:
        print(e)
""",
    "repr_str_name_module": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
print(repr(y.grad_fn), str(y.grad_fn), y.grad_fn.name())
print(type(y.grad_fn), type(y.grad_fn).__module__)
acc = y.grad_fn.next_functions[0][0]
print(type(acc), type(acc).__module__)
print(isinstance(y.grad_fn, torch.autograd.graph.Node))
print(isinstance(y.grad_fn.next_functions[0][0], torch.autograd.graph.Node))
""",
    "same_accumulate_grad_twice_for_x_times_x": """
x = torch.tensor([1., 2.], requires_grad=True)
(a, _), (b, _) = (x * x).grad_fn.next_functions
print(a is b)
""",
    "float_of_float32_is_x_itself": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x.float()
print(y is x, y.grad_fn, y.is_leaf)
""",
    "grad_fn_of_leaf_is_none": """
x = torch.tensor([1., 2.], requires_grad=True)
print(x.grad_fn, torch.tensor(1.).grad_fn)
""",
    "T_of_0_dim": """
x = torch.tensor(2., requires_grad=True)
print(x.T.grad_fn, x.T)
""",
})
FRESH.add("grad_fn_facts/T_of_0_dim")      # a deprecation warning, once per process

# ----------------------------------------------------------------------------------------
# AccumulateGrad
# ----------------------------------------------------------------------------------------
_add("accumulate_grad", {
    "repr_name_next_functions": """
x = torch.tensor([1., 2.], requires_grad=True)
acc = (x * 2).grad_fn.next_functions[0][0]
print(acc, repr(acc), acc.name(), acc.next_functions)
""",
    "variable_and_metadata": """
x = torch.tensor([1., 2.], requires_grad=True)
acc = (x * 2).grad_fn.next_functions[0][0]
print(acc.variable is x, acc.metadata)
""",
    "one_per_leaf": """
x = torch.tensor([1., 2.], requires_grad=True)
print((x * 2).grad_fn.next_functions[0][0] is (x * 3).grad_fn.next_functions[0][0])
""",
    "survives_backward": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
acc = y.grad_fn.next_functions[0][0]
y.sum().backward()
print(y.grad_fn.next_functions)
print(y.grad_fn.next_functions[0][0] is acc, acc.variable is x)
""",
    "call_a_node": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
print(y.grad_fn(torch.ones(2)))
print(x.grad)
""",
    "call_a_node_on_x_times_x": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * x
print(y.grad_fn(torch.ones(2)))
""",
    "call_a_node_after_backward": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
y.sum().backward()
y.grad_fn(torch.ones(2))
""",
})

# ----------------------------------------------------------------------------------------
# saved tensors and values (_saved_*)
# ----------------------------------------------------------------------------------------
_add("saved", {
    "mul_self": """
x = torch.tensor([1., 2.], requires_grad=True)
f = (x * x).grad_fn
print(f._saved_self, f._saved_other)
print(f._saved_self is x, f._saved_other is x)
""",
    "mul_number": """
x = torch.tensor([1., 2.], requires_grad=True)
f = (x * 2).grad_fn
print(f._saved_other, f._saved_self)
print(f._saved_other.dtype, f._saved_other.requires_grad)
""",
    "mul_constant_tensor": """
x = torch.tensor([1., 2.], requires_grad=True)
c = torch.tensor([3., 4.])
f = (c * x).grad_fn
print(f._saved_self, f._saved_self is c, f._saved_other)
""",
    "pow": """
x = torch.tensor([1., 2.], requires_grad=True)
f = (x ** 2).grad_fn
print(f._saved_exponent, type(f._saved_exponent).__name__)
print(f._saved_self, f._saved_self is x)
g = (x ** 0.5).grad_fn
print(g._saved_exponent, type(g._saved_exponent).__name__)
""",
    "sum": """
w = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
print(w.sum().grad_fn._saved_self_sym_sizes)
""",
    "sum_dim": """
w = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
f = w.sum(1).grad_fn
print(f._saved_dim, f._saved_keepdim, f._saved_self_sym_sizes)
print(w.sum(0, keepdim=True).grad_fn._saved_keepdim)
""",
    "add": """
x = torch.tensor([1., 2.], requires_grad=True)
print((x + 1).grad_fn._saved_alpha)
""",
    "mm": """
w = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
f = (w @ w).grad_fn
print(f._saved_mat2, f._saved_mat2_sym_sizes, f._saved_mat2_sym_strides)
print(f._saved_self, f._saved_self_sym_sizes, f._saved_self_sym_strides)
print(f._saved_self is w, f._saved_mat2 is w)
""",
    "mm_layouts": """
w = torch.ones(2, 3, requires_grad=True)
c = torch.ones(3, 2)
for a, b in [(w, c), (c, w), (w, w.T), (w.T, w)]:
    f = (a @ b).grad_fn
    print(f._saved_self_sym_sizes, f._saved_self_sym_strides, f._saved_mat2_sym_sizes,
          f._saved_mat2_sym_strides, f._saved_self is None, f._saved_mat2 is None)
""",
    "exp_result": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x.exp()
r = y.grad_fn._saved_result
print(r, r is y, r.grad_fn)
""",
    "listed_by_dir": """
x = torch.tensor([1., 2.], requires_grad=True)
w = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
for y in (x * x, x * 2, x ** 2, w.sum(), w.sum(1), x + 1, w @ w, x.exp()):
    print(y.grad_fn.name(), [a for a in dir(y.grad_fn) if a.startswith("_saved_")])
""",
    "missing_attribute": """
x = torch.tensor([1., 2.], requires_grad=True)
(x + 1).grad_fn._saved_self
""",
})

# ----------------------------------------------------------------------------------------
# printing: every example of the repr section, one case each
# ----------------------------------------------------------------------------------------
_PRINT = """
x = torch.tensor(3., requires_grad=True)
v = torch.tensor([1., 4.], requires_grad=True)
w = torch.tensor([[1., 2.], [3., 40.]], requires_grad=True)
t = {expr}
print(t)
print(str(t) == repr(t))
"""

PRINT_EXPRESSIONS = [
    "torch.tensor(3.)", "torch.tensor(3., requires_grad=True)", "x*2", "x**2",
    "torch.tensor([2., 3.])", "torch.tensor([6., 192.])",
    "torch.tensor([6., 192.], requires_grad=True)", "6*v**3", "torch.tensor([1.5, 2.25])",
    "torch.tensor([0.1, 100.])", "torch.tensor([-1., 10.])", "torch.tensor([1., 1000.])",
    "torch.tensor([1., 2000.])", "torch.tensor([1e-5, 1.])", "torch.tensor([0., 5.])",
    "torch.tensor(0.1)", "torch.tensor(1/3)", "torch.tensor(2.5e-5)", "torch.tensor(1234567.)",
    "torch.tensor(1e9)", "torch.tensor(-0.)", "torch.tensor([float('nan'), float('inf'), 1.])",
    "torch.tensor([])", "torch.tensor([1., 2.], dtype=torch.float64)",
    "torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True)", "torch.tensor([1, 2])",
    "torch.tensor(3)", "torch.tensor([True, False])", "w", "w@w", "w.sum()", "w.sum(1)",
    "w.mean()", "torch.tensor([1., 2., 3.], requires_grad=True).sum(dim=0, keepdim=True)",
    "(x*2).detach()", "torch.arange(1001.)", "torch.arange(30.)*1.5",
    # around the rules: sci mode limits, padding, nan/inf, dtypes, empty, 2-D, long rows
    "torch.tensor([1., 1e8])", "torch.tensor([1., 1.5e8])", "torch.tensor(1e-4)",
    "torch.tensor([1e-4, 0.1])", "torch.tensor([0.5, 500.])", "torch.tensor([-0.5, 1.])",
    "torch.tensor([-1e-5, 1.])", "torch.tensor([1e-10, 0.])", "torch.tensor([0., 0.])",
    "torch.tensor([123456789.])", "torch.tensor([float('nan')])",
    "torch.tensor([float('nan'), 1.5])", "torch.tensor([float('-inf'), float('inf')])",
    "torch.tensor([float('inf'), 0.25, -2.])", "torch.tensor([1e10, float('nan')])",
    "torch.tensor(float('inf'))", "torch.tensor([1., 2.], dtype=torch.float16)",
    "torch.tensor([1, 2], dtype=torch.int32)", "torch.tensor([-1, 200])",
    "torch.tensor([1, 2], dtype=torch.uint8)", "torch.tensor([1.5, 2.], dtype=torch.float64)",
    "torch.tensor([], dtype=torch.int64)", "torch.tensor([], dtype=torch.float64)",
    "torch.zeros(0, 2)", "torch.zeros(2, 0)", "torch.tensor([[1.5, 2.], [3., -4.]])",
    "torch.ones(2, 2, 2)", "torch.ones(2, 1, 3, requires_grad=True) * 2",
    "torch.arange(6.).reshape(2, 3) / 7", "torch.tensor(True)", "torch.tensor(-7)",
    "torch.arange(1001)", "torch.arange(2000.).reshape(40, 50)",
    "torch.arange(3000.).reshape(10, 300)", "torch.arange(30.)",
    "(torch.arange(30.) * 1.5).requires_grad_()", "torch.arange(30., requires_grad=True) * 1.5",
    "torch.arange(17., requires_grad=True) * 1000", "torch.arange(12., requires_grad=True) / 3",
    "torch.arange(10., dtype=torch.float64, requires_grad=True) * 1e5",
    "torch.tensor([[1., 2.], [3., 4.]], dtype=torch.float64, requires_grad=True) @ "
    "torch.tensor([[1., 2.], [3., 4.]], dtype=torch.float64)",
    "torch.arange(6.).reshape(3, 2).T", "torch.linspace(0, 1, 7)",
]
_add("print", {e: _PRINT.format(expr=e) for e in PRINT_EXPRESSIONS})

_add("print_other", {
    "made_under_no_grad": """
x = torch.tensor(3., requires_grad=True)
with torch.no_grad():
    y = x * 2
print(y)
""",
    "format_of_0_dim": """
x = torch.tensor(3., requires_grad=True)
print(f"{x.data}", f"{x}", f"{x * 2}", f"{torch.tensor(3)}", f"{torch.tensor(True)}")
print(f"{torch.tensor(3.14159):.2f}", f"{x:>8.3f}", f"{torch.tensor(7):04d}")
""",
    "format_of_vector_without_spec": """
v = torch.tensor([1., 2.], requires_grad=True)
print(f"{v}", f"{v * 2}", "{}".format(v.data))
""",
    "format_spec_of_one_element_vector": """
f"{torch.tensor([1.5]):.2f}"
""",
    "printed_inside_containers": """
x = torch.tensor([1., 2.], requires_grad=True)
print([x, x * 2], (x.sum(),), {"g": x.data})
""",
    "set_printoptions_precision": """
torch.set_printoptions(precision=2)
try:
    print(torch.tensor([1.23456, 2.]), torch.tensor([1e-5, 1.]))
finally:
    torch.set_printoptions(profile="default")
print(torch.tensor([1.23456, 2.]))
""",
})

_add("size", {
    "printing": """
x = torch.tensor(3.)
w = torch.ones(2, 3)
print(x.shape, w.shape, w.size(), repr(w.shape), str(w.shape))
print(torch.Size([2, 3]), torch.Size([]))
""",
    "equality_and_tuple_behaviour": """
x = torch.tensor(3.)
w = torch.ones(2, 3)
print(x.shape == (), torch.Size([]) == (), w.shape == (2, 3), w.shape == [2, 3])
print(w.shape == torch.Size([2, 3]), isinstance(w.shape, tuple), list(w.shape))
print(w.shape[0], type(w.shape[0]).__name__, w.size(1), len(w.shape), w.shape[-1])
print(w.shape[1:], type(w.shape[1:]).__name__, w.shape.numel(), w.numel())
print(w.shape + (4,), type(w.shape + (4,)).__name__)
""",
    "in_error_text": """
x = torch.tensor([1., 2.], requires_grad=True)
print(f"{x.shape}", "{}".format(torch.ones(1, 2).shape))
""",
})

_add("item", {
    "types_and_values": """
for t in (torch.tensor(3.), torch.tensor(0.1), torch.tensor(3), torch.tensor(True),
          torch.tensor([[2.5]]), torch.tensor(1., dtype=torch.float64) / 3):
    v = t.item()
    print(type(v).__name__, v)
""",
    "tolist": """
print(torch.tensor([[1., 2.], [3., 4.5]]).tolist(), torch.tensor(0.1).tolist())
print(torch.tensor([1, 2]).tolist(), torch.tensor(True).tolist())
""",
})

# ----------------------------------------------------------------------------------------
# VJP, accumulation, autograd.grad, create_graph
# ----------------------------------------------------------------------------------------
_add("vjp", {
    "backward_with_weights": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
(x ** 2).backward(torch.tensor([0.1, 1.0, 0.001]))
print(x.grad)
""",
    "weighted_sum": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
v = torch.tensor([0.1, 1.0, 0.001])
(x ** 2 * v).sum().backward()
print(x.grad)
""",
    "jacobian": """
x = torch.tensor([1., 2., 3.])
v = torch.tensor([0.1, 1.0, 0.001])
J = torch.autograd.functional.jacobian(lambda t: t ** 2, x)
print(J)
print(v @ J)
print(x.requires_grad, x.grad)
""",
    "ones_like": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
(x ** 2).backward(torch.ones_like(x))
print(x.grad)
""",
    "one_jacobian_row": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
(x ** 2).backward(gradient=torch.tensor([1., 0., 0.]))
print(x.grad)
""",
    "accumulation": """
x = torch.tensor(2., requires_grad=True)
for _ in range(3):
    y = x ** 2
    y.backward()
    print(x.grad)
""",
    "zero_and_none": """
x = torch.tensor(2., requires_grad=True)
(x ** 2).backward()
g = x.grad
print(x.grad.zero_())
print(g is x.grad)
(x ** 2).backward()
print(x.grad, g)
x.grad = None
print(x.grad)
(x ** 2).backward()
print(x.grad, g)
""",
    "accumulates_in_place": """
x = torch.tensor([1., 2.], requires_grad=True)
(x * 2).sum().backward()
g = x.grad
(x * 3).sum().backward()
print(g is x.grad, g)
""",
    "fan_out": """
x = torch.tensor(3., requires_grad=True)
(x * x + x).backward()
print(x.grad)
""",
    "backward_of_a_leaf": """
x = torch.tensor(3., requires_grad=True)
x.backward()
print(x.grad)
""",
    "inputs": """
x = torch.tensor(3., requires_grad=True)
w = torch.tensor(2., requires_grad=True)
(x * w).backward(inputs=[x])
print(x.grad, w.grad)
""",
    "broadcast": """
a = torch.tensor([1., 2.], requires_grad=True)
b = torch.tensor([[1.], [2.]], requires_grad=True)
(a * b).sum().backward()
print(a.grad)
print(b.grad)
""",
    "autograd_grad": """
x = torch.tensor(3., requires_grad=True)
print(torch.autograd.grad(x ** 3, x))
print(x.grad)
""",
    "autograd_grad_outputs": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
print(torch.autograd.grad(x ** 2, x, grad_outputs=torch.tensor([1., 1., 1.])))
""",
    "allow_unused": """
x = torch.tensor(3., requires_grad=True)
w = torch.tensor(2., requires_grad=True)
print(torch.autograd.grad(x * 3, [x, w], allow_unused=True))
print(torch.autograd.grad(x * 3, [x, w], materialize_grads=True))
""",
    "create_graph": """
x = torch.tensor(3., requires_grad=True)
g, = torch.autograd.grad(x ** 3, x, create_graph=True)
print(g)
print(torch.autograd.grad(g, x))
""",
    "backward_of_a_created_gradient": """
x = torch.tensor(2., requires_grad=True)
y = x ** 2
g, = torch.autograd.grad(y, x, create_graph=True)
print(g)
g.backward()
print(x.grad)
""",
    "third_derivative": """
x = torch.tensor(2., requires_grad=True)
g1, = torch.autograd.grad(x ** 4, x, create_graph=True)
g2, = torch.autograd.grad(g1, x, create_graph=True)
g3, = torch.autograd.grad(g2, x)
print(g1, g2, g3)
""",
    "result_is_a_leaf_trap": """
x = torch.ones(2, requires_grad=True) * 2
print(x.is_leaf, x.requires_grad)
x.sum().backward()
print(x.grad)
""",
})
# optim.SGD(...).zero_grad() is skipped: autograd_lab has no optimizers (see test_parity.py)

# ----------------------------------------------------------------------------------------
# retain_grad, hooks, no_grad, detach, leaf flags
# ----------------------------------------------------------------------------------------
_add("retain_grad", {
    "non_leaf": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
y.retain_grad()
(y * y).sum().backward()
print(y.grad, y.is_leaf, y.retains_grad)
""",
    "leaf": """
x = torch.tensor([1., 2.], requires_grad=True)
x.retain_grad()
print(x.retains_grad)
""",
    "accumulates_too": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
y.retain_grad()
z = (y * y).sum()
z.backward(retain_graph=True)
z.backward()
print(y.grad, x.grad)
""",
})

_add("flags", {
    "table": """
b = torch.tensor([1., 2.], requires_grad=True)
for t in (torch.tensor(1.), b, b * 2, (b * 2).detach()):
    print(t.is_leaf, t.requires_grad, t.grad_fn)
""",
    "mixed_inputs": """
a = torch.tensor([1., 2.])
b = torch.tensor([1., 2.], requires_grad=True)
print((a + b).requires_grad, (a * 2).requires_grad, (a + b).is_leaf)
""",
})

_add("hooks", {
    "tensor_hook_sees_gradient": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 3
h = y.register_hook(lambda g: print("hook", g))
print(type(h).__name__)
y.sum().backward()
print(x.grad)
""",
    "remove": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 3
h = y.register_hook(lambda g: print("hook", g))
print(h.remove())
y.sum().backward()
print(x.grad)
""",
    "replace_leaf_gradient": """
x = torch.tensor([1., 2.], requires_grad=True)
x.register_hook(lambda g: g * 10)
(x * 3).sum().backward()
print(x.grad)
""",
    "replace_non_leaf_gradient": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 3
y.register_hook(lambda g: g * 10)
y.sum().backward()
print(x.grad)
""",
    "post_accumulate_grad": """
x = torch.tensor([1., 2.], requires_grad=True)
x.register_post_accumulate_grad_hook(lambda t: print("post", t is x, t.grad))
(x * 2).sum().backward()
""",
    "post_accumulate_grad_on_non_leaf": """
x = torch.tensor([1., 2.], requires_grad=True)
(x * 2).register_post_accumulate_grad_hook(lambda t: None)
""",
    "node_prehook": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 3
y.grad_fn.register_prehook(lambda go: print("pre", go))
y.sum().backward()
""",
    "node_hook_after_prehook": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 3
y.grad_fn.register_hook(lambda gi, go: print("hook", gi, go))
y.grad_fn.register_prehook(lambda go: print("pre", go))
y.sum().backward()
""",
    "order_of_every_kind": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 3
y.retain_grad()
y.register_hook(lambda g: print("tensor hook", g))
y.grad_fn.register_hook(lambda gi, go: print("node hook", gi))
y.grad_fn.register_prehook(lambda go: print("node prehook", go))
x.register_hook(lambda g: print("leaf hook", g))
x.register_post_accumulate_grad_hook(lambda t: print("post accumulate", t.grad))
y.sum().backward()
print(y.grad, x.grad)
""",
    "hooks_in_registration_order": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 3
y.register_hook(lambda g: print("first", g) or g + 1)
y.register_hook(lambda g: print("second", g))
y.sum().backward()
print(x.grad)
""",
    "retain_grad_sees_hooked_gradient": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 3
y.retain_grad()
y.register_hook(lambda g: g * 2)
y.sum().backward()
print(y.grad, x.grad)
""",
})

_add("grad_mode", {
    "no_grad": """
x = torch.tensor(2., requires_grad=True)
with torch.no_grad():
    y = x * 2
print(y.requires_grad, y.grad_fn, y.is_leaf, y)
""",
    "is_grad_enabled_and_enable_grad": """
x = torch.tensor(2., requires_grad=True)
print(torch.is_grad_enabled())
with torch.no_grad():
    print(torch.is_grad_enabled())
    with torch.enable_grad():
        print(torch.is_grad_enabled(), x * 2)
    print(torch.is_grad_enabled(), x * 2)
print(torch.is_grad_enabled())
""",
    "decorator": """
x = torch.tensor(2., requires_grad=True)


@torch.no_grad()
def double(t):
    return t * 2


print(double(x), double.__name__, torch.is_grad_enabled())
""",
    "set_grad_enabled": """
x = torch.tensor(2., requires_grad=True)
torch.set_grad_enabled(False)
try:
    print(x * 2, torch.is_grad_enabled())
finally:
    torch.set_grad_enabled(True)    # a failure here must not leave the next cases without grad
print(x * 2)
with torch.set_grad_enabled(False):
    print(x * 2)
print(x * 2, torch.is_grad_enabled())
""",
    "no_grad_restored_after_error": """
x = torch.tensor(2., requires_grad=True)
try:
    with torch.no_grad():
        raise ValueError("inside")
except ValueError:
    pass
print(torch.is_grad_enabled(), x * 2)
""",
    "inplace_update_of_leaf": """
x = torch.tensor([1., 2.], requires_grad=True)
(x * x).sum().backward()
with torch.no_grad():
    x -= 0.1 * x.grad
print(x, x.is_leaf, x.requires_grad, x.grad_fn, x._version)
""",
    "leaf_update_outside_no_grad": """
x = torch.tensor([1., 2.], requires_grad=True)
(x * x).sum().backward()
x -= 0.1 * x.grad
""",
    "rebinding_is_not_in_place": """
x = torch.tensor([1., 2.], requires_grad=True)
(x * x).sum().backward()
x = x - 0.1 * x.grad
print(x, x.is_leaf)
print(x.grad)
""",
})

_add("detach", {
    "shares_storage": """
x = torch.tensor([1., 2.], requires_grad=True)
d = x.detach()
d[0] = 100.
print(x)
print(d, d.requires_grad, d.is_leaf)
""",
    "data": """
x = torch.tensor([1., 2.], requires_grad=True)
x.detach()[0] = 100.
print(x.data, x.data.requires_grad, x.data.is_leaf)
x.data[1] = 5.
print(x)
""",
    "detach_": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
z = y.detach_()
print(z is y, y, y.is_leaf, y.requires_grad, y.grad_fn)
""",
    "detach__result_cannot_backward": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
y.detach_()
(y * 3).sum().backward()
""",
})

# ----------------------------------------------------------------------------------------
# not in the reference, but a learner meets them on the way
# ----------------------------------------------------------------------------------------
_add("learner", {
    "tensor_of_a_tensor": """
x = torch.tensor([1., 2.], requires_grad=True)
y = torch.tensor(x)
print(y, y.requires_grad, y.is_leaf)
""",
    "inplace_on_a_view_of_a_leaf": """
x = torch.tensor([1., 2.], requires_grad=True)
x[0].add_(1)
""",
    "setitem_on_a_leaf": """
x = torch.tensor([1., 2.], requires_grad=True)
x[0] = 5.
""",
    "setitem_writing_into_the_leaf_itself": """
x = torch.tensor([1., 2.], requires_grad=True)
for write in ("x[:] = 5.", "x[...] = 5.", "x[[0]] = 5.", "x[x > 1] = 5.", "x[1:] = 5.",
              "x[None] = 5."):
    try:
        exec(write)
    except RuntimeError as e:
        print(write, e)
""",
    "inplace_on_a_view_of_a_non_leaf": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 1
z = y * y
y[0].add_(1)
print(y, y._version)
z.sum().backward()
""",
    "setitem_on_a_saved_non_leaf": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 1
z = y * y
y[0] = 5.
z.sum().backward()
""",
    "setitem_on_a_non_leaf": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 1
y[0] = 5.
print(y, y.grad_fn.name())
y.sum().backward()
print(x.grad)
""",
    "grad_of_a_gradient_without_create_graph": """
x = torch.tensor(3., requires_grad=True)
g, = torch.autograd.grad(x ** 3, x)
print(g, g.requires_grad)
torch.autograd.grad(g, x)
""",
    "grad_has_no_history": """
x = torch.tensor([1., 2.], requires_grad=True)
(x * x).sum().backward()
print(x.grad.requires_grad, x.grad.grad_fn, x.grad.is_leaf)
""",
    "grad_data_zero_": """
x = torch.tensor([1., 2.], requires_grad=True)
(x * 3).sum().backward()
x.grad.data.zero_()
(x * 3).sum().backward()
print(x.grad)
""",
    "backward_of_a_vector_leaf": """
x = torch.tensor([1., 2.], requires_grad=True)
x.backward()
""",
    "requires_grad__returns_the_tensor": """
x = torch.tensor([1., 2.]).requires_grad_()
print(x, x.is_leaf)
d = (x * 2).detach().requires_grad_()
print(d, d.is_leaf)
""",
    "requires_grad_false_on_leaf": """
x = torch.tensor([1., 2.], requires_grad=True)
x.requires_grad = False
print(x)
(x * 2).sum().backward()
""",
    "no_grad_keeps_the_flag": """
x = torch.tensor([1., 2.], requires_grad=True)
with torch.no_grad():
    print(x.requires_grad, (x * 2).requires_grad)
    y = (x * 2).requires_grad_()
print(y, y.is_leaf)
""",
    "float64_leaf": """
x = torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True)
y = x * torch.tensor([1., 1.])
print(y)
y.sum().backward()
print(x.grad)
""",
    "mixed_dtypes": """
x = torch.tensor([1., 2.], requires_grad=True)
d = torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True)
y = x * d
print(y)
y.sum().backward()
print(x.grad, d.grad)
""",
    "int_tensor_times_float_leaf": """
x = torch.tensor([1., 2.], requires_grad=True)
y = torch.tensor([1, 2]) * x
print(y)
""",
    "division_by_zero": """
x = torch.tensor([0., 1.], requires_grad=True)
y = (1 / x).sum()
y.backward()
print(y, x.grad)
""",
    "sqrt_at_zero": """
x = torch.tensor([0., 4.], requires_grad=True)
x.sqrt().sum().backward()
print(x.grad)
""",
    "relu_and_abs_at_zero": """
x = torch.tensor([0., 0.], requires_grad=True)
(x.relu() + x.abs()).sum().backward()
print(x.grad)
""",
    "max_with_ties": """
x = torch.tensor([2., 2., 1.], requires_grad=True)
x.max().backward()
print(x.grad)
""",
    "leaf_hook_changing_the_size": """
x = torch.tensor([1., 2.], requires_grad=True)
x.register_hook(lambda g: g.sum())
(x * 2).sum().backward()
""",
    "hook_changing_the_size": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2


def total(g):
    return g.sum()


y.register_hook(total)
y.sum().backward()
""",
    "inputs_non_leaf": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
y.sum().backward(inputs=[y])
print(y.grad, x.grad, y.retains_grad)
y.sum().backward(inputs=[y])
""",
    "grad_accumulates_into_plus_equals": """
x = torch.tensor([1., 2.], requires_grad=True)
(x * 2).sum().backward()
x.grad += 1
print(x.grad)
""",
    "leaf_update_in_no_grad_bumps_version": """
x = torch.tensor([1., 2.], requires_grad=True)
y = (x * x).sum()
with torch.no_grad():
    x.add_(1)
print(x._version)
y.backward()
""",
    "detach_then_keep_going": """
x = torch.tensor([1., 2.], requires_grad=True)
y = (x * 2).detach()
z = y * x
z.sum().backward()
print(x.grad)
""",
    "variable_wrapper": """
x = Variable(torch.tensor([1., 2.]), requires_grad=True)
print(x, type(x).__name__)
""",
    "leaf_grad_set_by_hand": """
x = torch.tensor([1., 2.], requires_grad=True)
x.grad = torch.tensor([5., 5.])
(x * 2).sum().backward()
print(x.grad)
""",
    "grad_set_to_wrong_type": """
x = torch.tensor([1., 2.], requires_grad=True)
x.grad = [1., 2.]
""",
    "nested_backward_in_hook": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
y.register_hook(lambda g: print("y", g))
z = y * y
z.register_hook(lambda g: print("z", g))
z.sum().backward()
""",
    "zero_grad_by_none_then_backward": """
x = torch.tensor([1., 2.], requires_grad=True)
for _ in range(2):
    x.grad = None
    (x * 3).sum().backward()
    print(x.grad)
""",
})

# ----------------------------------------------------------------------------------------
# dtype promotion: integer and bool tensors with Python numbers and with float tensors
# ----------------------------------------------------------------------------------------
_PROMOTE = """
i = torch.tensor([1, 2, 3])
b = torch.tensor([True, False, True])
f = torch.tensor([0.5, 1.5, 2.5])
d = torch.tensor([0.5, 1.5, 2.5], dtype=torch.float64)
for _ in range(2):      # twice: a cached conversion must not change the second answer
    t = {expr}
    print(t, t.dtype)
"""
PROMOTE_EXPRESSIONS = [
    f"{t} {op} {n}" for t in ("i", "b") for op in ("+", "-", "*", "/", "**")
    for n in ("0.5", "2", "2.0")] + [
    f"{n} {op} i" for op in ("+", "-", "*", "/") for n in ("0.5", "2")] + [
    "i * f", "i + d", "b * f", "f * 0.1", "d * 0.1", "f + 1e-3", "d / 3.0", "i * 0.1",
    "torch.tensor(3) * 0.5", "torch.tensor(3.) * i", "f * torch.tensor(2.)",
    "d * torch.tensor(2.)", "i.sum() * 0.5", "i.float() * 0.5", "(i * 0.5).sum()",
    # a 0-dim float tensor that brings the floats gives its own dtype, not the default
    "i * torch.tensor(0.5, dtype=torch.float64)", "b + torch.tensor(1., dtype=torch.float64)",
    "i / torch.tensor(2, dtype=torch.int64)", "b * torch.tensor(0.5, dtype=torch.float16)",
    "torch.where(b, torch.tensor(0.5, dtype=torch.float64) / 2, 0.0)",
    # what PyTorch refuses
    "b - b", "i - b", "b - f", "-b", "i ** -1", "b ** -1", "torch.tensor(2) ** -1", "i.mean()",
    "b.mean()", "i ** -1.0",
] + [f"{t}.{fn}()" for t in ("i", "b") for fn in (
    "exp", "log", "sin", "cos", "tanh", "sigmoid", "sqrt", "reciprocal", "neg", "sum")] + [
    "i.relu()", "i.abs()", "i.sign()", "b.sign()", "i.max()", "b.float()", "i.norm()",
    "torch.where(b, i, 0.5)", "torch.where(b, f, 2)", "torch.where(b, 1., 0.)",
    "i.clone().add_(0.5)", "torch.tensor([1, 2], dtype=torch.int32).add_(f[:2])",
    "torch.tensor([1, 2], dtype=torch.int8).mean()", "b.clone().add_(1)"]
_add("promote", {e: _PROMOTE.format(expr=e) for e in PROMOTE_EXPRESSIONS})

# ----------------------------------------------------------------------------------------
# PyTorch's exception and text where numpy would raise its own (broadcasting, indexing)
# ----------------------------------------------------------------------------------------
_RAISES = """
a = torch.ones(2, 3, requires_grad=True)
v = torch.arange(3.)
m = torch.arange(24.).reshape(2, 3, 4).requires_grad_()
t = {expr}
print(t, getattr(t, "shape", None))
fn = getattr(t, "grad_fn", None)
while fn is not None and fn.next_functions:     # the nodes recorded, newest first
    print(fn.name())
    fn = fn.next_functions[0][0]
if getattr(t, "requires_grad", False):
    t.backward(torch.ones_like(t))
    print(m.grad, a.grad)
"""
RAISES_EXPRESSIONS = [
    # shapes that do not broadcast: the first mismatch from the right, in PyTorch's words
    "a + torch.ones(2, 2)", "a + torch.ones(3, 2)", "v * torch.ones(2)", "m - torch.ones(5, 1)",
    "a / torch.ones(2, 2)", "v ** torch.ones(2)", "torch.ones(2, 1, 3) + torch.ones(4, 2)",
    "v + torch.ones(2, 4)", "v.clone().add_(torch.ones(2))", "torch.maximum(v, torch.ones(2))",
    "torch.where(v > 0, v, torch.ones(2))", "torch.where(torch.ones(2) > 0, v, v)", "v == v[:2]",
    "v < torch.ones(2)",
    # an index out of range: the dimension of the tensor indexed, counted as PyTorch counts
    "v[3]", "v[-4]", "a[0, 3]", "a[:, 5]", "a[2]", "a[None, 0, 5]", "a[..., 5]", "m[0, :, 9]",
    "m[..., 0, 9]", "m[None, ..., 9, 0]", "v[[0, 3]]", "v[[1, -5]]", "v[torch.tensor([0, 3])]",
    "a[[0, 1], [0, 3]]", "a[0, [0, 3]]", "a[:, [0, 3]]", "a[[0, 3], :]", "a[[0, 1], 3]",
    "a[1:, [5]]", "m[[[0, 1], [1, 0]], [0, 5]]", "v[0, 0]", "torch.tensor(1.)[0]",
    "torch.tensor(1.)[[0]]", "torch.tensor(1.)[0:1]", "torch.tensor(1.)[0, 0]",
    "a[torch.ones(3) > 0]", "a[torch.ones(2, 2) > 0]", "a[1:2, torch.ones(2) > 0]",
    "a[[0, 1], [0, 1, 2]]", "a[torch.tensor([0.])]",
    # the views first, then the index arrays: PyTorch's shape, nodes and gradient
    "m[0, :, [0, 1]]", "m[1:, [0]]", "m[:, [0, 1], 0]", "m[[1], None]", "m[torch.tensor(1)]",
    "m[[0, 1], 1:, [2, 3]]", "m[0, [True, False, True]]", "m[[0, 0, 1]]", "m[m[:, :, 0] > 5]",
    # every dim is range-checked (a typo must not become a plausible answer); 0-d takes 0, -1
    "a.sum(2)", "torch.ones(2, 3).sum(2)", "a.sum((0, 2))", "a.sum((0, 0))", "a.mean(-3)",
    "a.max(2)", "a.min(-3)", "a.squeeze(2)", "a.unsqueeze(3)", "a.unsqueeze(-4)",
    "a.transpose(0, 2)", "a.permute(0, 2)", "a.permute(0)", "a.permute(0, 0)",
    "torch.cat([a, a], 2)", "torch.stack([a, a], 3)", "torch.stack([v, v], -3)",
    "torch.tensor(2., requires_grad=True).sum(0)", "torch.tensor(2., requires_grad=True).mean(-1)",
    "torch.tensor(2., requires_grad=True).sum(0, keepdim=True)", "torch.tensor(2.).sum(1)",
    "torch.tensor(2., requires_grad=True).max(0).values", "torch.tensor(2.).max(0, True)[1]",
    "torch.tensor(2., requires_grad=True).transpose(0, -1)", "torch.tensor(2.).unsqueeze(1)",
    "torch.tensor(2., requires_grad=True).squeeze(0)", "torch.stack([torch.tensor(2.)], 1)",
    "a.sum([])", "a.mean((0, 1))",
    # a shape is checked first (one -1 at most, none below it), then a view's strides
    "a.reshape(-1, -1)", "a.view(-2, 3)", "m[:0].reshape(0, -1)", "m[:0].view(-1, 0, 2)",
    "a.t().view(4, -1)", "a.t().view(0, -1)", "a.t().view(-1, 2)", "a.reshape(0, -1)",
    # squeeze takes a tuple of dims too (SqueezeBackward2), each checked, none twice
    "m[:1, :, :1].squeeze((0, 2))", "m[:1].squeeze((0, -1))", "m[:1, :1].squeeze(0, 1)",
    "m[:1].squeeze(())", "m.squeeze([1])", "a.squeeze((0, 2))", "a.squeeze((1, -1))",
    "a.squeeze((0, -3))", "torch.tensor(2., requires_grad=True).squeeze((0,))",
    "torch.tensor(2., requires_grad=True).squeeze((0, -1))",
    # cat and stack: their own checks, never numpy's
    "torch.cat([a, torch.ones(3, 3)])", "torch.cat([a, torch.ones(2, 2)], 1)",
    "torch.cat([a, v])", "torch.cat([torch.tensor(1.), torch.tensor(1.)])", "torch.cat([v, v[0]])",
    "torch.cat([])", "torch.stack([v, v[:2]])", "torch.stack([])",
    # None and other non-tensors: Python's TypeError for an operator, PyTorch's for a method
    "a + None", "None + a", "a * None", "None - a", "None / a", "None ** a", "a ** None",
    "a @ None", "a > None", "a == None", "a + 'x'", "a.add(None)", "torch.add(a, None)",
    "a.mul(None)", "torch.maximum(a, None)", "a.clone().add_(None)", "torch.cat([a, None])",
    "torch.stack([a, None])",
    # products take one dtype (numpy would promote silently), and dot takes vectors only
    "v @ v.double()", "a @ a.t().double()", "a @ v.double()", "v[:2] @ a.double()",
    "m @ torch.ones(4, 2, dtype=torch.float64)", "torch.ones(5, 3) @ m.double()",
    "v @ m.double()", "m @ torch.ones(4, dtype=torch.float64)", "v.long()", "a.int().half()",
    "(v > 1).int()", "v.bool()",
    "m.double() @ m.transpose(1, 2)", "torch.mm(a, a.t().double())", "torch.mv(a, v.double())",
    "torch.dot(v, v.double())", "v.dot(v.long())", "a.long() @ a.t().int()",
    "torch.dot(a, v)", "a.dot(a)", "torch.dot(v, torch.ones(2, dtype=torch.float64))",
    "torch.dot(v, torch.ones(2))", "a.t().mv(torch.ones(2, dtype=torch.float64))",
    # which kernel PyTorch's matmul picks for a batch (one mm or mv, or bmm) shows in the text
    "torch.ones(2, dtype=torch.float64) @ torch.ones(2, 2, 2)",
    "torch.ones(2, dtype=torch.float64, requires_grad=True) @ torch.ones(2, 2, 2)",
    "torch.ones(2, dtype=torch.float64) @ torch.ones(3, 2, 1)",
    "torch.ones(2, 2, 2).transpose(0, 1) @ torch.ones(2, 2, dtype=torch.float64)",
    "torch.ones(2, 2, 2).transpose(0, 1) @ torch.ones(2, dtype=torch.float64)",
    "torch.ones(2, 2, 2).transpose(0, 1) @ torch.ones(2, dtype=torch.float64).requires_grad_()",
    "torch.ones(2, 2, 2) @ torch.ones(2, dtype=torch.float64)",
    "a[:, :2] @ torch.ones(2, 2, 2, dtype=torch.float64)",
    "torch.ones(2, 2) @ torch.ones(2, 2, 2, dtype=torch.float64, requires_grad=True)",
    "m.transpose(0, 1) @ torch.ones(4, 2, dtype=torch.float64)",
    "torch.ones(2, 2, dtype=torch.uint8) @ torch.ones(2, 2, dtype=torch.int8)",
    "torch.ones(2, 2, dtype=torch.bool) @ torch.ones(2, 2)", "torch.dot(v, v)", "v.dot(v)",
    # ... and when a batch broadcasts: a batch of one that requires grad is squeezed first
    "m[:1] @ torch.ones(3, 4, 2, dtype=torch.float64)",
    "torch.ones(2, 2, 3, dtype=torch.float64) @ m[:1]",
    "m[:1].detach() @ torch.ones(2, 4, 2, dtype=torch.float64)",
    "m @ torch.ones(5, 1, 4, 2, dtype=torch.float64)",
    "torch.ones(5, 1, 3, 2, dtype=torch.float64, requires_grad=True) @ a",
    "torch.ones(2, requires_grad=True) @ torch.ones(3, 2, 2, dtype=torch.float64)",
    "torch.ones(2) @ torch.ones(3, 2, 2, dtype=torch.float64, requires_grad=True)",
    "torch.ones(3, dtype=torch.float64) @ torch.ones(2, 1, 3, 2)",
    # shapes that do not fit, in the words of the kernel PyTorch picks
    "m @ torch.ones(3, 4, 2)", "m @ torch.ones(2, 3, 2)", "m @ torch.ones(3)", "m @ a",
    "torch.ones(5) @ m", "a.t() @ m", "m @ torch.ones(5, 1, 3, 2)",
    "torch.bmm(m, m)", "torch.bmm(a, m)", "m.bmm(a)", "m.bmm(m.transpose(1, 2))",
    "torch.bmm(m, m.double().transpose(1, 2))", "torch.bmm(m, torch.ones(3, 4, 2))",
    # matmul takes tensors only
    "torch.matmul(a, 2)", "a.matmul(None)", "a @ 2", "torch.matmul(v, [1., 2., 3.])",
    # small differences of value and identity
    "torch.tensor([float('nan'), -2., 0.], requires_grad=True).sign()", "m.flatten()",
    "torch.tensor(2., requires_grad=True).flatten()", "v.flatten() is v",
]
_add("raises", {e: _RAISES.format(expr=e) for e in RAISES_EXPRESSIONS})
_add("expanded_fill", {
    # fill_ and zero_ may write an expanded tensor (one value for every element); backward
    # through it may not, nor may any other in-place operation
    "fill": "w = torch.ones(3, 3, requires_grad=True)\nt = torch.ones(1, 3).mm(w).expand(3, -1)\n"
            "t.fill_(0.5)\nprint(t, t.grad_fn.name())\nt.sum().backward()\n",
    "zero": "w = torch.ones(3, 3, requires_grad=True)\nt = (w * 2)[:1].expand(2, -1)\n"
            "t.zero_()\nprint(t, t.grad_fn.name())\nt.sum().backward()\n",
    "no_grad": "t = torch.ones(1, 3).expand(3, -1)\nt.fill_(2.)\nprint(t)\nt.zero_()\nprint(t)\n",
    "mul": "t = torch.ones(1, 3).expand(3, -1)\nt.mul_(2.)\n",
    "setitem": "t = torch.tensor(1.).expand(3)\nt[::2].fill_(0.5)\nprint(t)\nt[::2] = 1.5\n",
    "setitem_row": "t = torch.ones(1, 3).expand(3, -1)\nt[0] = 1.5\nprint(t)\n",
})
_add("norm_at_zero", {
    "create_graph": "x = torch.zeros(3, requires_grad=True)\n"
                    "g, = torch.autograd.grad(x.norm(), x, create_graph=True)\nprint(g)\n",
    "relu_then_norm": "a = torch.tensor([-1.1], requires_grad=True)\nt = torch.relu(a)\n"
                      "h, = torch.autograd.grad(t.norm(), [t], create_graph=True)\nprint(h)\n",
    "gradgradcheck": "x = torch.tensor([1.5, -2., 0.5], dtype=torch.float64, requires_grad=True)\n"
                     "print(torch.autograd.gradgradcheck(lambda t: t.norm(), (x,)))\n",
})
_add("squeeze_numpy_dim", {
    # a numpy integer (what an index from numpy is) is an int dim, for squeeze as for sum
    "int64_and_tuple": """
import numpy as np
m = torch.arange(6.).reshape(1, 3, 1, 2).requires_grad_()
for t in (m.squeeze(np.int64(0)), m.squeeze(np.int32(2)), m.squeeze((np.int64(0), 2))):
    print(t.shape, t.grad_fn, t.grad_fn._saved_dim, t.grad_fn._saved_self_sym_sizes)
    t.backward(torch.ones_like(t))
print(m.grad)
""",
})
_add("prod_twice", {
    # prod is differentiable twice, with and without a zero, and 0-d and empty inputs work
    "no_zero": "x = torch.tensor([2., 3., 4.], requires_grad=True)\n"
               "g, = torch.autograd.grad(x.prod(), x, create_graph=True)\n"
               "print(g.detach(), torch.autograd.grad(g.sum(), x))\n",
    "a_zero": "x = torch.tensor([[2., 0.], [3., 5.]], dtype=torch.float64, requires_grad=True)\n"
              "g, = torch.autograd.grad(x.prod(), x, create_graph=True)\n"
              "print(g.detach(), torch.autograd.grad(g.sum(), x))\n",
    "gradgradcheck": "x = torch.tensor([1.5, -2., 0.5], dtype=torch.float64, requires_grad=True)\n"
                     "print(torch.autograd.gradgradcheck(lambda t: t.prod(), (x,)))\n",
    "zero_dim": "x = torch.tensor(3., requires_grad=True)\n"
                "g, = torch.autograd.grad(x.prod(), x, create_graph=True)\n"
                "print(g, g.requires_grad)\n",
    "empty": "e = torch.ones(0, requires_grad=True)\ne.prod().backward()\nprint(e.grad)\n",
    # PyTorch's formula: out / x without a zero (a nan or inf shows in every gradient, even
    # for a gradient of 0), the products of the others with one zero, zeros with two or more
    "nan_inf_and_zeros": """
inf, nan = float("inf"), float("nan")
for v in ([nan, 1., 2.], [inf, 1., 2.], [2., 0., 4.], [0., inf, 2.], [0., 0., inf],
          [1e-30, 1e-30, 1e-30, 5.], [[1., 0.], [2., 3.]], [inf]):
    for g in (1., 0., nan, inf):
        x = torch.tensor(v, requires_grad=True)
        x.prod().backward(torch.tensor(g))
        gx, = torch.autograd.grad(x.prod(), x, torch.tensor(g), create_graph=True)
        print(v, g, x.grad, gx.detach())
""",
})
_add("raises_setitem", {
    "out_of_range": "x = torch.ones(2, 3)\nx[0, 5] = 1.\n",
    "out_of_range_list": "x = torch.ones(3)\nx[[0, 3]] = 1.\n",
    "out_of_range_before_the_leaf_error": "x = torch.ones(3, requires_grad=True)\nx[3] = 1.\n",
    "zero_dim": "x = torch.tensor(1.)\nx[0] = 2.\n",
})

# ----------------------------------------------------------------------------------------
# custom autograd.Function: several outputs, materialised gradients, marks, node names
# ----------------------------------------------------------------------------------------
_TWO = """
class Two(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3
    @staticmethod
    def backward(ctx, g1, g2):
        print("backward got", g1, g2)
        return g1 * 2 + g2 * 3
x = torch.tensor([1., 2.], requires_grad=True)
"""
_SINH = """
class Sinh(torch.autograd.Function):       # "Double Backward with Custom Functions"
    @staticmethod
    def forward(ctx, x):
        expx = torch.exp(x)
        expnegx = torch.exp(-x)
        ctx.save_for_backward(expx, expnegx)
        return (expx - expnegx) / 2, expx, expnegx
    @staticmethod
    def backward(ctx, grad_out, _grad_out_exp, _grad_out_negexp):
        expx, expnegx = ctx.saved_tensors
        grad_input = grad_out * (expx + expnegx) / 2
        grad_input += _grad_out_exp * expx
        grad_input -= _grad_out_negexp * expnegx
        return grad_input
x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.double, requires_grad=True)
"""
_SQUARE = """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2
    @staticmethod
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        print("needs_input_grad", ctx.needs_input_grad)
        return grad_out * 2 * x
x = torch.tensor([1., 2.], requires_grad=True)
"""
_add("function", {
    "unused_output_gets_zeros": _TWO + """
Two.apply(x)[0].sum().backward()
print(x.grad)
""",
    "second_output_only": _TWO + """
a, b = Two.apply(x)
b.sum().backward()
print(x.grad)
""",
    "both_outputs": _TWO + """
a, b = Two.apply(x)
(a * b).sum().backward()
print(x.grad)
""",
    "outputs_node_names": _TWO + """
a, b = Two.apply(x)
print(a, b)
print(a.grad_fn, type(a.grad_fn), a.grad_fn.name())
print((a + b).grad_fn.next_functions)
print(a.grad_fn.next_functions)
""",
    "node_repr_and_saved_tensors": _SQUARE + """
y = Square.apply(x)
print(y.grad_fn, type(y.grad_fn), y.grad_fn.name())
print(y.grad_fn.saved_tensors, y.grad_fn.needs_input_grad)
y.sum().backward()
print(x.grad)
y.grad_fn.saved_tensors
""",
    "needs_input_grad": """
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, k, b):
        ctx.save_for_backward(a, b)
        ctx.k = k
        return a * b * k
    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        print(ctx.needs_input_grad, ctx.k)
        return g * b * ctx.k if ctx.needs_input_grad[0] else None, None, g * a * ctx.k
a = torch.tensor([1., 2.], requires_grad=True)
b = torch.tensor([3., 4.])
Mul.apply(a, 2., b).sum().backward()
print(a.grad, b.grad)
Mul.apply(b, 2., a).sum().backward()
print(a.grad)
""",
    "set_materialize_grads_false": """
class Two(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2, x * 3
    @staticmethod
    def backward(ctx, g1, g2):
        print("backward got", g1, g2)
        grad = 0
        if g1 is not None:
            grad = grad + g1 * 2
        if g2 is not None:
            grad = grad + g2 * 3
        return grad
x = torch.tensor([1., 2.], requires_grad=True)
Two.apply(x)[1].sum().backward()
print(x.grad)
""",
    "mark_non_differentiable": """
class Sort(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        idx = torch.tensor([1, 0])
        flags = x > 1
        doubled = x * 2
        ctx.mark_non_differentiable(doubled)
        return x * 3, doubled, idx, flags, "label"
    @staticmethod
    def backward(ctx, g, g_doubled, g_idx, g_flags, g_label):
        print("backward got", g, g_doubled, g_idx, g_flags, g_label)
        return g * 3
x = torch.tensor([1., 2.], requires_grad=True)
y, doubled, idx, flags, label = Sort.apply(x)
print(y, doubled, idx, flags, label)
print(doubled.requires_grad, doubled.grad_fn, idx.requires_grad, flags.requires_grad)
y.sum().backward()
print(x.grad)
""",
    "mark_dirty": """
class AddOne(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x
    @staticmethod
    def backward(ctx, g):
        return g
x = torch.tensor([1., 2.], requires_grad=True)
a = x.clone()
b = a * a
print(a._version, a.grad_fn)
r = AddOne.apply(a)
print(r is a, a._version, a, a.grad_fn, a.grad_fn.next_functions)
(a * 2).sum().backward()
print(x.grad)
b.sum().backward()
""",
    "mark_dirty_on_a_leaf": """
class AddOne(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x
    @staticmethod
    def backward(ctx, g):
        return g
x = torch.tensor([1., 2.], requires_grad=True)
AddOne.apply(x)
""",
    "input_returned_unchanged": """
class Same(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x
    @staticmethod
    def backward(ctx, g):
        return g * 5
x = torch.tensor([1., 2.], requires_grad=True)
y = Same.apply(x)
print(y is x, y, x.grad_fn)
y.sum().backward()
print(x.grad)
""",
    "double_backward_square": _SQUARE + """
g, = torch.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
print(g)
g.sum().backward()
print(x.grad)
""",
    "double_backward_saved_output": """
class Exp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        result = torch.exp(x)
        ctx.save_for_backward(result)
        return result
    @staticmethod
    def backward(ctx, grad_out):
        result, = ctx.saved_tensors
        return result * grad_out
x = torch.tensor([0.5, 1.0], dtype=torch.double, requires_grad=True)
y = Exp.apply(x)
print(y.grad_fn.saved_tensors)
g, = torch.autograd.grad(y.sum(), x, create_graph=True)
print(g, torch.autograd.grad(g.sum(), x))
""",
    "double_backward_several_outputs": _SINH + """
y = Sinh.apply(x)[0]
g, = torch.autograd.grad(y.sum(), x, create_graph=True)
print(y, g)
print(torch.autograd.grad(g.sum(), x))
a, b, c = Sinh.apply(x)
g, = torch.autograd.grad((a * b * c).sum(), x, create_graph=True)
print(g, torch.autograd.grad(g.sum(), x))
""",
    "several_outputs_hooks_and_retain_grad": _SINH + """
a, b, c = Sinh.apply(x)
b.retain_grad()
a.register_hook(lambda g: print("hook on a", g))
(a + 2 * b).sum().backward()
print(b.grad, x.grad)
print(torch.autograd.grad(Sinh.apply(x)[2].sum(), x))
""",
    "several_outputs_anomaly_and_node_hooks": _TWO.replace('print("backward got", g1, g2)', "pass") + """
with torch.autograd.detect_anomaly():
    a, b = Two.apply(x)
    (a * b).sum().backward()
print(x.grad)
a, b = Two.apply(x)
a.grad_fn.register_hook(lambda gi, go: print("post", gi, go))
a.grad_fn.register_prehook(lambda go: print("pre", go))
(a * b).sum().backward()
""",
    "wrong_number_of_gradients": _SQUARE + """
class Extra(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()
    @staticmethod
    def backward(ctx, g):
        return g, None      # extra Nones are fine
Extra.apply(x).sum().backward()
print(x.grad)
class TooMany(Extra):
    @staticmethod
    def backward(ctx, g):
        return g, g
TooMany.apply(x).sum().backward()
""",
    "gradient_of_the_wrong_shape": """
class Bad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()
    @staticmethod
    def backward(ctx, g):
        return torch.ones(3)
x = torch.tensor([1., 2.], requires_grad=True)
Bad.apply(x).sum().backward()
""",
    "gradient_summed_and_cast": """
class Wide(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()
    @staticmethod
    def backward(ctx, g):
        return torch.ones(3, 2, dtype=torch.float64)
x = torch.tensor([1., 2.], requires_grad=True)
Wide.apply(x).sum().backward()
print(x.grad)
""",
    "gradient_for_a_number": """
class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        return x * k
    @staticmethod
    def backward(ctx, g):
        return g, g
x = torch.tensor([1., 2.], requires_grad=True)
Scale.apply(x, 2.).sum().backward()
""",
    "once_differentiable": _SQUARE.replace("    def backward", "    @torch.autograd.function.once_differentiable\n    def backward") + """
g, = torch.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
print(g, g.requires_grad)
""",
    "no_grad_apply": _SQUARE + """
with torch.no_grad():
    y = Square.apply(x)
print(y, y.grad_fn)
""",
})

# ----------------------------------------------------------------------------------------
# gradcheck and gradgradcheck: passing, failing with PyTorch's message, warnings
# ----------------------------------------------------------------------------------------
_CHECKED = """
from torch.autograd import gradcheck, gradgradcheck
from torch.autograd.gradcheck import GradcheckError
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2
    @staticmethod
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        return grad_out * 2 * x
class OffByAFactor(Square):
    @staticmethod
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        return grad_out * 3 * x
class NotTwiceDifferentiable(Square):
    @staticmethod
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        return grad_out * 2 * x.detach()       # right values, but blind to x's change
torch.manual_seed(0)
x = torch.rand(3, 2, dtype=torch.double, requires_grad=True)
"""
_add("gradcheck", {
    "passes": _CHECKED + """
print(gradcheck(Square.apply, x), gradgradcheck(Square.apply, x))
print(gradcheck(Square.apply, (x,), eps=1e-6, atol=1e-4))
print(torch.autograd.gradcheck(lambda a, b: (a * b).sin(), (x, x.detach() * 2)))
""",
    "off_by_a_factor": _CHECKED + """
print(gradcheck(OffByAFactor.apply, x, raise_exception=False))
try:
    gradcheck(OffByAFactor.apply, x)
except GradcheckError as e:
    print(type(e).__name__, isinstance(e, RuntimeError))
    print(e)
""",
    "off_by_a_factor_uncaught": _CHECKED + """
gradcheck(OffByAFactor.apply, (x,))
""",
    "wrong_double_backward": _CHECKED + """
print(gradcheck(NotTwiceDifferentiable.apply, x))
print(gradgradcheck(NotTwiceDifferentiable.apply, x, raise_exception=False))
gradgradcheck(NotTwiceDifferentiable.apply, x)
""",
    "second_input_and_second_output": """
from torch.autograd import gradcheck
class MulAdd(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b, a + b
    @staticmethod
    def backward(ctx, g_mul, g_add):
        a, b = ctx.saved_tensors
        return g_mul * b + g_add, g_mul * a       # forgets g_add for b
a = torch.tensor([1., 2.], dtype=torch.double, requires_grad=True)
b = torch.tensor([3., 4., 5.], dtype=torch.double).reshape(3, 1).requires_grad_()
print(gradcheck(MulAdd.apply, (a, b), raise_exception=False))
gradcheck(MulAdd.apply, (a, b))
""",
    "float32_inputs_warn": """
x = torch.tensor([1., 2.], requires_grad=True)
print(torch.autograd.gradcheck(lambda t: t * 2, x, eps=1e-3, atol=1e-2))
print(torch.autograd.gradcheck(lambda t: t ** 3, x, raise_exception=False))
torch.autograd.gradcheck(lambda t: t ** 3, x)
""",
    "gradgradcheck_with_grad_outputs": """
x = torch.tensor([0.5, 1.5], dtype=torch.double, requires_grad=True)
v = torch.tensor([1., -2.], dtype=torch.double, requires_grad=True)
print(torch.autograd.gradgradcheck(lambda t: (t * t).exp(), (x,), (v,)))
print(torch.autograd.gradgradcheck(lambda t: t.tanh(), x, v))
""",
    "nothing_requires_grad": """
torch.autograd.gradcheck(lambda t: t * 2, (torch.tensor([1.], dtype=torch.double),))
""",
    "not_multiplied_by_grad_output": """
class Ignores(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2
    @staticmethod
    def backward(ctx, g):
        return torch.ones_like(g) * 2
x = torch.tensor([1., 2.], dtype=torch.double, requires_grad=True)
torch.autograd.gradcheck(Ignores.apply, x)
""",
    "linear_function_from_extending_pytorch": """
from torch.autograd import Function, gradcheck
class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output
    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias
torch.manual_seed(0)
input = (torch.randn(6, 5, dtype=torch.double, requires_grad=True),
         torch.randn(4, 5, dtype=torch.double, requires_grad=True))
test = gradcheck(LinearFunction.apply, input, eps=1e-6, atol=1e-4)
print(test)
bias = torch.randn(4, dtype=torch.double, requires_grad=True)
print(gradcheck(LinearFunction.apply, input + (bias,)))
""",
})
_add("double_backward_tutorial", {
    "save_input": """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**2
    @staticmethod
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        return grad_out * 2 * x
x = torch.rand(3, 3, requires_grad=True, dtype=torch.double)
print(torch.autograd.gradcheck(Square.apply, x), torch.autograd.gradgradcheck(Square.apply, x))
""",
    "save_output": """
class Exp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        result = torch.exp(x)
        ctx.save_for_backward(result)
        return result
    @staticmethod
    def backward(ctx, grad_out):
        result, = ctx.saved_tensors
        return result * grad_out
x = torch.tensor(1., requires_grad=True, dtype=torch.double).clone()
print(torch.autograd.gradcheck(Exp.apply, x), torch.autograd.gradgradcheck(Exp.apply, x))
""",
    "save_intermediate_results": _SINH + """
def sinh(x):
    return Sinh.apply(x)[0]
x = torch.rand(3, 3, requires_grad=True, dtype=torch.double)
print(torch.autograd.gradcheck(sinh, x), torch.autograd.gradgradcheck(sinh, x))
""",
    "backward_is_a_function": """
def cube_forward(x):
    return x**3
def cube_backward(grad_out, x):
    return grad_out * 3 * x**2
def cube_backward_backward(grad_out, sav_grad_out, x):
    return grad_out * sav_grad_out * 6 * x
def cube_backward_backward_grad_out(grad_out, x):
    return grad_out * 3 * x**2
class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return cube_forward(x)
    @staticmethod
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        return CubeBackward.apply(grad_out, x)
class CubeBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, grad_out, x):
        ctx.save_for_backward(x, grad_out)
        return cube_backward(grad_out, x)
    @staticmethod
    def backward(ctx, grad_out):
        x, sav_grad_out = ctx.saved_tensors
        dx = cube_backward_backward(grad_out, sav_grad_out, x)
        dgrad_out = cube_backward_backward_grad_out(grad_out, x)
        return dgrad_out, dx
x = torch.tensor(2., requires_grad=True, dtype=torch.double)
print(torch.autograd.gradcheck(Cube.apply, x), torch.autograd.gradgradcheck(Cube.apply, x))
g, = torch.autograd.grad(Cube.apply(x), x, create_graph=True)
print(g, g.grad_fn)
""",
})

# ----------------------------------------------------------------------------------------
# devices, as a PyTorch built without CUDA has them
# ----------------------------------------------------------------------------------------
_add("device", {
    "tutorial_lines": """
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print(device, repr(device), device.type, device.index)
device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
print(f"Using {device} device")
mps = "mps" if torch.backends.mps.is_available() else "cpu"
x = torch.ones(2, 3, device=device, dtype=torch.float)
w = torch.randn(3, 2, device=device, requires_grad=True)
b = torch.zeros(2, device=torch.device(device), requires_grad=True)
y = (x @ w + b).sum()
y.backward()
print(x.device, w.grad.device, x.to(device) is x, x.cpu() is x, x.is_cuda, x.is_cpu)
print(torch.get_default_device(), torch.cuda.device_count(), torch.accelerator.device_count())
""",
    "factories_take_device": """
d = torch.device("cpu")
for t in (torch.tensor([1., 2.], device=d), torch.zeros(2, device="cpu"), torch.ones(2, device=d),
          torch.empty(2, device=d).zero_(), torch.full((2,), 3., device=d), torch.eye(2, device=d),
          torch.arange(3, device=d), torch.linspace(0, 1, 3, device=d), torch.rand(2, device=d).shape,
          torch.randn(2, device="cpu:0").shape, torch.zeros_like(torch.ones(2), device=d),
          torch.ones_like(torch.ones(2), device=d), torch.full_like(torch.ones(2), 7, device=d),
          torch.rand_like(torch.ones(2), device=d).shape, torch.ones(2).new_zeros(3),
          torch.ones(2, dtype=torch.float64).new_ones((2, 2)), torch.ones(2).new_full((2,), 5.)):
    print(t)
""",
    "to_device_and_dtype": """
x = torch.tensor([1., 2.], requires_grad=True)
print(x.to("cpu") is x, x.to(torch.device("cpu")) is x, x.to("cpu", torch.float64))
print(x.to(device="cpu", dtype=torch.float64), x.to(torch.ones(1, dtype=torch.float64)))
print(x.to("cpu", non_blocking=True) is x, x.to("cpu:0") is x, x.get_device())
for y in (x.to("cpu:0"), x.to(torch.device("cpu", 0)), x.to("cpu", copy=True), x.to(copy=True)):
    print(y, y is x, y.grad_fn.next_functions)
torch.set_default_device("cpu:0")
print(torch.get_default_device())
torch.set_default_device(None)
y = x.to("cpu", torch.float64) * 2
y.sum().backward()
print(x.grad)
""",
    "device_objects": """
for d in (torch.device("cpu"), torch.device("cuda"), torch.device("cuda:1"), torch.device("cuda", 0),
          torch.device("cpu", 0), torch.device("mps"), torch.device(torch.device("cpu")),
          torch.device(type="cpu")):
    print(repr(d), str(d), d.type, d.index)
print(torch.device("cpu") == torch.device("cpu"), torch.device("cpu") == "cpu",
      torch.device("cpu") == torch.device("cpu", 0), len({torch.device("cpu"), torch.device("cpu")}))
print(torch.ones(1).device == torch.device("cpu"))
""",
    "cuda_factory": """
torch.zeros(2, device="cuda")
""",
    "cuda_tensor": """
torch.tensor([1., 2.], device=torch.device("cuda:0"))
""",
    "cuda_randn": """
torch.randn(2, 3, device="cuda")
""",
    "cuda_to": """
x = torch.ones(2)
x.to("cuda")
""",
    "cuda_to_with_dtype": """
torch.ones(2).to(dtype=torch.float64, device="cuda")
""",
    "cuda_method": """
torch.ones(2).cuda()
""",
    "cuda_current_device": """
print(torch.cuda.is_available(), torch.cuda.device_count(), torch.cuda.manual_seed(0))
torch.cuda.current_device()
""",
    "unknown_device": """
torch.zeros(2, device="gpu")
""",
    "unknown_device_object": """
torch.device("GPU")
""",
    "invalid_device_string": """
torch.device("cuda:x")
""",
    "device_index_twice": """
torch.device("cuda:0", 1)
""",
    "negative_index": """
torch.device("cpu", -1)
""",
    "device_from_an_int": """
torch.device(0)
""",
    "to_unknown_device": """
torch.ones(2).to("gpu")
""",
    "default_device": """
print(torch.get_default_device())
torch.set_default_device("cpu")
print(torch.get_default_device(), torch.zeros(1))
torch.set_default_device(None)
print(torch.get_default_device())
""",
    "default_device_cuda": """
try:
    torch.set_default_device("cuda")
    print("set")
    torch.zeros(2)
finally:
    torch.set_default_device(None)
""",
    "default_device_unknown": """
torch.set_default_device("gpu")
""",
    "more_device_names": """
x = torch.ones(2, 3)
print(torch.empty_like(x, device="cpu").shape, x.new_tensor([1, 2]), x.new_empty((2,)).shape)
print(torch.backends.mps.is_built(), torch.cuda.is_initialized(), torch.cuda.manual_seed_all(1))
print(torch.accelerator.current_accelerator(check_available=True), torch.cuda.empty_cache())
torch.cuda.synchronize()
""",
})

# ----------------------------------------------------------------------------------------
# saved-tensor hooks ("Hooks for autograd saved tensors"), torch.save and torch.load
# ----------------------------------------------------------------------------------------
_PRINTING_HOOKS = """
def pack_hook(x):
    print("Packing", x)
    return x
def unpack_hook(x):
    print("Unpacking", x)
    return x
"""
_add("saved_tensors_hooks", {
    "print_pack_and_unpack": _PRINTING_HOOKS + """
a = torch.ones(5, requires_grad=True)
b = torch.ones(5, requires_grad=True) * 2
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    y = a * b
    print("grad enabled while packing:", torch.is_grad_enabled())
y.sum().backward()
print(a.grad)
""",
    "order_of_saved_tensors": _PRINTING_HOOKS + """
x = torch.tensor([1., 2.], requires_grad=True)
w = torch.tensor([3., 4.], requires_grad=True)
M = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
N = torch.tensor([[5., 6.], [7., 8.]], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    for make in (lambda: x * w, lambda: x / w, lambda: x ** w, lambda: 2 ** x, lambda: x.exp(),
                 lambda: x.sin(), lambda: torch.maximum(x, w), lambda: M @ N, lambda: M.mv(x),
                 lambda: x.dot(w), lambda: x.max(), lambda: x.prod(), lambda: x.norm(),
                 lambda: x * 2, lambda: x + w, lambda: x.tanh(), lambda: x ** 2):
        out = make()
        print(out.grad_fn.name())
        out.sum().backward()
""",
    "scale_down_and_back": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(lambda t: t * 4, lambda t: t / 4):
    y = torch.pow(x, 2)
y.sum().backward()
print(x.grad, x.grad.equal(2 * x))
""",
    "saved_attributes_see_unpack": _PRINTING_HOOKS + """
x = torch.tensor([1., 2.], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    y = x.pow(2)
    z = x.exp()
print(y.grad_fn._saved_self, z.grad_fn._saved_result)
print(y.grad_fn._saved_self.requires_grad, y.grad_fn._saved_self.is_leaf)
y.sum().backward()
y.grad_fn._saved_self
""",
    "unpack_returns_other_values": """
x = torch.tensor([1., 2.], requires_grad=True)
def pack(t):
    r = t * t
    print("packed", r)
    return r
with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t.sqrt()):
    y = x * x
print(y.grad_fn._saved_self, y.grad_fn._saved_other)
y.sum().backward()
print(x.grad)
""",
    "storage_list": """
storage = []
def pack(x):
    storage.append(x)
    return len(storage) - 1
def unpack(i):
    print("unpack", i)
    return storage[i]
x = torch.tensor([1., 2.], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    y = x.sin() * x.cos()
    print(len(storage))
y.sum().backward()
print(x.grad)
""",
    "no_version_check_with_hooks": """
x = torch.tensor([1., 2.], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
    y = x * x
with torch.no_grad():
    x.add_(1)
y.sum().backward()
print(x.grad)
""",
    "unpack_must_return_a_tensor": """
x = torch.tensor([1., 2.], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(lambda t: 5, lambda t: t):
    y = x.sin()
y.sum().backward()
""",
    "nested_hooks": """
x = torch.tensor([1., 2.], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(lambda t: print("outer") or t, lambda t: t):
    with torch.autograd.graph.saved_tensors_hooks(lambda t: print("inner") or t,
                                                   lambda t: print("inner unpack") or t):
        y = x.sin()
    y2 = x.cos()
z = x.sin()
(y + y2 + z).sum().backward()
print(x.grad)
""",
    "double_backward_through_hooks": _PRINTING_HOOKS + """
x = torch.tensor([1., 2.], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    y = (x ** 3).sum()
g, = torch.autograd.grad(y, x, create_graph=True)
print(g)
g.sum().backward()
print(x.grad)
""",
    "custom_function_with_hooks": _PRINTING_HOOKS + """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2
    @staticmethod
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        return grad_out * 2 * x
x = torch.tensor([1., 2.], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    y = Square.apply(x)
y.sum().backward()
print(x.grad)
""",
    "save_on_cpu": """
x = torch.tensor([1., 2.], requires_grad=True)
with torch.autograd.graph.save_on_cpu():
    y = x.exp() * x
print(y.grad_fn._saved_self, y.grad_fn._saved_other)
y.sum().backward()
print(x.grad)
with torch.autograd.graph.save_on_cpu(pin_memory=True):
    y = x.sin()
y.sum().backward()
print(x.grad)
""",
    "disable_saved_tensors_hooks": """
with torch.autograd.graph.disable_saved_tensors_hooks("saved tensors hooks are off here"):
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        pass
""",
    "save_to_disk": """
import os, tempfile, uuid
tmp_dir = tempfile.mkdtemp()
class SelfDeletingTempFile():
    def __init__(self):
        self.name = os.path.join(tmp_dir, str(uuid.uuid4()))
    def __del__(self):
        os.remove(self.name)
def pack_hook(tensor):
    temp_file = SelfDeletingTempFile()
    torch.save(tensor, temp_file.name)
    return temp_file
def unpack_hook(temp_file):
    return torch.load(temp_file.name, weights_only=True)
x = torch.tensor([1., 2., 3.], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    y = x.pow(2).sin()
print(len(os.listdir(tmp_dir)))
y.sum().backward()
print(x.grad)
del y
print(len(os.listdir(tmp_dir)))
""",
})
_add("save_load", {
    "tensors_and_containers": """
import io, os, tempfile
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
y.retain_grad()
y.sum().backward()
path = os.path.join(tempfile.mkdtemp(), "t.pt")
torch.save(x, path)
a = torch.load(path)
print(a, a.requires_grad, a.is_leaf, a.grad)
torch.save(y, path)
b = torch.load(path)
print(b, b.requires_grad, b.is_leaf, b.grad_fn)
buf = io.BytesIO()
torch.save({"w": x, "list": [y.detach(), torch.arange(3)], "n": 3, "s": "hi",
            "t": (1, torch.ones(1, dtype=torch.float64)), "scalar": torch.tensor(3.),
            "view": torch.ones(2, 3)[:, 1]}, buf)
buf.seek(0)
print(torch.load(buf))
buf.seek(0)
print(torch.load(buf, weights_only=False, map_location="cpu"))
with open(path, "wb") as f:
    torch.save([torch.tensor(3.), torch.tensor([True, False])], f)
with open(path, "rb") as f:
    print(torch.load(f))
""",
    "weights_only_refuses_other_objects": """
import io, fractions
buf = io.BytesIO()
torch.save({"f": fractions.Fraction(1, 2)}, buf)
buf.seek(0)
print(torch.load(buf, weights_only=False))
buf.seek(0)
torch.load(buf)
""",
    "deepcopy": """
import copy
x = torch.tensor([1., 2.], requires_grad=True)
(x * x).sum().backward()
c = copy.deepcopy(x)
print(c, c.grad, c.grad is x.grad, c is x)
copy.deepcopy(x * 2)
""",
})

# ----------------------------------------------------------------------------------------
# the small API of the tutorials: clamp, all/any, argmax, softmax, movedim, equal, ...
# ----------------------------------------------------------------------------------------
_SMALL = """
x = torch.tensor([-1., 0., 0.5, 1., 2.], requires_grad=True)
M = torch.tensor([[1., -2., 3.], [0.5, 0., -1.]], requires_grad=True)
lo = torch.tensor([0., 0., 0., 0., 0.])
t = {expr}
print(t)
if isinstance(t, torch.Tensor) and t.requires_grad:
    fn = t.grad_fn
    print(fn.name(), [f.name() if f is not None else None for f, _ in fn.next_functions])
    t.backward(torch.ones_like(t) * torch.arange(1., t.numel() + 1).reshape(t.shape))
    print(x.grad, M.grad)
"""
SMALL_EXPRESSIONS = [
    "x.clamp(0, 1)", "x.clamp(min=0)", "x.clamp(max=1)", "torch.clamp(x, min=0.)",
    "torch.clamp(x, -0.5, 0.5)", "x.clip(0, 1)", "torch.clip(x, max=1)", "x.clamp(1, 0)",
    "x.clamp(min=lo)", "x.clamp(min=lo, max=lo + 1)", "x.clamp(max=lo)",
    "x.detach().clamp_(0, 1)", "x.clone().clamp_(min=0)", "x.clone().clip_(max=0.5)",
    "torch.tensor([1, 5]).clamp(0, 2)", "torch.tensor([1, 5]).clamp(0.5, 2)",
    "x.clamp()", "torch.clamp(x)", "x.clamp_(0, 1)",
    "torch.all(x > 0)", "torch.any(x > 0)", "(x > 0).all()", "(M > 0).any(dim=1)",
    "M.all(dim=0)", "M.any()", "torch.all(M, 1)", "torch.tensor([]).all()", "M.all(dim=2)",
    "M.any(1, keepdim=True)", "M.any(dim=-3)",
    "torch.matmul(input=M, other=x[:3])", "M.matmul(other=x[:3])", "torch.matmul(M, x[:3])",
    "M.movedim(0, 1)", "torch.movedim(M, 1, 0)", "torch.zeros(2, 3, 4).movedim((0, 1), (2, 0)).shape",
    "M.movedim(0, 2)", "M.movedim(-1, 0)",
    "x.argmax()", "M.argmax(dim=1)", "M.argmin(1, keepdim=True)", "torch.argmax(M)",
    "torch.argmin(M, dim=0)", "M.argmax(dim=2)", "M.argmax(dim=-3)", "torch.tensor(3.).argmax()",
    "torch.tensor([1., 3., 3.]).argmax()", "M.argmax(keepdim=True)",
    "x.softmax(0)", "x.softmax(dim=0)", "torch.softmax(M, 1)", "torch.softmax(M, dim=-1)",
    "M.log_softmax(1)", "torch.log_softmax(M, dim=0)", "x.softmax()", "x.softmax(1)",
    "M.softmax(dim=0, dtype=torch.float64)", "torch.softmax(M * 100, 1)", "M.log_softmax(-3)",
    "x.equal(x.detach())", "torch.equal(M, M * 1)", "x.equal(x[:2])", "M.equal(M.t())",
    "x[:3].expand_as(M)", "x[:2].reshape(2, 1).expand_as(M)",
    "torch.rand_like(M).shape", "torch.randn_like(x).dtype", "torch.zeros_like(M, dtype=torch.float64)",
]
_add("small_api", {e: _SMALL.format(expr=e) for e in SMALL_EXPRESSIONS})

_FUNCTIONAL = """
import torch.nn.functional as F
x = torch.tensor([-1., 0.5, 2.], requires_grad=True)
M = torch.tensor([[1., -2., 3.], [0.5, 0., -1.]], requires_grad=True)
W = torch.tensor([[0.5, -1., 2.], [1., 1., 1.]], requires_grad=True)
b = torch.tensor([0.1, -0.2], requires_grad=True)
p = torch.tensor([0.2, 0.6, 0.9], requires_grad=True)
y = torch.tensor([0., 1., 1.])
labels = torch.tensor([0, 2])
t = {expr}
print(t)
if isinstance(t, torch.Tensor) and t.requires_grad:
    fn = t.grad_fn
    print(fn.name(), [f.name() if f is not None else None for f, _ in fn.next_functions])
    t.backward(torch.ones_like(t) * torch.arange(1., t.numel() + 1).reshape(t.shape))
    for name, v in (("x", x), ("M", M), ("W", W), ("b", b), ("p", p)):
        if v.grad is not None:
            print(name, v.grad)
"""
FUNCTIONAL_EXPRESSIONS = [
    "F.relu(x)", "F.sigmoid(x)", "F.tanh(x)", "F.softmax(M, dim=1)", "F.softmax(x)",
    "F.log_softmax(M, 1)", "F.log_softmax(M)", "F.softmax(M, 1, dtype=torch.float64)",
    "F.linear(M, W)", "F.linear(M, W, b)", "F.linear(M, torch.ones(4, 3))",
    "F.linear(M, torch.ones(4, 3), torch.ones(4))",
    "F.mse_loss(x, y)", "F.mse_loss(x, y, reduction='sum')", "F.mse_loss(x, y, reduction='none')",
    "F.mse_loss(x, y, reduction='avg')", "F.mse_loss(x, torch.ones(2))", "F.mse_loss(x, torch.ones(1))",
    "F.mse_loss(x, torch.tensor([1, 2, 3]))", "F.mse_loss(M, W)",
    "F.cross_entropy(M, labels)", "F.cross_entropy(M, labels, reduction='sum')",
    "F.cross_entropy(M, labels, reduction='none')", "F.cross_entropy(M, torch.tensor([0., 2.]))",
    "F.cross_entropy(M, torch.tensor([0, 2], dtype=torch.int32))", "F.cross_entropy(M, torch.tensor([0, 3]))",
    "F.cross_entropy(x, torch.tensor(1))", "F.cross_entropy(M, torch.tensor([0, 1, 2]))",
    "F.cross_entropy(M, torch.tensor([0, -100]))", "F.cross_entropy(M, torch.tensor([0, -100]), reduction='none')",
    "F.nll_loss(M.log_softmax(1), labels)",
    "F.binary_cross_entropy(p, y)", "F.binary_cross_entropy(x.sigmoid(), y, reduction='none')",
    "F.binary_cross_entropy(x.sigmoid(), y, reduction='sum')", "F.binary_cross_entropy(p, torch.tensor([0, 1, 1]))",
    "F.binary_cross_entropy(p, torch.tensor([0., 1.]))", "F.binary_cross_entropy(torch.tensor([0., 1.], requires_grad=True), torch.tensor([1., 0.]))",
    "F.binary_cross_entropy_with_logits(x, y)", "F.binary_cross_entropy_with_logits(x, y, reduction='sum')",
    "F.binary_cross_entropy_with_logits(x, y, reduction='none')", "F.binary_cross_entropy_with_logits(x, torch.tensor([0, 1, 1]))",
    "F.binary_cross_entropy_with_logits(x * 50, y)",
]
_add("functional", {e: _FUNCTIONAL.format(expr=e) for e in FUNCTIONAL_EXPRESSIONS})
_add("functional_more", {
    "nn_functional_as_attribute": """
import torch.nn as nn
print(nn.functional.relu(torch.tensor([-1., 1.])), torch.nn.functional.softmax(torch.ones(2), 0))
""",
    "cross_entropy_double_backward": """
import torch.nn.functional as F
M = torch.tensor([[1., -2., 3.], [0.5, 0., -1.]], dtype=torch.float64, requires_grad=True)
print(torch.autograd.gradcheck(lambda m: F.cross_entropy(m, torch.tensor([0, 2])), M))
print(torch.autograd.gradgradcheck(lambda m: F.cross_entropy(m, torch.tensor([0, 2])), M))
print(torch.autograd.gradgradcheck(lambda m: F.mse_loss(m, torch.ones(2, 3, dtype=torch.float64)), M))
print(torch.autograd.gradgradcheck(lambda m: m.softmax(1), M))
print(torch.autograd.gradcheck(lambda m: F.binary_cross_entropy_with_logits(m, torch.ones(2, 3, dtype=torch.float64)), M))
print(torch.autograd.gradcheck(lambda m: m.clamp(-1.5, 1.5), M))
""",
    # linear folds a vector or a batch into one addmm (ViewBackward0, AddmmBackward0,
    # ViewBackward0) for a contiguous input and a one-row bias; else matmul, then add_
    "linear_graph_by_input_and_bias": """
import torch.nn.functional as F
def chain(node, depth=0):
    if node is not None:
        print("  " * depth + node.name(), getattr(node, "_saved_self_sym_sizes", ""))
        for f, _ in node.next_functions:
            chain(f, depth + 1)
W = torch.tensor([[1., 2., 3.], [4., 5., 6.], [-1., 0., 2.], [0.5, 1., 1.]], requires_grad=True)
for x in (torch.tensor([1., 2., 3.], requires_grad=True), torch.arange(12.).reshape(2, 2, 3),
          torch.arange(12.).reshape(2, 2, 3).transpose(0, 1).requires_grad_(),
          torch.arange(24.).reshape(2, 2, 2, 3).requires_grad_()):
    for b in (torch.tensor([1., -1., 2., 0.], requires_grad=True), torch.ones(1, 4),
              torch.tensor(2., requires_grad=True), torch.ones(2, 4)):
        try:
            y = F.linear(x, W, b)
        except RuntimeError as e:
            print(e)
            continue
        print(tuple(y.shape), y._version, y._base is not None)
        chain(y.grad_fn)
        g = torch.autograd.grad((y * y).sum(), (x, W) if x.requires_grad else W, create_graph=True)
        print(g)
        print(torch.autograd.grad(sum(t.sum() for t in g), W))
""",
    "linear_errors_in_addmm_order": """
import torch.nn.functional as F
W = torch.ones(4, 3)
for x, w, b in ((torch.ones(2, 3), W, torch.ones(4, dtype=torch.float64)),
                (torch.ones(2, 3), W.double(), torch.ones(4)),
                (torch.ones(2, 3, dtype=torch.float64), W, torch.ones(4)),
                (torch.ones(2, 3), W, torch.ones(2, 2, 4)), (torch.ones(3), W, torch.ones(2, 1)),
                (torch.ones(5, 2, 3), W, torch.ones(1, 1, 4)), (torch.ones(2, 3), W, torch.ones(3)),
                (torch.ones(3), W, torch.ones(2, 4)), (torch.ones(2, 3), torch.ones(4, 2), torch.ones(4)),
                (torch.ones(2, 3), torch.ones(4), torch.ones(4)), (torch.tensor(1.), W, None)):
    try:
        print(F.linear(x, w, b).shape)
    except RuntimeError as e:
        print(e)
""",
})

# ----------------------------------------------------------------------------------------
# digits: linspace bit for bit, integer powers rounded as PyTorch rounds them
# ----------------------------------------------------------------------------------------
_add("digits", {
    "linspace_grids": """
import math
for args in [(-math.pi, math.pi, 2000), (0, 10, 1000), (-3.7, 12.1, 777), (-1, 1, 101),
             (0.1, 0.9, 33), (5, -5, 1001), (0, 1, 5), (0, 1, 1), (2, 3, 0), (-2.5, 7.5, 10),
             (-math.pi, math.pi, 20000)]:
    for dt in (torch.float32, torch.float64, torch.int64):
        print(args, dt, torch.linspace(*args, dtype=dt).tolist())   # repr: every bit shows
print(torch.linspace(0, 1, 5, requires_grad=True), torch.linspace(-1, 1, steps=3, device="cpu"))
""",
    "linspace_negative_steps": """
torch.linspace(0, 1, -1)
""",
    "polynomial_tutorial_inputs": """
import math
x = torch.linspace(-math.pi, math.pi, 2000)
p = x.unsqueeze(-1).pow(torch.tensor([1, 2, 3]))
print(x[::250].tolist(), (x ** 2)[::250].tolist(), (x ** 3)[::250].tolist(), p[::500].tolist())
""",
    "integer_powers": """
x = torch.linspace(0.01, 3.14159, 2000)
for e in (2, 3, 2.0, 3.0, -2, -2.0, -0.5, -1):
    print(e, (x ** e).tolist()[::37], torch.pow(x, e).tolist()[::101], x.pow(e).tolist()[::113])
d = torch.linspace(-3., 3., 500, dtype=torch.float64)
print((d ** 3).tolist(), torch.pow(d, 3).tolist()[:5], d.pow(-2).tolist()[:5])
i = torch.arange(5)
print(i ** 3, i ** 2)
""",
})

# ----------------------------------------------------------------------------------------
# PyTorch's autograd tutorials, as they are written (README: "What runs unchanged").
# Float32 results that depend on summation order (BLAS, sum) are printed rounded.
# ----------------------------------------------------------------------------------------
_add("tutorial", {
    "extending_pytorch_setup_context": """from torch.autograd import Function, gradcheck
class LinearFunction(Function):
    @staticmethod
    def forward(input, weight, bias):
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output
    @staticmethod
    def setup_context(ctx, inputs, output):
        input, weight, bias = inputs
        ctx.save_for_backward(input, weight, bias)
    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias
class MulConstant(Function):
    @staticmethod
    def forward(tensor, constant):
        return tensor * constant
    @staticmethod
    def setup_context(ctx, inputs, output):
        tensor, constant = inputs
        ctx.constant = constant
    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None
class MyCube(torch.autograd.Function):
    @staticmethod
    def forward(x):
        result = x ** 3
        dx = 3 * x ** 2
        return result, dx
    @staticmethod
    def setup_context(ctx, inputs, output):
        x, = inputs
        result, dx = output
        ctx.save_for_backward(x, dx)
    @staticmethod
    def backward(ctx, grad_output, grad_dx):
        x, dx = ctx.saved_tensors
        result = grad_output * dx + grad_dx * 6 * x
        return result
def my_cube(x):
    result, dx = MyCube.apply(x)
    return result
torch.manual_seed(0)
input = (torch.randn(20, 20, dtype=torch.double, requires_grad=True), torch.randn(30, 20, dtype=torch.double, requires_grad=True), torch.randn(30, dtype=torch.double, requires_grad=True))
test = gradcheck(LinearFunction.apply, input, eps=1e-6, atol=1e-4)
print(test)
x = torch.randn(3, dtype=torch.double, requires_grad=True)
print(gradcheck(lambda t: MulConstant.apply(t, 2.5), x), MulConstant.apply(x, 2.5).grad_fn)
print(gradcheck(my_cube, x), torch.autograd.gradgradcheck(my_cube, x))
""",
    "autograd_basics": """
torch.manual_seed(0)
x = torch.ones(5)  # input tensor
y = torch.zeros(3)  # expected output
w = torch.randn(5, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
z = torch.matmul(x, w)+b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
print(f"Gradient function for z = {z.grad_fn}")
print(f"Gradient function for loss = {loss.grad_fn}")
loss.backward()
print(w.grad.round(decimals=4))
print(b.grad.round(decimals=4))
z = torch.matmul(x, w)+b
print(z.requires_grad)
with torch.no_grad():
    z = torch.matmul(x, w)+b
print(z.requires_grad)
z = torch.matmul(x, w)+b
z_det = z.detach()
print(z_det.requires_grad)
inp = torch.eye(4, 5, requires_grad=True)
out = (inp+1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"First call\n{inp.grad}")
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nSecond call\n{inp.grad}")
inp.grad.zero_()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nCall after zeroing gradients\n{inp.grad}")
""",
    "gentle_introduction_differentiation": """
a = torch.tensor([2., 3.], requires_grad=True)
b = torch.tensor([6., 4.], requires_grad=True)
Q = 3*a**3 - b**2
external_grad = torch.tensor([1., 1.])
Q.backward(gradient=external_grad)
print(9*a**2 == a.grad)
print(-2*b == b.grad)
torch.manual_seed(0)
x = torch.rand(5, 5)
y = torch.rand(5, 5)
z = torch.rand((5, 5), requires_grad=True)
a = x + y
print(f"Does `a` require gradients?: {a.requires_grad}")
b = x + z
print(f"Does `b` require gradients?: {b.requires_grad}")
""",
    "polynomial_autograd": """
import math
dtype = torch.float
device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
print(f"Using {device} device")
torch.set_default_device(device)
torch.manual_seed(0)
x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
y = torch.sin(x)
a = torch.randn((), dtype=dtype, requires_grad=True)
b = torch.randn((), dtype=dtype, requires_grad=True)
c = torch.randn((), dtype=dtype, requires_grad=True)
d = torch.randn((), dtype=dtype, requires_grad=True)
learning_rate = 1e-6
for t in range(2000):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, round(loss.item(), 1))
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None
print(f'Result: y = {a.item():.3f} + {b.item():.3f} x + {c.item():.3f} x^2 + {d.item():.3f} x^3')
torch.set_default_device(None)
""",
    "polynomial_custom_function": """
import math
class LegendrePolynomial3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)
    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)
dtype = torch.float
device = torch.device("cpu")
x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
y = torch.sin(x)
a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)
learning_rate = 5e-6
for t in range(2000):
    P3 = LegendrePolynomial3.apply
    y_pred = a + b * P3(c + d * x)
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, round(loss.item(), 2))
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None
print(f'Result: y = {a.item():.3f} + {b.item():.3f} * P3({c.item():.3f} + {d.item():.3f} x)')
""",
    "polynomial_tensors_by_hand": """
import math
dtype = torch.float
device = torch.device("cpu")
x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
y = torch.sin(x)
torch.manual_seed(0)
a = torch.randn((), device=device, dtype=dtype)
b = torch.randn((), device=device, dtype=dtype)
c = torch.randn((), device=device, dtype=dtype)
d = torch.randn((), device=device, dtype=dtype)
learning_rate = 1e-6
for t in range(2000):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = (y_pred - y).pow(2).sum().item()
    if t % 100 == 99:
        print(t, round(loss, 1))
    grad_y_pred = 2.0 * (y_pred - y)
    grad_a = grad_y_pred.sum()
    grad_b = (grad_y_pred * x).sum()
    grad_c = (grad_y_pred * x ** 2).sum()
    grad_d = (grad_y_pred * x ** 3).sum()
    a -= learning_rate * grad_a
    b -= learning_rate * grad_b
    c -= learning_rate * grad_c
    d -= learning_rate * grad_d
print(f'Result: y = {a.item():.3f} + {b.item():.3f} x + {c.item():.3f} x^2 + {d.item():.3f} x^3')
""",
})

# ----------------------------------------------------------------------------------------
# Found by the random programs (tests/support/random_programs.py): each once a silent difference
# ----------------------------------------------------------------------------------------
_add("found", {
    "index_out_of_bounds_names_the_place_in_the_key": """
u = torch.zeros(2, 3, 4)
m = torch.ones(2, 3, dtype=torch.bool)
e = torch.zeros(2, 2, 0)
for key in ("..., 5", "m, 5", "None, ..., 5", "..., None, 5", "0, ..., None, 9", "None, 5", ":, 5"):
    for code in (f"u[{key}]", f"u[{key}] = 1."):
        try:
            exec(code)
        except IndexError as err:
            print(code, err)
try:
    e[..., 0] = 1.5
except IndexError as err:
    print(err)
""",
    "autograd_grad_calls_leaf_hooks": """
x = torch.tensor([1., 2.], requires_grad=True)
x.register_hook(lambda g: g * 2)
print(torch.autograd.grad((x * x).sum(), x))
""",
    "autograd_grad_calls_the_hooks_of_an_output_leaf": """
x = torch.tensor([1., 2.], requires_grad=True)
x.register_hook(lambda g: print("hook", g))
print(torch.autograd.grad(x, [x], torch.tensor([3., 4.])))
""",
    "autograd_grad_runs_only_up_to_its_inputs": """
x = torch.tensor(2., requires_grad=True)
h = x ** 2
h.register_hook(lambda g: print("h sees", g))
x.register_hook(lambda g: print("x sees", g))
y = h + 1
print(torch.autograd.grad(y, h))
y.backward()
print(x.grad)
""",
    "autograd_grad_sends_nothing_past_its_inputs": """
x = torch.tensor([1., 2.], requires_grad=True)
w = torch.tensor([3., 4.], requires_grad=True)
x.register_hook(lambda g: print("x hook", g))
w.register_hook(lambda g: print("w hook", g))
h = x * w
h.register_hook(lambda g: print("h hook", g))
y = (h * h).sum()
print(torch.autograd.grad(y, w, retain_graph=True))
print(torch.autograd.grad(y, h, retain_graph=True))
""",
    "autograd_grad_of_a_used_output_after_backward": """
x = torch.tensor([1.7, 1.0, -1.8], requires_grad=True)
t = x.max(dim=-1).values.reshape(1)
t.backward()
print(torch.autograd.grad(t, [t]))
""",
    "backward_inputs_leaf_hook_once": """
x = torch.tensor([1., 2.], requires_grad=True)
x.register_hook(lambda g: print("hook", g) or g * 3)
(x * x).sum().backward(inputs=[x])
print(x.grad)
""",
    "create_graph_leaf_hook_gets_a_tensor": """
x = torch.tensor(2., dtype=torch.float64, requires_grad=True)
x.register_hook(lambda g: print(g.tolist(), g.requires_grad))
(x ** 2).backward(create_graph=True)
print(x.grad)
""",
    "grad_of_create_graph_stays_in_its_graph_when_added_to": """
x = torch.tensor([1.9, -0.8], requires_grad=True)
x.tanh().backward(torch.tensor([0.4, -0.5]), create_graph=True)
x.backward(torch.tensor([1.5, 0.5]))
print(x.grad)
""",
    "retain_grad_under_create_graph": """
x = torch.tensor([-2.0, 1.1], requires_grad=True)
h = (x ** 2).sum()
h.retain_grad()
(h * x).sum().backward(create_graph=True)
print(h.grad, x.grad)
""",
    "relu_then_log_has_zero_gradient_not_nan": """
x = torch.tensor([-1.8, -1.0, 2.], requires_grad=True)
torch.log(x.relu()).backward(torch.tensor([1.2, -0.2, 1.]))
print(x.grad)
x.grad = None
torch.log(x.relu()).backward(torch.tensor([1.2, -0.2, 1.]), create_graph=True)
print(x.grad)
""",
    "max_over_dim_of_inf_gradient": """
b = torch.tensor([[1., 0.], [3., 0.]], requires_grad=True)
(1 / b.max(1).values.sub(1)).sum().backward()
print(b.grad)
""",
    "index_frees_its_saved_index": """
a = torch.tensor([[0.2, 1.7], [0.3, -1.5]], dtype=torch.float64, requires_grad=True)
t = a[[1, 0, 1]]
print(torch.autograd.grad(t, [a], torch.ones(3, 2, dtype=torch.float64)))
t.backward(torch.ones(3, 2, dtype=torch.float64))
""",
    "sub_alpha_scales_after_promotion": """
t = torch.tensor([1.3, 0.7]).log()
a = torch.tensor([0.4], dtype=torch.float64, requires_grad=True)
print(a.sub(t, alpha=0.5), a.add(t, alpha=3))
""",
    "no_numpy_warnings": """
a = torch.tensor([[1.5, 0.0], [-1.0, 0.0]])
a.div_(a)
print(a, torch.tensor([float('inf')]) - torch.tensor([float('inf')]), torch.tensor([float('inf')]).sin())
""",
    "empty_reductions": """
for f in (lambda: torch.ones(2, 0).min(1), lambda: torch.ones(2, 0).max(-1), lambda: torch.ones(0).max()):
    try:
        f()
    except Exception as e:
        print(type(e).__name__, e)
""",
})
_add("found_values", {
    "square_keeps_its_second_derivative_in_a_graph": """
a = torch.tensor(-1.6, requires_grad=True)
h, = torch.autograd.grad(a ** 2.0, [a], grad_outputs=torch.tensor(1.2), create_graph=True)
print(h)
h2, = torch.autograd.grad(h.add(h, alpha=2), [a], create_graph=True)
print(h2, h2.requires_grad)
h3, = torch.autograd.grad(h2, [a], create_graph=True)
print(h3, h3.requires_grad)
b = torch.tensor([-0.5, 1.9], requires_grad=True)
hb, = torch.autograd.grad(b ** 2, [b], torch.tensor([-1.6, 1.2]), create_graph=True)
hb.backward(torch.tensor([-0.6, 1.4]), create_graph=True)
print(b.grad)
""",
    "relu_keeps_minus_zero_and_passes_nan_gradients": """
a = torch.tensor([[0.1, 1.5, -0.7], [-0.9, -1.5, 0.0]], dtype=torch.float64)
print(1 / torch.neg(a).relu())
x = torch.tensor([-0.0, 0.0, -2., 3., float('nan')], requires_grad=True)
y = x.relu()
print(y)
y.sum().backward()
print(x.grad)
""",
    "pow_of_tensors_at_zero": """
a = torch.tensor([-0.7, 0.0, 2.0], dtype=torch.float64, requires_grad=True)
(a ** a).backward(torch.tensor([-1.3, 0.1, -1.9], dtype=torch.float64))
print(a.grad)
a.grad = None
g, = torch.autograd.grad(a ** a, a, torch.ones(3, dtype=torch.float64), create_graph=True)
print(g.detach())
""",
    "min_of_nan_sends_the_gradient_to_the_nans": """
a = torch.tensor([[-0.6, 0.9]], requires_grad=True)
t = a ** a
print(torch.autograd.grad(t.min(), [t]))
""",
    "maximum_ties_nan_and_mixed_dtypes": """
a = torch.tensor([1.0, float('nan'), 3.0], requires_grad=True)
b = torch.tensor([1.0, 2.0, float('nan')], requires_grad=True)
torch.maximum(a, b).sum().backward()
print(a.grad, b.grad)
c = torch.tensor(1.6, dtype=torch.float64, requires_grad=True)
d = torch.tensor([[1.6, 0.2]], requires_grad=True)
torch.maximum(c, d).sum().backward()
print(c.grad, d.grad)
""",
    "gradients_in_the_dtype_of_their_tensor": """
a = torch.tensor(1.9, dtype=torch.float64, requires_grad=True)
b = torch.tensor([[1.5]], requires_grad=True)
t = b.sub(a, alpha=0.5)
t.backward(create_graph=True)
print(a.grad.dtype, b.grad.dtype)
x = torch.tensor(-0.8, requires_grad=True)
y = torch.tensor(1.8, dtype=torch.float64, requires_grad=True)
h = x.add(x, alpha=2)
h.retain_grad()
h.register_hook(lambda g: print("hook", g.dtype))
(h / y).backward()
print(h.grad, x.grad, y.grad)
w = torch.tensor([0.2, 1.1], requires_grad=True)
v = torch.tensor([[-0.6], [0.3]], dtype=torch.float64, requires_grad=True)
print(torch.autograd.grad(v + w, [w, v], torch.ones(2, 2, dtype=torch.float64), create_graph=True))
""",
    "x_over_x_has_exactly_zero_gradient": """
a = torch.tensor([[-1.6], [0.9], [-1.8]], requires_grad=True)
g, = torch.autograd.grad(a / a, [a], torch.tensor([[0.3], [1.6], [1.8]]))
print(g, torch.sqrt(g))
""",
    "half_powers_are_sqrt": """
a = torch.tensor([float('-inf'), 4.0, 0.0, float('inf')])
print(a ** 0.5, a ** -0.5)
""",
    "where_of_inf_gradient": """
a = torch.tensor([0.0, 0.9, -1.9], requires_grad=True)
t = torch.log(torch.where(a > 0, a, a))
print(torch.autograd.grad(t, [a], torch.tensor([1.7, 0.7, -1.0]), create_graph=True)[0].detach())
""",
    "mean_of_nothing_is_nan": """
a = torch.tensor([[-1.7, -0.6]], requires_grad=True)
print(a[a > 0].mean())
""",
    "relu_second_derivative_graph": """
a = torch.tensor([-1.0, 1.3], dtype=torch.float64, requires_grad=True)
a.relu().sum().backward(create_graph=True)
print(a.grad.requires_grad, a.grad.grad_fn.name())
""",
})

# ----------------------------------------------------------------------------------------
# Views and in-place changes: CopySlices on the base, AsStridedBackward0 on the views
# ----------------------------------------------------------------------------------------
_add("views_inplace", {
    "a_view_sees_its_base_change": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
a = x * 1
v = a[0]
a.mul_(10)
print(v.grad_fn, v.requires_grad)
v.backward()
print(x.grad)
""",
    "inplace_through_a_view": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
w = torch.tensor([2., 3.], requires_grad=True)
a = x.clone()
v = a[1:]
v.mul_(w)
print(a.grad_fn.name(), v.grad_fn, a, v)
(a * a).sum().backward()
print(x.grad, w.grad)
""",
    "inplace_through_a_view_of_a_tensor_without_grad": """
a = torch.tensor([[1.8, -1.2], [-1.4, 1.3]])
w = torch.tensor([-1.9, 0.7], requires_grad=True)
t = a.transpose(1, -1)
t.div_(w)
print(a.requires_grad, a.grad_fn.name(), t.grad_fn)
a.sum().backward()
print(w.grad)
""",
    "views_of_a_leaf_changed_under_no_grad": """
x = torch.tensor([-1.9, 0.5], requires_grad=True)
e = x.expand(3, -1)
s = x[..., 0]
with torch.no_grad():
    x.zero_()
print(e.grad_fn, s.grad_fn)
e.sum().backward()
print(x.grad)
""",
    "views_of_a_leaf_changed_through_detach": """
x = torch.tensor([[-1.1], [-1.0]], requires_grad=True)
s = x[..., 0]
x.detach().zero_()
print(s.grad_fn)
""",
    "setitem_nodes": """
for key, value in (("...", "1.5"), ("0", "1.5"), ("slice(0, 2)", "torch.tensor([1., 2.])"),
                   ("slice(None)", "torch.tensor([1., 2., 3.])"), ("slice(None)", "torch.tensor(2.)"),
                   ("[0, 2]", "5.")):
    x = torch.ones(3, requires_grad=True).clone()
    x[eval(key)] = eval(value)
    print(key, x.grad_fn.name())
x = torch.ones(3, requires_grad=True)
y = x * 2
y[1:] = torch.tensor([4., 5.], requires_grad=True)
y.sum().backward()
print(x.grad)
""",
    "retain_grad_survives_inplace": """
x = torch.tensor([1., 2.], requires_grad=True)
h = x * 2
h.retain_grad()
h.mul_(3)
h.sum().backward()
print(h.retains_grad, h.grad, x.grad)
""",
    "no_grad_view": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
with torch.no_grad():
    v = x[:2]
print(v.requires_grad, v.is_leaf, v.grad_fn)
for f in (lambda: v.mul_(2), lambda: v[0:1].mul_(2), lambda: v.backward(torch.ones(2))):
    try:
        f()
    except RuntimeError as e:
        print(e)
with torch.no_grad():
    v.mul_(2)
print(x)
""",
    "no_grad_view_after_its_base_changed": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
b = x * 2
with torch.no_grad():
    v = b[:2]
b.add_(1)
print(v, v.requires_grad, v.grad, v.retains_grad)
v.retain_grad()
for f in (lambda: v.grad_fn, lambda: v.is_leaf, lambda: v * 2, lambda: v[0], lambda: torch.cat([v, v]),
          lambda: v.register_hook(print), lambda: v.backward(torch.ones(2)),
          lambda: torch.autograd.grad(b.sum(), [v]), lambda: v.mul_(2)):
    try:
        print(f())
    except RuntimeError as e:
        print(e)
with torch.no_grad():
    print(v * 2, v.exp())
    v.zero_()
print(v, v.detach(), v.data)
""",
    "no_grad_view_changed_under_no_grad": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
with torch.no_grad():
    v = x[:2]
    x.add_(1)
try:
    v.grad_fn
except RuntimeError as e:
    print(e)
a = torch.tensor([1., 2., 3.])
with torch.no_grad():
    u = a[1:]
a.add_(1)
print(u.grad_fn, u.is_leaf, u)
a.mul_(torch.tensor(2., requires_grad=True))
print(u.requires_grad)
try:
    torch.cat([u, a])
except RuntimeError as e:
    print(e)
""",
    "view_of_a_no_grad_view_after_its_base_changed": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
b = x * 2
with torch.no_grad():
    v = b[:2]
    w = v[:1]
v2 = v[:1]
print(v2.grad_fn)
u = b[1:]
u.mul_(2)
print(v2, v2.grad, v2.retains_grad)
for f in (lambda: v2.grad_fn, lambda: w.grad_fn, lambda: v2.retain_grad(), lambda: v2 * 2,
          lambda: v2.mul_(2)):
    try:
        print(f())
    except RuntimeError as e:
        print(e)
c = torch.tensor([1., 2.])
with torch.no_grad():
    d = c[None, -1]
try:
    d[0] = torch.tensor(1., requires_grad=True)
except RuntimeError as e:
    print(e)
""",
    "grad_returns_what_backward_computed": """
x = torch.tensor([1., 2.], requires_grad=True)
y = torch.tensor([3., 4.], requires_grad=True)
g1, g2 = torch.autograd.grad(x + y, [x, y], torch.tensor([1., 2.]))
print(g1 is g2)
g1.add_(1)
print(g2)
h1, h2 = torch.autograd.grad(x + y, [x, y], torch.tensor([1., 2.]), create_graph=True)
print(h1 is h2)
m1, m2 = torch.autograd.grad(x.mean() + y.sum(), [x, y])
m1.mul_(2)
print(m1, m2, m2._base is not None)
""",
    "grad_of_a_sum_is_an_expanded_view": """
x = torch.tensor([-1.9, 0.7], dtype=torch.float64, requires_grad=True)
s = x.sum(dim=0)
g, gs = torch.autograd.grad(s, [x, s])
print(g._base is gs, g.is_contiguous())
for f in (lambda: g.add_(1), lambda: g.add_(torch.tensor(1., dtype=torch.float64, requires_grad=True))):
    try:
        f()
    except RuntimeError as e:
        print(e)
g[None, -1].add_(2.)
print(g, gs)
g.zero_()
print(g, gs)
h, = torch.autograd.grad(x.sum(), [x], create_graph=True)
try:
    h.add_(1)
except RuntimeError as e:
    print(e)
""",
    "grad_through_a_permute_is_a_no_grad_view": """
x = torch.tensor([[-0.7, 0.2]], requires_grad=True)
t = x.permute(1, 0)
g, gt = torch.autograd.grad(t, [x, t], torch.ones(2, 1))
print(g._base is gt, g, gt)
try:
    g.add_(torch.tensor(-0.7, requires_grad=True))
except RuntimeError as e:
    print(e)
gt[0] = 3.
print(g, g.grad_fn)
""",
    "expanded_inplace": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x.clone()
for f in (lambda: y.expand(2, 2).mul_(2), lambda: y.expand(2).mul_(2), lambda: x.expand(3, 2).sub_(1)):
    try:
        print(f())
    except RuntimeError as e:
        print(e)
""",
    "overlapping_operand": """
a = torch.tensor([-0.1, -0.8, 2.])
for f in (lambda: a.div_(a[:1]), lambda: a.mul_(a), lambda: a[:2].add_(a[1:])):
    try:
        print(f())
    except RuntimeError as e:
        print(e)
""",
    "overlapping_operand_as_pytorch_tells": """
a = torch.tensor([-0.1, -0.8, 2., 3.])
m = torch.tensor([[0.1, -0.8, 0.9], [-1.0, -1.5, 0.5], [0.7, -1.8, 0.3]])
for f in (lambda: a[1:3].add_(a[:2]), lambda: a[:2].add_(a[2:]), lambda: a.view(2, 2).add_(a.view(2, 2).t()),
          lambda: a.view(2, 2)[0].add_(a.view(2, 2)[:, 0]), lambda: a[::2].add_(a[:2]), lambda: a[:2].add_(a[0]),
          lambda: a.view(2, 2).add_(a.view(2, 2)[0]), lambda: a[:0].add_(a[:0]), lambda: m[::2].div_(m.t()[-2]).shape):
    try:
        print(f())
    except RuntimeError as e:
        print(e)
""",
    "second_backward_through_copyslices": """
x = torch.tensor([-0.3], requires_grad=True)
t = torch.cat([x, x, x], -1)
t[0:1] = 0.0
t.backward(torch.tensor([1.1, -0.3, -1.9]))
print(x.grad)
t.backward(torch.tensor([1.0, -1.0, -0.2]))
""",
    "reshape_of_a_viewable_transpose": """
a = torch.tensor([[1.2, 1.4, -0.2], [1.5, 1.7, -1.1]], requires_grad=True)
print(a.t().reshape(3, 2, 1).grad_fn, a.t().reshape(6).grad_fn, a[..., 2].reshape(2, -1).grad_fn)
""",
    "cat_and_stack_are_contiguous_whatever_their_inputs": """
g = torch.ones(1, 1, 2, 3, dtype=torch.float64, requires_grad=True).expand(1, 2, 2, 3)
c, s = torch.cat([g, g, g], -2), torch.stack([g, g], 1)
print(c.view(-1).grad_fn, s.view(-1).shape, c.is_contiguous(), s.is_contiguous())
try:
    c @ torch.tensor([0.0, -1.4, 0.4])
except RuntimeError as err:
    print(err)
""",
    "cat_skips_empty_vectors": """
e = torch.ones(0, requires_grad=True)
a = torch.ones(2, 3, requires_grad=True)
print(torch.cat([e, e], 1), torch.cat([a, e], 1).shape)
torch.cat([a, e, a], 0).sum().backward()
print(a.grad, e.grad)
""",
    "modified_error_names_the_first_changed_in_saving_order": """
a = torch.tensor([[-1.4, 1.1, 0.1]], requires_grad=True)
e = a.expand(2, 2, 3)
t = e / a
a.detach().div_(2)
try:
    t.backward(torch.ones(2, 2, 3))
except RuntimeError as err:
    print(err)
x = torch.tensor([[1., 2.]], requires_grad=True)
for op in (lambda p, q: p / q.t().t(), lambda p, q: p @ q.t()):
    p, q = x * 1, torch.cat([x, x]) * 2
    y = op(p, q)
    p.add_(1)
    q.add_(1)
    try:
        y.sum().backward()
    except RuntimeError as err:
        print(err)
""",
    "modified_error_names_the_numbered_node": """
a = torch.tensor([[0.7], [-1.2]], requires_grad=True)
t = a ** a
t.zero_()
t.sum().backward()
""",
})
_add("prod_dim", {
    # prod along one dim (ProdBackward1): values, the node, its saved values, the gradient
    "forward_and_node": """
x = torch.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
for y in (x.prod(1), x.prod(dim=0, keepdim=True), torch.prod(x, -1), x.prod(axis=1),
          x.prod(1, True), x.prod(0, dtype=torch.float64)):
    print(y, y.grad_fn._saved_keepdim, y.grad_fn._saved_self.shape)
print(torch.tensor([1, 2, 3]).prod(0), torch.tensor([True, False]).prod(0).dtype)
print(torch.tensor(3.).prod(0), torch.tensor(3.).prod(-1, keepdim=True), torch.ones(2, 0).prod(1))
""",
    "gradient": """
x = torch.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
x.prod(1).backward(torch.tensor([1., -1.]))
print(x.grad)
x.grad = None
x.prod(0, keepdim=True).sum().backward()
print(x.grad)
""",
    # a zero anywhere: every slice takes the running products, in PyTorch's order
    "zeros": """
inf, nan = float("inf"), float("nan")
for v in ([[1., 0., 3.], [4., 5., 6.]], [[0., 0., 3.], [4., inf, 6.]], [[0.], [2.]],
          [[nan, 2., 0.], [1., 2., 3.]]):
    for dim in (0, 1, -1):
        x = torch.tensor(v, requires_grad=True)
        x.prod(dim).sum().backward()
        g, = torch.autograd.grad(x.prod(dim).sum(), x, create_graph=True)
        print(v, dim, x.grad, g.detach(), g.requires_grad)
""",
    "twice": """
x = torch.tensor([[2., 0., 3.], [1.5, -2., 0.5]], dtype=torch.float64, requires_grad=True)
g, = torch.autograd.grad(x.prod(1).sum(), x, create_graph=True)
print(g.detach(), torch.autograd.grad(g.sum(), x))
print(torch.autograd.gradgradcheck(lambda t: t.prod(1), (x,)))
print(torch.autograd.gradcheck(lambda t: t.prod(0, keepdim=True), (x,)))
""",
    # one element along the dim, or in all: the gradient is the incoming one, a constant
    "one_element_is_a_constant_gradient": """
for v in ([0.], [[0.]], [2.], [[0.], [3.]]):
    x = torch.tensor(v, requires_grad=True)
    for y in (x.prod(), x.prod(-1).sum()):
        g, = torch.autograd.grad(y, x, create_graph=True)
        print(v, g, g.requires_grad)
""",
    "bad_dim": "x = torch.ones(2, 3)\nx.prod(2)\n",
    "tuple_of_dims": "x = torch.ones(2, 3)\nx.prod((0, 1))\n",
    "dim_none": "x = torch.ones(2, 3)\nx.prod(dim=None)\n",
    "float_dim": "x = torch.ones(2, 3)\nx.prod(1.5)\n",
})
_add("matmul_summation", {
    # small products summed as PyTorch sums them on every CPU: each product rounded, added in
    # order (not fused), so a sum that cancels is exactly 0. bmm of a small batch is PyTorch's
    # own loop; mm, mv and dot go to MKL, whose kernel depends on the CPU's instructions and
    # the layout: unfused on all its paths (AVX-512, AVX2, SSE4.2) for a matrix times a
    # transposed one, a dot of two contiguous vectors and a contiguous matrix times a vector,
    # but fused on AVX-512 for two contiguous matrices (R.T @ R there: 7e-9 off I), so
    # those are compared as batches
    "orthogonal": """
R = torch.tensor([[0.6, -0.8], [0.8, 0.6]])
print(R @ R.T, torch.tensor([0.6, 0.8]) @ torch.tensor([-0.8, 0.6]))
print(torch.mv(R, torch.tensor([0.8, -0.6])))
print(R.T.unsqueeze(0) @ R.unsqueeze(0), torch.tensor([[[0.3, 0.3]]]) @ torch.tensor([[[0.3], [-0.3]]]))
""",
    "cancels_in_a_batch": """
a = torch.tensor([[[1.4, 1.9], [1.1, -0.4]], [[-0.3, 1.1], [0.3, 0.3]]], requires_grad=True)
y = a @ a
print(y, y.sign())
y.sum().backward()
print(a.grad)
""",
    "gradients_of_small_products": """
A = torch.tensor([[0.3, -0.7, 1.1], [0.9, 0.2, -1.3]], requires_grad=True)
B = torch.tensor([[0.7, 0.3], [0.3, -0.7], [-0.1, 0.9]], requires_grad=True)
b = torch.tensor([0.1, -0.2], requires_grad=True)
y = torch.nn.functional.linear(A, B.T, b)
print(y)
y.backward(torch.tensor([[0.3, -0.3], [0.7, 0.1]]))
print(A.grad, b.grad)
# B's gradient is A^T @ g, a transposed matrix times a contiguous one, which MKL fuses on
# AVX-512 (one element cancels: 0 or 5e-9, by the CPU): compared to six decimals
print([[round(v, 6) + 0.0 for v in row] for row in B.grad.tolist()])
v = torch.tensor([0.3, 0.3, -0.3], requires_grad=True)
(A @ v).backward(torch.tensor([0.3, -0.3]))
print(v.grad)
""",
    "float64": """
R = torch.tensor([[0.6, -0.8], [0.8, 0.6]], dtype=torch.float64)
print(R @ R.T, (R.unsqueeze(0) @ R.T.unsqueeze(0)).squeeze(0))
""",
})
_add("engine_order", {
    # an AccumulateGrad runs the moment its last feeder has run (PyTorch's highest priority),
    # however early its leaf was first used: hooks in that order...
    "leaf_hooks_run_when_their_gradient_is_ready": """
x = torch.tensor(1., requires_grad=True)
y = torch.tensor(2., requires_grad=True)
_ = x * 1, y * 1                   # the leaves' AccumulateGrads are made here, before the rest
x.register_hook(lambda g: print("x", g))
y.register_hook(lambda g: print("y", g))
a, b = x * 2, y * 3
a.register_hook(lambda g: print("a", g))
b.register_hook(lambda g: print("b", g))
c = a * b
c.register_hook(lambda g: print("c", g))
(c + x).backward()
print(x.grad, y.grad)
""",
    # ...and a .grad already set when an older node raises
    "grad_set_before_an_older_node_raises": """
a1 = torch.tensor([[-1.3, 0.7]], requires_grad=True)
t2 = torch.sin(a1)
a4 = torch.tensor([[0.8, -0.6], [0.8, 0.9]], requires_grad=True)
t5 = torch.sigmoid(a4)
t5[0:1] = 0.0
t9 = t5.add(a1.t()[0], alpha=2)
try:
    t9.backward(torch.ones(2, 2))
except RuntimeError as e:
    print(e)
print(a1.grad, a4.grad)
""",
})
_add("sum_to", {
    # a broadcast input's gradient is summed once, then viewed (PyTorch's sum_to): what
    # autograd.grad returns for it is a view made in backward
    "broadcast_gradient_is_a_view": """
x = torch.tensor([1., 2.], requires_grad=True)
w = torch.tensor(2., requires_grad=True)
for out, g in ((x + torch.ones(3, 2), torch.ones(3, 2)), (x.expand(1, 2), torch.ones(1, 2)),
               (x.unsqueeze(1).expand(2, 3), torch.ones(2, 3))):
    gx, = torch.autograd.grad(out, x, g)
    print(gx, gx._base is not None)
    try:
        gx.mul_(w)
    except RuntimeError as e:
        print(e)
    gx.mul_(2)
    print(gx)
""",
})
_add("seed_flows_through", {
    # a squeeze that changes nothing passes the very gradient on, and the gradient of an
    # output that is also an input is the tensor passed for it
    "the_seed_itself": """
a = torch.tensor([[[-0.9, 0.5]], [[-0.4, 1.1]]], dtype=torch.float64, requires_grad=True)
t = a.squeeze(2)
G = torch.tensor([[[-1.2, -0.2]], [[-0.9, -0.6]]], dtype=torch.float64)
g1, g2 = torch.autograd.grad(t, [t, a], G)
print(g1 is G, g2 is G)
g1.sub_(t)
print(g2, g2.requires_grad, g2.grad_fn)
""",
})
_add("gradient_dtypes", {
    # inputs of two dtypes: each gradient in its own input's dtype, retained ones too
    "gradients_in_their_inputs_dtype": """
a = torch.tensor([[1.0]], requires_grad=True)
b = torch.tensor([[2.0]], dtype=torch.float64, requires_grad=True)
for join in (torch.stack, torch.cat):
    for create_graph in (False, True):
        t = a * 1
        t.retain_grad()
        join([t, b]).backward(torch.full((2, 1, 1) if join is torch.stack else (2, 1), 1.7,
                                         dtype=torch.float64), create_graph=create_graph)
        print(t.grad, a.grad, b.grad)
        a.grad = b.grad = None
""",
})
_add("abs_at_nan", {
    # abs at nan: its gradient is g * sign(nan) = 0, as sign(nan) is 0
    "abs_and_sign_at_nan": """
x = torch.tensor([float("nan"), -1., 0., 2.], requires_grad=True)
torch.abs(x).backward(torch.ones(4))
print(x.grad, torch.sign(x.detach()), x.detach().sign())
g, = torch.autograd.grad(torch.abs(x).sum(), x, create_graph=True)
print(g)
""",
})
_add("mixed_dtype_arithmetic", {
    # PyTorch casts the operands to the result's dtype before it computes
    "operands_cast_first": """
i = torch.tensor([16777217, 3])
print((i + 0.5).tolist(), (0.5 - i).tolist(), (i * 1.5).tolist(), (i / torch.tensor([1, 7])).tolist())
a = torch.tensor([0.8])
b = torch.tensor(-1.6, dtype=torch.float64)
print((b + a * 2).tolist(), (a * 2 + b).tolist(), (a.add(torch.tensor([0.8]), alpha=2) + b).tolist())
t = a.add(torch.tensor([0.8]), alpha=2) + b - 0.8
print(t, t / t)
print((i ** 0.5).tolist(), (torch.tensor([3.]) ** torch.tensor([1, 2, 3])).tolist())
""",
})
_add("top_level_functions", {
    "sign_square_reciprocal_permute_comparisons": """
x = torch.tensor([[-2., 0.5], [0., 3.]], requires_grad=True)
for y in (torch.sign(x), torch.square(x), torch.reciprocal(x), torch.permute(x, (1, 0)),
          torch.prod(x, 1), torch.eq(x, 0.), torch.gt(x, 0), torch.le(x, x)):
    print(y)
print(torch.is_floating_point(x), torch.is_floating_point(torch.tensor([1])))
""",
})
_add("clone_layout", {
    # clone keeps the layout of dense memory (a transposed tensor's clone is transposed), so a
    # later flatten or reshape copies as PyTorch's does; contiguous() is row-major
    "flatten_after_clone": """
a = torch.tensor([[-1.4, -1.7, -2.0], [-1.7, 0.9, -1.4]], dtype=torch.float64, requires_grad=True)
for t in (a.T.clone(), a.T.contiguous(), a[:, ::2].clone(), a.T[::2].clone(),
          a.unsqueeze(0).expand(2, 2, 3).clone()):
    print(t.is_contiguous(), t.flatten().grad_fn.name(), t.reshape(-1).grad_fn.name())
""",
})
_add("new_gradient_tensors", {
    # max along a dim of a 0-d tensor gives its gradient in a new tensor (PyTorch scatters it
    # into zeros): changing the seed in place leaves it alone
    "max_of_a_zero_dim_tensor": """
a = torch.tensor(-0.4, requires_grad=True)
t2 = a.prod(dim=0)
t3 = t2.max(dim=-1)[0]
g5, g6 = torch.autograd.grad(t3, [t2, t3])
g6.fill_(2)
print(g5, g6)
""",
})
_add("node_that_computes_nothing", {
    # a node none of whose inputs needs a gradient saved nothing, so backward freed nothing:
    # a second backward through it raises nothing (one that saved a number raises)
    "second_backward_through_it": """
a = torch.tensor([[[-0.6, 0.9, 1.3], [-1.1, 1.7, 0.5]]], requires_grad=True)
with torch.no_grad():
    v = a.view(2, 3, 1)
t = v * torch.tensor([[[-0.9, 1.3, -0.6]], [[-1.9, 0.0, 1.5]]])
print(t.requires_grad, t.grad_fn.next_functions)
t.backward(torch.ones(2, 3, 3))
t.view(6, 1, 3).backward(torch.ones(6, 1, 3))
print(a.grad, v.grad)
u = a * 2
w = u * 3
w.sum().backward()
try:
    w.sum().backward()
except RuntimeError as e:
    print(e)
""",
})
_add("saved_and_changed", {
    # what a node saved is checked whether or not its inputs need a gradient
    "a node whose inputs need nothing still checks its saved result": """
a = torch.tensor([1.2, -0.1, 0.8], requires_grad=True)
with torch.no_grad():
    v = a.transpose(-1, 0)
t = torch.tanh(v)
t.fill_(-1.0)
t.backward(torch.tensor([0.8, -0.5, -1.5]))
""",
})
_add("reduction_dtypes", {
    # a reduction in another dtype (dtype=...) gives its input the gradient in the input's dtype
    "retained_gradient_in_the_input_dtype": """
x = torch.tensor([[1., 2.], [0., 4.]], requires_grad=True)
for reduce in (lambda h: h.sum(dtype=torch.float64), lambda h: h.sum(1, dtype=torch.float64).sum(),
               lambda h: h.prod(1, dtype=torch.float64).sum(), lambda h: h.prod(dtype=torch.float64)):
    h = x * 1
    h.retain_grad()
    reduce(h).backward()
    print(h.grad, x.grad)
    x.grad = None
""",
})
_add("saved_nothing_under_hooks", {
    # under saved-tensor hooks too, a node that saved nothing is not freed by backward
    "second_backward": """
a = torch.tensor([[1., 2.]], requires_grad=True)
with torch.no_grad():
    v = a.view(2, 1)
with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
    t = v * torch.tensor([3., 4.])
t.sum().backward()
t.sum().backward()
print(a.grad, t.requires_grad)
""",
})
_add("node_call", {
    # a node of one input returns a bare Tensor, a node of several a tuple (issue 22)
    "one_input_nodes_return_a_tensor": """
x = torch.tensor([1., 2.], requires_grad=True)
for y in (x ** 2, x.sum(), x.sin(), x.mean(), 1 - x, x.exp(), torch.stack([x])):
    out = y.grad_fn(torch.ones_like(y))
    print(type(out).__name__, out)
""",
    "several_input_nodes_return_a_tuple": """
x = torch.tensor([1., 2.], requires_grad=True)
w = torch.tensor([3., 4.], requires_grad=True)
for y in (x * w, x * 2, torch.cat([x, w]), x + x):
    out = y.grad_fn(torch.ones_like(y))
    print(type(out).__name__, len(out), out)
""",
    "one_input_without_grad_mode": """
x = torch.tensor([1., 2.], requires_grad=True)
y = (x ** 3).sum()
with torch.no_grad():
    g = y.grad_fn(torch.tensor(1.))
    print(g, y.grad_fn.next_functions[0][0](g))
""",
    "accumulate_grad_returns_nothing": """
x = torch.tensor([1., 2.], requires_grad=True)
acc = (x * 2).grad_fn.next_functions[0][0]
print(acc(torch.ones(2)), x.grad)
""",
    "custom_function_node_is_not_callable": """
class Triple(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 3

    @staticmethod
    def backward(ctx, g):
        return g * 3

class Both(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        return a * b, a + b

    @staticmethod
    def backward(ctx, g1, g2):
        return g1 + g2, g1 + g2

x = torch.tensor([1., 2.], requires_grad=True)
p, s = Both.apply(x, x)
for node in (Triple.apply(x).grad_fn, p.grad_fn, s.grad_fn):
    try:
        node(torch.ones(2))
    except TypeError as e:
        print(e)
""",
})
_add("expand_errors", {
    # PyTorch checks an expand from the last dimension: its error names the last one that
    # does not fit, and a mismatch there before a -1 in a new leading dimension
    "checked_from_the_last_dimension": """
x = torch.ones(2, 3)
for size in [(3, 4), (-1, 4), (5, 2, 4), (-1, 2, 4), (-1, 2, 3), (-1, -1, 2, 3), (3, 3),
             (2, 3, -2), (-2, 2, 3), (2, -1), (1, 2, -1)]:
    try:
        print(size, x.expand(*size).shape)
    except RuntimeError as e:
        print(size, e)
""",
})
# create_graph=True records PyTorch's nodes for the derivative formulas: their own
# (TanhBackwardBackward0), the Scalar overloads of C++ formulas (MulBackward1 for grad * 2)
# and the kernels they call by name (TBackward0 + MmBackward0). Each case prints the
# gradient's graph (a node seen before as <#n>), then the graph of its own gradient.
_CREATE_GRAPH = """
import torch.nn.functional as F
def walk(t):
    seen, lines = {{}}, []
    def visit(node, depth):
        if node is None or node in seen:
            lines.append("  " * depth + ("None" if node is None else f"<#{{seen[node]}}>"))
            return
        seen[node] = len(seen)
        lines.append("  " * depth + f"{{node.name()}} #{{seen[node]}}")
        for nxt, _ in node.next_functions:
            visit(nxt, depth + 1)
    visit(t.grad_fn, 0)
    # values to 4 places: a sum that cancels (1 - sum(exp(y))) is 0 in one library and
    # 6e-8 in the other, as its exp rounds
    # (a copy: abs's second derivative is PyTorch's ZeroTensor, whose tolist() refuses)
    print([round(e, 4) + 0.0 for e in t.detach().clone().reshape(-1).tolist()], t.requires_grad)
    print("\\n".join(lines))
x = torch.tensor([0.5, 1.5], requires_grad=True)
w = torch.tensor([1.2, -0.7], requires_grad=True)
m = torch.tensor([[0.5, 1.0], [-1.0, 2.0]], requires_grad=True)
m2 = torch.tensor([[0.3, -1.0], [2.0, 0.5]], requires_grad=True)
y = {expr}
v = torch.ones_like(y, requires_grad=True)
inputs = [{inputs}]
grads = torch.autograd.grad(y, inputs, v, create_graph=True)
for g in grads:
    walk(g)
for g in grads:
    if g.requires_grad:
        for gg in torch.autograd.grad(g, inputs + [v], torch.ones_like(g, requires_grad=True),
                                      create_graph=True, allow_unused=True):
            if gg is not None:
                walk(gg)
"""
CREATE_GRAPH_EXPRESSIONS = {
    "x + w": "x, w", "x - w": "x, w", "x * w": "x, w", "x / w": "x, w",
    "x.add(w, alpha=2)": "x, w", "x.sub(w, alpha=2)": "x, w", "x * 3": "x", "x / 3": "x",
    "2 / x": "x", "1 - x": "x", "-x": "x", "x ** 2": "x", "x ** 3": "x", "x ** 0.5": "x",
    "x ** w": "x, w", "2 ** x": "x", "x.exp()": "x", "x.log()": "x", "x.sin()": "x",
    "x.cos()": "x", "x.tanh()": "x", "x.sigmoid()": "x", "x.relu()": "x", "x.sqrt()": "x",
    "x.abs()": "x", "x.reciprocal()": "x", "x.sum()": "x", "m.sum(0)": "m", "m.sum((0, 1))": "m",
    "x.mean()": "x", "m.mean(1)": "m", "m @ m2": "m, m2", "m.mm(m2)": "m, m2", "m @ x": "m, x",
    "x @ w": "x, w", "m.T.mm(m2)": "m, m2", "m[None] @ m2[None]": "m, m2",
    "torch.maximum(x, w)": "x, w", "x.max()": "x", "m.max(dim=0).values": "m",
    "m.min(1, keepdim=True).values": "m", "x.norm()": "x", "m.prod(0)": "m",
    "x.softmax(0)": "x", "m.log_softmax(1)": "m", "m[0]": "m", "m[0:1]": "m",
    "x[[0, 1, 0]]": "x", "x.unsqueeze(0).squeeze()": "x", "x.clamp(0, 1)": "x",
    "torch.where(x > 1, x, w)": "x, w",
    "F.mse_loss(x, w)": "x, w", "F.linear(m, m2, x)": "m, m2, x",
    "F.cross_entropy(m, torch.tensor([0, 1]))": "m",
    "F.binary_cross_entropy(x.sigmoid(), torch.tensor([1., 0.]))": "x",
    "F.binary_cross_entropy_with_logits(x, torch.tensor([1., 0.]))": "x",
}
_add("create_graph_nodes", {e: _CREATE_GRAPH.format(expr=e, inputs=i)
                            for e, i in CREATE_GRAPH_EXPRESSIONS.items()})
_add("loss_gradients", {
    # binary_cross_entropy gives its target a gradient too: -logit(x) (PyTorch 2's formula)
    "bce_target_gradient": """
import torch.nn.functional as F
x = torch.tensor([0.3, 0.8], requires_grad=True)
t = torch.tensor([1., 0.2], requires_grad=True)
F.binary_cross_entropy(x, t).backward()
print(x.grad, t.grad)
t.grad = None
F.binary_cross_entropy_with_logits(x, t, reduction="sum").backward()
print(t.grad)
""",
    # F.mse_loss broadcasts its inputs first (torch.broadcast_tensors: ExpandBackward0)
    "mse_broadcast_graph": """
import torch.nn.functional as F
import warnings
warnings.simplefilter("ignore")
a = torch.ones(2, 3, requires_grad=True)
b = torch.tensor([1., 2., 3.], requires_grad=True)
loss = F.mse_loss(a, b)
print(loss, [f.name() for f, _ in loss.grad_fn.next_functions])
loss.backward()
print(a.grad, b.grad)
""",
})
_add("node_call_results", {
    # a node called by hand returns its formula's own results: nothing for an input that
    # needs no gradient, a broadcast input's gradient unsummed (the engine sums it back)
    "none_for_an_input_without_gradient": """
x = torch.tensor([[-0.3]], dtype=torch.float64, requires_grad=True)
print((2 + x).grad_fn(torch.ones(1, 1, dtype=torch.float64)))
y = x.prod()
y.sub_(2)
print(y.grad_fn(torch.tensor(-1.2, dtype=torch.float64)))
""",
    "broadcast_gradient_not_summed": """
x = torch.tensor([0.5, 1.3], requires_grad=True)
y = x ** torch.tensor([[0.6], [2.0]])
print(y.grad_fn(torch.ones(2, 2)))
z = x[:1] / torch.tensor([2.0, -0.5, -0.8], requires_grad=True)
print(z.grad_fn(torch.ones(3)))
""",
    # a list of tensors is one input to PyTorch's formula: every element gets its gradient
    "every_element_of_a_list": """
x = torch.tensor(-1.5, requires_grad=True)
s = torch.stack([x, torch.tensor(0.1), x ** 0], -1)
print(s.grad_fn(torch.tensor([1.4, -1.4, -0.2])))
c = torch.cat([torch.ones(2), x[None]])
print(c.grad_fn(torch.tensor([1., 2., 3.])))
""",
})
_add("slicing_records", {
    # in a tuple key, a slice over all of a dimension records no SliceBackward0 (an index
    # that records nothing is an alias); a slice alone always records one
    "a_full_slice_in_a_tuple_records_nothing": """
x = torch.ones(2, 3, requires_grad=True)
for key in [(Ellipsis, slice(None, 3)), (slice(0, 2), 1), (slice(None), slice(0, 5)),
            slice(0, 2), (Ellipsis, slice(0, 1))]:
    print(x[key].grad_fn.name())
y = torch.ones(1, requires_grad=True)
print(y[..., :1].grad_fn.name(), y[:1].grad_fn.name())
""",
})
_add("views_in_backward", {
    # transpose(0, 0)'s gradient is still a view (of the seed), so an in-place change of it
    # goes through CopySlices
    "transpose_of_nothing_gives_a_view": """
a = torch.tensor([1.9, -0.9, -1.2], dtype=torch.float64, requires_grad=True)
t = a.transpose(0, 0)
g, = torch.autograd.grad(t, [a], create_graph=True, grad_outputs=torch.tensor([-2.0, 0.9, 0.1], dtype=torch.float64))
g.sub_(t)
print(g, g.grad_fn.name())
""",
    # CopySlices called by hand: the in-place op's other input gets its gradient unsummed
    "copy_slices_called_by_hand": """
a = torch.tensor(-1.9)
t = a.add(torch.tensor([[-1.9]]), alpha=2)
v = t[..., :1]
v.div_(torch.tensor(-1.5, requires_grad=True))
print(t.grad_fn.name(), t.grad_fn(torch.tensor([[-0.4]])))
""",
    # given None, PyTorch's CopySlices returns at once: after a backward that freed it too
    "copy_slices_given_none_after_backward": """
a = torch.tensor([[[0.9], [1.1]]], dtype=torch.float64, requires_grad=True)
t = a @ torch.tensor([[-1.7, 0.4, -1.7]], dtype=torch.float64, requires_grad=True)
u = t.unsqueeze(0)
u.copy_(0.5)
print(t.grad_fn.name(), t.grad_fn(None))
u.sum().backward()
print(t.grad_fn(None))
try:
    t.grad_fn(torch.ones_like(t))
except RuntimeError as e:
    print(e)
""",
})
_add("kernel_rounding", {
    # tanh's gradient, g * (1 - y*y), where 1 - y*y cancels (y near 1): rounded as PyTorch's
    # kernel for this CPU rounds it (one fused multiply-add on AVX2 and AVX-512). (At values
    # where tanh itself rounds alike: at 4.9 numpy's float32 tanh is 1 ulp off PyTorch's.)
    "tanh_gradient_where_it_cancels": """
for dtype in (torch.float32, torch.float64):
    x = torch.tensor([3.0, 3.5, 4.0, -4.4, 5.3, 0.2], dtype=dtype, requires_grad=True)
    x.tanh().backward(torch.tensor([1.3, -0.7, 1.0, 2.0, -1.1, 0.9], dtype=dtype))
    print(x.grad.tolist())
""",
})
_add("node_call_errors", {
    # a slice's or a select's node called with a gradient of another shape: copy_'s error
    "gradient_of_another_shape": """
a = torch.tensor([[[-1.3, 1.7, 0.9]]], requires_grad=True)
for node in (a[-1, 1:].grad_fn, a[0, 0].grad_fn, a[0].grad_fn):
    try:
        node(torch.tensor([]))
    except RuntimeError as e:
        print(node.name(), e)
""",
    # a gradient of another dtype: relu's formula promotes it with the result it saved
    "relu_given_the_other_dtype": """
for dtype, other in ((torch.float64, torch.float32), (torch.float32, torch.float64)):
    y = torch.relu(torch.tensor([1.6, -1.7], dtype=dtype, requires_grad=True).clone())
    print(y.grad_fn(torch.ones(2, dtype=other)))
""",
    # one more dimension, or none: what each formula's own operations say (cat's narrow,
    # max's masked_fill_ and scatter, indexing's index_put_), or what they give; a dim kept
    # as given (unsqueeze's, max's), which the gradient's own dimensions wrap
    "gradient_of_other_dimensions": """
x = torch.tensor([[1., -2., 3.], [0.5, 4., -1.]], requires_grad=True)
v = torch.tensor([1., -2., 3.], requires_grad=True)
for y in (torch.cat([x, x], 0), torch.cat([v, v], -1), x.max(), x.min(), x.max(0).values,
          x.max(-1).values, x.min(1, keepdim=True)[0], v.max(-1, keepdim=True)[0],
          x[[0, 1, 0]], x[x > 0], x.unsqueeze(-1), v.unsqueeze(-2), v.unsqueeze(1)):
    for g in (torch.ones_like(y)[None], torch.ones_like(y).sum()):
        try:
            print(y.grad_fn.name(), y.grad_fn(g))
        except (RuntimeError, IndexError) as e:
            print(y.grad_fn.name(), type(e).__name__, e)
""",
})
# A dim, a slice's start and end, kept as given: PyTorch's getters show a negative int64 as
# unsigned 64-bit; sum's and mean's formula unsqueeze one dim as given (so that a gradient of
# no dimensions, handed by hand, takes -1) and several wrapped, in order
_add("saved_dims", {
    "as_given": """
x = torch.tensor([[1., -2., 3.], [0.5, 4., -1.]], requires_grad=True)
for y in (x.sum(-1), x.sum([-1, 0]), x.sum([1, -2]), x.sum([]), x.mean(-1, True),
          x.mean([-1, 0]), x.max(-1)[0], x.min(-2, True)[0], x.unsqueeze(-1),
          x.transpose(-1, 0), torch.stack([x, x], -1), x[:, -2:], x[:, :-1], x[:, ::2],
          x[:, 1:100], x.add(x, alpha=-2), x.clamp(-1, 1), x[None].squeeze(-3),
          x[:, None].squeeze((-2, 0)), x.squeeze(-1), x.softmax(-1), x.log_softmax(-2),
          x.prod(-1), x.prod(-2, True), x.permute(-1, 0), x.T, x[None].permute(0, -1, -2)):
    f = y.grad_fn
    print(f.name(), [(k, getattr(f, k)) for k in dir(f) if k.startswith("_saved_")
                     and not isinstance(getattr(f, k), torch.Tensor)])
    print(f(torch.ones_like(y)))
""",
    "reduction_called_with_no_dimensions": """
x = torch.tensor([[-0.5], [-1.7], [-1.5]], requires_grad=True)
for y in (x.sum(-1), x.sum(dim=1), x.mean(-1), x.mean(-2), x.sum([-1, 0]), x.sum([]),
          x.max(-1).values, x.max(0).values, x.prod(-1), x.prod(1), x.prod(-2)):
    try:
        print(y.grad_fn.name(), y.grad_fn(torch.ones_like(y).sum()))
    except (RuntimeError, IndexError) as e:
        print(y.grad_fn.name(), type(e).__name__, e)
""",
})
# flatten(start_dim, end_dim): a reshape of those dimensions (ViewBackward0, or a copy's
# UnsafeViewBackward0), the tensor itself where there is nothing to flatten
_add("flatten_dims", {
    "views_copies_and_errors": """
x = torch.ones(2, 3, 4, requires_grad=True) * 1
s = torch.ones((), requires_grad=True) * 1
v = torch.ones(3, requires_grad=True) * 1
for f in (lambda: x.flatten(), lambda: x.flatten(1), lambda: x.flatten(0, 1),
          lambda: x.flatten(-2, -1), lambda: x.flatten(1, 1), lambda: x.flatten(2, 1),
          lambda: x.flatten(start_dim=1), lambda: x.flatten(end_dim=1), lambda: x.flatten(3),
          lambda: x.transpose(0, 1).flatten(1), lambda: x.transpose(1, 2).flatten(0, 1),
          lambda: s.flatten(), lambda: s.flatten(-1), lambda: s.flatten(1), lambda: v.flatten(0),
          lambda: torch.flatten(x, 1, 2), lambda: torch.flatten(x, start_dim=-3, end_dim=-2),
          lambda: x.flatten(1.0), lambda: x.flatten(0, 1, 2), lambda: x.flatten(dim=1),
          lambda: torch.ones(2, 0, 3).flatten(0, 1)):
    try:
        y = f()
        print(tuple(y.shape), y.grad_fn, y is x or y is s or y is v, y.stride(), y._base is None)
        if y.requires_grad:
            y.sum().backward()
    except (RuntimeError, IndexError, TypeError) as e:
        print(type(e).__name__, e)
""",
})
# A None (or another object) where PyTorch's argument parser wants a tensor, an int or a
# shape: its TypeError, never an error from inside the engine; None where it is allowed works
NONE_ARGUMENTS = [
    "x.reshape(None)", "x.reshape(None, 2)", "x.reshape(2, None)",
    "x.view(2, None)", "x.view((2, None))", "x.unsqueeze(None)", "x.unsqueeze(dim=None)",
    "x.squeeze(None)", "x.squeeze(dim=None)", "x.sum(None, True)",
    "x.sum(0, None)", "x.sum(keepdim=None)",
    "x.mean(None, True)", "x.mean(keepdim=None)", "x.max(None)", "x.max(dim=None)",
    "x.min(None)", "x.prod(None)", "x.transpose(None, 0)",
    "x.transpose(0, None)", "x.permute(None)", "x.permute(None, 0)", "x.expand(None)",
    "x.expand(None, 2)", "x.flatten(None)", "x.norm(None)", "x.softmax(None)",
    "x.log_softmax(None)", "x.pow(None)", "x.fill_(None)", "x.requires_grad_(None)",
    "x.mm(None)", "x.mv(None)", "x.dot(None)", "x.bmm(None)", "x.expand_as(None)",
    "x.movedim(None, 0)", "x.eq(None)", "x.lt(None)", "x.new_zeros(None)",
    "torch.relu(None)", "torch.exp(None)", "torch.tanh(None)", "torch.sigmoid(None)",
    "torch.sum(None)", "torch.mean(None)", "torch.abs(None)",
    "torch.unsqueeze(x, None)", "torch.reshape(x, None)", "torch.squeeze(x, None)",
    "torch.transpose(x, None, 0)", "torch.flatten(x, None)", "torch.t(None)",
    "torch.cat(None)", "torch.cat([x, x], None)", "torch.stack(None)",
    "torch.stack([x, x], None)", "torch.where(None, x, x)", "torch.where(x > 0, None, x)",
    "torch.pow(x, None)", "torch.pow(None, 2)", "torch.add(None, x)", "torch.mul(None, x)",
    "torch.zeros(None)", "torch.ones(None)",
    "torch.tensor(None)", "torch.tensor([1., None])", "torch.nn.functional.relu(None)",
    "torch.nn.functional.linear(x, None)", "torch.nn.functional.mse_loss(x, None)",
    "torch.autograd.grad(None, x)",
]
_NONE = """
x = torch.tensor([[1., -2.], [3., 4.]])
try:
    y = {expr}
    print(y)
except (TypeError, RuntimeError, AttributeError) as e:
    print(type(e).__name__, e)
"""
_add("none_arguments", {e: _NONE.format(expr=e) for e in NONE_ARGUMENTS})
_add("reduction_over_none", {
    # dim=None given is PyTorch's reduction over every dimension (SumBackward1, dim None),
    # which keepdim keeps
    "sum_and_mean_with_dim_none": """
x = torch.tensor([[1., -2.], [3., 4.]], requires_grad=True)
for y in (x.sum(None, True), x.sum(dim=None), x.mean(None, keepdim=True), x.sum()):
    print(y, y.grad_fn._saved_dim if y.grad_fn.name() != "SumBackward0" else "")
    y.backward(torch.ones_like(y))
print(x.grad)
""",
})
_add("empty_products", {
    # bmm with nothing to multiply (an empty batch, rows, columns or sum) skips the dtype
    # check: the result has mat2's dtype, each gradient its input's
    "bmm_of_nothing_in_two_dtypes": """
for sa, sb in [((0, 2, 3), (0, 3, 2)), ((2, 0, 3), (2, 3, 2)), ((2, 2, 0), (2, 0, 2)), ((2, 2, 3), (2, 3, 0))]:
    for da, db in [(torch.float32, torch.float64), (torch.float64, torch.float32)]:
        a = torch.ones(sa, dtype=da, requires_grad=True)
        b = torch.ones(sb, dtype=db, requires_grad=True)
        y = torch.bmm(a, b)
        y.sum().backward()
        print(y, a.grad.dtype, b.grad.dtype, (a @ b).dtype)
""",
})
_add("print_options", {
    # set_printoptions: sci_mode forces scientific notation on or off (None: each tensor
    # decides), the profiles "default", "short" and "full" (another name changes nothing)
    "sci_mode_and_profiles": """
t = torch.tensor([1.5, 2.25, 1000.0])
big = torch.arange(1200.)
for kwargs in [dict(sci_mode=True), dict(sci_mode=False), dict(), dict(profile="short"),
               dict(profile="full", linewidth=60), dict(profile="short", precision=3),
               dict(profile="nonsense"), dict(precision=1, sci_mode=True), dict(profile="default")]:
    torch.set_printoptions(**kwargs)
    print(kwargs, t, torch.tensor([1e-5, 1.]), torch.tensor(12345.678), torch.tensor([3., 4.]))
    print(len(repr(big)))
torch.set_printoptions(profile="default")
""",
})
_add("create_graph_order", {
    # a recorded backward makes its nodes in PyTorch's order (a formula's inputs in the
    # alphabetical order of their names: other before self), and leaves made ready by one node
    # take its edges' order: the leaves' hooks of a later pass run as PyTorch runs them
    "leaf_hooks_in_a_second_order_pass": """
x = torch.tensor([1., 2.], requires_grad=True)
w = torch.tensor([0.5, -1.], requires_grad=True)
x.register_hook(lambda g: print("x hook", g))
w.register_hook(lambda g: print("w hook", g))
y = (x * w).tanh() + x ** 2
y.register_hook(lambda g: print("y hook", g))
g, = torch.autograd.grad(y.sum(), x, create_graph=True)
h = torch.autograd.grad(g.sum(), [x, w], create_graph=True)
print(h)
(g * w).sum().backward()
print(x.grad, w.grad)
""",
    "creation_order_of_two_input_formulas": """
x = torch.tensor([1., 2.], requires_grad=True)
w = torch.tensor([0.5, -1.], requires_grad=True)
for y in (x * w, x / w, x ** w, torch.maximum(x, w), x @ w, torch.where(x > 1, x, w)):
    gx, gw = torch.autograd.grad(y, [x, w], torch.ones_like(y, requires_grad=True), create_graph=True)
    print(gx.grad_fn.name(), gw.grad_fn.name(), gx.grad_fn._sequence_nr() > gw.grad_fn._sequence_nr()
          if hasattr(gx.grad_fn, "_sequence_nr") else None)
""",
})
_add("copy_slices_recorded", {
    # CopySlices in a recorded backward (create_graph, or its node called by hand) takes
    # PyTorch's own steps: the gradient copied into a tensor laid out as the base, the view's
    # part of it (AsStridedBackward0) cloned for the in-place op's formula, its result copied
    # back into that part -- a CopySlices whose inputs' gradients come out of the formula
    "node_called_by_hand": """
a1 = torch.tensor([[-0.8, -0.3, 0.1], [0.7, 0.9, -0.4]], requires_grad=True)
t2 = a1.sum(-1, keepdim=True)
t4 = t2[0]
t4.div_(torch.tensor(0.7, requires_grad=True))
out = t2.grad_fn(torch.ones_like(t2))
print(out, [f.name() if f else None for f, _ in out[0].grad_fn.next_functions])
""",
    "create_graph_through_an_in_place_view": """
a1 = torch.tensor([[-0.8, -0.3, 0.1], [0.7, 0.9, -0.4]], requires_grad=True)
w = torch.tensor([1.5, -2.0], requires_grad=True)
b = a1 * 1
v = b[:, 1]
v.mul_(w)
g, = torch.autograd.grad(b.sum(), a1, create_graph=True)
print(g, g.grad_fn.name(), [f.name() if f else None for f, _ in g.grad_fn.next_functions])
node = g.grad_fn.next_functions[0][0]
print([f.name() if f else None for f, _ in node.next_functions])
print(torch.autograd.grad(g.sum(), w))
""",
})
_add("transpose_node_called_by_hand", {
    # TransposeBackward0 keeps its dimensions as given and wraps a negative one against the
    # gradient it is handed, as PyTorch's grad.transpose(dim0, dim1) does
    "a_gradient_of_fewer_dimensions": """
x = torch.ones(2, 3, 4, requires_grad=True)
for y in (x.mT, x.transpose(-1, 0), x.transpose(1, -3), torch.ones(5, 3) @ x):
    node = y.grad_fn
    for g in (torch.arange(30.).reshape(5, 6), torch.arange(24.).reshape(2, 3, 4), torch.arange(4.).reshape(1, 1, 1, 4)):
        try:
            print(node.name(), node(g).shape)
        except (RuntimeError, IndexError) as e:
            print(node.name(), type(e).__name__, e)
""",
})
_add("as_strided_recorded", {
    # a view remade after its base changed in place (AsStridedBackward0), its backward
    # recorded: PyTorch's as_strided_backward squeezes the view's size-1 dimensions and sums
    # its expanded ones, copies the gradient into zeros laid out as the base (CopySlices) and
    # reads the base back as a strided view (AsStridedBackward0)
    "views_of_a_changed_base": """
def walk(t):
    seen, order, lines = {}, [t.grad_fn], []
    for n in order:
        kids = []
        for f, k in n.next_functions:
            if f is not None and f not in seen:
                seen[f] = len(seen) + 1
                order.append(f)
            kids.append(f"{f.name()}#{seen[f]}" if f is not None else "None")
        lines.append(f"{n.name()} <- {', '.join(kids)}")
    return "; ".join(lines)

x = torch.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
s = torch.tensor(2., requires_grad=True)
views = {"slice": lambda b: b[:, 1:], "t": lambda b: b.t(), "row": lambda b: b[0],
         "element": lambda b: b[1, 2], "unsqueezed": lambda b: b[:, None, 1:],
         "expanded": lambda b: b[0].expand(2, 3), "permuted": lambda b: b.reshape(2, 3, 1).permute(2, 0, 1),
         "view_of_view": lambda b: b[1:][:, ::2], "column": lambda b: b[:, 0]}
for name, view in views.items():
    b = x * 1
    v = view(b)
    b.mul_(s)
    h, = torch.autograd.grad((v.sin() * v).sum(), b, create_graph=True)
    print(name, h, walk(h))
    print(torch.autograd.grad(h.sum(), [x, s]))
""",
    "node_called_by_hand": """
x = torch.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
b = x * 1
v = b[:, 1:].t()
b.add_(1)
print(v.grad_fn.name())
out = v.grad_fn(torch.ones(2, 2, requires_grad=True))
print(out, out.grad_fn.name(), [f.name() if f else None for f, _ in out.grad_fn.next_functions])
print(v.grad_fn(torch.ones(2, 2)))
""",
})
_add("autograd_arguments", {
    # grad's and backward's inputs read as PyTorch reads them (one tensor, a dict's values,
    # never empty), grad's arguments in PyTorch's order with its checks and warnings
    "inputs_and_options": """
import collections
x = torch.tensor([1., 2.], requires_grad=True)
w = torch.tensor([3., 4.], requires_grad=True)
u = torch.tensor([5.], requires_grad=True)
def attempt(f):
    try:
        print(f())
    except Exception as e:
        print(type(e).__name__, e)
y = (x * w).sum()
attempt(lambda: torch.autograd.grad(y, [], retain_graph=True))
attempt(lambda: torch.autograd.grad(y, (), retain_graph=True))
attempt(lambda: torch.autograd.grad(y, {}, retain_graph=True))
attempt(lambda: torch.autograd.grad(torch.ones(2), []))
attempt(lambda: torch.autograd.grad(torch.ones(2), [torch.ones(2)]))
attempt(lambda: torch.autograd.grad(y, {"x": x, "w": w}, retain_graph=True))
attempt(lambda: torch.autograd.grad(y, collections.OrderedDict(x=x), retain_graph=True))
attempt(lambda: torch.autograd.grad(y, [x, u], retain_graph=True, materialize_grads=True, allow_unused=False))
attempt(lambda: [(g, g.requires_grad) for g in torch.autograd.grad(y, [x, u], retain_graph=True, materialize_grads=True, create_graph=True)])
attempt(lambda: torch.autograd.grad(y, [x], None, True, False, False))
attempt(lambda: torch.autograd.grad(y, [x, u], None, True, False, True, True))
attempt(lambda: y.backward(inputs=[], retain_graph=True))
attempt(lambda: torch.autograd.backward(y, inputs=(), retain_graph=True))
attempt(lambda: (torch.autograd.backward(y, inputs={"a": x}, retain_graph=True), x.grad, w.grad))
attempt(lambda: (torch.autograd.backward(y, grad_variables=torch.tensor(2.), retain_graph=True), x.grad))
attempt(lambda: torch.autograd.backward(y, torch.tensor(1.), grad_variables=torch.tensor(2.)))
""",
})
_add("node_calls_more", {
    # a list input's elements (cat, stack) get their gradients together, and none at all
    # where no element has an edge (views made under no_grad); a select's or slice's node
    # handed a gradient that broadcasts to another shape fails as copy_ does
    "list_inputs_without_edges": """
a1 = torch.tensor([[0.1], [0.2], [-0.3]], requires_grad=True)
with torch.no_grad():
    t2 = a1[1, :]
print(torch.stack([t2, t2], -2).grad_fn(torch.tensor([[-0.4], [-1.1]])))
print(torch.cat([t2, t2]).grad_fn(torch.tensor([-0.4, -1.1])))
print(torch.stack([t2, a1[0]]).grad_fn(torch.tensor([[-0.4], [-1.1]])))
""",
    "slice_and_select_with_a_gradient_of_another_shape": """
a = torch.tensor([[1.1]], requires_grad=True)
for node, g in [(a[:-1].grad_fn, torch.tensor([])), (a[:1].grad_fn, torch.tensor([])),
                (a[0].grad_fn, torch.tensor([1., 2.])), (a[:, 0].grad_fn, torch.ones(3, 2))]:
    try:
        print(node(g))
    except RuntimeError as e:
        print(e)
""",
})
_add("setitem_zero_dim_value", {
    # x[i] = v with a 0-d tensor v: PyTorch's copy_to copies into a part of v's own shape (a
    # 0-d part: CopyBackwards, which casts v's gradient to v's dtype) and fills any other part
    "copied_or_filled": """
t = torch.tensor([0.3, 0.5], dtype=torch.float64, requires_grad=True) * 1
v = torch.tensor(1.0, requires_grad=True)
t[-1] = v
print(t.grad_fn(torch.tensor([-0.4, 2.], dtype=torch.float64)))
t[:1] = torch.tensor(3.0, requires_grad=True)
print(t.grad_fn(torch.tensor([-0.4, 2.], dtype=torch.float64)))
t.sum().backward()
print(v.grad, v.grad.dtype)
m = torch.zeros(2, 2)
m[0, 1] = torch.tensor(7, dtype=torch.int64)
m[1] = torch.tensor(True)
print(m)
""",
})

# inference_mode: no_grad made final (lesson 11)
_add("inference_mode", {
    "flags_inside_and_out": """
x = torch.tensor([1., 2.], requires_grad=True)
print(torch.is_inference_mode_enabled(), torch.is_grad_enabled())
with torch.inference_mode():
    q = x * 2
    print(torch.is_inference_mode_enabled(), torch.is_grad_enabled())
    print(q, q.requires_grad, q.grad_fn, q.is_leaf, q.is_inference(), torch.ones(2).is_inference())
print(torch.is_inference_mode_enabled(), torch.is_grad_enabled(), x.is_inference())
with torch.inference_mode(False):
    print(torch.is_inference_mode_enabled(), torch.is_grad_enabled())
with torch.no_grad():
    with torch.inference_mode():
        pass
    print(torch.is_grad_enabled())
print(torch.autograd.inference_mode is torch.inference_mode)
""",
    "decorator_with_and_without_parentheses": """
x = torch.tensor([1., 2.], requires_grad=True)
@torch.inference_mode()
def f(t):
    return t * 3
@torch.inference_mode
def g(t):
    return t * 4
print(f(x), f(x).is_inference(), g(x), g(x).is_inference(), torch.is_inference_mode_enabled())
""",
    "saved_for_backward_refused": """
x = torch.tensor([1., 2.], requires_grad=True)
with torch.inference_mode():
    q = x * 2
print((q + x).grad_fn.name(), (q * 3).is_inference())
(q.sum() + x.sum()).backward()
print(x.grad)
q * x
""",
    "clone_is_a_normal_tensor": """
x = torch.tensor([1., 2.], requires_grad=True)
with torch.inference_mode():
    q = x * 2
c = q.clone()
print(c.is_inference())
(c * x).sum().backward()
print(x.grad)
""",
    "requires_grad_refused_outside": """
with torch.inference_mode():
    q = torch.ones(2)
q.requires_grad_()
""",
    "inplace_refused_outside": """
with torch.inference_mode():
    q = torch.ones(2)
    q.mul_(3)
    print(q)
q.zero_()
""",
    "no_grad_result_can_join_a_graph": """
x = torch.tensor([1., 2.], requires_grad=True)
with torch.no_grad():
    n = x * 2
print(n.is_inference())
(n * x).sum().backward()
print(x.grad)
""",
})

# the gradient PyTorch defines where a function has a kink (lesson 12)
_add("kinks", {
    "relu_abs_sign_sqrt_at_zero": """
for name in ["relu", "abs", "sign", "sqrt"]:
    x = torch.tensor([-1., 0., 1.], requires_grad=True)
    getattr(x, name)().sum().backward()
    print(name, x.grad)
z = torch.tensor(0., requires_grad=True)
(z ** 0.5).backward()
print(z.grad)
""",
    "max_min_at_a_tie": """
x = torch.tensor([1., 3., 3.], requires_grad=True)
x.max().backward()
print(x.grad)
x.grad = None
x.max(dim=0).values.backward()
print(x.grad)
x.grad = None
x.min().backward()
print(x.grad)
a = torch.tensor(2., requires_grad=True)
b = torch.tensor(2., requires_grad=True)
torch.maximum(a, b).backward()
print(a.grad, b.grad)
""",
    "clamp_and_norm_at_the_edge": """
c = torch.tensor([-1., 0., 2.], requires_grad=True)
c.clamp(min=0).sum().backward()
print(c.grad)
n = torch.zeros(2, requires_grad=True)
n.norm().backward()
print(n.grad)
""",
})

# a frozen parameter and the nodes backward runs (lesson 11)
_add("frozen", {
    "frozen_layer_has_no_accumulator": """
w1 = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
w2 = torch.tensor([[0.5, -1.]], requires_grad=True)
w1.requires_grad_(False)
x = torch.tensor([1., 1.])
h = (w1 @ x).relu()
out = (w2 @ h).sum()
print(h.requires_grad, h.grad_fn, out.grad_fn.next_functions[0][0].next_functions)
out.backward()
print(w1.grad, w2.grad)
""",
    "frozen_first_of_two": """
w1 = torch.tensor([[1., 2.], [3., 4.]], requires_grad=False)
w2 = torch.tensor([[0.5, -1.]], requires_grad=True)
x = torch.tensor([1., 1.], requires_grad=True)
out = (w2 @ (w1 @ x).relu()).sum()
out.backward()
print(w1.grad, w2.grad, x.grad)
""",
})

# copy_, and x[key] = value where value has another shape than x[key] (PyTorch's copy_to: a
# view without leading size-1 dimensions, then expand, each recorded)
_WALK = """
def walk(fn, depth=0):
    if fn is not None:
        print("  " * depth + fn.name())
        for n, _ in fn.next_functions:
            walk(n, depth + 1)
"""
_add("copy", {
    "broadcast_into_a_bigger_tensor": _WALK + """
a = torch.zeros(2, 3)
w = torch.tensor([1., 2., 3.], requires_grad=True)
r = a.copy_(w)
print(r is a, a, a.requires_grad, a.is_leaf)
walk(a.grad_fn)
(a * torch.arange(6.).reshape(2, 3)).sum().backward()
print(w.grad)
""",
    "into_a_view_of_a_tensor_without_grad": _WALK + """
a = torch.zeros(4)
v = a[1:3]
w = torch.tensor([1., 2.], requires_grad=True)
v.copy_(w.double() * 2)
print(a, v.grad_fn.name(), a.dtype)
walk(a.grad_fn)
(a * torch.tensor([1., 2., 3., 4.])).sum().backward()
print(w.grad)
""",
    "numbers_casts_and_non_blocking": """
print(torch.zeros(3).copy_(2.5), torch.zeros(2).copy_(True))
print(torch.zeros(3, dtype=torch.int64).copy_(torch.tensor([1.7, -2.5, 3.])))
a = torch.zeros(2)
print(a.copy_(torch.ones(2), non_blocking=True) is a)
print(a.copy_(a))
""",
    "of_a_non_leaf_drops_its_history": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 1
y.copy_(torch.tensor([5., 6.], requires_grad=True))
print(y.grad_fn.name(), [type(n).__name__ for n, _ in y.grad_fn.next_functions])
y.sum().backward()
print(x.grad)
""",
    "under_no_grad_keeps_the_leaf": """
x = torch.ones(3, requires_grad=True)
with torch.no_grad():
    x.copy_(torch.full((3,), 2.))
print(x, x.is_leaf, x.grad_fn)
""",
    "setitem_expands_a_value": _WALK + """
a = torch.zeros(2, 3)
w = torch.ones(3, requires_grad=True)
a[0:1] = w
walk(a.grad_fn)
(a * 2).sum().backward()
print(w.grad)
b = torch.zeros(3)
u = torch.ones(1, 1, 3, requires_grad=True)
b[0:3] = u * 1
walk(b.grad_fn)
b.sum().backward()
print(u.grad)
c = torch.zeros(3)
c[1:] = torch.tensor([[5., 6.]])
print(c)
""",
})
_add("copy_found_by_random_programs", {
    # a CopyBackwards (or the CopySlices around one) called by hand returns src's gradient in
    # the output's shape; backward sums it back to src's shape
    "node_called_by_hand_returns_the_unreduced_gradient": """
a1 = torch.tensor([1.4, 1.9, -0.7], requires_grad=True)
t2 = a1 * a1
t5 = t2.unsqueeze(0)
t5.copy_(a1)
print(t2.grad_fn(torch.tensor([-1.1, -1.8, -1.3])))
t2.sum().backward()
print(a1.grad)
a = torch.zeros(2, 3)
w = torch.tensor([1., 2., 3.], requires_grad=True)
a.copy_(w)
print(a.grad_fn(torch.ones(2, 3)))
""",
    "a_number_like_tensor_into_a_row": """
a4 = torch.tensor([[-0.9, -0.1]], dtype=torch.float64)
t5 = a4[0]
s = torch.tensor(-2.0, requires_grad=True)
t5.copy_(s)
print(a4.grad_fn(torch.tensor([[-0.7, -0.3]], dtype=torch.float64)))
a4.sum().backward()
print(s.grad)
""",
    # x.copy_(x) copies nothing: no overlap is checked, and the copy is still recorded
    "into_itself": """
a1 = torch.tensor([[[-0.2, -1.4, 1.0]], [[1.5, -0.9, 0.2]]])
t3 = a1.expand(-1, 3, 3)
print(t3.copy_(t3)._version)
x = torch.tensor([1., 2.], requires_grad=True)
y2 = (x * 1).expand(3, 2) * 1
y2.copy_(y2)
y2.sum().backward()
print(y2.grad_fn.name(), x.grad)
""",
})
_add("raises_copy", {
    "shapes_that_do_not_broadcast": "torch.zeros(3).copy_(torch.ones(2))\n",
    "a_broadcast_bigger_than_the_output": "torch.zeros(3).copy_(torch.ones(1, 3))\n",
    "not_a_tensor": "torch.zeros(3).copy_([1, 2, 3])\n",
    "a_leaf_that_requires_grad": "torch.ones(3, requires_grad=True).copy_(torch.zeros(3))\n",
    "partial_overlap": "a = torch.arange(5.)\na[1:].copy_(a[:-1])\n",
    "an_expanded_output": "torch.zeros(1).expand(3).copy_(torch.ones(3))\n",
})
_add("raises_setitem_shape", {
    "a_value_too_long": "a = torch.zeros(3)\na[:2] = torch.ones(3)\n",
    "a_row_too_long": "a = torch.zeros(2, 2)\na[0] = torch.ones(3)\n",
    "more_dimensions_than_the_target": "a = torch.zeros(3)\na[...] = torch.ones(2, 2)\n",
    "partial_overlap": "a = torch.arange(5.)\na[1:] = a[:-1]\n",
})

# found by the long run of random programs over seeds 29,000,000 on
_add("found_by_random_programs", {
    # abs's recorded derivative saves self (SgnBackward0 keeps self and result), so a change
    # of self in place before the second backward is refused
    "sgn_saves_self_and_result": """
a = torch.tensor([1.5, -0.1], dtype=torch.float64, requires_grad=True)
g, = torch.autograd.grad(a.abs(), a, torch.ones(2, dtype=torch.float64), create_graph=True)
s = g.grad_fn.next_functions[1][0]
print(s.name(), s._saved_self, s._saved_result)
with torch.no_grad():
    a.sub_(1)
g.backward(torch.ones(2, dtype=torch.float64))
""",
    # a leaf's hook is the learner's code even while backward records (create_graph): a
    # number in it is a wrapped tensor, as anywhere (MulBackward0, not MulBackward1)
    "leaf_hook_under_create_graph": """
log = []
a1 = torch.tensor([[-0.6]], requires_grad=True)
a1.register_hook(lambda g: g * 2)
a1.register_hook(lambda g: log.append((type(g.grad_fn).__name__,
                                       [type(n).__name__ for n, _ in g.grad_fn.next_functions])))
t6 = a1.relu()
t6.register_hook(lambda g: g * 2)
g, = torch.autograd.grad(t6, a1, create_graph=True)
print(log, g)
log.clear()
t6.backward(create_graph=True)
print(log, a1.grad)
""",
})


# ----------------------------------------------------------------------------------------
# PyTorch's ZeroTensor: sgn's gradient (so abs's second derivative), which only * / + - and
# views keep, and which refuses tolist(), numpy() and in-place changes
# ----------------------------------------------------------------------------------------
_ZERO_SETUP = """
def attempt(f):
    try:
        r = f()
        print(r, r._is_zerotensor() if isinstance(r, torch.Tensor) else "")
    except Exception as e:
        print(type(e).__name__, e)
x = torch.tensor([1.5, -2.0, 0.3], requires_grad=True)
d, = torch.autograd.grad(x.abs().sum(), x, create_graph=True)
z, = torch.autograd.grad(d.sum(), x)
"""
_add("zero_tensor", {
    "abs_second_derivative": _ZERO_SETUP + """
print(z, z._is_zerotensor(), z.requires_grad, z.grad_fn)
attempt(lambda: z.tolist())
attempt(lambda: z.numpy())
attempt(lambda: z.numpy(force=True))
attempt(lambda: z.sum().item())
""",
    # zero * nan is 0 and zero / 0 is 0; x / zero is inf everywhere; zero + zero stays one
    "arithmetic_keeps_it_or_not": _ZERO_SETUP + """
t = torch.tensor([1., float('nan'), 3.])
for f in (lambda: z * t, lambda: t * z, lambda: z * float('nan'), lambda: 2 * z, lambda: z / t,
          lambda: z / 0, lambda: t / z, lambda: z / z, lambda: z + z, lambda: z - z,
          lambda: z - t, lambda: t + z, lambda: z + 1, lambda: -z, lambda: z.exp(),
          lambda: z.sum(), lambda: z.clone(), lambda: z.double(), lambda: z.float(),
          lambda: z.reshape(1, 3) @ torch.ones(3, 2), lambda: torch.cat([z, t]),
          lambda: z.dot(torch.ones(3)), lambda: torch.ones(3) @ z, lambda: torch.ones(2, 3) @ z):
    attempt(f)
""",
    "views_keep_it": _ZERO_SETUP + """
for f in (lambda: z[1:], lambda: z[0], lambda: z.view(3, 1), lambda: z.expand(2, 3),
          lambda: z.unsqueeze(0), lambda: z.reshape(3, 1).t(), lambda: z.detach(),
          lambda: z[[0, 1]]):
    attempt(f)
""",
    "immutable": _ZERO_SETUP + """
for f in (lambda: z.mul_(2), lambda: z.zero_(), lambda: z.fill_(1.), lambda: z.add_(1),
          lambda: z.copy_(torch.ones(3)), lambda: z.__setitem__(0, 1.)):
    attempt(f)
print(z)
""",
    # a leaf's .grad: a ZeroTensor stays one, and the next backward cannot add into it
    "leaf_grad_then_a_second_backward": """
a = torch.tensor([[1.2, -0.5], [1.4, 0.8]], dtype=torch.float64, requires_grad=True)
n = a.abs().grad_fn(torch.tensor([[-1.1, -0.5], [-1.8, -2.0]], dtype=torch.float64))
n.sum().backward(retain_graph=True)
print(a.grad, a.grad._is_zerotensor())
try:
    (a * 2).sum().backward()
except RuntimeError as e:
    print(e)
b = torch.tensor([1.5, -2.0], requires_grad=True)
(b * 2).sum().backward()
b.abs().grad_fn(torch.ones(2)).sum().backward()
print(b.grad, b.grad._is_zerotensor())
""",
    # a hook on the way sees the ZeroTensor; formulas decide, as PyTorch's kernels do, whether
    # their gradients stay ZeroTensors (mul's and exp's do; tanh's, getitem's and mm's do not)
    "through_the_nodes_before_it": """
def sgn(t):
    return t.abs().grad_fn(torch.ones(t.shape))
seen = []
for name, op in [("mul", lambda t: t * 2), ("exp", lambda t: t.exp()),
                 ("tanh", lambda t: t.tanh()), ("neg", lambda t: -t),
                 ("sum", lambda t: t.sum()), ("getitem", lambda t: t[1:]),
                 ("view", lambda t: t.view(3, 1)), ("mm", lambda t: t.reshape(1, 3) @ torch.ones(3, 2)),
                 ("cat", lambda t: torch.cat([t, t])), ("pow", lambda t: t ** 2)]:
    x = torch.tensor([1.5, 2.0, 0.3], requires_grad=True)
    h = x * 1
    h.register_hook(lambda g: seen.append(g._is_zerotensor()))
    sgn(op(h)).sum().backward()
    print(name, x.grad, x.grad._is_zerotensor(), seen.pop())
w = torch.tensor([1.5, -2.0], requires_grad=True)
v = w * 1
v.retain_grad()
sgn(v).sum().backward()
print(v.grad._is_zerotensor(), w.grad._is_zerotensor())
try:
    log = []
    a = torch.tensor([1.9, -0.1], requires_grad=True)
    a.register_hook(lambda g: log.append(g.tolist()))
    sgn(a).sum().backward()
except RuntimeError as e:
    print(e)
""",
    "in_create_graph": """
def sgn(t):
    return t.abs().grad_fn(torch.ones(t.shape))
y = torch.tensor([1.5, -2.0], requires_grad=True)
sgn(y).sum().backward(create_graph=True)
print(y.grad, y.grad._is_zerotensor(), y.grad.requires_grad)
s = sgn(y) + sgn(y)
g, = torch.autograd.grad(s.sum(), y)
print(g._is_zerotensor())
g, = torch.autograd.grad((sgn(y) + y).sum(), y)
print(g, g._is_zerotensor())
""",
})

_add("found_by_random_programs_41m", {
    # a gradient that is the 0-d seed expanded is a view of the seed, as grad hands it back:
    # an in-place change of one is seen in the other
    "grad_is_a_view_of_a_0d_seed": """
a1 = torch.tensor([-1.0], requires_grad=True)
t2 = a1.sum(dim=-1)
go = torch.tensor(0.4)
g3, g4 = torch.autograd.grad(t2, [t2, a1], grad_outputs=go, retain_graph=True)
print(g3 is go, g4._base is go)
g4.sub_(g4)
print(g3, go, g4)
""",
})

_add("zero_tensor_scalar_kernels", {
    # a backward formula's own number (mean's division by n) is PyTorch's Scalar kernel,
    # which does not keep a ZeroTensor; the user's number is a tensor, and keeps it
    "mean_materializes": """
def sgn(t):
    return t.abs().grad_fn(torch.ones(t.shape))
for op in (lambda t: t.mean(), lambda t: t.reshape(1, 3).mean(0), lambda t: t / 2,
           lambda t: 2 * t, lambda t: t.sum(), lambda t: t * torch.tensor(3.)):
    x = torch.tensor([1.5, 2.0, 0.3], requires_grad=True)
    sgn(op(x * 1)).sum().backward()
    print(x.grad, x.grad._is_zerotensor())
""",
})

_add("found_by_random_programs_45m", {
    # a float32 power is PyTorch's std::pow in double, rounded once (numpy's float32 power
    # differs in the last bit), seen here where a float64 difference cancels
    "float32_power_rounded_from_double": """
a2 = torch.tensor([[-1.0, -0.8, 1.8], [0.3, 0.7, -0.6], [-1.1, 1.7, 1.1]], requires_grad=True)
a3 = torch.tensor([0.2, 1.4, -1.8], dtype=torch.float64)
t5 = a2 ** torch.tensor([[-1.3], [-1.9], [1.8]])
t7 = a3 @ torch.tensor([[-1.5], [1.9], [-1.4]], dtype=torch.float64)
t10 = t7.sub(t5, alpha=0.5)
print(t5.tolist())
print([[round(v, 9) for v in row] for row in t10.tolist()])    # (matmul's last bit: README)
x = torch.tensor([0.3, 1.7, 2.9, 0.01, 1.3], requires_grad=True)
for e in (2.5, -1.3, 4, 7, 0.7):
    y = x ** e
    g, = torch.autograd.grad(y.sum(), x)
    print(y.tolist(), g.tolist())
""",
})

_add("found_by_random_programs_49m", {
    # two views of the same elements whose strides differ only where a dimension has size 1
    # (expand's and unsqueeze's are PyTorch's own there) overlap fully, not partly
    "same_elements_through_size_one_dimensions": """
b = torch.arange(1., 4.)
b.unsqueeze(0).div_(b.expand(1, -1))
c = torch.arange(1., 7.).reshape(2, 3)
c[None].add_(c.expand(1, 2, 3))
print(b, c)
a = torch.arange(6.).reshape(2, 3)
for f in (lambda: a.view(1, 2, 3).add_(a), lambda: a.view(2, 1, 3).add_(a.view(2, 3)),
          lambda: a.view(3, 2).add_(a.view(2, 3).view(3, 2)), lambda: a.view(3, 2).add_(a.t())):
    try:
        f()
        print(a)
    except RuntimeError as e:
        print(e)
""",
    # copy_ from a view of the very same elements copies nothing: no overlap is checked
    "copy_from_the_same_elements": """
a1 = torch.tensor(-1.4, dtype=torch.float64, requires_grad=True)
t4 = a1.expand(3)
t7 = t4[0:]
with torch.no_grad():
    t7.copy_(t4)
print(t7, t7._version)
e = torch.tensor(2.).expand(3)
for f in (lambda: e[0:].copy_(e), lambda: e.copy_(torch.ones(3)), lambda: e[0:].add_(1)):
    try:
        print(f())
    except RuntimeError as err:
        print(err)
""",
})

_add("found_by_random_programs_53m", {
    # stack's node, called by hand, selects each input's slice: select's errors, in PyTorch's
    # words, for a gradient of another shape
    "stack_node_called_with_another_shape": """
a = torch.tensor([-0.7, -2.0], requires_grad=True)
t3 = a[a > 0]
t4 = torch.stack([t3, t3, t3], 1)
b = torch.ones(2, requires_grad=True)
t5 = torch.stack([b, b], 0)
for node, g in ((t4.grad_fn, torch.tensor([])), (t4.grad_fn, torch.tensor(1.)),
                (t4.grad_fn, torch.ones(2, 3)), (t4.grad_fn, torch.ones(4, 2, 5)),
                (t5.grad_fn, torch.ones(3)), (t5.grad_fn, torch.ones(3, 2))):
    try:
        print(node(g))
    except IndexError as e:
        print(e)
""",
})

_add("found_by_random_programs_57m", {
    # mv's and dot's gradients are fresh tensors, not views made while backward ran
    "grad_of_a_product_with_a_vector_is_no_view": """
a1 = torch.tensor([[1.5, -1.7, -2.0], [0.0, 0.5, -1.8]], requires_grad=True)
a3 = torch.tensor([0.1, -0.9, 1.7], requires_grad=True)
g9, g10 = torch.autograd.grad(torch.matmul(a1, a3), [a3, a1], torch.tensor([1.0, 0.7]))
print(g9._base is None, g10._base is None)
g9[..., 0] = a3[2]
print(g9)
v = torch.tensor([1., 2.], requires_grad=True)
d, = torch.autograd.grad(v.dot(torch.tensor([3., 4.])), v)
d.add_(1)
print(d)
""",
    # a reduction's result with one dimension longer than 1 is row-major, as PyTorch's: mm's
    # backward reads its layout
    "reduction_result_layout": """
a1 = torch.tensor([[-0.4, 1.8, -0.1], [-1.6, -1.6, 1.6]], requires_grad=True)
t2 = a1.transpose(1, -2)
for t3 in (t2.mean(-2, keepdim=True), t2.sum(-2, keepdim=True), t2.mean(-1, keepdim=True)):
    print(t3.shape, t3.is_contiguous())
n = t2.mean(-2, keepdim=True).mm(a1).grad_fn
print(n(torch.tensor([[0.0, 0.3, -0.3]]))[0])
""",
    # an in-place operation with an operand of another dtype, through a view: the base's
    # gradient is cast back to the base's dtype
    "inplace_through_a_view_with_another_dtype": """
a1 = torch.tensor(-2.0, requires_grad=True)
t2 = a1.sign()
t2.retain_grad()
t3 = torch.where(t2 > 0, t2, torch.tensor([[-2.0], [-0.1]]))
a7 = torch.tensor([1.6], dtype=torch.float64, requires_grad=True)
t10 = t3.t()[0]
t10.div_(a7)
t3.backward(torch.tensor([[-1.5], [-0.9]]))
print(t2.grad, t2.grad.dtype, a7.grad)
""",
})

_add("found_by_random_programs_69m", {
    # a view or reshape to a shape of size-1 dimensions, and unsqueeze, give PyTorch's
    # strides there: two views of the same elements then overlap fully in an in-place op
    "inplace_between_views_with_pytorchs_strides": """
g4 = torch.tensor([[1.4], [0.5]], dtype=torch.float64)
t5 = g4.mT.reshape(1, 2)
t7 = t5[None, -1]
t7.mul_(t5)
print(t5, t7.stride() == t5.stride())
x = torch.arange(6.).reshape(3, 2, 1).permute(0, 2, 1)
print(x[None].stride(), x.unsqueeze(3).stride(), x.reshape(1, 6).stride(), x.view(3, 2).stride())
""",
})

_add("found_by_random_programs_81m", {
    # a node none of whose inputs needs a gradient, called by hand, computes nothing: a
    # gradient its formula would refuse passes
    "node_without_edges_called_by_hand": """
a1 = torch.tensor([[[-0.6, -2.0, 1.0]]], requires_grad=True)
with torch.no_grad():
    t2 = a1.transpose(1, -3)
t4 = t2[1:]
print(t4.grad_fn.next_functions)
for g in (torch.tensor([]), torch.zeros(3), torch.zeros(2, 0)):
    print(t4.grad_fn(g))
b = torch.tensor([[1., 2., 3.]], requires_grad=True)
try:
    b[1:].grad_fn(torch.tensor([]))
except RuntimeError as e:
    print(e)
""",
})

_add("node_call_arguments", {
    # a node called by hand takes one gradient per output, positional, a Tensor or None
    # (None: no gradient, so it computes none); anything else is PyTorch's TypeError
    "what_is_not_one_tensor": """
import numpy as np
x = torch.tensor([1., 2.], requires_grad=True)
w = torch.ones(2, 3, requires_grad=True)
s, m = (x * 2).sum(), x[None].mm(w)
for node in (s.grad_fn, m.grad_fn, (x * x).grad_fn, x.exp().grad_fn, x.max(0).values.grad_fn):
    for args in [(1.0,), (1,), (True,), ("a",), ((torch.tensor(1.),),), ([torch.ones(2)],),
                 (np.ones(2),), (), (torch.tensor(1.), torch.tensor(1.)), (torch.ones(1), None)]:
        try:
            print(node.name(), node(*args))
        except TypeError as e:
            print(node.name(), len(args), e)
""",
    "keywords": """
x = torch.tensor([1., 2.], requires_grad=True)
for node in ((x * 2).grad_fn, x.sum().grad_fn.next_functions[0][0]):
    for kwargs in [{"grad": torch.ones(2)}, {"grad_output": torch.ones(2)}]:
        try:
            node(**kwargs)
        except TypeError as e:
            print(e)
    try:
        node(torch.ones(2), grad=torch.ones(2))
    except TypeError as e:
        print(e)
print(x.grad)
""",
    # the lesson's mm example, its two gradients handed back as two arguments
    "a_tuple_unpacked_into_a_one_gradient_node": """
a = torch.ones(2, 3, requires_grad=True)
b = torch.ones(3, 4, requires_grad=True)
y = a @ b
g = y.grad_fn(torch.ones(2, 4))
print(type(g).__name__, len(g))
for call in (lambda: y.grad_fn(*g), lambda: y.grad_fn(g), lambda: y.grad_fn(list(g))):
    try:
        call()
    except TypeError as e:
        print(e)
""",
    "none_computes_nothing": """
x = torch.tensor([1., 2.], requires_grad=True)
w = torch.tensor([3., 4.], requires_grad=True)
for y in ((x * 2).sum(), x * w, x.exp(), torch.cat([x, w]), x[0]):
    print(y.grad_fn.name(), y.grad_fn(None))
y = x * w
y.sum().backward()
try:
    y.grad_fn(None)
except RuntimeError as e:
    print(e)
""",
    # the formula runs on whatever tensor it is given: its dtype and broadcasting
    "other_shapes_and_dtypes_run_the_formula": """
x = torch.tensor([1., 2.], requires_grad=True)
for y in ((x * 2), x.sin(), x.exp(), (x * 2).sum()):
    for g in (torch.ones(2, dtype=torch.float64), torch.ones(2, dtype=torch.int32),
              torch.ones(2, 2), torch.tensor(3.), torch.ones(3)):
        try:
            print(y.grad_fn.name(), y.grad_fn(g))
        except RuntimeError as e:
            print(y.grad_fn.name(), e)
""",
})
_add("accumulate_grad_by_hand", {
    # AccumulateGrad called by hand: the gradient copied into the leaf's shape in its own
    # dtype, then added (out of place while grad mode is on, in place under no_grad)
    "shapes_and_dtypes": """
x = torch.tensor([1., 2.], requires_grad=True)
acc = (x * 2).grad_fn.next_functions[0][0]
for g in (torch.ones(1), torch.ones(1), torch.ones(2, dtype=torch.float64), torch.tensor(3.)):
    print(acc(g), x.grad)
x.grad = None
for g in (torch.ones(1, 1, 2), torch.ones(3), torch.ones(2, dtype=torch.int64)):
    try:
        print(acc(g), x.grad)
    except RuntimeError as e:
        print(e)
    x.grad = None
""",
    "under_no_grad_in_place": """
x = torch.tensor([1., 2.], requires_grad=True)
acc = (x * 2).grad_fn.next_functions[0][0]
with torch.no_grad():
    first = acc(torch.ones(1))
    g = x.grad
    for d in (torch.ones(1), torch.ones(2, dtype=torch.float64), torch.ones(2, 2)):
        try:
            acc(d)
            print(x.grad, x.grad is g)
        except RuntimeError as e:
            print(e)
""",
    "a_copy_recorded_from_a_gradient_with_history": """
x = torch.tensor([1., 2.], requires_grad=True)
w = torch.ones(2, requires_grad=True)
acc = (x * 2).grad_fn.next_functions[0][0]
g = torch.ones(2)
print(acc(g), x.grad is g)
x.grad = None
print(acc(w * 3), x.grad)
""",
    "what_is_not_one_tensor": """
x = torch.tensor([1., 2.], requires_grad=True)
acc = (x * 2).grad_fn.next_functions[0][0]
for args in [((torch.ones(2),),), (1.0,), ([torch.ones(2)],), (), (torch.ones(2),) * 2, (None,)]:
    try:
        print(acc(*args))
    except TypeError as e:
        print(e)
print(x.grad)
""",
    # the leaf's register_hook hooks are the engine's to run; post-accumulate hooks the node's
    "hooks": """
x = torch.tensor([1., 2.], requires_grad=True)
acc = (x * 2).grad_fn.next_functions[0][0]
x.register_hook(lambda g: print("hook", g))
x.register_post_accumulate_grad_hook(lambda t: print("post", t.grad))
print(acc(torch.ones(2)), x.grad)
x.requires_grad_(False)
print(acc(torch.ones(2)), x.grad)
""",
    "leaf_moved_into_the_graph": """
x = torch.tensor([1., 2.], requires_grad=True)
w = torch.ones(2, requires_grad=True)
acc = (x * 2).grad_fn.next_functions[0][0]
x.requires_grad_(False)
x.mul_(w)
print(x.grad_fn.name())
acc(torch.ones(2))
""",
})
_add("frozen_after_forward", {
    # a leaf that no longer requires grad when backward reaches it gets nothing: its hooks
    # still see the gradient, its .grad stays as it was
    "grad_stays_none": """
x = torch.tensor([1., 2.], requires_grad=True)
w = torch.tensor([3., 4.], requires_grad=True)
x.register_post_accumulate_grad_hook(lambda t: print("post", t.grad))
y = (x * w).sum()
x.requires_grad_(False)
y.backward(retain_graph=True)
print(x.grad, w.grad, x.requires_grad, x.is_leaf)
print(torch.autograd.grad(y, w, retain_graph=True))
for call in (lambda: torch.autograd.grad(y, x), lambda: y.backward(inputs=[x]),
             lambda: y.backward(inputs=[w, torch.ones(2)])):
    try:
        call()
    except RuntimeError as e:
        print(e)
print(x.grad, w.grad)
""",
    "hooks_run_and_grad_stays": """
x = torch.tensor([1., 2.], requires_grad=True)
x.register_hook(lambda g: print("hook", g) or g * 2)
y = (x * 3).sum()
y.backward(retain_graph=True)
x.requires_grad = False
y.backward(retain_graph=True)
print(x.grad)
x.requires_grad_(True)
y.backward()
print(x.grad)
""",
    "create_graph": """
x = torch.tensor([1., 2.], requires_grad=True)
y = (x ** 2).sum()
x.requires_grad_(False)
y.backward(create_graph=True)
print(x.grad)
""",
    "no_post_accumulate_hook_on_what_needs_no_gradient": """
x = torch.tensor([1., 2.])
try:
    x.register_post_accumulate_grad_hook(lambda t: None)
except RuntimeError as e:
    print(e)
""",
})

# A custom Function used wrongly: what forward saves or marks, what backward returns, and
# the Function itself called instead of its apply
_MAKE_FUNCTION = """
def make(forward, backward=lambda ctx, g: g):
    return type("F", (torch.autograd.Function,),
                {"forward": staticmethod(forward), "backward": staticmethod(backward)})

def attempt(call):
    try:
        print(call())
    except (TypeError, RuntimeError) as e:
        print(type(e).__name__, e)

x = torch.tensor([1., 2.], requires_grad=True)
c = torch.tensor([1., 2.])
"""
_add("function_misuse", {
    "save_for_backward_of_what_is_not_a_tensor": _MAKE_FUNCTION + """
import numpy as np
for extra in (3.0, 3, "x", (x, x), [x], np.ones(2), None):
    def forward(ctx, a, extra=extra):
        ctx.save_for_backward(a, extra)
        return a * 2
    attempt(lambda: make(forward).apply(x))
    attempt(lambda: make(forward).apply(c))      # nothing recorded: nothing saved
""",
    "saved_tensors_after_backward": _MAKE_FUNCTION + """
def forward(ctx, a):
    ctx.save_for_backward(a)
    return a * 2
def backward(ctx, g):
    a, = ctx.saved_tensors
    a, = ctx.saved_tensors      # twice within backward: fine
    return g * a
y = make(forward, backward).apply(x)
y.sum().backward(retain_graph=True)
print(y.grad_fn.saved_tensors, x.grad)
y.sum().backward()
attempt(lambda: y.grad_fn.saved_tensors)
attempt(lambda: y.sum().backward())
""",
    "mark_dirty_and_mark_non_differentiable": _MAKE_FUNCTION + """
def not_a_tensor_dirty(ctx, a):
    ctx.mark_dirty(3.0)
    return a * 2
def not_a_tensor_non_differentiable(ctx, a):
    ctx.mark_non_differentiable([a])
    return a * 2
def both(ctx, a):
    ctx.mark_non_differentiable(3.0)
    ctx.mark_dirty(3.0)
    return a * 2
def dirty_not_returned(ctx, a):
    ctx.mark_dirty(a)
    return a * 2
def dirty_not_an_input(ctx, a):
    b = a.clone()
    ctx.mark_dirty(b)
    return b
def saved_first(ctx, a):
    ctx.mark_dirty(3.0)
    ctx.save_for_backward(2.0)
    return a * 2
for forward in (not_a_tensor_dirty, not_a_tensor_non_differentiable, both, dirty_not_returned,
                dirty_not_an_input, saved_first):
    attempt(lambda: make(forward).apply(x))
    attempt(lambda: make(forward).apply(c))
""",
    "backward_returns_what_is_not_a_tensor": _MAKE_FUNCTION + """
import numpy as np
for result in (2.0, [torch.ones(2)], "a", np.ones(2), (torch.ones(2), None, None),
               (torch.ones(2), 1.0), ()):
    attempt(lambda: make(lambda ctx, a: a * 2, lambda ctx, g: result).apply(x).sum().backward())
# the types are checked before the shapes; a shape's index counts tensor inputs only
attempt(lambda: make(lambda ctx, a, b: a * b, lambda ctx, g: (torch.ones(3), 1.0)).apply(x, x)
        .sum().backward())
attempt(lambda: make(lambda ctx, k, a: a * k, lambda ctx, g: (None, torch.ones(3))).apply(2.0, x)
        .sum().backward())
print(x.grad)
""",
    "the_function_called_instead_of_apply": _MAKE_FUNCTION + """
F = make(lambda ctx, a: a * 2, lambda ctx, g: g * 2)
f = F(x)
print(type(f).__name__, isinstance(f, torch.autograd.Function))
attempt(lambda: F()(x))
attempt(lambda: F.forward(x))
attempt(lambda: F.forward(None, x))
""",
    "apply_with_keywords": _MAKE_FUNCTION + """
def forward(ctx, a, b=1.0, c=2.0):
    return a * b * c
F = make(forward, lambda ctx, g: (g, None, None))
t = torch.tensor(5., requires_grad=True)
attempt(lambda: F.apply(x, b=3.0))
attempt(lambda: F.apply(a=x))
attempt(lambda: F.apply(b=t, a=x).grad_fn.next_functions)
attempt(lambda: F.apply(x, c=t))
attempt(lambda: F.apply(x, d=t))
attempt(lambda: F.apply(x, a=x))
attempt(lambda: F.apply(x, 1.0, 2.0, 3.0))
def starred(ctx, *xs, scale=2.0):
    return xs[0] * scale
attempt(lambda: make(starred).apply(x, scale=3.0))
""",
    "grad_fn_apply_calls_backward": _MAKE_FUNCTION + """
def backward(ctx, g):
    print("backward got", g)
    return g * 2
y = make(lambda ctx, a: a * 2, backward).apply(x)
attempt(lambda: y.grad_fn.apply(torch.ones(2)))
attempt(lambda: y.grad_fn.apply(1.0))
attempt(lambda: y.grad_fn.apply())
attempt(lambda: y.grad_fn(torch.ones(2)))
""",
})

# A hook that returns the wrong thing: PyTorch's checks, in its order (a Tensor, then its
# type, then its size; a node's hooks a tuple of as many gradients, each None or a Tensor)
_HOOKED = """
import numpy as np
def attempt(register, hook, wrt=None):
    x = torch.tensor([1., 2.], requires_grad=True)
    w = torch.tensor([3., 4.], requires_grad=True)
    y = (x * x) * w
    handle = register(x, y)(hook)
    try:
        if wrt is None:
            y.sum().backward()
            print(x.grad, w.grad)
        else:
            print(torch.autograd.grad(y.sum(), wrt(x, w)))
    except (TypeError, RuntimeError) as e:
        print(type(e).__name__, e)
"""
TENSOR_HOOK_RESULTS = [
    "lambda g: 1.0", "lambda g: (g,)", "lambda g: [g]", "lambda g: g.numpy()", "lambda g: g.sum()",
    "lambda g: g.double()", "lambda g: g.sum().double()", "lambda g: g.int()", "lambda g: None",
    "lambda g: g * 2", "lambda g: torch.ones(3)",
]
NODE_HOOK_RESULTS = [
    "lambda *a: 1.0", "lambda *a: a[0]", "lambda *a: a[0][0]", "lambda *a: [*a[0]]",
    "lambda *a: (1.0,) * len(a[0])", "lambda *a: a[0] * 2", "lambda *a: ()",
    "lambda *a: tuple(None if g is None else g.sum() for g in a[0])",
    "lambda *a: tuple(None if g is None else g.double() for g in a[0])",
    "lambda *a: tuple(None if g is None else g * 10 for g in a[0])",
    "lambda *a: (None,) * len(a[0])", "lambda *a: tuple(torch.ones(2) for g in a[0])",
]
_add("hook_results", {
    f"{where}/{hook}": _HOOKED + f"attempt(lambda x, y: {where}, {hook})\n"
    for where, hooks in [("y.register_hook", TENSOR_HOOK_RESULTS),
                         ("x.register_hook", TENSOR_HOOK_RESULTS),
                         ("y.grad_fn.register_hook", NODE_HOOK_RESULTS),
                         ("y.grad_fn.register_prehook", NODE_HOOK_RESULTS),
                         ("y.grad_fn.next_functions[0][0].register_prehook", NODE_HOOK_RESULTS),
                         ("y.grad_fn.next_functions[1][0].register_hook", NODE_HOOK_RESULTS)]
    for hook in hooks})
# A node's post-hook sees None for an input PyTorch's formula computes nothing for: one
# sent to no node (a constant's), or under autograd.grad one to a node on no way to an input;
# a custom Function's hook sees what its backward returned
_add("hook_sees_what_is_computed", {
    "none_where_no_gradient_is_sent": """
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * b, g * a
x = torch.tensor([1., 2.], requires_grad=True)
c = torch.tensor([3., 4.])
w = torch.tensor([5., 6.], requires_grad=True)
for y in (-1.5 + x, x * w, Mul.apply(x, c), torch.cat([x, c, w]), torch.stack([c, x]),
          x.add(w, alpha=2), torch.where(x > 1, x, w)):
    f = y.grad_fn
    f.register_hook(lambda gi, go: print(f.name(), [None if g is None else g.tolist()
                                                    for g in gi]))
    y.sum().backward(retain_graph=True)
    r = y.relu()
    for inputs in ([x], [w], [x, w], [x, r]):
        torch.autograd.grad(y.sum(), inputs, retain_graph=True, allow_unused=True)
""",
})
_add("hook_results_more", {
    "under_autograd_grad": _HOOKED + """
attempt(lambda x, y: y.register_hook, lambda g: 1.0, lambda x, w: x)
attempt(lambda x, y: y.grad_fn.register_prehook, lambda go: (go[0].sum(),), lambda x, w: [x, w])
attempt(lambda x, y: x.register_hook, lambda g: g.double(), lambda x, w: x)
attempt(lambda x, y: y.register_hook, lambda g: g * 3, lambda x, w: (x, w))
""",
    "post_accumulate_grad_hooks": """
for hook in (lambda t: 1.0, lambda t: t, lambda t: t.grad, lambda t: t * 2, lambda t: t.double(),
             lambda t: None):
    x = torch.tensor([1., 2.], requires_grad=True)
    x.register_post_accumulate_grad_hook(hook)
    try:
        (x * 2).sum().backward()
        print(x.grad)
    except (TypeError, RuntimeError) as e:
        print(type(e).__name__, e)
""",
    "named_hook_and_a_custom_function": """
class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        print("backward got", g)
        return g * 2

def shrink(grads):
    return (grads[0][:1],)

def drop(grads):
    return (None,)

for hook in (shrink, drop):
    x = torch.tensor([1., 2.], requires_grad=True)
    y = Double.apply(x)
    y.grad_fn.register_prehook(hook)
    try:
        y.sum().backward()
        print(x.grad)
    except RuntimeError as e:
        print(e)
""",
})
_add("numpy_of_what_requires_grad", {
    # numpy() refuses a tensor that requires grad only while grad mode is on: under no_grad,
    # and so in a custom Function's forward, it passes
    "under_no_grad_and_in_forward": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
with torch.no_grad():
    print(x.numpy(), y.numpy())

class Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return torch.tensor(a.numpy() * 2)

    @staticmethod
    def backward(ctx, g):
        return g * 2

print(Twice.apply(x))
try:
    x.numpy()
except RuntimeError as e:
    print(e)
""",
})
FRESH.add("accumulate_grad_by_hand/grad_of_another_shape_warns_once")
_add("accumulate_grad_by_hand", {
    # added out of place to a .grad of another shape: a bigger .grad, and PyTorch's warning
    # (once per process)
    "grad_of_another_shape_warns_once": """
x = torch.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
acc = (x * 2).grad_fn.next_functions[0][0]
acc(torch.ones(2, 3))
acc(torch.ones(1, 2, 3))
print(x.grad)
acc(torch.ones(2, 2, 3))
print(x.grad.shape)
""",
    # a leaf whose memory has gaps (a detached view) takes a clone of the gradient, in the
    # gradient's shape; a dense one a copy in its own shape
    "leaf_with_gaps_keeps_the_gradients_shape": """
a = torch.tensor([[1.1, 0.3], [-1.1, -1.3], [1.6, -0.2]])
for t in (a[..., :1].detach().requires_grad_(), a[:, 1:].clone().requires_grad_(),
          a.t().detach().requires_grad_(), a[::2].detach().requires_grad_()):
    for g in (torch.ones_like(t).sum(), torch.ones(1, 1), torch.ones_like(t).double()):
        t.grad = None
        (t * 1).grad_fn.next_functions[0][0](g)
        print(t.grad.shape, t.grad.dtype, t.grad.stride(), t.grad)
""",
})

_add("found_by_random_programs_90m", {
    # a view made under no_grad requires grad as its (root) base does, frozen since or not
    "no_grad_view_of_a_frozen_base": """
a = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
t = a.flatten()
with torch.no_grad():
    k, e = a[1], t.expand(1, 4)
a.requires_grad_(False)
print(k.requires_grad, e.requires_grad, t.requires_grad)
with torch.no_grad():
    f = t[:2]
print(f.requires_grad)
a.requires_grad_(True)
print(k.requires_grad, e.requires_grad, f.requires_grad)
""",
    # a view that has a history keeps one when its base, frozen since, changes in place:
    # remade as AsStridedBackward0; and changing it in place is a view of a leaf's change
    "view_with_history_of_a_frozen_base": """
a = torch.tensor([-1.1, -1.2, 0.5], requires_grad=True)
t2, t3 = a[::2], a.flatten()
a.requires_grad_(False)
a[1:][0] = 0.0
print(t2.grad_fn.name(), t2.grad_fn.next_functions, t3.grad_fn.name(), t2.requires_grad)
try:
    t3.fill_(-1.0)
except RuntimeError as e:
    print(e)
with torch.no_grad():
    t3.fill_(-1.0)
print(a, t2.grad_fn.name())
""",
    # prod's formula reads self in the gradient's dtype; an index's puts the gradient into
    # zeros of self's dtype; expand's sums to more dimensions than the gradient has (where
    # PyTorch's sum_to reads sizes before the gradient's first: sum's error for dimension -2)
    "nodes_called_with_another_dtype_or_fewer_dimensions": """
x = torch.tensor([[1.2, -1.6, 1.7]], dtype=torch.float64, requires_grad=True)
print(x.prod().grad_fn(torch.tensor(1.)), x.prod(1).grad_fn(torch.ones(1)))
for node, g in [(x[[0, 0]].grad_fn, torch.ones(2, 3)),
                (torch.tensor([[0.5]], requires_grad=True).expand(1, 2).grad_fn, torch.tensor(2.)),
                (x.expand(2, 1, 3).grad_fn, torch.ones(1, 3))]:
    try:
        print(node(g))
    except (IndexError, RuntimeError) as e:
        print(type(e).__name__, e)
""",
    # autograd.grad of a tensor captured at its own node: the tensor's hooks see the
    # gradient, the node's pre-hooks do not (the node does not run)
    "captured_node_pre_hooks_do_not_run": """
a = torch.tensor([[-0.7, 0.5, -1.9]], requires_grad=True)
t = a.transpose(0, -2)
t.grad_fn.register_prehook(lambda go: (go[0] * 2,))
t.register_hook(lambda g: g * 3)
print(torch.autograd.grad(t, [t], grad_outputs=torch.ones(3, 1)))
acc = (a * 1).grad_fn.next_functions[0][0]
acc.register_prehook(lambda go: print("prehook") or (go[0] * 10,))
a.register_hook(lambda g: print("hook") or g + 1)
print(torch.autograd.grad((a * 2).sum(), [a]))
""",
})

_add("found_by_random_programs_91m", {
    # a leaf frozen, then changed in place with an operand that requires grad, has a history:
    # a backward through a graph made before reaches its AccumulateGrad, which refuses
    "leaf_moved_into_the_graph_before_backward": """
a = torch.tensor([0.5], dtype=torch.float64, requires_grad=True)
t = 2 - a
a.requires_grad_(False)
a.unsqueeze(0).mul_(t)
print(a.grad_fn.name(), a.is_leaf)
try:
    t.backward()
except RuntimeError as e:
    print(e)
print(a.grad)
""",
    # nodes called by hand with a gradient of another shape or dtype: each formula's own
    # result or refusal, as PyTorch's
    "formulas_handed_another_shape_or_dtype": """
a = torch.tensor([[1.3, 0.1]], requires_grad=True)
v = torch.tensor([-0.5, 0.5], requires_grad=True)
b = torch.tensor([-0.4, 0.8], dtype=torch.float64, requires_grad=True)
calls = [
    lambda: (a.matmul(v)[..., 0] ** 0).grad_fn(torch.ones(1)),
    lambda: a.min().grad_fn(torch.tensor(1., dtype=torch.float64)),
    lambda: b.max().grad_fn(torch.tensor(1.)),
    lambda: b.min(-1, keepdim=True)[0].grad_fn(torch.ones(1, 1, dtype=torch.float64)),
    lambda: b.max(0).values.grad_fn(torch.ones(1, dtype=torch.float64)),
    lambda: a.matmul(v).grad_fn(torch.tensor(1.)),
    lambda: a.mv(v).grad_fn(torch.ones(1, 1)),
    lambda: torch.stack([a, a, a], -1).grad_fn(torch.ones(1, 1, 2, 3)),
    lambda: torch.stack([a, a], 1).grad_fn(torch.ones(1, 2, 2, 1)),
    lambda: b[::2].grad_fn(torch.ones(1, 1, dtype=torch.float64)),
    lambda: b[:1].grad_fn(torch.ones(2, 1, dtype=torch.float64)),
    lambda: b[:1].grad_fn(torch.tensor(2., dtype=torch.float64)),
]
for call in calls:
    try:
        print(call())
    except RuntimeError as e:
        print(e)
""",
})

_add("found_by_random_programs_92m", {
    # CopySlices called by hand copies the gradient into a tensor laid out as the base (copy_'s
    # broadcasting and refusals); cat's narrows the gradient (a 0-d one is refused)
    "copy_slices_and_cat_handed_another_shape": """
a = torch.tensor([-0.6, 0.3], requires_grad=True)
t = a.mean(0, keepdim=True) * torch.ones(2)
t[0].sub_(torch.tensor(-2.0, requires_grad=True))
c = torch.cat([a, a], -1)
for node, g in [(t.grad_fn, torch.ones(1, 2)), (t.grad_fn, torch.ones(3)), (t.grad_fn, torch.tensor(3.)),
                (t.grad_fn, torch.ones(1)), (c.grad_fn, torch.tensor(1.))]:
    try:
        print(node.name(), node(g))
    except RuntimeError as e:
        print(e)
with torch.no_grad():
    print(t.grad_fn(torch.tensor(3.)))
""",
})

# ----------------------------------------------------------------------------------------
# A node's hook returning None for a gradient: the nodes past it still run, on an undefined
# gradient (their hooks see None, their saved tensors are freed, a custom Function's backward
# gets zeros), and a leaf's post-accumulate hooks run with .grad unchanged
# ----------------------------------------------------------------------------------------
_add("found_by_random_programs_94m", {
    # max's formulas fill fresh zeros in place (masked_fill_; zero_ then scatter_): what
    # create_graph returns is at version 1, or 2, which an in-place change's error counts from
    "max_gradient_versions": """
x = torch.tensor([1., 3., 3.], requires_grad=True)
s = torch.tensor(-0.5, dtype=torch.float64, requires_grad=True)
for f in (lambda t: t.max(), lambda t: t.min(), lambda t: t.max(0).values,
          lambda t: t.min(0, True).values, lambda t: (t.max() ** 2).sum()):
    for t in (x, s):
        h, = torch.autograd.grad(f(t), [t], create_graph=True)
        print(h.grad_fn, h._version)
h, = torch.autograd.grad((s.max() ** 2).sum(), [s], create_graph=True)
g, = torch.autograd.grad((h * h).sum(), [s])
g.div_(h)
h.zero_()
try:
    g.backward(create_graph=True)
except RuntimeError as e:
    print(e)
""",
})
_add("found_by_random_programs_95m", {
    # add's formula multiplies other's gradient by alpha: mul.Scalar, which keeps a ZeroTensor
    # (abs's second derivative), where div.Scalar (mean's) makes zeros
    "alpha_keeps_a_zero_tensor": """
a = torch.tensor([[-1.8, 0.4]], dtype=torch.float64, requires_grad=True)
for make in (lambda: a + a, lambda: a.add(a, alpha=2), lambda: a.add(a * 1, alpha=2),
             lambda: a.sub(a, alpha=2), lambda: a.add(torch.ones(1, 2), alpha=2),
             lambda: (a * 1).mean(1, True) * 2):
    n = torch.abs(make()).grad_fn(torch.ones(1, 2, dtype=torch.float64))
    for create in (False, True):
        h, = torch.autograd.grad(n, [a], grad_outputs=torch.ones(1, 2, dtype=torch.float64),
                                 retain_graph=True, create_graph=create)
        print(h._is_zerotensor(), h.grad_fn)
""",
})
_add("undefined_grad_downstream", {
    "prehook_none_every_hook_below_sees_none": """
x = torch.tensor([1., 2.], requires_grad=True)
w = torch.tensor([3., 4.], requires_grad=True)
a = x * w
a.register_hook(lambda g: print("a hook", g))
x.register_hook(lambda g: print("x hook", g))
x.register_post_accumulate_grad_hook(lambda t: print("x post", t.grad))
a.grad_fn.register_prehook(lambda go: print("a pre", go))
a.grad_fn.register_hook(lambda gi, go: print("a node hook", gi, go))
y = a.exp()
y.grad_fn.register_prehook(lambda go: (None,))
y.grad_fn.register_hook(lambda gi, go: print("y node hook", gi, go))
y.sum().backward()
print(x.grad, w.grad)
""",
    "prehook_none_on_the_loss": """
x = torch.tensor([1., 2.], requires_grad=True)
x.register_hook(lambda g: print("x hook", g))
loss = (x ** 2).sum()
loss.grad_fn.register_prehook(lambda grad_outputs: (None,))
loss.backward()
print(x.grad)
x.grad = torch.zeros(2)
loss = (x ** 2).sum()
loss.grad_fn.register_prehook(lambda grad_outputs: (None,))
loss.backward()
print(x.grad)
""",
    "one_branch_cut_the_other_adds": """
x = torch.tensor([1., 2.], requires_grad=True)
x.register_hook(lambda g: print("x hook", g))
y = x * 2
z = x * 3
y.grad_fn.register_prehook(lambda go: (None,))
(y + z).sum().backward()
print(x.grad)
""",
    "custom_function_below_gets_zeros": """
class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2
    @staticmethod
    def backward(ctx, g):
        print("F backward", g)
        return g * 2
x = torch.tensor([1., 2.], requires_grad=True)
x.register_hook(lambda g: print("x hook", g))
m = F.apply(x) * 3
m.retain_grad()
m.register_hook(lambda g: print("m hook", g))
y = m.sin()
y.grad_fn.register_prehook(lambda go: (None,))
y.sum().backward()
print(x.grad, m.grad)
""",
    "tensor_hook_cannot_give_one_back": """
x = torch.tensor([1., 2.], requires_grad=True)
m = x * 3
m.register_hook(lambda g: torch.ones(2))
y = m.sin()
y.grad_fn.register_prehook(lambda go: (None,))
y.sum().backward()
""",
    "node_hook_returning_none": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (None, None))
x.register_hook(lambda g: print("x hook", g))
y.exp().sum().backward()
print(x.grad)
""",
    "saved_tensors_below_are_freed": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x.exp()
y.register_hook(lambda g: print("y hook", g))
z = y * 2
z.grad_fn.register_prehook(lambda go: (None,))
z.sum().backward()
print(x.grad)
y.sum().backward()
""",
    "autograd_grad_through_a_cut": """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
y.grad_fn.register_prehook(lambda go: (None,))
print(torch.autograd.grad(y.sum(), x, allow_unused=True))
y = x * 2
y.grad_fn.register_prehook(lambda go: (None,))
x.register_hook(lambda g: print("x hook", g))
print(torch.autograd.grad(y.sum(), x, allow_unused=True))
""",
    "accumulate_grad_prehook_none": """
x = torch.tensor([1., 2.], requires_grad=True)
x.register_post_accumulate_grad_hook(lambda t: print("post", t.grad))
x.register_hook(lambda g: print("x hook", g))
y = x * 2
acc = y.grad_fn.next_functions[0][0]
acc.register_prehook(lambda go: print("acc pre", go) or (None,))
acc.register_hook(lambda gi, go: print("acc hook", gi, go))
y.sum().backward(retain_graph=True)
print(x.grad)
x.grad = torch.ones(2)
y.sum().backward()
print(x.grad)
""",
    "custom_function_returning_none_for_an_input": """
class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        return x * w
    @staticmethod
    def backward(ctx, g):
        return None, g
x = torch.tensor([1., 2.], requires_grad=True)
w = torch.tensor([3., 4.], requires_grad=True)
a = x.exp()
a.register_hook(lambda g: print("a hook", g))
F.apply(a, w).sum().backward()
print(x.grad, w.grad)
a2 = x.exp()
F.apply(a2, w).sum().backward()
a2.sum().backward()
""",
    "backward_inputs_through_a_cut": """
x = torch.tensor([1., 2.], requires_grad=True)
x.register_hook(lambda g: print("x hook", g))
x.register_post_accumulate_grad_hook(lambda t: print("post", t.grad))
y = x * 2
y.grad_fn.register_prehook(lambda go: (None,))
y.sum().backward(inputs=[x])
print(x.grad)
a = x * 3
b = a * 2
b.grad_fn.register_prehook(lambda go: (None,))
a.register_hook(lambda g: print("a hook", g))
b.sum().backward(inputs=[a])
print(a.grad)
""",
})

# ----------------------------------------------------------------------------------------
# A list, a tuple or a numpy array as the other operand: PyTorch's parser takes a Tensor or
# a number (a numpy scalar too), so a method or function refuses the rest in its words and an
# operator leaves them to Python (a list repeats itself for *) or to numpy (which reads the
# tensor as an array: refused for one that requires grad, a float64 Tensor otherwise)
# ----------------------------------------------------------------------------------------
_add("operand_not_a_tensor", {
    # a number in the input's place, which PyTorch's parser wraps as a 0-d tensor: a node of
    # two inputs, the first without an edge (mul and div save it, as float64, here in the
    # result's dtype: not shown)
    "number_first_by_name": """
import numpy as np
x = torch.tensor([1., 2.], requires_grad=True)
d = torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True)
i = torch.tensor([1, 2])
for y in (torch.add(1., x), torch.add(np.float64(1.), x), torch.add(2, d), torch.add(True, x),
          torch.add(1.5, x, alpha=0.5), torch.add(input=1., other=x), torch.sub(1., d),
          torch.mul(2., x), torch.mul(np.float32(2.), d), torch.div(1., x), torch.add(0.5, i),
          torch.mul(3, i), torch.add(0.1, torch.tensor(1.)), torch.mul(0.1, torch.tensor(3.))):
    f = y.grad_fn
    print(y, y.dtype, y.item() if not y.dim() else "", f and f.next_functions,
          f and [(k, getattr(f, k)) for k in dir(f) if k.startswith("_saved_")
                 and k != "_saved_self"])
    if y.requires_grad:
        print(torch.autograd.grad(y.sum(), [x, d], allow_unused=True))
for f in (lambda: torch.add(np.array(1.), x), lambda: torch.maximum(1., x)):
    try:
        f()
    except TypeError as e:
        print("TypeError:", e)
""",
    "lists_and_tuples_with_operators": """
x = torch.tensor([1., 2.], requires_grad=True)
i = torch.tensor(2)
for f in [lambda: x + [1., 2.], lambda: [1., 2.] + x, lambda: x - [1, 2], lambda: x / (1., 2.),
          lambda: x ** [1., 2.], lambda: x * [1., 2.], lambda: (1., 2.) * x, lambda: x @ [1., 2.],
          lambda: x < [1., 2.], lambda: [1., 2.] - x, lambda: i * [1, 2], lambda: [3] * i]:
    try:
        print(f())
    except TypeError as e:
        print("TypeError:", e)
print(x == [1., 2.], x != (1., 2.))
""",
    "lists_and_arrays_by_name": """
import numpy as np
x = torch.tensor([1., 2.], requires_grad=True)
for f in [lambda: torch.mul(x, [1, 2]), lambda: torch.add(x, (1., 2.)), lambda: x.mul([1., 2.]),
          lambda: x.sub(np.array([1., 2.])), lambda: torch.div(x, [1., 2.]), lambda: x.div((1., 2.)),
          lambda: torch.maximum(x, [1., 2.]), lambda: torch.dot(x, [1., 2.]),
          lambda: x.matmul([1., 2.]), lambda: torch.mul(x, np.array(2.)), lambda: x.add_([1., 2.]),
          lambda: torch.pow(x, [1., 2.]), lambda: x.pow([1., 2.]), lambda: x.eq([1., 2.]),
          lambda: x.lt(np.array([1., 2.])), lambda: torch.where(x > 1, x, [0., 0.])]:
    try:
        print(f())
    except TypeError as e:
        print("TypeError:", e)
""",
    "numpy_arrays_with_operators": """
import numpy as np
x = torch.tensor([1., 2.], requires_grad=True)
for f in [lambda: x * np.array([1., 2.]), lambda: x + np.array([1., 2.], dtype=np.float32),
          lambda: x * np.array(2.), lambda: np.array([1., 2.]) * x, lambda: np.ones(2) - x,
          lambda: np.ones(2) + x]:
    try:
        print(f())
    except (TypeError, RuntimeError) as e:
        print(type(e).__name__, e)
""",
    "numpy_arrays_with_a_tensor_that_needs_no_grad": """
import numpy as np
t = torch.tensor([1., 2.])
print(t * np.array([1., 2.]))
print(t ** np.array([2., 3.]))
print(t > np.array([1.5, 1.5]))
print(np.exp(t))
""",
    "numpy_scalars_are_numbers": """
import numpy as np
x = torch.tensor([1., 2.], requires_grad=True)
for y in [x * np.float64(2.), np.float64(2.) * x, x * np.float32(2.), torch.mul(x, np.float64(2.)),
          x.mul(np.int64(2)), np.float64(2.) ** x, np.float64(2.) - x, np.float32(2.) / x,
          x ** np.float64(2.), x + np.bool_(True), x.add(np.float32(1.))]:
    print(y)
y.sum().backward()
print(x.grad)
""",
    "assigning_a_list_or_an_array": """
import numpy as np
for v in ([1., 2.], (1., 2.), np.array([1., 2.]), np.float64(3.), np.array(3.), [5.], 7):
    a = torch.zeros(3)
    try:
        a[0:2] = v
        print(a)
    except TypeError as e:
        print("TypeError:", e)
b = torch.zeros(2, dtype=torch.float64)
try:
    b[0] = [1.]
except TypeError as e:
    print("TypeError:", e)
""",
})

# ----------------------------------------------------------------------------------------
# A view made before its base requires grad: it asks its base (requires_grad True), has no
# grad_fn and no gradient of its own, and is refused in place as a view of a leaf
# ----------------------------------------------------------------------------------------
_add("view_before_base_requires_grad", {
    "select_slice_view": """
a = torch.tensor([1., 2., 3.])
b = a[0]
c = a.view(3, 1)
d = a[1:]
e = d[None]
a.requires_grad_()
print(b.requires_grad, c.requires_grad, d.requires_grad, e.requires_grad)
print(b.grad_fn, b.is_leaf, c.is_leaf)
print(a[0].requires_grad, a[0].grad_fn)
""",
    "backward_through_it_fills_nothing": """
a = torch.tensor([1., 2., 3.])
b = a[0]
a.requires_grad_()
y = b * 2
print(y.requires_grad, y.grad_fn.next_functions)
y.backward()
print(a.grad, b.grad)
(c := a[1:]).sum().backward()
print(a.grad, c.grad)
""",
    "in_place_and_flags": """
a = torch.tensor([1., 2., 3.])
b = a[0]
a.requires_grad_()
for f in [lambda: b.mul_(2), lambda: b.requires_grad_(False), lambda: b.requires_grad]:
    try:
        print(f())
    except RuntimeError as e:
        print("RuntimeError:", e)
a.requires_grad_(False)
print(b.requires_grad)
a.requires_grad = True
print(b.requires_grad)
""",
})
