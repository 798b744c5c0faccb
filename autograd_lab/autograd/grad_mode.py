"""``torch.autograd.grad_mode``: ``no_grad``, ``enable_grad``, ``set_grad_enabled``,
``inference_mode``.

A public module: they are in ``autograd_lab/_core/grad_mode.py``, with anomaly mode."""
from .._core.grad_mode import (detect_anomaly, enable_grad, inference_mode,
                               is_anomaly_check_nan_enabled, is_anomaly_enabled, is_grad_enabled,
                               is_inference_mode_enabled, no_grad, set_detect_anomaly,
                               set_grad_enabled)

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "set_detect_anomaly", "detect_anomaly",
           "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]
