"""The benchmark scripts' ending: the record as JSON on stdout, and in a file if asked."""
from __future__ import annotations

import json
from pathlib import Path

from circle_render.timing.bench import write_record


def print_record(record: dict, path: str | Path | None = None) -> None:
    """``record`` as JSON on stdout, and written whole to ``path`` if given."""
    print(json.dumps(record, indent=2))
    if path:
        write_record(record, path)
