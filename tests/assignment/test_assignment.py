"""The assignment kit without a GPU: the scaffold imports, the handout's commands exist, and
render check says in one line that the scaffold needs a GPU."""
import importlib.util

import pytest
from helpers import ROOT, render

from circle_render import registry
from circle_render.gpu import gpu_available

SCAFFOLD = ROOT / "assignment" / "my_renderer.py"


def test_the_scaffold_imports_without_a_gpu():
    spec = importlib.util.spec_from_file_location("my_renderer", SCAFFOLD)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    r = module.StudentRenderer()
    assert r.needs_gpu and all(callable(getattr(r, m)) for m in ("load", "clear", "advance", "render", "get_image"))
    assert module.KERNEL.is_file() and 'extern "C" __global__ void render_circles' in module.KERNEL.read_text()


@pytest.mark.skipif(gpu_available(), reason="a GPU is present")
def test_render_check_says_the_scaffold_needs_a_gpu(tmp_path):
    p = render("check", "-r", f"{SCAFFOLD}:StudentRenderer", cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.strip().count("\n") == 0 and "needs a CUDA GPU" in p.stderr
    # the handout's words: the renderer named, no exception type in front of them
    assert "PluginError" not in p.stderr and "importing it failed" not in p.stderr
    assert "renderer '" in p.stderr and "on a machine with an NVIDIA GPU" in p.stderr
    assert not (tmp_path / "logs").exists()


@pytest.mark.skipif(gpu_available(), reason="a GPU is present")
def test_the_starter_needs_a_gpu_too(tmp_path):
    p = render("rgb", "-r", "cuda-starter", cwd=tmp_path)
    assert p.returncode == 2 and "renderer 'cuda-starter' needs a CUDA GPU" in p.stderr


def test_the_starter_is_a_renderer_of_the_command_line():
    assert registry.RENDERERS["cuda-starter"].needs_gpu and "cuda-starter" in registry.CHOICES


def test_the_handout_names_only_commands_that_exist():
    text = (ROOT / "docs" / "assignment.md").read_text()
    for needed in ("render check -r assignment/my_renderer.py:StudentRenderer", "-r cuda-starter", "helpers.cuh"):
        assert needed in text, needed


def _handout_commands() -> list[list[str]]:
    """Every `render ...` line of the handout's code blocks, as arguments (comments dropped)."""
    import re
    import shlex
    text = (ROOT / "docs" / "assignment.md").read_text()
    lines = [line for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S) for line in block.splitlines()]
    return [shlex.split(line.split("  #")[0])[1:] for line in lines if line.startswith("render ")]


def test_the_handouts_commands_parse(tmp_path):
    # each command's options exist (click rejects an unknown one before it prints the help)
    commands = _handout_commands()
    assert len(commands) >= 8
    for args in commands:
        p = render(*args, "--help", cwd=ROOT)
        assert p.returncode == 0 and "Usage:" in p.stdout, (args, p.stderr)


def test_the_handouts_files_exist():
    import re
    text = (ROOT / "docs" / "assignment.md").read_text()
    for path in set(re.findall(r"`((?:assignment|examples|circle_render|benchmarks|tests)/[\w/.-]+\.\w+)", text)):
        if "*" not in path:
            assert (ROOT / path).exists(), path
