# Review 5 helper, sourced: run_limited WHO CMD LIMITARGS...
# WHO=root: a root shellsup in a private v1 KIND cgroup (review5-root);
# WHO=nobody: a nobody shellsup in a nobody-owned (delegated) v1 memory
# KIND cgroup (review5-deleg). VIA=binding runs it through the Python binding
# (binding-run.py: the harness's view, totals.cleanup printed); the
# default is the CLI. EXTRA adds CLI flags (--pidns, --pidns-auto).
# Both cgroups, and whatever is left in them, are removed afterwards.
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=${SHELLSUP:-$HERE/../../bin/shellsup}
run_limited() {
  local who=$1 cmd=$2 d run as=env
  [ "$who" = nobody ] && as="setpriv --reuid nobody --regid nogroup --clear-groups"
  if [ "$who" = root ]; then
    d=/sys/fs/cgroup/${KIND:-memory}/review5-root; mkdir -p $d
  else
    d=/sys/fs/cgroup/${KIND:-memory}/review5-deleg
    mkdir -p $d && chown nobody:nogroup $d $d/cgroup.procs $d/tasks
  fi
  if [ "${VIA:-cli}" = binding ]; then
    run='cd /tmp; SHELLSUP_BIN='$BIN' HOME=/nonexistent exec '"$as"' /usr/bin/python3 '$HERE'/binding-run.py "$1" '${PIDNS:-auto}' '"${KIND:-memory}"
  else
    run='cd /tmp; HOME=/nonexistent exec '"$as"' '$BIN' --no-login '"${EXTRA:-}"' '"${LIM:---max-memory 32M}"' -- "$1"'
  fi
  timeout 40 bash -c 'echo $$ > '$d'/cgroup.procs; '"$run" review5 "$cmd"; echo "rc=$?"
  sleep 0.5
  for s in $d/*/; do [ -d "$s" ] || continue; echo "left behind: $s"; for q in $s*/; do [ -d "$q" ] && rmdir "$q"; done; rmdir "$s"; done
  rmdir $d
}
