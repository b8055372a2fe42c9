"""``python -m benchmarks``: one entry point reaching every script, and the records the docs cite."""
import contextlib
import fnmatch
import io
import re
import subprocess
import sys

import pytest
from helpers import ROOT

sys.path.insert(0, str(ROOT))
from benchmarks.__main__ import COMMANDS, main

HELPERS = {"__main__.py", "records.py"}       # modules of benchmarks/ that are no subcommand


def run(*args):
    return subprocess.run([sys.executable, "-m", "benchmarks", *args], cwd=ROOT, capture_output=True, text=True)


def test_help_lists_every_subcommand():
    p = run("--help")
    assert p.returncode == 0
    listed = [line.split()[0] for line in p.stdout.split("Subcommands:")[1].splitlines() if line.strip()]
    assert listed == list(COMMANDS)


def test_an_unknown_subcommand_is_one_line_and_exit_2():
    p = run("benchmark-everything")
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and "'benchmark-everything'" in p.stderr and "knobs" in p.stderr
    assert run().returncode == 2                       # nothing asked: the usage, exit 2


def test_every_script_is_a_subcommand_or_a_helper():
    scripts = {f.name for f in (ROOT / "benchmarks").glob("*.py")} - HELPERS
    assert scripts == {s for s, _ in COMMANDS.values() if s}


@pytest.mark.parametrize("command", [c for c in COMMANDS if c != "bench"])
def test_each_subcommand_answers_help_without_a_gpu(command, capsys):
    argv = sys.argv[:]
    try:
        with pytest.raises(SystemExit) as e:
            main([command, "--help"])
    finally:
        sys.argv = argv
    assert e.value.code == 0
    assert "usage:" in capsys.readouterr().out


def test_bench_is_render_bench():
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as e:
        main(["bench", "--help"])
    assert e.value.code in (0, None) and "--renderer" in out.getvalue()


RECORD = re.compile(r"(?:H100|cpu-peers)-[A-Za-z0-9_{},*.-]+?\.(?:jsonl|json|txt|png)")
IN_GIT = re.compile(r"git show [0-9a-f^~]+:benchmarks/results/(\S+?)`")


def cited(text: str) -> set[str]:
    """Record names the text cites as files of benchmarks/results/ (not via `git show`)."""
    names = set(RECORD.findall(IN_GIT.sub("", text)))
    out = set()
    for name in names:                                # H100-cuda-{1024,4096}-x.json: both
        m = re.search(r"\{([^}]*)\}", name)
        out |= {name[:m.start()] + v + name[m.end():] for v in m.group(1).split(",")} if m else {name}
    return out - {"cpu-peers-COMMIT.json"}


def test_docs_cite_only_records_that_exist():
    files = [ROOT / "README.md", *ROOT.glob("docs/*.md"), *ROOT.glob("benchmarks/*.py"),
             *ROOT.glob("examples/**/*.md"), *ROOT.glob("circle_render/**/*.py"),
             ROOT / "circle_render" / "golden" / "ref_times.json"]
    have = [f.name for f in (ROOT / "benchmarks" / "results").iterdir()]
    missing = {f"{f.relative_to(ROOT)}: {name}" for f in files for name in cited(f.read_text())
               if not fnmatch.filter(have, name)}
    assert not missing
