"""The wire format: golden frames from testdata/ and hostile input."""

import json
import math
import struct
from pathlib import Path

import msgpack
import pytest

from shellsup import ShellsupError, SkillResult
from shellsup import _frames
from shellsup._result import RESULT_KEYS
from shellsup._transcript import Transcript

GOLDEN = Path(__file__).resolve().parents[3] / "testdata" / "frames" / "golden.json"


def golden():
    with open(GOLDEN, encoding="utf-8") as f:
        return json.load(f)


def by_name(name):
    return next(g for g in golden() if g["name"] == name)


@pytest.mark.parametrize("case", golden(), ids=lambda g: g["name"])
def test_golden_frame_decodes_to_expected_value(case):
    wire = bytes.fromhex(case["hex"])
    buf = _frames.Buffer()
    buf.feed(wire)
    frame = buf.next()
    assert frame == case["value"]
    assert frame["type"] == case["type"]
    assert buf.next() is None and buf.pending() == 0
    assert _frames.body_size(wire[:4]) == len(wire) - 4


@pytest.mark.parametrize("case", golden(), ids=lambda g: g["name"])
def test_golden_frame_decodes_split_byte_by_byte(case):
    buf = _frames.Buffer()
    frames = []
    for b in bytes.fromhex(case["hex"]):
        buf.feed(bytes([b]))
        frame = buf.next()
        if frame is not None:
            frames.append(frame)
    assert frames == [case["value"]]


def test_fractional_timeout_stays_a_float():
    frame = _decode(by_name("start-fraction")["hex"])
    assert isinstance(frame["timeout"], float) and math.isclose(frame["timeout"], 0.05)


def test_cancel_control_frame_encodes_to_golden_bytes():
    assert _frames.CANCEL == bytes.fromhex(by_name("cancel-control")["hex"])


def status_of(name):
    session = Transcript()
    session.handle({"type": "start"})
    session.handle(by_name(name)["value"])
    return session.result.status


def test_totals_frames_become_skill_results():
    for name in ("totals-exit", "totals-killed", "totals-timeout-stragglers", "totals-cancelled"):
        value = by_name(name)["value"]
        session = Transcript()
        session.handle({"type": "start"})
        session.handle(value)
        result = session.result
        assert isinstance(result, SkillResult)
        assert list(result) == list(RESULT_KEYS)
        assert all(result[k] == value[k] for k in RESULT_KEYS)
        assert result.cleanup == value["cleanup"]
        assert result.cancel_reason == (value["cancelReason"] or None)
    oom = Transcript()
    oom.handle({"type": "start"})
    oom.handle(by_name("totals-status-oom")["value"])
    assert oom.result.status == "oom" and "status" not in oom.result
    assert status_of("totals-exit") is None  # a shellsup too old to say
    stragglers = Transcript()
    stragglers.handle({"type": "start"})
    stragglers.handle(by_name("totals-timeout-stragglers")["value"])
    assert stragglers.result.cleanup["stragglers"][0]["comm"] == "odd (name) x"


@pytest.mark.parametrize("name,category", [("error-validation", "validation"),
                                           ("error-containment", "containment_unavailable")])
def test_error_frames_become_errors(name, category):
    session = Transcript()
    session.handle(by_name(name)["value"])
    assert isinstance(session.error, ShellsupError)
    assert session.error.category == category
    assert str(session.error) == by_name(name)["value"]["message"]


def test_unknown_types_and_keys_are_ignored():
    session = Transcript()
    session.handle({"type": "start", "future": 1})
    assert session.handle({"type": "hint", "x": [1, 2]}) is None
    assert session.handle({"type": "progress", "stream": "stdout", "text": "a", "new": True}) == ("stdout", "a")


# -- hostile input -------------------------------------------------------------------


def _decode(hex_or_bytes):
    buf = _frames.Buffer()
    buf.feed(bytes.fromhex(hex_or_bytes) if isinstance(hex_or_bytes, str) else hex_or_bytes)
    return buf.next()


def _frame(obj):
    body = msgpack.packb(obj, use_bin_type=True)
    return struct.pack(">I", len(body)) + body


@pytest.mark.parametrize("size", [0, _frames.MAX_FRAME_SIZE + 1, 0xFFFFFFFF])
def test_bad_length_is_refused_before_the_body_arrives(size):
    buf = _frames.Buffer()
    buf.feed(struct.pack(">I", size))  # the header alone: no body was ever sent
    with pytest.raises(ShellsupError) as exc:
        buf.next()
    assert exc.value.category == "protocol"


def test_largest_frame_is_accepted():
    n = _frames.MAX_FRAME_SIZE
    while len(body := msgpack.packb({"type": "x", "pad": "a" * n})) != _frames.MAX_FRAME_SIZE:
        n += _frames.MAX_FRAME_SIZE - len(body)
    assert _decode(struct.pack(">I", len(body)) + body)["type"] == "x"


@pytest.mark.parametrize("body", [
    msgpack.packb([1, 2]),  # not a map
    msgpack.packb({"kind": "start"}),  # no type
    msgpack.packb({"type": 7}),  # type not a string
    msgpack.packb({1: "x", "type": "start"}),  # a non-string key
    b"\xa3\xff\xfe\xfd",  # a str that is not UTF-8
    b"\xc1",  # never used in msgpack
    msgpack.packb({"type": "start"}) + b"\x00",  # trailing bytes
], ids=["array", "no-type", "int-type", "int-key", "bad-utf8", "reserved-byte", "trailing"])
def test_malformed_bodies_are_protocol_errors(body):
    with pytest.raises(ShellsupError) as exc:
        _decode(struct.pack(">I", len(body)) + body)
    assert exc.value.category == "protocol"


@pytest.mark.parametrize("frames", [
    [{"type": "progress", "stream": "stdout", "text": "x"}],  # before start
    [{"type": "start"}, {"type": "progress", "stream": "stdin", "text": "x"}],
    [{"type": "start"}, {"type": "progress", "stream": "stdout", "text": b"x"}],
    [{"type": "start"}, {"type": "start"}],
    [{"type": "totals"}],  # before start
    [{"type": "start"}, {"type": "totals", "command": "x"}],  # keys missing
], ids=["progress-first", "bad-stream", "bytes-text", "two-starts", "totals-first", "short-totals"])
def test_frames_out_of_order_or_incomplete_are_protocol_errors(frames):
    session = Transcript()
    with pytest.raises(ShellsupError) as exc:
        for frame in frames:
            session.handle(frame)
    assert exc.value.category == "protocol"


def test_truncated_stream_leaves_bytes_pending():
    wire = _frame({"type": "start"})
    buf = _frames.Buffer()
    buf.feed(wire[:-1])
    assert buf.next() is None and buf.pending() == len(wire) - 1
