package supervisor

import (
	"os"
	"strconv"

	"github.com/shellsup/shellsup/internal/procstat"
)

// treePids lists the descendants of root (shellsup: bash, and everything
// the subreaper adopted) from one walk of procRoot. Processes that exit
// meanwhile are simply missing.
func treePids(procRoot string, root int) []int {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := procstat.Read(procRoot, pid)
		if err != nil {
			continue // gone
		}
		children[st.PPid] = append(children[st.PPid], pid)
	}
	var out []int
	queue := children[root]
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		out = append(out, pid)
		queue = append(queue, children[pid]...)
	}
	return out
}
