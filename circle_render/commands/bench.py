"""``render bench``: time scenes the course's way (on the GPU, or a CPU renderer), write a JSON
record and its plot."""
from __future__ import annotations

from pathlib import Path

import click

from circle_render import __version__, registry
from circle_render.errors import UserError
from circle_render.gpu import gpu_name, no_gpu_notice, require_gpu
from circle_render.io.images import check_output_path
from circle_render.progress import notice, set_quiet
from circle_render.scenes import SCENE_NAMES, SCENES

RESULTS = Path("benchmarks/results")


def default_output(renderer_name: str, size: int) -> Path:
    """MACHINE-RENDERER-SIZE-VERSION[-COMMIT].json (MACHINE: the GPU, or "cpu"; RENDERER: a
    user's class by its name), in benchmarks/results/ when run in a checkout, else in the
    current folder."""
    from circle_render.timing.bench import source_commit
    def slug(text: str) -> str:
        return "".join(ch if ch.isalnum() else "-" for ch in text).strip("-")
    machine = (gpu_name() or "gpu") if registry.needs_gpu(renderer_name) else "cpu"
    commit = source_commit()
    name = (f"{slug(machine)}-{slug(registry.display_name(renderer_name))}-{size}-{__version__}"
            + (f"-{commit[:10]}" if commit else "") + ".json")
    return (RESULTS if RESULTS.is_dir() else Path(".")) / name


def bench_command(renderer_name: str, scenes: str, size: int, runs: int, output: str | None,
                  plot: str | None = None, quiet: bool = False) -> None:
    """Time every scene (course method; CUDA events too on a GPU), print a table, write the
    record and its plot (beside the record unless ``plot`` names the PNG)."""
    from circle_render.timing.bench import format_table, run_bench, write_record
    from circle_render.timing.plot import plot_record
    set_quiet(quiet)
    names = [s for s in scenes.split(",") if s]
    unknown = [s for s in names if s not in SCENES]
    if unknown:
        raise UserError(f"unknown scene {unknown[0]!r}; accepted: {', '.join(SCENE_NAMES)}")
    if renderer_name == "auto":
        said = no_gpu_notice(registry.resolve("auto"))
        if said:
            notice(f"bench: {said}")
        renderer_name = registry.resolve("auto")
    out = check_output_path(output or default_output(renderer_name, size), (".json",), "record")
    picture = check_output_path(plot or out.with_suffix(".png"), (".png",), "plot")
    if registry.needs_gpu(renderer_name):
        require_gpu("render bench")
    record = run_bench(renderer_name, names, size, runs=runs, progress=lambda n: notice(f"bench: {n}"))
    write_record(record, out)
    plot_record(record, picture)
    click.echo(format_table(record))
    notice(f"bench: wrote {out} and its plot, {picture}")
