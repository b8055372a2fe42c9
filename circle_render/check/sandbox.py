"""Where a submission's worker runs under ``render check``, and what it may touch.

The strongest that this machine allows, chosen once per check:

- ``nobody``: the checker runs as root (as the course's autograder does): the worker runs as the
  user nobody, with no supplementary groups, an environment of PATH, the locale and the CUDA
  variables only, and a folder of its own for HOME, TMPDIR and its compile caches; and, where the
  kernel has Landlock, under it too (below). Chosen only if nobody can read what the worker
  needs (Python, sys.path, the renderer's file, the working folder): checked by a trusted
  process running as nobody, before the submission's code is loaded.
- ``landlock``: the worker runs as the checker's user, under Landlock: it can read every file
  but the reference images and the cache's key, write only in its own folder, its own /proc
  entries (CUDA writes there as it starts) and to the GPU's devices, and neither trace nor
  signal the checker; as root it also drops every capability.
- ``none``: no Landlock (a kernel before 5.13, or one that leaves it out): the worker can read
  and write what the user can, so the reference cache is not used in that check and its key is
  replaced afterwards (anything the worker planted with it is worthless then).

Built-in renderers (``trusted``) run in a worker too, on the same timing path, unconfined.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from circle_render.check import confine

KEPT_VARIABLES = ("PATH", "LANG", "LC_ALL", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER",
                  "CUDA_PATH", "CUDA_HOME", "NVIDIA_VISIBLE_DEVICES")
HOME_PARTS = ("home", "tmp", "cache", "cupy", "numba", "circle-render")
PREFLIGHT = """
import os, sys
bad = []
for p in sys.argv[2:]:
    try:
        if os.path.isdir(p):
            os.listdir(p)
        elif os.path.exists(p):
            with open(p, "rb") as f:
                f.read(1)
    except OSError:
        bad.append(p)
try:
    os.chdir(sys.argv[1])
except OSError:
    bad.append(sys.argv[1])
