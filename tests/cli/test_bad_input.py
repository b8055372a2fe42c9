"""One test per row of the bad-input table (docs/cli.md) that a CPU machine can produce."""
import errno
import os
import signal
import subprocess
import sys

import pytest
from helpers import ROOT, one_line, render, run_main

from circle_render.io import images as image_io
from circle_render.scenes import make_scene


def test_read_only_output_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(image_io.os, "access", lambda path, mode: False)
    code, err = run_main(["rgb", "-r", "cpu", "-s", "16", "-o", str(tmp_path / "x.png")], capsys)
    assert code == 2 and "is not writable" in one_line(err)
    assert list(tmp_path.iterdir()) == []


def test_disk_full_while_writing(tmp_path, monkeypatch, capsys):
    def full_disk(pixels, f):
        f.write(b"half a png")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), f.name)
    monkeypatch.setattr(image_io, "_write_png", full_disk)
    code, err = run_main(["rgb", "-r", "cpu", "-s", "16", "-o", str(tmp_path / "x.png")], capsys)
    assert code == 2 and "No space left on device" in one_line(err)
    assert list(tmp_path.iterdir()) == []          # the half-written temporary is gone


def test_host_out_of_memory(tmp_path, monkeypatch, capsys):
    def no_memory(self, *a):
        raise MemoryError("Unable to allocate 16.0 GiB")
    monkeypatch.setattr("circle_render.cpu.reference.CpuRenderer.load", no_memory)
    code, err = run_main(["rgb", "-r", "cpu", "-s", "16", "-o", str(tmp_path / "x.png")], capsys)
    assert code == 2 and "host memory ran out of memory" in one_line(err)


def test_gpu_out_of_memory_message(tmp_path, monkeypatch, capsys):
    """The CLI's handling of CuPy's OutOfMemoryError (raised here by hand; the gpu test below
    makes a real one)."""
    class OutOfMemoryError(MemoryError):
        pass

    def no_memory(self, *a):
        raise OutOfMemoryError("Out of memory allocating 4,294,967,296 bytes")
    monkeypatch.setattr("circle_render.cpu.reference.CpuRenderer.load", no_memory)
    code, err = run_main(["rgb", "-r", "cpu", "-s", "16"], capsys)
    assert code == 2 and "the GPU ran out of memory" in one_line(err) and "-r cpu" in err


@pytest.mark.gpu
def test_gpu_out_of_memory_is_one_line(tmp_path):
    p = render("rand100k", "-r", "cuda", "-s", "4096", "-o", str(tmp_path / "x.png"),
               env={"CUPY_GPU_MEMORY_LIMIT": str(64 << 20)})
    assert p.returncode == 2, p.stderr
    assert "the GPU ran out of memory" in one_line(p.stderr)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.gpu
def test_the_fast_renderer_draws_the_largest_size_the_command_line_accepts(tmp_path):
    p = render("rand100k", "-r", "cuda", "-s", "16384", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "rendered rand100k at 16384x16384 with cuda" in p.stderr


def test_a_plan_whose_supertiles_outgrow_the_packed_boxes_is_refused():
    # no size the command line accepts gets there with the default constants
    from circle_render.cuda.fast import plan_fast
    big = plan_fast(make_scene("rand100k"), 16384, 16384, {"SUPER_GRID": 1})
    assert "pixels a side" in big.too_large()
    assert plan_fast(make_scene("rand100k"), 16384, 16384).too_large() is None


def _default_signals():
    """In the child: SIGINT, SIGTERM and SIGHUP as a shell's foreground job gets them (pytest
    itself may run in the background, where SIGINT is ignored, or under nohup)."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def start_render(args, cwd, tty=False):
    """``render ARGS`` in a child; with ``tty`` its stderr is a pseudo-terminal (so the progress
    bar shows), read through the returned file descriptor."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    master = slave = None
    if tty:
        import pty
        master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-m", "circle_render", *args], cwd=cwd, env=env,
                         stdout=subprocess.DEVNULL, stderr=slave if tty else subprocess.PIPE,
                         preexec_fn=_default_signals)
    if tty:
        os.close(slave)
    return p, master


def read_tty(fd, until=None, timeout=60.0):
    """What the child wrote to its terminal, up to ``until`` (or its end)."""
    import select
    import time
    data, deadline = b"", time.monotonic() + timeout
    while time.monotonic() < deadline and (until is None or until not in data):
        if not select.select([fd], [], [], 0.5)[0]:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:                        # EIO: the child has closed the terminal
            break
        if not chunk:
            break
        data += chunk
    return data.decode(errors="replace")


