"""The course's stored reference times (golden/ref_times.json), by GPU model."""
from __future__ import annotations

import json
from pathlib import Path

REF_TIMES_FILE = Path(__file__).resolve().parent / "golden" / "ref_times.json"


def load_ref_times(path: str | Path = REF_TIMES_FILE) -> dict:
    return json.loads(Path(path).read_text())["gpus"]


def ref_times_for(gpu: str | None, kind: str = "render") -> dict[str, float] | None:
    """Reference times (ms) for a GPU model name, matched case-insensitively; None if unknown."""
    if gpu is None:
        return None
    for model, tables in load_ref_times().items():
        if model.lower() == gpu.lower() or model.lower() in gpu.lower() or gpu.lower() in model.lower():
            return tables.get(kind)
    return None
