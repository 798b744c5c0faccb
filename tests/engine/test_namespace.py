"""``dir(autograd_lab)`` lists PyTorch's names only: ``import autograd_lab as torch`` shows a
learner nothing that is not in torch (no ``np``, no helpers), so that a typo's "Did you mean"
suggestion is a PyTorch name. And importing it stays light: no torch, matplotlib, nbgrader."""
import subprocess
import sys

import autograd_lab

OURS_ONLY = {"viz", "checks"}   # the course's own: graphs, checks (the grader is a package of its own)


def test_public_names_are_pytorch_names(torch):
    public = {n for n in dir(autograd_lab) if not n.startswith("_")}
    assert public - set(dir(torch)) - OURS_ONLY == set()


def test_the_tutorials_names_are_there():
    for name in ("device", "cuda", "accelerator", "backends", "nn", "save", "load", "clamp",
                 "clip", "softmax", "log_softmax", "argmax", "argmin", "all", "any", "movedim",
                 "rand_like", "randn_like", "get_default_device", "set_default_device"):
        assert hasattr(autograd_lab, name), name
    assert hasattr(autograd_lab.autograd, "gradcheck")
    assert hasattr(autograd_lab.autograd.graph, "saved_tensors_hooks")


def test_import_stays_light():
    code = ("import sys, autograd_lab, autograd_lab.nn.functional\n"
            "print(sorted(m for m in ('torch', 'matplotlib', 'nbgrader', 'graphviz') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
