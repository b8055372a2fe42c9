"""cpu-fast's kernels take named structures (cpu/fast_types.py) as the plain tuples of their
fields and unpack them by the same names, in the same order: checked here from the source, so
that a field added to a structure and not to a kernel (or the other way round) fails."""
import inspect
import re

import pytest

from circle_render.cpu import fast_animation, fast_bins, fast_kernels, fast_types

# a kernel's parameter -> the structure it holds
PARAMETERS = {"circles": fast_types.Circles, "grid": fast_types.TileGrid, "counts": fast_types.Counts,
              "entries": fast_types.Entries, "frame": fast_types.Frame, "lists": fast_types.Tiles,
              "shading": fast_types.Shading, "flakes": fast_types.Flakes, "noise": fast_types.Noise}
UNPACK = re.compile(r"^\s*([\w ,]+?)\s*=\s*(\w+)\s*$", re.MULTILINE)
MODULES = (fast_bins, fast_kernels, fast_animation)


def _unpackings():
    for module in MODULES:
        for name, value in inspect.getmembers(module):
            func = getattr(value, "py_func", value)
            if not inspect.isfunction(func) or func.__module__ != module.__name__:
                continue
            for targets, source in UNPACK.findall(inspect.getsource(func)):
                if source in PARAMETERS and "," in targets:
                    yield f"{module.__name__.rsplit('.', 1)[1]}.{name}", [t.strip() for t in targets.split(",")], source


CASES = list(_unpackings())


def test_every_structure_is_unpacked_somewhere():
    assert {source for _, _, source in CASES} == set(PARAMETERS)


@pytest.mark.parametrize("where,targets,source", CASES, ids=[f"{w}:{s}" for w, _, s in CASES])
def test_each_kernel_unpacks_a_structure_by_its_field_names(where, targets, source):
    fields = PARAMETERS[source]._fields
    assert len(targets) == len(fields), (where, targets, fields)
    for target, field in zip(targets, fields):
        assert target in ("_", field), f"{where} unpacks {source}'s {field} as {target}"


def test_the_kernels_take_structures_not_long_argument_lists():
    for kernel in (fast_bins.count_tiles, fast_bins.count_tiles_serial, fast_bins.list_tiles,
                   fast_bins.list_tiles_serial, fast_kernels.render_tiles, fast_kernels.fill_rows,
                   fast_animation.snow_step):
        assert len(inspect.signature(kernel.py_func).parameters) <= 5, kernel


def test_fields_is_the_plain_tuple_numba_types_in_c():
    grid = fast_types.TileGrid(64, 32, 16, 16, 4, 2, 64, 64)
    plain = fast_types.fields(grid)
    assert type(plain) is tuple and plain == (64, 32, 16, 16, 4, 2, 64, 64)
