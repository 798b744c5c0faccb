"""Grad mode: whether operations record a graph (``no_grad``, ``enable_grad``, ...)."""
import functools


class _State:
    enabled = True          # read by every operation, so it is a plain class attribute
    anomaly = False         # set_detect_anomaly: nodes remember where they were made
    check_nan = True
    # A built-in node's backward formula is being recorded (create_graph, or a node called
    # with grad mode on). PyTorch's formulas are C++, where a number stays a Scalar: ``grad *
    # 2`` there records MulBackward1 (one input), where Python's ``x * 2`` wraps the 2 in a
    # tensor and records MulBackward0 (two inputs).
    formula = False
    inference = False       # inference_mode: tensors made now are inference tensors


#: what PyTorch says when an inference tensor meets the graph
INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`.")
INFERENCE_REQUIRES_GRAD = (
    "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
INFERENCE_INPLACE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details.")


def is_grad_enabled():
    return _State.enabled


class _Mode:
    """A context manager that is also a decorator, like ``torch.no_grad()``."""

    mode = True

    def __enter__(self):
        self.prev = _State.enabled
        _State.enabled = self.mode

    def __exit__(self, *exc):
        _State.enabled = self.prev

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_Mode):
    """Operations inside record nothing: results have ``requires_grad=False``."""
    mode = False


class enable_grad(_Mode):
    """Turns recording back on inside a ``no_grad`` block."""
    mode = True


class set_grad_enabled(_Mode):
    """``set_grad_enabled(False)`` switches recording off at once; as a context manager it
    restores the previous mode on exit."""

    def __init__(self, mode):
        self.prev = _State.enabled
        self.mode = mode
        _State.enabled = mode

    def __enter__(self):
        pass

    def __call__(self, fn):
        _State.enabled = self.prev          # used as a decorator: only switch while fn runs
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)
        return wrapper


class inference_mode(_Mode):
    """``no_grad``, made final: nothing is recorded, and every tensor made inside is an
    *inference tensor* (``t.is_inference()``), marked for good. Outside, autograd refuses
    to save one for backward, to make it require grad or to change it in place: PyTorch can
    then skip the bookkeeping (version counters, views' history) that a later graph would
    need. ``inference_mode(False)`` is grad mode back on. A decorator too, with or without
    parentheses."""

    def __new__(cls, mode=True):
        if callable(mode):                  # @torch.inference_mode, without parentheses
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def __enter__(self):
        self.prev = (_State.enabled, _State.inference)
        _State.enabled, _State.inference = not self.mode, self.mode

    def __exit__(self, *exc):
        _State.enabled, _State.inference = self.prev

    def __call__(self, fn):
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(mode):
                return fn(*args, **kwargs)
        return wrapper


def is_inference_mode_enabled():
    return _State.inference


# -- anomaly detection: slower, for debugging a backward that fails -------------------------
class set_detect_anomaly:
    """``set_detect_anomaly(True)``: every new node remembers the Python stack of the forward
    call that made it, a node that fails in backward says where it was made, and (with
    ``check_nan``) a gradient with nan raises. Works at once, and as a context manager that
    restores the previous setting."""

    def __init__(self, mode, check_nan=True):
        self.prev = (_State.anomaly, _State.check_nan)
        _State.anomaly, _State.check_nan = bool(mode), bool(check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _State.anomaly, _State.check_nan = self.prev


class detect_anomaly(set_detect_anomaly):
    """``with detect_anomaly():`` -- anomaly detection inside the block only."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan

    def __enter__(self):
        import warnings
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", UserWarning, stacklevel=2)
        super().__init__(True, self.check_nan)


def is_anomaly_enabled():
    return _State.anomaly


def is_anomaly_check_nan_enabled():
    return _State.check_nan
