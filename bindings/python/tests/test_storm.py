"""A SIGCONT storm during the cleanup does not hold shell.run.

The command's accomplices keep sending SIGCONT to the process group (the
whole tree but shellsup) and SIGSTOP to bash and each other for 12 s, around
300 TERM-ignoring sleepers: everything ends by itself after 12 s. Once the
storm is on (the job says "ready"), the job is killed: kill() returns within
grace + the kill budget + the drain, plus 1 s of load, long before that, and
nothing is left (the leaks fixture). (A timeout instead could fire before a
loaded machine has even started the storm.)
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

BOUND = 0.5 + 3 + 0.5 + 1  # grace + kill budget + drain + load


@pytest.mark.parametrize("pidns", [None, True], ids=["default", "pidns"])
def test_a_sigcont_storm_does_not_hold_the_kill(leaks, pidns):
    job = shell.start(STORM, lifetime=60, grace=0.5, pidns=pidns)
    try:
        assert job.wait_for(pattern="ready", timeout=30)
    finally:
        t0 = time.monotonic()
        result = job.kill()
        took = time.monotonic() - t0
    assert result["cancelled"] is True
    assert result.cleanup["stragglers"] == []
    assert took < BOUND, (took, result.cleanup)
