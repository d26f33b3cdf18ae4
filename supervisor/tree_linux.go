package supervisor

import (
	"os"
	"strconv"

	"github.com/shellsup/shellsup/internal/procstat"
	"github.com/shellsup/shellsup/ports"
)

// treeProcs lists the descendants of root (shellsup: bash, and everything
// the subreaper adopted) from one walk of procRoot, each with its start
// time. Processes that exit meanwhile are simply missing, and so is a
// process that started before the one its parent pid names now: its true
// parent died and a stranger took the pid while the walk read it.
func treeProcs(procRoot string, root int) []ports.Proc {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil
	}
	children := map[int][]procstat.Stat{}
	start := map[int]uint64{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := procstat.Read(procRoot, pid)
		if err != nil {
			continue // gone
		}
		children[st.PPid] = append(children[st.PPid], st)
		start[pid] = st.Start
	}
	var out []ports.Proc
	queue := children[root]
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		if parent, ok := start[st.PPid]; st.PPid != root && (!ok || st.Start < parent) {
			continue // not the child of the member the walk saw
		}
		out = append(out, ports.Proc{Pid: st.Pid, Start: st.Start})
		queue = append(queue, children[st.Pid]...)
	}
	return out
}
