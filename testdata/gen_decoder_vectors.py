#!/usr/bin/env python3
"""Write testdata/decoder/vectors.json: golden UTF-8 decoding vectors for the Go decoder package.

Each vector is {"name", "hex", "text"}: the raw bytes in hex and Python's own
raw.decode("utf-8", "replace") of them, the behaviour the README ("Output capture") requires of shellsup.
Only the standard library is used, and the output is deterministic (fixed random seed).

Run from the repository root:  python3 testdata/gen_decoder_vectors.py
"""

import json
import os
import random

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "decoder", "vectors.json")

# Named, hostile cases. Each name says what the bytes are, so a failing Go test explains itself.
CASES = [
    # Plain and valid.
    ("empty", b""),
    ("ascii", b"hello, world"),
    ("nul and del", b"\x00\x7f"),
    ("crlf tab", b"a\r\nb\tc\n"),
    ("ansi escape", b"\x1b[31mred\x1b[0m"),
    ("2-byte lowest U+0080", b"\xc2\x80"),
    ("2-byte e-acute", b"\xc3\xa9"),
    ("2-byte highest U+07FF", b"\xdf\xbf"),
    ("3-byte lowest U+0800", b"\xe0\xa0\x80"),
    ("3-byte euro", b"\xe2\x82\xac"),
    ("3-byte last before surrogates U+D7FF", b"\xed\x9f\xbf"),
    ("3-byte first after surrogates U+E000", b"\xee\x80\x80"),
    ("3-byte bom", b"\xef\xbb\xbf"),
    ("3-byte replacement char itself", b"\xef\xbf\xbd"),
    ("3-byte noncharacter U+FFFE", b"\xef\xbf\xbe"),
    ("3-byte noncharacter U+FFFF", b"\xef\xbf\xbf"),
    ("4-byte lowest U+10000", b"\xf0\x90\x80\x80"),
    ("4-byte emoji", b"\xf0\x9f\x98\x80"),
    ("4-byte highest U+10FFFF", b"\xf4\x8f\xbf\xbf"),
    ("greek kosme", "κόσμε".encode()),
    ("mixed latin", "héllo wörld".encode()),
    ("cjk", "日本語のテキスト".encode()),
    ("emoji zwj family", "👨‍👩‍👧‍👦".encode()),
    ("multibyte across 8-byte boundary", b"abcdefg\xe2\x82\xacabcdefgh"),
    # The examples of the README's "Output capture".
    ("spec E2 82 41", b"\xe2\x82\x41"),
    ("spec FF FE", b"\xff\xfe"),
    ("spec overlong C0 AF", b"\xc0\xaf"),
    ("spec surrogate ED A0 80", b"\xed\xa0\x80"),
    ("spec above max F4 90 80 80", b"\xf4\x90\x80\x80"),
    # Bytes that can never start a sequence.
    ("lone FF", b"\xff"),
    ("lone FE", b"\xfe"),
    ("lone continuation 80", b"\x80"),
    ("lone continuation BF", b"\xbf"),
    ("three continuations", b"\x80\x80\x80"),
    ("all continuations 80-BF", bytes(range(0x80, 0xC0))),
    ("every invalid lead alone", b"".join(bytes([b]) + b"a" for b in [0xC0, 0xC1] + list(range(0xF5, 0x100)))),
    ("invalid inside long ascii", b"a" * 16 + b"\xff" + b"b" * 16),
    # Overlong encodings.
    ("overlong nul C0 80", b"\xc0\x80"),
    ("overlong C1 BF", b"\xc1\xbf"),
    ("overlong 3-byte E0 80 80", b"\xe0\x80\x80"),
    ("overlong 3-byte E0 9F BF", b"\xe0\x9f\xbf"),
    ("overlong 4-byte F0 80 80 80", b"\xf0\x80\x80\x80"),
    ("overlong 4-byte F0 8F BF BF", b"\xf0\x8f\xbf\xbf"),
    # Surrogates and code points above U+10FFFF.
    ("surrogate high end ED BF BF", b"\xed\xbf\xbf"),
    ("cesu-8 surrogate pair", b"\xed\xa0\xbd\xed\xb8\x80"),
    ("F5 lead above max", b"\xf5\x80\x80\x80"),
    ("F7 lead above max", b"\xf7\xbf\xbf\xbf"),
    ("5-byte form F8", b"\xf8\x88\x80\x80\x80"),
    ("6-byte form FC", b"\xfc\x84\x80\x80\x80\x80"),
    ("F4 90 truncated", b"\xf4\x90"),
    # Incomplete at EOF: one U+FFFD each.
    ("eof after C2", b"\xc2"),
    ("eof after E2", b"\xe2"),
    ("eof after E2 82", b"\xe2\x82"),
    ("eof after F0", b"\xf0"),
    ("eof after F0 9F", b"\xf0\x9f"),
    ("eof after F0 9F 98", b"\xf0\x9f\x98"),
    ("eof after F4 8F", b"\xf4\x8f"),
    ("ascii then eof after F0 9F 98", b"abcdefg\xf0\x9f\x98"),
    # Incomplete, then interrupted: the interrupting byte starts afresh.
    ("C2 then ascii", b"\xc2A"),
    ("E2 then ascii", b"\xe2A"),
    ("F0 9F then ascii", b"\xf0\x9fA"),
    ("F0 9F 98 then ascii", b"\xf0\x9f\x98A"),
    ("C2 then C2 A9", b"\xc2\xc2\xa9"),
    ("E2 82 then euro", b"\xe2\x82\xe2\x82\xac"),
    ("F0 9F then emoji", b"\xf0\x9f\xf0\x9f\x98\x80"),
    ("E0 then bad second 9F", b"\xe0\x9f"),
    ("valid 2-byte then extra continuation", b"\xc3\xa9\xa9"),
    ("valid 4-byte then extra continuations", b"\xf0\x9f\x98\x80\x80\x80"),
    ("every byte 00-FF", bytes(range(256))),
]


def random_cases(seed=20240601, count=40):
    """Random byte strings with a fixed seed, biased toward bytes that make UTF-8 interesting."""
    rng = random.Random(seed)
    interesting = [0x41, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF,
                   0xE0, 0xE2, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF]
    cases = []
    for i in range(count):
        n = rng.randrange(0, 49)
        if i % 2 == 0:
            raw = bytes(rng.randrange(256) for _ in range(n))
        else:
            raw = bytes(rng.choice(interesting) for _ in range(n))
        cases.append(("random %02d" % i, raw))
    return cases


def main():
    vectors = []
    names = set()
    for name, raw in CASES + random_cases():
        assert name not in names, "duplicate name " + name
        names.add(name)
        vectors.append({"name": name, "hex": raw.hex(), "text": raw.decode("utf-8", "replace")})
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="ascii") as f:
        json.dump(vectors, f, indent=1)  # ASCII-only: controls and U+FFFD stay visible
        f.write("\n")
    print("wrote %d vectors to %s" % (len(vectors), OUT))


if __name__ == "__main__":
    main()
