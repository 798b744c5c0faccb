"""``torch.nn``: only ``torch.nn.functional``, the functions a hand-written training loop calls.

There is no ``nn.Module`` and no ``torch.optim`` on purpose: the course writes its models as
tensors and its training loops by hand, so that every parameter and update is in sight."""
from . import functional

__all__ = ["functional"]


def __getattr__(name):
    raise AttributeError(
        f"module 'torch.nn' has no attribute {name!r}: autograd_lab has only "
        "torch.nn.functional. Modules, layers and optimizers are written by hand in this course "
        "(parameters are tensors with requires_grad=True; see README, 'What it does not do').")
