"""``torch.accelerator``: the device-neutral way to ask for a GPU. Here there is none."""


def is_available():
    return False


def current_accelerator(check_available=False):
    return None


def device_count():
    return 0
