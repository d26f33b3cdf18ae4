"""Review 5: zombie-leader-survives-sweep.sh through the Python binding as a
root harness with user="nobody" (the cgroup tier; no PID namespace). A
side thread SIGKILLs shellsup (standing in for the OOM killer) once the
command's zombie-leader process exists; the binding then kills the leaf
named in start (shellsup sweep --cgroup), which cannot: the process runs on.
Usage (root): timeout 90 /usr/bin/python3 zombie-leader-binding.py"""
import os, signal, subprocess, sys, threading, time
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "../../bindings/python/src"))
os.environ.setdefault("SHELLSUP_BIN", os.path.join(here, "../../bin/shellsup"))
import shellsup as shell
PIDF = "/tmp/review5-zlb.pid"
CMD = '''python3 -c "
import ctypes, os, threading, time
def run():
    end = time.time() + 40
    while time.time() < end: time.sleep(0.2)
threading.Thread(target=run).start()
open('%s','w').write(str(os.getpid()))
ctypes.CDLL(None).syscall(60, 0)
" & sleep 60''' % PIDF
def killer():
    for _ in range(100):
        if os.path.exists(PIDF) and open(PIDF).read():
            break
        time.sleep(0.1)
    time.sleep(0.3)
    out = subprocess.run(["pgrep", "-P", str(os.getpid())], capture_output=True, text=True).stdout.split()
    for p in out:  # our own children only: the shellsup the binding started
        if open(f"/proc/{p}/comm").read().strip() in ("shellsup", "memfd:shellsup") or "shellsup" in os.readlink(f"/proc/{p}/exe"):
            print("SIGKILL shellsup", p, flush=True); os.kill(int(p), signal.SIGKILL)
if os.path.exists(PIDF): os.unlink(PIDF)
# a private v2 parent, so that the leaf and any sweep stay in it
U = "/sys/fs/cgroup/unified"
home = [l for l in open("/proc/self/cgroup").read().splitlines() if l.startswith("0::")][0][3:]
PRIV = U + "/review5-bind"
os.makedirs(PRIV, exist_ok=True)
open(PRIV + "/cgroup.procs", "w").write(str(os.getpid()))
threading.Thread(target=killer, daemon=True).start()
try:
    r = shell.run(CMD, timeout=30, progress=None, user="nobody", cwd="/tmp", no_login=True)
    print("result:", r["exitCode"])
except Exception as e:
    print("raised:", type(e).__name__, str(e)[:900])
time.sleep(1)
z = int(open(PIDF).read())
live = [t for t in os.listdir(f"/proc/{z}/task") if open(f"/proc/{z}/task/{t}/stat").read().rsplit(")", 1)[1].split()[0] not in "ZX"] if os.path.exists(f"/proc/{z}") else []
print(f"ALIVE: pid {z}, live threads {live}" if live else "held: nothing runs")
if live: os.kill(z, signal.SIGKILL)  # the pid read from our own run
os.unlink(PIDF)
time.sleep(0.5)
open(U + home + "/cgroup.procs", "w").write(str(os.getpid()))
for d in os.listdir(PRIV):
    if os.path.isdir(os.path.join(PRIV, d)):
        os.rmdir(os.path.join(PRIV, d))
os.rmdir(PRIV)
