"""The checker's side of its protocol with a worker, on any bytes (hypothesis): a reply is
accepted only whole, with the nonce of its command, an operation allowed for it and a payload
within its bound; anything else (forged, truncated, stale, oversized, trailing bytes) is a
ProtocolError, never another exception. And the timing rule of check/timing.py."""
import os
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from circle_render.check.protocol import HEADER, REPLIES, ImageMeta, Op, ProtocolError, Reader, clean_text, encode
from circle_render.check.timing import CAP_FACTOR, CAP_NS, SLACK_FRACTION, SLACK_NS, RunRecord

FAST = settings(max_examples=int(os.environ.get("HOSTILE_EXAMPLES", "300")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])
COMMANDS = st.sampled_from(sorted(REPLIES))
NONCES = st.integers(0, 2**64 - 1)


def feed_all(reader, data, cut):
    """Feed ``data`` in pieces cut at ``cut`` positions: the reply, or None if incomplete."""
    msg, last = None, 0
    for c in [*sorted(set(cut)), len(data)]:
        piece = data[last:c]
        last = c
        if piece:
            assert msg is None, "bytes after a whole reply were accepted"
            msg = reader.feed(piece)
    return msg


@FAST
@given(COMMANDS, NONCES, st.data())
def test_a_well_formed_reply_is_accepted_in_any_pieces(command, nonce, data):
    op = data.draw(st.sampled_from(sorted(REPLIES[command])))
    payload = data.draw(st.binary(max_size=min(REPLIES[command][op], 300)))
    wire = encode(op, nonce, payload)
    msg = feed_all(Reader(command, nonce), wire, data.draw(st.lists(st.integers(0, len(wire)), max_size=5)))
    assert msg is not None and (msg.op, msg.nonce, msg.payload) == (op, nonce, payload)


@FAST
@given(COMMANDS, NONCES, st.binary(max_size=200), st.lists(st.integers(0, 200), max_size=4))
def test_any_bytes_are_a_reply_exactly_as_sent_an_incomplete_one_or_a_protocol_error(command, nonce, junk, cut):
    reader = Reader(command, nonce)
    try:
        msg = feed_all(reader, junk, [c for c in cut if c <= len(junk)])
    except ProtocolError:
        return
    if msg is None:
        return                                     # incomplete: the checker waits (until its deadline)
    op, length, sent_nonce = HEADER.unpack_from(junk)
    assert sent_nonce == nonce and op in REPLIES[command] and length <= REPLIES[command][op]
    assert len(junk) == HEADER.size + length and msg.payload == junk[HEADER.size:]


@FAST
@given(COMMANDS, NONCES, NONCES)
def test_a_reply_with_another_commands_nonce_is_refused(command, nonce, other):
    op = sorted(REPLIES[command])[0]
    reader = Reader(command, nonce)
    if other == nonce:
        assert reader.feed(encode(op, other)) is not None
    else:
        with pytest.raises(ProtocolError, match="forged or stale"):
            reader.feed(encode(op, other))


