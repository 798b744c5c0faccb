"""``torch.backends``: only ``mps`` (Apple's GPU), which tutorials ask about. Not here."""
from . import mps

__all__ = ["mps"]
