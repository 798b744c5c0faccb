"""What lesson 09 teaches of a custom Function's ``ctx`` is documented where a learner reads
it: each method and attribute has a docstring saying its contract, with an example, as
PyTorch's ``torch/autograd/function.py`` documents its own."""
import inspect
import re

import pytest

from autograd_lab.autograd.function import FunctionCtx

METHODS = ("save_for_backward", "saved_tensors", "mark_dirty", "mark_non_differentiable",
           "set_materialize_grads")


@pytest.mark.parametrize("name", METHODS)
def test_each_ctx_method_lesson_09_teaches_has_a_docstring(name):
    doc = inspect.getdoc(getattr(FunctionCtx, name))
    assert doc and len(doc.split()) >= 30, (name, doc)
    if name != "saved_tensors":       # (read in the others' examples)
        assert re.search(rf"ctx\.{name}\(", doc), f"{name}'s docstring shows no call of it"


def test_needs_input_grad_is_documented_on_the_ctx_class():
    """An attribute apply sets on each node: the class's docstring says it."""
    doc = inspect.getdoc(FunctionCtx)
    assert "ctx.needs_input_grad[0]" in doc and "tuple of booleans" in doc, doc


def test_every_ctx_method_pytorch_documents_is_documented_here():
    torch = pytest.importorskip("torch")
    theirs = torch.autograd.function.FunctionCtx
    documented = [name for name, member in vars(theirs).items()
                  if not name.startswith("_") and getattr(member, "__doc__", None)
                  and hasattr(FunctionCtx, name)]
    assert set(documented) >= {"save_for_backward", "mark_dirty", "mark_non_differentiable",
                               "set_materialize_grads"}, documented
    assert [n for n in documented if not inspect.getdoc(getattr(FunctionCtx, n))] == []
