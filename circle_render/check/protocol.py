"""The messages between ``render check`` (the checker) and a worker process that runs a
renderer: one command at a time from the checker, one reply to each, over two pipes; images
travel in a shared, sealed memory file.

A message is a 16-byte header (``HEADER``: operation, payload length, nonce) and a payload.
The checker draws a fresh random nonce for every command, and a reply must carry it: a reply
written before its command was read (forged ahead of time) or left over from an earlier one
cannot match. Replies are read as bytes and checked field by field against ``REPLIES``
(which operation may answer which command, and how long its payload may be): nothing a worker
sends is unpickled or evaluated, and no JSON from a worker is parsed.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from enum import IntEnum

HEADER = struct.Struct("<BxxxIQ")          # operation, payload length, nonce
MAX_TEXT = 64 << 10                        # a failure's text (reason and traceback), a class's name


class Op(IntEnum):
    # commands (checker -> worker); payloads are the checker's, so JSON is fine there
    HELLO = 1          # JSON: the worker's configuration (sandbox, sys.path)
    ECHO = 2           # nothing: answer at once (the channel's own cost)
    COPYTEST = 3       # nothing: copy a blank image of the check's size the honest way (trusted)
    CLASS = 4          # UTF-8: the renderer spec to import
    LOAD = 5           # JSON: scene, seed, size: a fresh renderer loads it
    FRAME = 6          # nothing: clear, advance, render, each followed by a synchronize
    IMAGE = 7          # nothing: get_image() into the shared memory
    QUIT = 8
    # replies (worker -> checker)
    OK = 16            # UTF-8 (HELLO only: what confinement was applied, as JSON) or nothing
    FAIL = 17          # UTF-8: "reason\ntraceback"
    INFO = 18          # class info: flags byte (1 = needs_gpu), then its display name, UTF-8
    PICTURE = 19       # an image's description (ImageMeta), its pixels in the shared memory


# For each command: the replies accepted and the most payload bytes each may carry.
REPLIES = {
    Op.HELLO: {Op.OK: 4096, Op.FAIL: MAX_TEXT},
    Op.ECHO: {Op.OK: 0},
    Op.COPYTEST: {Op.OK: 0, Op.FAIL: MAX_TEXT},
    Op.CLASS: {Op.INFO: 1 + 256, Op.FAIL: MAX_TEXT},
    Op.LOAD: {Op.OK: 0, Op.FAIL: MAX_TEXT},
    Op.FRAME: {Op.OK: 0, Op.FAIL: MAX_TEXT},
    Op.IMAGE: {Op.PICTURE: 512, Op.FAIL: MAX_TEXT},
}


class ProtocolError(Exception):
    """A worker broke the protocol: a reply out of turn, forged, truncated or malformed."""


@dataclass(frozen=True)
class Message:
    op: int
    nonce: int
    payload: bytes

    def text(self) -> str:
        return clean_text(self.payload)


def encode(op: int, nonce: int, payload: bytes = b"") -> bytes:
    return HEADER.pack(op, len(payload), nonce) + payload


def clean_text(data: bytes, limit: int = MAX_TEXT) -> str:
    """A worker's bytes as printable text: UTF-8 (bad bytes replaced), control characters but
    newline and tab dropped (no terminal escapes reach the user's screen or the log)."""
    text = data[:limit].decode("utf-8", "replace")
    return "".join(c for c in text if c in "\n\t" or (c.isprintable() and c != "\x7f"))


class Reader:
    """Bytes from a worker, cut into the one reply expected to ``command``."""

    def __init__(self, command: int, nonce: int):
        self.command, self.nonce = command, nonce
        self.allowed = REPLIES[Op(command)]
        self.buf = bytearray()
        self.length: int | None = None

    def feed(self, data: bytes) -> Message | None:
        """Take more bytes; the reply once complete (ProtocolError if anything is wrong, or if
        bytes follow it)."""
        self.buf += data
        if self.length is None and len(self.buf) >= HEADER.size:
            op, length, nonce = HEADER.unpack_from(self.buf)
            if op not in self.allowed:
                raise ProtocolError(f"answered {_name(self.command)} with {_name(op)}")
            if nonce != self.nonce:
                raise ProtocolError(f"answered {_name(self.command)} with a reply to another command "
                                    "(a forged or stale reply)")
            if length > self.allowed[op]:
                raise ProtocolError(f"sent a {_name(op)} reply of {length} bytes (at most {self.allowed[op]})")
            self.length = length
        if self.length is None or len(self.buf) < HEADER.size + self.length:
            return None
        if len(self.buf) > HEADER.size + self.length:
            raise ProtocolError("wrote more than one reply to one command")
        op, _, nonce = HEADER.unpack_from(self.buf)
        return Message(op, nonce, bytes(self.buf[HEADER.size:]))

    @property
    def partial(self) -> bool:
        return bool(self.buf)


def _name(op: int) -> str:
    try:
        return Op(op).name
    except ValueError:
        return f"operation {op}"


# ---------------------------------------------------------------- what get_image() returned

IMAGE_META = struct.Struct("<BB16s")       # kind (0: an array, 1: something else), ndim, dtype text
MAX_NDIM = 8
_DTYPE = re.compile(r"[<>|=]?[a-zA-Z][0-9]{0,3}")


@dataclass(frozen=True)
class ImageMeta:
    """What get_image() returned: an array's dtype text and shape, or another type's name."""
    is_array: bool
    dtype: str = ""            # NumPy's dtype.str, e.g. "<f4"
    shape: tuple = ()
    type_name: str = ""

    def encode(self) -> bytes:
        if not self.is_array:
            return IMAGE_META.pack(1, 0, b"") + self.type_name.encode("utf-8", "replace")[:255]
        shape = self.shape[:MAX_NDIM]
        return (IMAGE_META.pack(0, len(shape), self.dtype.encode("ascii", "replace")[:16])
                + struct.pack(f"<{len(shape)}Q", *shape))

    @classmethod
    def decode(cls, data: bytes) -> ImageMeta:
        if len(data) < IMAGE_META.size:
            raise ProtocolError("sent a truncated image description")
        kind, ndim, dtype = IMAGE_META.unpack_from(data)
        rest = data[IMAGE_META.size:]
        if kind == 1:
            return cls(False, type_name=clean_text(rest, 255) or "an unnamed type")
        if kind != 0 or ndim > MAX_NDIM or len(rest) != 8 * ndim:
            raise ProtocolError("sent a malformed image description")
        text = dtype.rstrip(b"\0").decode("ascii", "replace")
        if not _DTYPE.fullmatch(text):
            raise ProtocolError(f"sent a malformed dtype {text!r}")
        return cls(True, text, struct.unpack(f"<{ndim}Q", rest))

    def dtype_name(self) -> str:
        """NumPy's name of the dtype ("float64"), or its text where the byte order is not this
        machine's (">f4") or NumPy does not know it."""
        import numpy as np
        try:
            dtype = np.dtype(self.dtype)
        except TypeError:
            return self.dtype
        return dtype.name if dtype.isnative else self.dtype

    def is_float32(self) -> bool:
        import numpy as np
        try:
            return np.dtype(self.dtype) == np.float32
        except TypeError:
            return False
