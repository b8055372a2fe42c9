from collections import Counter

import pytest

from circle_render.gpu import gpu_status

GPU_SKIP = ("needs a CUDA GPU (marked gpu): {why}; on a machine with an NVIDIA GPU, "
            "pip install -e '.[cuda13,test]' (or cuda12)")


def pytest_collection_modifyitems(config, items):
    usable, reason = gpu_status()
    if usable:
        return
    why = reason.split(";")[0].split(" (")[0]          # "CuPy is not installed", "no CUDA GPU is visible"
    skip = pytest.mark.skip(reason=GPU_SKIP.format(why=why))
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter):
    """One line per reason the skipped tests were skipped for, with how many: what a run
    without a GPU (or NVRTC, Xvfb, nvcc) left out, without -rs."""
    skipped = terminalreporter.stats.get("skipped", [])
    if not skipped:
        return
    reasons = Counter()
    for report in skipped:
        longrepr = report.longrepr
        text = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reasons[text.removeprefix("Skipped: ")] += 1
    terminalreporter.write_line(f"{len(skipped)} skipped (pytest -rs lists each):")
    for why, n in reasons.most_common():
        terminalreporter.write_line(f"  {n:>4}  {why}")
