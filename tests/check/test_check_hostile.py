"""`render check` against submissions that set out to cheat it or leave things behind: the
threat model in docs/check.md ("The checker's threat model"). Each
class misbehaves in its own way per scene, so one check tries several attacks; every attack
must fail its scene or leave the time and the cache untouched."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from helpers import ROOT, table_rows

FAST = ["-s", "16", "--runs", "1", "-S", "0", "--baseline", "cpu"]

CHEATS = """
    import os, struct, sys, threading, time
    import numpy as np
    from circle_render.cpu.reference import CpuRenderer

    CMD, REPLY, SHM = (int(a) for a in sys.argv[1:4])       # the worker's channel, as anyone can see
    HEADER = struct.Struct("<BxxxIQ")

    class ByScene(CpuRenderer):
        def load(self, scene, w, h):
            super().load(scene, w, h)
            getattr(self, "on_load_" + scene.name, lambda: None)()
        def render(self):
            getattr(self, "on_render_" + self.scene.name, lambda: None)()
            super().render()

    class Clocks(ByScene):
        '''rgb: stops every clock of its process, then takes 200 ms; pattern: puts its drawing
        off until get_image(), and takes 100 ms there.'''
        def on_render_rgb(self):
            for name in ("perf_counter", "monotonic", "time", "process_time"):
                setattr(time, name, lambda: 0.0)
            for name in ("perf_counter_ns", "monotonic_ns", "time_ns"):
                setattr(time, name, lambda: 0)
            time.clock_gettime = lambda clock: 0.0
            time.clock_gettime_ns = lambda clock: 0
            time.sleep(0.2)
        def render(self):
            if self.scene.name == "pattern":
                self.pending = True
                return
            super().render()
        def get_image(self):
            if getattr(self, "pending", False):
                self.pending = False
                time.sleep(0.1)
                CpuRenderer.render(self)
            return super().get_image()

    class Forges(ByScene):
        '''rgb: a reply written before the real one; pattern: half a reply, then exits;
        rgby: a reply to render() that comes late, while get_image() runs; hypnosis: bytes
        sent unasked; fireworks: replies sent after its scene is over (ignored).'''
        def on_render_rgb(self):
            os.write(REPLY, HEADER.pack(16, 0, 0))
        def on_render_pattern(self):
            os.write(REPLY, HEADER.pack(16, 0, 0)[:7])
            os._exit(0)
        def on_render_rgby(self):
            threading.Timer(0.02, lambda: os.write(REPLY, HEADER.pack(16, 0, 12345))).start()
        def get_image(self):
            if self.scene.name == "rgby":
                time.sleep(0.1)
            return super().get_image()
        def on_load_hypnosis(self):
            threading.Timer(0.2, lambda: os.write(REPLY, b"garbage")).start()
            time.sleep(0.3)
        def on_render_fireworks(self):
            threading.Timer(2, lambda: os.write(REPLY, HEADER.pack(16, 0, 1))).start()

    class Leaves(ByScene):
        '''rgb: a daemon of its own session (two forks), holding every pipe, and 20 children;
        pattern: a child holding the pipes, then the worker exits with 3.'''
        def on_load_rgb(self):
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    print(f"DAEMON {os.getpid()}", file=sys.stderr, flush=True)
                    time.sleep(300)
                os._exit(0)
            for _ in range(20):
                if os.fork() == 0:
                    print(f"CHILD {os.getpid()}", file=sys.stderr, flush=True)
                    time.sleep(300)
                    os._exit(0)
            time.sleep(0.2)
        def on_render_pattern(self):
            if os.fork() == 0:
                print(f"CHILD {os.getpid()}", file=sys.stderr, flush=True)
                time.sleep(300)
                os._exit(0)
            time.sleep(0.2)
            os._exit(3)

    class LeavesAndWaits(Leaves):
        '''Leaves, then rgb's drawing takes 30 s: a signal sent once the children are seen always
        finds the check running, however slow the machine is to read their lines.'''
        def on_render_rgb(self):
            time.sleep(30)

    class Late(ByScene):
        def on_render_rgb(self):
            time.sleep(60)

    class Snoops(ByScene):
        '''Draws right, and meanwhile tries what it must not: read and plant reference images,
        read the cache's key, write beside its own file, resize the shared image, read the
        checker's environment.'''
        def on_load_rgb(self):
            reference = os.environ.get("TEST_CHECKER_REFERENCE", "")
            for name in sorted(os.listdir(reference)) if os.path.isdir(reference) else []:
                try:
                    with open(os.path.join(reference, name), "rb") as f:
                        f.read(1)
                    print(f"READ {name}", file=sys.stderr)
                except OSError:
                    print(f"DENIED {name}", file=sys.stderr)
            try:
                os.listdir(reference)
                with open(os.path.join(reference, "rgb-16-0-planted.npy"), "wb") as f:
                    f.write(b"planted")
                print("PLANTED", file=sys.stderr)
            except OSError:
                print("NOT PLANTED", file=sys.stderr)
            try:
                with open(os.path.join(os.path.dirname(__file__), "pwned.txt"), "w") as f:
                    f.write("x")
                print("WROTE BESIDE", file=sys.stderr)
            except OSError:
                print("NOT WRITTEN", file=sys.stderr)
            try:
                os.ftruncate(SHM, 0)
                print("RESIZED", file=sys.stderr)
            except OSError:
                print("SEALED", file=sys.stderr)
            print("SECRET" if "TEST_SECRET" in os.environ else "NO SECRET", file=sys.stderr, flush=True)

    class NanAlpha(CpuRenderer):
        def get_image(self):
            img = super().get_image().copy()
            img[2, 3, 3] = np.nan
            return img
