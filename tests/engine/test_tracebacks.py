"""An error a learner meets in a notebook points at the learner's line: IPython hides the
engine's frames (``__tracebackhide__``) and shows the cell, the one line that raised, and
PyTorch's message -- where the engine's own call chain would be six frames deep."""
import re

import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

CELLS = {
    "freed graph": ("x = torch.tensor(2., requires_grad=True)\ny = x * x\ny.backward()\n"
                    "y.backward()", "Trying to backward through the graph a second time"),
    "no grad": ("x = torch.tensor(2.)\n(x * 2).backward()",
                "element 0 of tensors does not require grad"),
    "vector output": ("x = torch.tensor([1., 2.], requires_grad=True)\n(x * 2).backward()",
                      "grad can be implicitly created only for scalar outputs"),
    "leaf in place": ("x = torch.tensor([1., 2.], requires_grad=True)\nx.add_(1)",
                      "a leaf Variable that requires grad is being used in an in-place"),
    "autograd.grad": ("x = torch.tensor(2., requires_grad=True)\ny = x * x\n"
                      "torch.autograd.grad(y, x)\ntorch.autograd.grad(y, x)",
                      "Trying to backward through the graph a second time"),
}


@pytest.fixture(scope="module")
def errors():
    nb = new_notebook(cells=[new_code_cell("import autograd_lab as torch")]
                      + [new_code_cell(source) for source, _ in CELLS.values()])
    NotebookClient(nb, kernel_name="python3", allow_errors=True, timeout=60).execute()
    found = {}
    for name, cell in zip(CELLS, nb.cells[1:]):
        error = next(o for o in cell.outputs if o.output_type == "error")
        found[name] = (error, re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(error.traceback)))
    return found


@pytest.mark.parametrize("name", list(CELLS))
def test_the_traceback_shows_the_learners_cell_and_one_engine_line(errors, name):
    error, text = errors[name]
    assert CELLS[name][1] in error.evalue
    frames = [line for line in text.splitlines() if line.startswith(("Cell In", "File "))]
    # the cell first; then only the frame that raised (IPython always shows that one)
    assert frames[0].startswith("Cell In"), frames
    assert len(frames) == 2, frames
    assert "skipping hidden" in text
