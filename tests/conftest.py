import pytest

from circle_render.gpu import gpu_status


def pytest_collection_modifyitems(config, items):
    usable, reason = gpu_status()
    if usable:
        return
    skip = pytest.mark.skip(reason=f"no usable GPU: {reason}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