@pytest.mark.parametrize("command,op,length,message", [
    (Op.FRAME, Op.PICTURE, 0, "answered FRAME with PICTURE"),
    (Op.ECHO, Op.OK, 1, "of 1 bytes (at most 0)"),
    (Op.IMAGE, Op.PICTURE, 10**6, "at most 512"),
    (Op.LOAD, 99, 0, "answered LOAD with operation 99"),
])
def test_each_kind_of_bad_header_says_what_it_is(command, op, length, message):
    with pytest.raises(ProtocolError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Reader(command, 7).feed(HEADER.pack(op, length, 7))


def test_a_second_reply_in_the_same_bytes_is_refused():
    with pytest.raises(ProtocolError, match="more than one reply"):
        Reader(Op.ECHO, 1).feed(encode(Op.OK, 1) + encode(Op.OK, 1))


@FAST
@given(st.binary(max_size=120))
def test_any_image_description_decodes_or_is_a_protocol_error(data):
    try:
        meta = ImageMeta.decode(data)
    except ProtocolError:
        return
    assert meta.dtype_name() is not None and "\x1b" not in meta.type_name


@given(st.sampled_from(["<f4", "<f8", "|u1", ">f4", "|O", "<U3", "|V12"]),
       st.lists(st.integers(0, 2**40), max_size=8))
def test_an_image_description_round_trips(dtype, shape):
    meta = ImageMeta(True, dtype, tuple(shape))
    assert ImageMeta.decode(meta.encode()) == meta
    assert meta.is_float32() == (dtype == "<f4")


def test_a_big_endian_float32_is_not_taken_for_this_machines():
    assert ImageMeta(True, ">f4", (1, 1, 4)).dtype_name() == ">f4"


@given(st.binary(max_size=300))
def test_a_workers_text_reaches_the_screen_without_control_characters(data):
    text = clean_text(data)
    assert all(c in "\n\t" or (c.isprintable() and c != "\x7f") for c in text)


def test_non_ascii_bytes_in_a_mac_or_name_do_not_raise():
    assert clean_text("é\x1b[31mred".encode()) == "é[31mred"
    assert struct.calcsize("<BxxxIQ") == HEADER.size == 16


# ---------------------------------------------------------------- the timing rule

ECHO, COPY = 5_000, 3_000_000


def test_an_honest_copy_adds_nothing_and_the_echo_is_subtracted():
    r = RunRecord((105_000, 55_000, 55_000, 45_000), 3_100_000, 3_000_000)
    assert r.split_ms(ECHO, COPY) == (pytest.approx(0.0600), 0.0)        # (100 + 50 + 50 + 40) / 4 us


def test_work_put_off_into_get_image_counts_against_every_frame():
    honest = RunRecord((1_000_000,) * 4, 3_000_000, 3_000_000)
    deferred = RunRecord((10_000,) * 4, 3_000_000 + 1_000_000, 3_000_000)
    slack = SLACK_FRACTION * 3.0 + SLACK_NS / 1e6
    assert deferred.total_ms(ECHO, COPY) == pytest.approx(0.005 + 1.0 - slack)
    assert honest.total_ms(ECHO, COPY) == pytest.approx(0.995)


@given(st.integers(0, 10**9), st.integers(0, 10**9), st.integers(0, 10**9))
def test_a_slow_second_call_hides_no_more_than_the_cap(frame, first, second):
    r = RunRecord((frame,) * 4, first, second)
    work, excess = r.split_ms(ECHO, COPY)
    cap = CAP_FACTOR * COPY + CAP_NS
    assert work >= 0 and excess >= 0
    assert excess * 1e6 >= first - cap * (1 + SLACK_FRACTION) - SLACK_NS - 1     # whatever the second call took


# ---------------------------------------------------------------- stray processes

TREE_SCRIPT = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[2])
from circle_render.check import reaper
assert reaper.become_subreaper()
plan = json.loads(sys.argv[1])
r, w = os.pipe()

def grow(node):
    # node: [how, children]; how: "plain", "session" (setsid), "orphan" (its parent exits at once)
    how, kids = node
    pid = os.fork()
    if pid:
        return
    if how == "session":
        os.setsid()
    for kid in kids:
        grow(kid)
    os.write(w, b"%d\n" % os.getpid())
    if how == "orphan":
        os._exit(0)
    time.sleep(300)
    os._exit(0)

known = reaper.children()
worker = os.fork()
if worker == 0:
    os.close(r)
    for node in plan:
        grow(node)
    os.write(w, b"%d\n" % os.getpid())
    time.sleep(300)
    os._exit(0)
os.close(w)

def count(nodes):
    return sum(1 + count(kids) for _, kids in nodes)

expected, data, deadline = count(plan) + 1, b"", time.monotonic() + 20
os.set_blocking(r, False)
while data.count(b"\n") < expected and time.monotonic() < deadline:
    try:
        data += os.read(r, 1 << 20)
    except BlockingIOError:
        time.sleep(0.01)
started = [int(x) for x in data.split()]
left = reaper.end_tree(worker, known)
os.waitpid(worker, 0)
alive = [p for p in started if os.path.exists(f"/proc/{p}") and
         open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"]
print(json.dumps({"started": len(started), "expected": expected, "left": left, "alive": alive}))
"""

NODES = st.recursive(st.tuples(st.sampled_from(["plain", "session", "orphan"]), st.just([])),
                     lambda kids: st.tuples(st.sampled_from(["plain", "session", "orphan"]),
                                            st.lists(kids, max_size=3)), max_leaves=8)


@settings(max_examples=int(os.environ.get("HOSTILE_EXAMPLES", "15")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(NODES, min_size=1, max_size=3))
def test_every_process_a_worker_starts_is_ended_whatever_its_shape(plan):
    """Children, grandchildren, sessions of their own, orphans handed to the checker: all end."""
    import json
    import subprocess
    import sys

    from helpers import ROOT
    p = subprocess.run([sys.executable, "-c", TREE_SCRIPT, json.dumps(plan), str(ROOT)], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    result = json.loads(p.stdout)
    assert result["started"] == result["expected"] and result["left"] == [] and result["alive"] == [], result
