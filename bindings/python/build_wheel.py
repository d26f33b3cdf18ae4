#!/usr/bin/env python3
"""Build the platform wheel of shellsup, with the static binary inside.

    python3 bindings/python/build_wheel.py --binary bin/shellsup --out dist

writes dist/shellsup-<version>-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
(aarch64 likewise), the way ruff and uv ship theirs: the package's Python
files plus shellsup/_bin/shellsup, mode 0755, the licence, and a `shellsup`
console command that execs that binary. Standard library only, no
network, no build isolation; the output is byte-for-byte reproducible
(fixed timestamps, sorted entries).

The binary must be a static ELF executable: it is what makes the manylinux
tag honest (it needs no libc at all).
"""

from __future__ import annotations

import argparse
import base64
import csv
import hashlib
import io
import os
import re
import struct
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
VERSION_FILE = os.path.join(HERE, "..", "..", "VERSION")  # the one place the version is written
LICENSE_FILE = os.path.join(HERE, "LICENSE")  # a link to the repository's LICENSE
LICENSE = "Apache-2.0"
PACKAGE_DIR = os.path.join(HERE, "src", "shellsup")
NAME = "shellsup"
BINARY_IN_WHEEL = f"{NAME}/_bin/shellsup"
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # reproducible: no build time in the archive

# ELF e_machine → the wheel platform tags for that architecture.
PLATFORMS = {
    62: ("manylinux_2_17_x86_64", "manylinux2014_x86_64"),  # EM_X86_64
    183: ("manylinux_2_17_aarch64", "manylinux2014_aarch64"),  # EM_AARCH64
}


def read_version() -> str:
    """The VERSION file's version, after checking that _version.py says the same."""
    with open(VERSION_FILE, encoding="utf-8") as f:
        version = f.read().strip()
    with open(os.path.join(PACKAGE_DIR, "_version.py"), encoding="utf-8") as f:
        match = re.search(r'^__version__ = "([^"]+)"$', f.read(), re.M)
    if not match:
        sys.exit("build_wheel: no __version__ in src/shellsup/_version.py")
    if match.group(1) != version:
        sys.exit(f"build_wheel: src/shellsup/_version.py says {match.group(1)!r} but VERSION says "
                 f"{version!r}; make them equal")
    return version


def platform_tags(binary: bytes, path: str) -> tuple:
    """Check that binary is a static 64-bit little-endian ELF executable; return its tags."""
    if binary[:4] != b"\x7fELF" or binary[4] != 2 or binary[5] != 1:
        sys.exit(f"build_wheel: {path} is not a 64-bit little-endian ELF file")
    (machine,) = struct.unpack_from("<H", binary, 18)
    phoff, = struct.unpack_from("<Q", binary, 32)
    phentsize, phnum = struct.unpack_from("<HH", binary, 54)
    for i in range(phnum):
        (p_type,) = struct.unpack_from("<I", binary, phoff + i * phentsize)
        if p_type == 3:  # PT_INTERP: dynamically linked
            sys.exit(f"build_wheel: {path} is dynamically linked; build it with CGO_ENABLED=0")
    if machine not in PLATFORMS:
        sys.exit(f"build_wheel: {path} is for ELF machine {machine}, which has no wheel tag here")
    return PLATFORMS[machine]


def package_files() -> list:
    """(path in wheel, bytes) of the package's sources, without caches and _bin."""
    out = []
    for root, dirs, files in os.walk(PACKAGE_DIR):
        dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "_bin"))
        for name in sorted(files):
            if name.endswith((".py", ".typed", ".json")):
                full = os.path.join(root, name)
                rel = os.path.relpath(full, os.path.dirname(PACKAGE_DIR)).replace(os.sep, "/")
                with open(full, "rb") as f:
                    out.append((rel, f.read()))
    return out


def metadata(version: str) -> bytes:
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {NAME}\n"
        f"Version: {version}\n"
        "Summary: Run one shell command and reliably kill and reap everything it started: "
        "a drop-in shell.run for kernel skills.\n"
        f"License: {LICENSE}\n"
        "License-File: LICENSE\n"
        "Classifier: Operating System :: POSIX :: Linux\n"
        "Classifier: Programming Language :: Python :: 3\n"
        "Requires-Python: >=3.8\n"
        "Requires-Dist: msgpack>=1.0\n"
        "Description-Content-Type: text/markdown\n"
        "\n" + readme
    ).encode("utf-8")


def entry_points() -> bytes:
    """The shellsup console command: pip writes it to the environment's bin/."""
    return b"[console_scripts]\nshellsup = shellsup.__main__:main\n"


def wheel_file(tags: list) -> bytes:
    lines = ["Wheel-Version: 1.0", "Generator: shellsup build_wheel.py", "Root-Is-Purelib: false"]
    lines += [f"Tag: {tag}" for tag in tags]
    return ("\n".join(lines) + "\n").encode()


def record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def build(binary_path: str, out_dir: str) -> str:
    with open(binary_path, "rb") as f:
        binary = f.read()
    plats = platform_tags(binary, binary_path)
    version = read_version()
    tags = [f"py3-none-{plat}" for plat in plats]
    dist_info = f"{NAME}-{version}.dist-info"
    wheel_name = f"{NAME}-{version}-py3-none-{'.'.join(plats)}.whl"

    with open(LICENSE_FILE, "rb") as f:
        license_text = f.read()
    entries = package_files() + [(BINARY_IN_WHEEL, binary)]
    entries += [
        (f"{dist_info}/LICENSE", license_text),
        (f"{dist_info}/METADATA", metadata(version)),
        (f"{dist_info}/entry_points.txt", entry_points()),
        (f"{dist_info}/WHEEL", wheel_file(tags)),
        (f"{dist_info}/top_level.txt", f"{NAME}\n".encode()),
    ]
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for name, data in entries:
        writer.writerow([name, record_hash(data), len(data)])
    writer.writerow([f"{dist_info}/RECORD", "", ""])
    entries.append((f"{dist_info}/RECORD", record.getvalue().encode()))

    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, wheel_name)
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            mode = 0o755 if name == BINARY_IN_WHEEL else 0o644
            info.external_attr = (0o100000 | mode) << 16  # regular file + permissions
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    os.replace(tmp, path)
    return path


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True, help="the static shellsup binary to bundle")
    parser.add_argument("--out", default="dist", help="directory for the wheel (default: dist)")
    args = parser.parse_args(argv)
    print(build(args.binary, args.out))


if __name__ == "__main__":
    main()
