"""Review 6: lock-holder-fork-exit-survives-sweep.sh through the Python
binding, a root harness with user="nobody" (the cgroup tier, no PID
namespace). A side thread SIGKILLs shellsup (standing in for the OOM killer)
once the command's lock waiter exists; the binding then runs shellsup sweep
for the leaf the start frame named, which leaves it "held by a live
shellsup", and the command's process runs on.
Usage (root): timeout 90 /usr/bin/python3 lock-holder-binding.py"""
import os, signal, subprocess, sys, threading, time
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "../../bindings/python/src"))
os.environ.setdefault("SHELLSUP_BIN", os.path.join(here, "../../bin/shellsup"))
import shellsup as shell
PF = "/tmp/review6-lhb"
CMD = '''setsid timeout 45 python3 -c "
import fcntl, os, time
leaf = '/sys/fs/cgroup/unified' + [l for l in open('/proc/self/cgroup') if l.startswith('0::')][0][3:].strip()
fd = os.open(leaf, os.O_RDONLY | os.O_DIRECTORY)
open('%s.taker', 'w').write(str(os.getpid()))
fcntl.flock(fd, fcntl.LOCK_EX)
if os.fork():
    os._exit(0)
open('%s.holder', 'w').write(str(os.getpid()))
time.sleep(40)
" </dev/null >/dev/null 2>&1 & sleep 60''' % (PF, PF)
def killer():
    for _ in range(100):
        if os.path.exists(PF + ".taker") and open(PF + ".taker").read():
            break
        time.sleep(0.1)
    time.sleep(0.3)
    for p in subprocess.run(["pgrep", "-P", str(os.getpid())], capture_output=True, text=True).stdout.split():
        if "shellsup" in os.readlink(f"/proc/{p}/exe"):  # our own child: the shellsup the binding started
            print("SIGKILL shellsup", p, flush=True); os.kill(int(p), signal.SIGKILL)
for s in (".taker", ".holder"):
    if os.path.exists(PF + s): os.unlink(PF + s)
U = "/sys/fs/cgroup/unified"
home = [l for l in open("/proc/self/cgroup").read().splitlines() if l.startswith("0::")][0][3:]
PRIV = U + "/review6-bind"
os.makedirs(PRIV, exist_ok=True)
open(PRIV + "/cgroup.procs", "w").write(str(os.getpid()))
threading.Thread(target=killer, daemon=True).start()
try:
    r = shell.run(CMD, timeout=30, progress=None, user="nobody", cwd="/tmp", no_login=True)
    print("result:", r["exitCode"])
except Exception as e:
    print("raised:", type(e).__name__, str(e)[:1200])
time.sleep(1)
h = int(open(PF + ".holder").read()) if os.path.exists(PF + ".holder") else 0
alive = h and os.path.exists(f"/proc/{h}") and open(f"/proc/{h}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"
print(f"BROKEN: pid {h} (uid {os.stat(f'/proc/{h}').st_uid}) ALIVE after the binding's sweep" if alive else "held: nothing runs")
time.sleep(0.2)
open(U + home + "/cgroup.procs", "w").write(str(os.getpid()))
for d in os.listdir(PRIV):
    leaf = os.path.join(PRIV, d)
    if os.path.isdir(leaf):
        for p in open(leaf + "/cgroup.procs").read().split():
            os.kill(int(p), signal.SIGKILL)  # the members of our own run's leaf
        time.sleep(0.5)
        os.rmdir(leaf)
os.rmdir(PRIV)
for s in (".taker", ".holder"):
    if os.path.exists(PF + s): os.unlink(PF + s)