print("\\n".join(bad))
"""


@dataclass
class Isolation:
    """How workers run in one check (see the module's docstring)."""
    mode: str                                  # trusted, nobody, landlock or none
    home: str = ""                             # the worker's own folder
    uid: int | None = None                     # mode nobody: run as this user and group
    gid: int | None = None
    landlock: int = 0                          # the Landlock ABI to apply (0: none)
    hidden: tuple[str, ...] = ()               # what the worker must not read
    drop_capabilities: bool = False
    why: str = ""                              # why not a stronger mode
    temporary: bool = False                    # home is removed at the end of the check
    applied: dict = field(default_factory=dict)   # what the first worker reported it applied

    @property
    def confined(self) -> bool:
        return self.mode != "trusted"

    @property
    def cache_safe(self) -> bool:
        """Can the worker neither read nor write the reference cache?"""
        return self.mode in ("trusted", "nobody") or bool(self.landlock)

    def worker_spec(self) -> dict:
        """What the worker applies to itself (confine.apply)."""
        if not self.confined:
            return {}
        return {"landlock": self.landlock, "hidden": list(self.hidden),
                "writable": [self.home], "drop_capabilities": self.drop_capabilities}

    def environment(self) -> dict:
        if not self.confined:
            return dict(os.environ)
        env = {k: os.environ[k] for k in KEPT_VARIABLES if k in os.environ}
        h = Path(self.home)
        env.update(HOME=str(h / "home"), TMPDIR=str(h / "tmp"), XDG_CACHE_HOME=str(h / "cache"),
                   CUPY_CACHE_DIR=str(h / "cupy"), NUMBA_CACHE_DIR=str(h / "numba"),
                   CIRCLE_RENDER_CACHE=str(h / "circle-render"))
        return env

    def describe(self) -> str:
        """One line for the footer."""
        if self.mode == "trusted":
            return ""
        env = "an environment of PATH, the locale and CUDA's variables, and a HOME of its own"
        ll = (f"under Landlock (ABI {self.landlock}): it could read neither the reference images nor "
              "the cache's key, write nothing outside its own folder, nor trace or signal the checker"
              if self.landlock else "")
        if self.mode == "nobody":
            return f"Isolation: your renderer ran as the user nobody with {env}" + (f", {ll}" if ll else "") + "."
        if self.mode == "landlock":
            who = "as root with no capabilities" if self.drop_capabilities else "as you"
            why = f" ({self.why})" if self.why else ""
            return f"Isolation: your renderer ran {who}, with {env}, {ll}{why}."
        trace = "" if _ptrace_scope() >= 1 else "; nothing stops it from tracing the checker either"
        return (f"Isolation: none ({self.why}): your renderer ran as you and could read and write your "
                "files, so the reference cache was not used and its key is replaced after the check"
                f"{trace}.")

    def cleanup(self) -> None:
        if self.temporary and self.home:
            shutil.rmtree(self.home, ignore_errors=True)


def trusted() -> Isolation:
    return Isolation("trusted")


def _ptrace_scope() -> int:
    try:
        return int(Path("/proc/sys/kernel/yama/ptrace_scope").read_text())
    except (OSError, ValueError):
        return 0


def _nobody() -> tuple[int, int] | None:
    import pwd
    try:
        p = pwd.getpwnam("nobody")
    except KeyError:
        return None
    return p.pw_uid, p.pw_gid


def choose(needs: list[str], hidden: list[str], own_home: Path) -> Isolation:
    """The isolation for a user's renderer: ``needs`` are the paths its worker must read (the
    renderer's file, its folder), ``hidden`` what it must not, ``own_home`` its folder when it
    runs as this user."""
    version = confine.abi()
    hidden_t = tuple(str(Path(h).resolve()) for h in hidden)
    why = ""
    if os.geteuid() == 0:
        ids = _nobody()
        if ids is None:
            why = "there is no user nobody"
        else:
            blocked = preflight(ids, [*_worker_paths(), *needs])
            home = None if blocked else nobody_home(*ids)
            if not blocked and home is not None:
                return Isolation("nobody", str(home[0]), *ids, landlock=version, hidden=hidden_t,
                                 temporary=home[1])
            why = f"the user nobody cannot read {blocked[0]}" if blocked else "no private folder for nobody"
    own = _own_home(own_home)
    root = os.geteuid() == 0
    if version:
        return Isolation("landlock", str(own), landlock=version, hidden=hidden_t, drop_capabilities=root, why=why)
    no_ll = "this kernel has no Landlock (Linux 5.13 or later, with landlock among its security modules)"
    return Isolation("none", str(own), drop_capabilities=root, why=f"{why}; {no_ll}" if why else no_ll)


def _worker_paths() -> list[str]:
    """What any worker reads: Python, its library and sys.path, the working folder."""
    paths = [os.path.realpath(sys.executable), os.path.dirname(os.__file__), os.getcwd()]
    paths += [p for p in sys.path if p and os.path.exists(p)]
    return list(dict.fromkeys(paths))


def preflight(ids: tuple[int, int], paths: list[str]) -> list[str]:
    """The paths that user ``ids`` cannot read (Python itself first, if it cannot run it)."""
    try:
        p = subprocess.run([sys.executable, "-I", "-c", PREFLIGHT, os.getcwd(), *paths], user=ids[0],
                           group=ids[1], extra_groups=[], env={}, cwd="/", capture_output=True,
                           text=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return [sys.executable]
    if p.returncode != 0:
        return [sys.executable]
    return [line for line in p.stdout.splitlines() if line]


def _make_home_parts(home: Path, ids: tuple[int, int] | None) -> None:
    for part in HOME_PARTS:
        (home / part).mkdir(mode=0o700, exist_ok=True)
        if ids is not None:
            os.chown(home / part, *ids)


def nobody_home(uid: int, gid: int) -> tuple[Path, bool] | None:
    """(a folder of nobody's own in the system's temporary folder, whether it is temporary):
    ``circle-render-sandbox-UID``, kept between checks (its compile caches), if it is a real
    folder owned by nobody and private; else a fresh one, removed after the check."""
    base = Path(tempfile.gettempdir())
    fixed = base / f"circle-render-sandbox-{uid}"
    with contextlib.suppress(FileExistsError):
        os.mkdir(fixed, 0o700)
        os.chown(fixed, uid, gid)
    try:
        st = os.lstat(fixed)
        if stat.S_ISDIR(st.st_mode) and st.st_uid == uid and not st.st_mode & 0o077:
            _make_home_parts(fixed, (uid, gid))
            return fixed, False
    except OSError:
        pass
    try:
        fresh = Path(tempfile.mkdtemp(prefix="circle-render-sandbox-"))
        os.chown(fresh, uid, gid)
        _make_home_parts(fresh, (uid, gid))
    except OSError:
        return None
    return fresh, True


def _own_home(folder: Path) -> Path:
    with contextlib.suppress(OSError):
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        _make_home_parts(folder, None)
        return folder
    fresh = Path(tempfile.mkdtemp(prefix="circle-render-sandbox-"))
    _make_home_parts(fresh, None)
    return fresh