"""


@pytest.fixture
def cheats(tmp_path):
    path = tmp_path / "cheats.py"
    path.write_text(textwrap.dedent(CHEATS))
    return path


def run(tmp_path, spec, scenes, *extra, env=None, timeout=240):
    """``render check`` in a process of its own, its output captured (a held pipe would hang it)."""
    cmd = [sys.executable, "-m", "circle_render", "check", "-r", spec, *FAST, "--scenes", scenes, *extra]
    base = {**os.environ, "PYTHONPATH": str(ROOT), "CIRCLE_RENDER_CACHE": str(tmp_path / "cache")}
    start = time.monotonic()
    p = subprocess.run(cmd, cwd=tmp_path, env={**base, **(env or {})}, capture_output=True, text=True,
                       timeout=timeout)
    p.seconds = time.monotonic() - start
    return p


def confined(p) -> bool:
    return "Isolation: none" not in p.stdout


def log(tmp_path, scene):
    return (tmp_path / "logs" / f"{scene}.log").read_text()


def test_no_clock_of_its_own_and_no_untimed_drawing_gives_a_time(tmp_path, cheats):
    p = run(tmp_path, f"{cheats}:Clocks", "rgb,pattern")
    assert p.returncode == 0, p.stderr
    rows = table_rows(p.stdout)
    assert float(rows["rgb"][1]) >= 150, p.stdout          # the checker's clock saw the 200 ms
    assert float(rows["pattern"][1]) >= 80, p.stdout       # get_image()'s 100 ms counted
    assert "what the first call takes beyond the second counts against every frame" in p.stdout


def test_forged_truncated_late_and_unasked_replies_fail_their_scene(tmp_path, cheats):
    p = run(tmp_path, f"{cheats}:Forges", "rgb,pattern,rgby,hypnosis,fireworks")
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    rows = table_rows(p.stdout)
    assert all(rows[s][1].endswith("(F)") and rows[s][2] == "0" for s in ("rgb", "pattern", "rgby", "hypnosis"))
    assert "answered FRAME with a reply to another command (a forged or stale reply)" in log(tmp_path, "rgb")
    assert "exited with code 0 before it finished" in log(tmp_path, "pattern")
    late = log(tmp_path, "rgby")                      # arriving during get_image(), or, on a slow machine, before
    assert "answered IMAGE with OK" in late or "answered FRAME with a reply to another command" in late
    assert "broke the check's protocol" in log(tmp_path, "hypnosis")
    assert "(F)" not in rows["fireworks"][1]                 # what it writes after its scene goes nowhere


def _alive(pids):
    return [pid for pid in pids if os.path.exists(f"/proc/{pid}") and
            open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"]


def test_every_process_a_renderer_starts_ends_with_its_scene(tmp_path, cheats):
    p = run(tmp_path, f"{cheats}:Leaves", "rgb,pattern", timeout=120)   # a held pipe would hang here
    pids = [int(line.split()[1]) for line in p.stderr.splitlines() if line.startswith(("DAEMON", "CHILD"))]
    assert len(pids) >= 22, p.stderr                                     # 21 per load of rgb, 1 on pattern
    assert _alive(pids) == []
    rows = table_rows(p.stdout)
    assert "(F)" not in rows["rgb"][1], p.stdout                         # its picture was right
    assert "exited with code 3 before it finished" in log(tmp_path, "pattern")   # not "timed out"


def test_a_late_answer_is_a_time_out_and_nothing_after_it_counts(tmp_path, cheats):
    p = run(tmp_path, f"{cheats}:Late", "rgb", "--scene-timeout", "3")
    assert p.returncode == 1 and p.seconds < 40, (p.seconds, p.stderr)
    assert "timed out after 3 s (--scene-timeout)" in log(tmp_path, "rgb")


def test_a_renderer_cannot_read_or_plant_the_cache_write_outside_or_see_the_environment(tmp_path, cheats):
    first = run(tmp_path, "cpu", "rgb")                                  # fills the cache
    assert first.returncode == 0, first.stderr
    reference = tmp_path / "cache" / "reference"
    env = {"TEST_CHECKER_REFERENCE": str(reference), "TEST_SECRET": "1"}
    p = run(tmp_path, f"{cheats}:Snoops", "rgb", env=env)
    assert p.returncode == 0, p.stderr
    assert "SEALED" in p.stderr and "NO SECRET" in p.stderr
    if not confined(p):
        pytest.skip("no isolation on this machine (no Landlock)")
    assert "Isolation: your renderer ran" in p.stdout
    assert "READ " not in p.stderr and "NOT PLANTED" in p.stderr and "NOT WRITTEN" in p.stderr
    assert not (tmp_path / "pwned.txt").exists()
    assert not any("planted" in f.name for f in reference.iterdir())
    again = run(tmp_path, "cpu", "rgb")
    assert "reference image, seed 0: cache" in log(tmp_path, "rgb") and again.returncode == 0


def test_a_non_finite_alpha_fails(tmp_path, cheats):
    p = run(tmp_path, f"{cheats}:NanAlpha", "rgb")
    assert p.returncode == 1 and table_rows(p.stdout)["rgb"][1].endswith("(F)")
    assert "non-finite values (first at pixel (3, 2) channel a)" in log(tmp_path, "rgb")


def _default_signals() -> None:
    """In the child: the signals a background job or nohup inherits as ignored (SIGINT, SIGHUP)
    back to their defaults; the check keeps an ignored one ignored, as nohup means."""
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
@pytest.mark.parametrize("when", ["starting", "drawing"])
def test_a_signal_ends_the_check_and_every_worker(tmp_path, cheats, sig, code, when):
    """Ctrl-C, SIGTERM or SIGHUP while a worker starts or draws: the promised exit code and last
    line, no traceback, and no process of the check left."""
    cmd = [sys.executable, "-m", "circle_render", "check", "-r", f"{cheats}:LeavesAndWaits", *FAST, "--scenes", "rgb"]
    p = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT), "CIRCLE_RENDER_CACHE": str(tmp_path / "c")},
                         preexec_fn=_default_signals)
    children = []
    for line in p.stderr:
        if when == "starting" and line.startswith("check: renderer"):
            break
        if line.startswith(("DAEMON", "CHILD")):
            children.append(int(line.split()[1]))
            if len(children) == 21:
                break
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert p.returncode == code, err
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("render: interrupted")
    children += [int(line.split()[1]) for line in err.splitlines() if line.startswith(("DAEMON", "CHILD"))]
    time.sleep(0.2)
    assert _alive(children) == []


def test_without_isolation_the_cache_is_not_used_and_its_key_is_replaced(tmp_path, cheats, monkeypatch):
    """No Landlock and no user nobody: the footer says so, the check neither reads nor writes the
    reference cache, and the key the worker could read is replaced afterwards."""
    from helpers import run_cli

    from circle_render.check import confine, sandbox
    monkeypatch.setenv("CIRCLE_RENDER_CACHE", str(tmp_path / "cache"))
    args = ["check", "-s", "16", "--runs", "1", "-S", "0", "--baseline", "cpu", "--scenes", "rgb",
            "--logs", str(tmp_path / "logs")]
    code, _, err = run_cli([*args, "-r", "cpu"])                         # an honest check fills the cache
    key = (tmp_path / "cache" / "reference" / ".key").read_bytes()
    assert code == 0, err
    monkeypatch.setattr(confine, "abi", lambda: 0)
    monkeypatch.setattr(sandbox, "_nobody", lambda: None)
    code, out, err = run_cli([*args, "-r", f"{cheats}:NanAlpha"])
    assert code == 1 and "Isolation: none (" in out and "this kernel has no Landlock" in out
    assert "reference image, seed 0: rendered now" in (tmp_path / "logs" / "rgb.log").read_text()
    assert (tmp_path / "cache" / "reference" / ".key").read_bytes() != key
