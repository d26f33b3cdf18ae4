#!/usr/bin/env python3
"""Overhead of shell.run over a bare bash -lc, side by side.

    SHELLSUP_BIN=bin/shellsup python3 bindings/python/bench_overhead.py [--runs 30]

Runs `true` three ways, interleaved so that load affects all alike, with an
empty HOME (a login shell would otherwise source a slow ~/.profile):

  bash      subprocess.run(["bash", "-lc", "true"])
  binary    subprocess.run([shellsup, "--frames", "--", "true"]) reading all frames
  run       shellsup.run("true", progress=None)

and prints the median and the spread of each, and the medians' differences.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "src"))

import shellsup  # noqa: E402


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def frames_mode(binary: str) -> None:
    """The binary alone, as the binding drives it: stdin open (the control channel) until it exits."""
    proc = subprocess.Popen([binary, "--frames", "--", "true"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    proc.stdout.read()  # every frame, up to EOF
    proc.stdin.close()
    proc.stdout.close()
    if proc.wait() != 0:
        raise SystemExit(f"{binary} exited with {proc.returncode}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()

    binary = shellsup.find_binary()
    with tempfile.TemporaryDirectory() as home:
        os.environ["HOME"] = home
        ways = {
            "bash": lambda: subprocess.run(["bash", "-lc", "true"], stdin=subprocess.DEVNULL, check=True),
            "binary": lambda: frames_mode(binary),
            "run": lambda: shellsup.run("true", progress=None),
        }
        for fn in ways.values():  # warm caches and imports
            fn()
        samples = {name: [] for name in ways}
        for _ in range(args.runs):
            for name, fn in ways.items():
                samples[name].append(timed(fn))

    print(f"binary: {binary}")
    print(f"python: {sys.executable} {sys.version.split()[0]}; {args.runs} runs each, interleaved, ms")
    print(f"{'':8}{'median':>8}{'min':>8}{'p90':>8}")
    med = {}
    for name, xs in samples.items():
        xs.sort()
        med[name] = statistics.median(xs)
        print(f"{name:8}{med[name]:8.2f}{xs[0]:8.2f}{xs[int(len(xs) * 0.9) - 1]:8.2f}")
    print(f"shell.run - bash -lc : {med['run'] - med['bash']:+.2f} ms   (target <= 10)")
    print(f"  of which the binary: {med['binary'] - med['bash']:+.2f} ms")
    print(f"  of which Python    : {med['run'] - med['binary']:+.2f} ms")


if __name__ == "__main__":
    main()
