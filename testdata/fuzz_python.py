#!/usr/bin/env python3
"""Differential check of shellsup's capture against Python's own UTF-8 decoder (make fuzz-python).

Random byte strings biased toward UTF-8 edge cases (truncated sequences, overlongs, surrogates,
5- and 6-byte leads, bytes above F4, C0/C1, runs of continuation bytes) are split into random reads,
interleaved across stdout and stderr, given a random budget, and fed through the real capture path
(the Go driver decoder/internal/pydiff). Each reply must equal:

- per stream, bytes.decode("utf-8", "replace") of all that stream's bytes when nothing was cut;
- the budget rule otherwise: text is taken in arrival order across both streams, a read whose new
  text does not fit takes its longest prefix ending on a whole code point, then the marker, once;
  nothing after. So each stream's text (marker removed) is a prefix of its full decode, exactly one
  stream carries exactly one marker, and capturedBytes <= budget;
- totalBytes = every byte written, capturedBytes = the UTF-8 length of both texts.

Case i of a run is generated from random.Random(seed + i) alone, so a failure replays with
    fuzz_python.py --driver BIN --seed SEED --start I --count 1 --verbose
Exit status: 0 when every case matched, 1 on a difference, 2 on a usage or driver error.
"""

import argparse
import random
import struct
import subprocess
import sys
import time

MIN_BUDGET, MAX_BUDGET, DEFAULT_BUDGET = 52, 512 << 10, 65536
OP_WRITE, OP_CLOSE = 0, 2  # + stream (0 stdout, 1 stderr)


def marker(budget):
    return ("\n... output truncated at %d-byte capture limit ...\n" % budget).encode()


# --- generation ------------------------------------------------------------------------------

def _cont(rng):
    return rng.randrange(0x80, 0xC0)


def _valid_char(rng):
    k = rng.randrange(4)
    if k == 0:
        cp = rng.randrange(0x80)
    elif k == 1:
        cp = rng.randrange(0x80, 0x800)
    elif k == 2:
        cp = rng.choice([rng.randrange(0x800, 0xD800), rng.randrange(0xE000, 0x10000), 0xFFFD, 0xFEFF])
    else:
        cp = rng.choice([rng.randrange(0x10000, 0x110000), 0x10FFFF, 0x10000])
    return chr(cp).encode()


def _piece(rng):
    """One fragment: valid text or one kind of edge case."""
    k = rng.randrange(16)
    if k == 0:
        return bytes(rng.randrange(0x20, 0x7F) for _ in range(rng.randrange(1, 12)))
    if k == 1:
        return b"".join(_valid_char(rng) for _ in range(rng.randrange(1, 5)))
    if k == 2:  # truncated sequence: a proper prefix of a valid multi-byte character
        c = _valid_char(rng)
        while len(c) == 1:
            c = _valid_char(rng)
        return c[:rng.randrange(1, len(c))]
    if k == 3:  # overlongs
        return rng.choice([b"\xC0\x80", b"\xC1\xBF", b"\xC0", b"\xC1", b"\xE0\x80\x80", b"\xE0\x9F\xBF",
                           b"\xE0\x80", b"\xF0\x80\x80\x80", b"\xF0\x8F\xBF\xBF", b"\xF0\x80"])
    if k == 4:  # surrogates ED A0..BF xx, whole or cut
        s = bytes([0xED, rng.randrange(0xA0, 0xC0), _cont(rng)])
        return s[:rng.randrange(1, 4)]
    if k == 5:  # 5- and 6-byte leads F8-FD with continuation bytes
        return bytes([rng.randrange(0xF8, 0xFE)] + [_cont(rng) for _ in range(rng.randrange(0, 6))])
    if k == 6:  # bytes above F4, and F4 beyond U+10FFFF
        return rng.choice([bytes([rng.randrange(0xF5, 0x100)]), bytes([0xF4, rng.randrange(0x90, 0xC0), _cont(rng), _cont(rng)]),
                           b"\xFE\xFF", b"\xFF\xFE"])
    if k == 7:  # a run of continuation bytes
        return bytes(_cont(rng) for _ in range(rng.randrange(1, 8)))
    if k == 8:  # a lead followed by something that breaks it
        lead = rng.choice([0xC2, 0xDF, 0xE0, 0xE1, 0xED, 0xEF, 0xF0, 0xF1, 0xF4])
        return bytes([lead]) + rng.choice([b"A", b"\xC2", b"\xE0", b"\xF0\x90", b"\x00", b"\xFF"])
    if k == 9:  # valid 4-byte chars near the edges
        return rng.choice(["\U00010000", "\U0010FFFF", "\U0001F600"]).encode()
    if k == 10:
        return b"\n"
    if k == 11:  # long ASCII, to reach the budget
        return b"x" * rng.randrange(16, 200)
    if k == 12:  # long multi-byte runs, so the cut falls inside characters
        return rng.choice(["é", "€", "😀"]).encode() * rng.randrange(8, 80)
    return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 8)))


