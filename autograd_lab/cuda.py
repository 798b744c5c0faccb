"""``torch.cuda`` of a PyTorch built without CUDA: nothing is available, and what would need a
GPU raises PyTorch's error. Seeding is accepted and does nothing, as there."""
from ._core.device import NO_CUDA


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def manual_seed(seed):
    pass


manual_seed_all = manual_seed


def empty_cache():
    pass


def _no_cuda(*args, **kwargs):
    raise AssertionError(NO_CUDA)


current_device = get_device_name = synchronize = set_device = _no_cuda