def wait_for(predicate, timeout=60.0):
    import time
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_ctrl_c_mid_render_leaves_nothing(tmp_path):
    p, tty = start_render(["rand100k", "-r", "cpu", "-s", "1024", "-o", "x.png"], tmp_path, tty=True)
    try:
        assert "rendering rand100k" in read_tty(tty, until=b"%")     # the bar: it is rendering now
        p.send_signal(signal.SIGINT)
        err = read_tty(tty)
    finally:
        os.close(tty)
    assert p.wait(timeout=60) == 130
    last = err.replace("\r\n", "\n").rstrip("\n").split("\n")[-1]   # (a terminal ends lines with \r\n)
    assert last == "render: interrupted; no partial output was written"   # not on the bar's line
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_while_writing_removes_the_temporary(tmp_path, sig):
    p, _ = start_render(["rgb", "-r", "cpu", "-s", "4096", "-o", "big.ppm"], tmp_path)
    wait_for(lambda: any(f.suffix == ".part" for f in tmp_path.iterdir()) or p.poll() is not None)
    p.send_signal(sig)
    err = p.stderr.read().decode()
    code = p.wait(timeout=60)
    if code == 0:
        pytest.skip("the write finished before the signal came")
    assert code == 128 + sig, err
    assert one_line(err) == "render: interrupted; no partial output was written"
    assert list(tmp_path.iterdir()) == []


LATE_INTERRUPTS = """
import os, signal, sys, threading, time
import circle_render.cli as cli
def late(delay):
    time.sleep(delay)
    os.kill(os.getpid(), signal.SIGINT)
def racing_resend():                 # a put-off resend firing as the exit is decided
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.02)
cli.stop_resends = racing_resend
class Interrupted:
    @staticmethod
    def main(**kwargs):
        threading.Thread(target=time.sleep, args=(0.2,)).start()   # joined while shutting down
        threading.Thread(target=late, args=(0.1,), daemon=True).start()
        raise KeyboardInterrupt
cli.cli = Interrupted
from circle_render.__main__ import main
main()
"""


def test_an_interrupt_ends_as_one_exit_whatever_comes_after_it():
    """Once the command exits with 128 + the signal, a later SIGINT (a resend already firing, a
    second Ctrl-C, one while the process shuts down and Python has put SIGINT's default back)
    neither kills it (exit -2) nor prints a traceback."""
    p = subprocess.run([sys.executable, "-c", LATE_INTERRUPTS], env={**os.environ, "PYTHONPATH": str(ROOT)},
                       capture_output=True, text=True, timeout=60, preexec_fn=_default_signals)
    assert p.returncode == 130, p.stderr
    assert one_line(p.stderr) == "render: interrupted; no partial output was written"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_mid_frames_says_which_frames_were_written(tmp_path, sig):
    p, _ = start_render(["snow", "-r", "cpu", "-s", "64", "-b", "0:100000", "-o", "fr.png"], tmp_path)
    wait_for(lambda: (tmp_path / "fr_0002.png").exists())
    p.send_signal(sig)
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 128 + sig
    names = sorted(f.name for f in tmp_path.iterdir())
    n = len(names)
    assert names == [f"fr_{k:04d}.png" for k in range(n)]          # whole frames only, no .part
    assert one_line(err) == (f"render: interrupted after writing {n} of 100000 frames "
                             f"(fr_0000.png .. {names[-1]})")


PRECIOUS = b"precious\n"


@pytest.mark.parametrize("args,needle", [
    (["--frames", "3"], "--frames and --screenshot go with -i"),
    (["--screenshot", "shot.png"], "--frames and --screenshot go with -i"),
    (["-r", "cuda"], "needs a CUDA GPU"),
    (["-i"], "needs a display"),
    (["-i", "-o", "out.png"], "-o does nothing with -i"),
    (["-i", "-b", "0:2"], "-b does nothing with -i"),
    (["-i", "-c", "-o", "out.png"], "-o, -c do nothing with -i"),
    (["-o", "out.jpg"], "unknown output suffix"),
    (["-o", "missing/out.png"], "does not exist"),
    (["-b", "4:2"], "0 <= START < END"),
    (["-s", "0"], "1<=x<=16384"),
    (["-S", "3", "FILE"], "scene file"),
    (["BADFILE"], "bad.circles:4: expected 'count VALUE'"),
])
def test_nothing_is_written_before_every_input_is_checked(tmp_path, monkeypatch, capsys, args, needle):
    """--save-scene (and -o) leave an existing file alone when anything else is wrong."""
    from circle_render.gpu import gpu_available
    if "cuda" in args and gpu_available():
        pytest.skip("a GPU is present")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "good.circles").write_text("circle-render scene 1\nshading flat\ncount 1\n0.5 0.5 0 0.2 1 0 0\n")
    (tmp_path / "bad.circles").write_text("circle-render scene 1\nshading flat\n\n1 circle\n")
    saved = tmp_path / "s.circles"
    for f in (saved, tmp_path / "out.png"):
        f.write_bytes(PRECIOUS)
    scene = "rgb"
    if "FILE" in args or "BADFILE" in args:
        scene = "good.circles" if "FILE" in args else "bad.circles"
        args = [a for a in args if a not in ("FILE", "BADFILE")]
    code, err = run_main([scene, "-s", "8", "--save-scene", "s.circles", *args], capsys)
    assert code == 2 and needle in one_line(err), err
    assert saved.read_bytes() == PRECIOUS and (tmp_path / "out.png").read_bytes() == PRECIOUS
    assert sorted(f.name for f in tmp_path.iterdir()) == ["bad.circles", "good.circles", "out.png", "s.circles"]