def _stream_bytes(rng):
    if rng.random() < 0.08:
        return b""
    return b"".join(_piece(rng) for _ in range(rng.randrange(1, 24)))


def _split(rng, data):
    """Random reads of data: one read, every byte alone, or random cut points."""
    if not data:
        return [] if rng.random() < 0.5 else [b""]
    mode = rng.randrange(4)
    if mode == 0:
        return [data]
    if mode == 1 and len(data) <= 64:
        return [data[i:i + 1] for i in range(len(data))]
    chunks, i = [], 0
    while i < len(data):
        n = rng.randrange(1, 8) if mode == 2 else rng.randrange(1, max(2, len(data) // 2))
        chunks.append(data[i:i + n])
        i += n
    return chunks


def _budget(rng, total):
    k = rng.randrange(5)
    if k == 0:
        return DEFAULT_BUDGET
    if k == 1:
        return MIN_BUDGET + rng.randrange(8)
    if k == 2:  # near what the text needs, so the cut is exercised
        b = total + len(marker(total)) + rng.randrange(-40, 40)
        return min(MAX_BUDGET, max(MIN_BUDGET, b))
    if k == 3:
        return rng.randrange(MIN_BUDGET, 400)
    return rng.choice([MIN_BUDGET, MAX_BUDGET, rng.randrange(MIN_BUDGET, MAX_BUDGET + 1)])


def gen_case(seed):
    """Returns (budget, ops, raw per stream); ops are (kind, bytes)."""
    rng = random.Random(seed)
    raw = [_stream_bytes(rng), _stream_bytes(rng)]
    queues = [_split(rng, raw[0]), _split(rng, raw[1])]
    ops = []
    while queues[0] or queues[1] or len([o for o in ops if o[0] >= OP_CLOSE]) < 2:
        s = rng.randrange(2)
        closed = any(o[0] == OP_CLOSE + s for o in ops)
        if closed:
            s = 1 - s
            if any(o[0] == OP_CLOSE + s for o in ops):
                break
        if queues[s]:
            ops.append((OP_WRITE + s, queues[s].pop(0)))
        else:
            ops.append((OP_CLOSE + s, b""))
    return _budget(rng, len(raw[0]) + len(raw[1])), ops, raw


def encode_case(budget, ops):
    out = [struct.pack("<II", budget, len(ops))]
    for kind, data in ops:
        out.append(bytes([kind]))
        if kind < OP_CLOSE:
            out.append(struct.pack("<I", len(data)))
            out.append(data)
    return b"".join(out)


# --- the expected result ---------------------------------------------------------------------

def _cut(text, n):
    while n > 0 and text[n] & 0xC0 == 0x80:
        n -= 1
    return n


def _incomplete(t):
    """Whether t is a proper prefix of a well-formed sequence, by Python's strict decoder."""
    need = {0xC: 2, 0xD: 2, 0xE: 3, 0xF: 4}.get(t[0] >> 4, 0)
    if t[0] >= 0xF5 or need <= len(t):
        return False
    seconds = [t[1]] if len(t) > 1 else [0x80, 0x90, 0xA0]
    for b in seconds:
        try:
            (bytes([t[0], b]) + t[2:] + b"\x80" * (need - max(2, len(t)))).decode("utf-8")
            return True
        except UnicodeDecodeError:
            pass
    return False


def _held(data):
    """How many bytes at the end of data a decoder must hold back: a sequence valid so far."""
    for j in (3, 2, 1):
        if len(data) >= j and _incomplete(data[-j:]):
            return j
    return 0


def expected(budget, ops):
    """The capture by the rule. A read's new text is Python's decode of all the stream's bytes so
    far, less a held-back incomplete sequence, less the text already given for that stream.

    Not codecs' incremental decoder: CPython's holds back a trailing ED A0..ED BF (a surrogate's
    start, which nothing can complete) until the next read, where shellsup replaces it at once.
    Both give the same text for the whole stream; only the read that carries it differs, and with
    two streams sharing a budget that read decides what is captured."""
    m = marker(budget)
    room = budget - len(m)
    seen = [b"", b""]
    given = [b"", b""]  # decoded so far, per stream, captured or not
    text = [bytearray(), bytearray()]
    total, spent = 0, False
    for kind, data in ops:
        s = kind % 2
        total += len(data)
        if spent:
            continue
        seen[s] += data
        if kind >= OP_CLOSE:
            now = seen[s].decode("utf-8", "replace").encode()
        else:
            now = seen[s][:len(seen[s]) - _held(seen[s])].decode("utf-8", "replace").encode()
        if not now.startswith(given[s]):
            raise AssertionError("model: decoding a longer prefix changed earlier text")
        new, given[s] = now[len(given[s]):], now
        if len(new) <= room:
            text[s] += new
            room -= len(new)
            continue
        n = _cut(new, room)
        text[s] += new[:n] + m
        spent = True
    return bytes(text[0]), bytes(text[1]), spent, total


def check(budget, ops, raw, got):
    """Returns a list of problems; empty when got is right."""
    out, err, truncated, total, captured, problem = got
    probs = []
    if problem:
        probs.append("driver: " + problem)
    want_out, want_err, want_trunc, want_total = expected(budget, ops)
    full = [raw[0].decode("utf-8", "replace").encode(), raw[1].decode("utf-8", "replace").encode()]
    m = marker(budget)
    if total != want_total:
        probs.append("totalBytes %d, want %d" % (total, want_total))
    if captured != len(out) + len(err):
        probs.append("capturedBytes %d, but the texts hold %d" % (captured, len(out) + len(err)))
    if captured > budget:
        probs.append("capturedBytes %d over the budget %d" % (captured, budget))
    if truncated != want_trunc:
        probs.append("truncated %s, want %s" % (truncated, want_trunc))
    if not want_trunc:
        for name, got_s, want_s in (("stdout", out, full[0]), ("stderr", err, full[1])):
            if got_s != want_s:
                probs.append("%s %r, Python decodes %r" % (name, got_s, want_s))
    else:
        markers = out.count(m) + err.count(m)
        if markers != 1 or not (out.endswith(m) or err.endswith(m)):
            probs.append("%d markers, want exactly one at the end of one stream" % markers)
        for name, got_s, want_s in (("stdout", out, full[0]), ("stderr", err, full[1])):
            body = got_s[:-len(m)] if got_s.endswith(m) else got_s
            if not want_s.startswith(body):
                probs.append("%s %r is not a prefix of Python's %r" % (name, body, want_s))
    if (out, err) != (want_out, want_err):
        probs.append("stdout %r stderr %r, the rule gives %r %r" % (out, err, want_out, want_err))
    return probs


# --- the driver ------------------------------------------------------------------------------

def _read_exact(f, n):
    b = f.read(n)
    if len(b) != n:
        raise EOFError("the driver closed its output early")
    return b


def read_reply(f):
    def s():
        (n,) = struct.unpack("<I", _read_exact(f, 4))
        return _read_exact(f, n)
    out, err = s(), s()
    truncated = _read_exact(f, 1) == b"\x01"
    total, captured = struct.unpack("<QQ", _read_exact(f, 16))
    problem = s().decode("utf-8", "replace")
    return out, err, truncated, total, captured, problem


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--driver", required=True, help="the pydiff binary")
    ap.add_argument("--count", type=int, default=1000000, help="cases to run (default 10^6)")
    ap.add_argument("--seed", type=int, default=None, help="the run's seed (default: from the clock)")
    ap.add_argument("--start", type=int, default=0, help="first case index (to replay one case)")
    ap.add_argument("--batch", type=int, default=2000, help="cases per batch")
    ap.add_argument("--max-failures", type=int, default=5)
    ap.add_argument("--verbose", action="store_true", help="print every case")
    a = ap.parse_args()
    if a.count < 0 or a.batch < 1:
        print("fuzz_python: --count must be >= 0 and --batch >= 1 (got %d, %d)" % (a.count, a.batch), file=sys.stderr)
        return 2
    seed = a.seed if a.seed is not None else int(time.time() * 1000) % (1 << 40)
    print("fuzz_python: seed %d, cases %d from %d" % (seed, a.count, a.start), flush=True)
    drv = subprocess.Popen([a.driver], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    failures, done, began = 0, 0, time.monotonic()
    try:
        i = a.start
        end = a.start + a.count
        while i < end and failures < a.max_failures:
            cases = [gen_case(seed + j) for j in range(i, min(end, i + a.batch))]
            blob = [struct.pack("<I", len(cases))] + [encode_case(b, ops) for b, ops, _ in cases]
            drv.stdin.write(b"".join(blob))
            drv.stdin.flush()
            for k, (budget, ops, raw) in enumerate(cases):
                got = read_reply(drv.stdout)
                probs = check(budget, ops, raw, got)
                if a.verbose or probs:
                    print("case %d: budget %d, ops %r" % (i + k, budget, [(o[0], o[1].hex()) for o in ops]))
                if probs:
                    failures += 1
                    print("  DIFFERENCE: " + "\n  DIFFERENCE: ".join(probs))
                    print("  replay: %s --driver %s --seed %d --start %d --count 1 --verbose" %
                          (sys.argv[0], a.driver, seed, i + k))
            done += len(cases)
            i += len(cases)
    finally:
        drv.stdin.close()
        rc = drv.wait()
    secs = time.monotonic() - began
    print("fuzz_python: %d cases compared with Python's decoder in %.1f s, %d with differences (seed %d)" %
          (done, secs, failures, seed))
    if rc != 0:
        print("fuzz_python: the driver exited with status %d" % rc, file=sys.stderr)
        return 2
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
