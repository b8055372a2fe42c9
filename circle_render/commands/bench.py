"""``render bench``: time scenes on the GPU and write a JSON record."""
from __future__ import annotations

from pathlib import Path

import click

from circle_render.errors import UserError
from circle_render.gpu import require_gpu
from circle_render.scenes import SCENE_NAMES, SCENES


def bench_command(renderer_name, scenes, size, runs, output) -> None:
    """Time every scene (course method and CUDA events), print a table, write the record."""
    from circle_render.timing.bench import format_table, run_bench, write_record
    names = [s for s in scenes.split(",") if s]
    unknown = [s for s in names if s not in SCENES]
    if unknown:
        raise UserError(f"unknown scene {unknown[0]!r}; accepted: {', '.join(SCENE_NAMES)}")
    require_gpu("render bench")
    record = run_bench(renderer_name, names, size, runs=runs,
                       progress=lambda n: click.echo(f"bench: {n}", err=True))
    if output is None:
        slug = "".join(ch if ch.isalnum() else "-" for ch in (record["gpu"] or "gpu")).strip("-")
        output = Path("benchmarks/results") / f"{slug}-{renderer_name}-{size}-{record['commit'][:10]}.json"
    write_record(record, output)
    click.echo(format_table(record))
    click.echo(f"wrote {output}", err=True)