def test_scene_files_that_are_not_regular_files_are_refused(tmp_path, capsys):
    fifo = tmp_path / "pipe.circles"
    os.mkfifo(fifo)                   # reading it would wait for a writer forever
    code, err = run_main([str(fifo)], capsys)
    assert code == 2 and "is not a regular file" in one_line(err)
    code, err = run_main(["/dev/zero"], capsys)        # reading it would never end
    assert code == 2 and "is not a regular file" in one_line(err)


def test_disk_full_names_the_users_path_for_every_output(tmp_path, monkeypatch, capsys):
    """-o PNG, PPM, GIF and --save-scene: `cannot write PATH: No space left on device`, no
    temporary left, the earlier file intact."""
    real_open = open

    def full_open(file, mode="r", *a, **k):
        f = real_open(file, mode, *a, **k)
        if "w" in mode and ".part" in str(file):
            def write(data, f=f):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            f.write = write
        return f
    monkeypatch.setattr("builtins.open", full_open)
    monkeypatch.setattr("pathlib.Path.write_text", lambda self, text, *a, **k: full_open(self, "w").write(text))
    from PIL import Image

    def full_save(self, fp, *a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(fp))
    monkeypatch.setattr(Image.Image, "save", full_save)
    for name, extra in (("x.png", []), ("x.ppm", []), ("x.gif", ["-b", "0:3"]), ("s.circles", None)):
        target = tmp_path / name
        target.write_bytes(PRECIOUS)
        args = ["--save-scene", str(target)] if extra is None else ["-o", str(target), *extra]
        code, err = run_main(["rgb", "-r", "cpu", "-s", "8", *args], capsys)
        assert code == 2, err
        assert one_line(err) == f"render: error: cannot write {str(target)!r}: No space left on device"
        assert target.read_bytes() == PRECIOUS
        assert sorted(f.name for f in tmp_path.iterdir()) == [name]
        target.unlink()


def test_scan_refuses_a_seed_it_would_not_use(capsys):
    code, err = run_main(["scan", "-i", "ones", "-S", "3"], capsys)
    assert code == 2 and "-i ones has none" in one_line(err)


def test_a_hangup_that_nohup_ignores_stays_ignored(tmp_path):
    def ignore_hangups():
        _default_signals()
        signal.signal(signal.SIGHUP, signal.SIG_IGN)      # what nohup does
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.Popen([sys.executable, "-m", "circle_render", "rgb", "-r", "cpu", "-s", "2048", "-o", "x.png"],
                         cwd=tmp_path, env=env, stderr=subprocess.PIPE, preexec_fn=ignore_hangups)
    wait_for(lambda: any(f.suffix == ".part" for f in tmp_path.iterdir()) or p.poll() is not None)
    p.send_signal(signal.SIGHUP)
    assert p.wait(timeout=60) == 0, p.stderr.read()
    assert [f.name for f in tmp_path.iterdir()] == ["x.png"]


def test_a_full_disk_part_way_through_frames_says_what_was_written(tmp_path, monkeypatch, capsys):
    real = image_io.write_image

    def fills_up(path, rgb):
        if path.name == "f_0003.png":
            raise image_io.WriteFailed(path, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
        real(path, rgb)
    monkeypatch.setattr("circle_render.io.output.write_image", fills_up)   # on the writers' threads
    out = tmp_path / "f.png"
    code, err = run_main(["hypnosis", "-r", "cpu", "-s", "8", "-b", "0:10", "-o", str(out)], capsys)
    assert code == 2
    assert one_line(err) == (f"render: error: cannot write {str(tmp_path / 'f_0003.png')!r}: No space left on "
                             f"device; written before it: 3 of 10 frames ({tmp_path / 'f_0000.png'} .. "
                             f"{tmp_path / 'f_0002.png'})")
    assert sorted(f.name for f in tmp_path.iterdir()) == ["f_0000.png", "f_0001.png", "f_0002.png"]


# The render command's first moments: a signal while Python imports the command line (0.2-0.4 s)
SLOW_START = """
import importlib.abc, signal, sys, time
class SlowCli(importlib.abc.MetaPathFinder):      # the command line's import, held up until the signal
    def find_spec(self, name, path, target=None):
        if name == "circle_render.cli":
            print("importing", flush=True)
            time.sleep(60)
        return None
sys.meta_path.insert(0, SlowCli())
sys.argv = ["render", "list"]
from circle_render.__main__ import main
main()
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_while_the_command_starts_is_one_line_not_a_traceback(tmp_path, sig):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.Popen([sys.executable, "-c", SLOW_START], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, preexec_fn=_default_signals)
    assert p.stdout.readline() == b"importing\n"
    p.send_signal(sig)
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 128 + sig
    assert err == "render: interrupted; no partial output was written\n"


def test_the_render_command_starts_without_the_heavy_imports():
    """What runs before the signals are handled: the package and its entry point, no NumPy."""
    code = ("import sys, circle_render.__main__; "
            "print(sorted(m for m in ('numpy', 'click', 'circle_render.cli') if m in sys.modules))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 0 and p.stdout.strip() == "[]", p.stdout + p.stderr
