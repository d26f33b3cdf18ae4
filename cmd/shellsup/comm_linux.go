package main

import (
	"bytes"
	"os"
)

// nameSelf gives shellsup its name back when it was executed through a file
// descriptor (the bindings run a sealed copy of the binary as
// /proc/self/fd/N, so the kernel names the process "N"): ps, pgrep and
// /proc/PID/comm then say shellsup, as for a binary run by its path.
// /proc/self/comm is the thread-group leader's, the name ps shows.
func nameSelf() {
	comm, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		return
	}
	comm = bytes.TrimSuffix(comm, []byte("\n"))
	if len(comm) == 0 || len(bytes.Trim(comm, "0123456789")) != 0 {
		return // named by a path: keep what the caller chose
	}
	_ = os.WriteFile("/proc/self/comm", []byte("shellsup"), 0) // cosmetic: best effort
}
