"""Review 5 helper: run one command through the Python binding (the
harness's view) and print what the result says about the cleanup.
Usage: /usr/bin/python3 binding-run.py COMMAND [pidns: auto|on|off] [memory|pids]
(memory: max_memory="32M"; pids: max_procs=20)"""
import os, sys, json
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../bindings/python/src"))
import shellsup as shell
cmd = sys.argv[1]
pn = {"auto": None, "on": True, "off": False}[sys.argv[2] if len(sys.argv) > 2 else "auto"]
lim = {"max_procs": 20} if (sys.argv[3] if len(sys.argv) > 3 else "memory") == "pids" else {"max_memory": "32M"}
r = shell.run(cmd, timeout=30, progress=None, pidns=pn, no_login=True, **lim)
print("stdout:", r["stdout"].strip())
print("exitCode:", r["exitCode"])
print("cleanup:", json.dumps(r.cleanup, default=str))
