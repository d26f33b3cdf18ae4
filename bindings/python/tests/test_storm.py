"""A SIGCONT storm during the cleanup does not hold shell.run.

The command's accomplices keep sending SIGCONT to the process group (the
whole tree but shellsup) and SIGSTOP to bash and each other for 12 s, around
300 TERM-ignoring sleepers: everything ends by itself after 12 s. The call
returns within timeout + grace + the kill budget + the drain, plus 1 s of
start-up and load, long before that, and nothing is left (the leaks fixture).
"""

import time

import pytest

import shellsup as shell

STORM = r"""trap '' TERM
for i in $(seq 300); do (trap '' TERM; exec sleep 12) & done
storm() {
	trap '' TERM; end=$((SECONDS+12)); n=0
	while [ $SECONDS -lt $end ] && [ $n -lt 2000000 ]; do
		kill -CONT 0 2>/dev/null; kill -STOP $1 $$ 2>/dev/null; kill -CONT 0 2>/dev/null; n=$((n+1))
	done
}
storm $$ & a=$!; storm $a & b=$!; storm $b & storm $a &
echo ready
wait"""

BOUND = 1 + 0.5 + 3 + 0.5 + 1  # timeout + grace + kill budget + drain + start-up


@pytest.mark.parametrize("pidns", [None, True], ids=["default", "pidns"])
def test_a_sigcont_storm_does_not_hold_the_call(leaks, pidns):
    t0 = time.monotonic()
    result = shell.run(STORM, timeout=1, grace=0.5, progress=None, pidns=pidns)
    took = time.monotonic() - t0
    assert "ready" in result["stdout"]
    assert result["timedOut"] is True
    assert result.cleanup["stragglers"] == []
    assert took < BOUND, (took, result.cleanup)
