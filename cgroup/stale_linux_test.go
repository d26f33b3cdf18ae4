package cgroup

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/internal/procstat"
	"github.com/shellsup/shellsup/internal/proctest"
)

// zombieLeader is a Python program whose main thread exits on its own (the
// exit system call, not exit_group) while another thread lives on: the
// leader shows "Z" in /proc, yet the process runs. The thread ends the
// process after 40 s, so a failing test leaks nothing for long.
const zombieLeader = `
import ctypes, os, platform, threading, time
threading.Thread(target=lambda: (time.sleep(40), os._exit(0))).start()
print("leader exits", flush=True)
ctypes.CDLL(None).syscall({"x86_64": 60, "aarch64": 93}[platform.machine()], 0)
`

// TestSweepKillsAZombieLeader: a SIGKILLed shellsup's v2 leaf holds a
// process whose leader thread has exited while another thread runs. The
// kernel's cgroup.kill skips it (it signals the leader alone, which passes
// nothing on), so the sweep used to leave the process running and the leaf
// behind ("still populated 1s after cgroup.kill"). The sweep must kill it.
func TestSweepKillsAZombieLeader(t *testing.T) {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skip("the exit system call's number is known here for amd64 and arm64 only")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("needs python3")
	}
	h := realHost(t)
	parent := privateParent(t, h)
	o := me(t)
	o.start = 1 // our pid with another start time: a shellsup that is gone
	leaf := filepath.Join(parent, o.name())
	require.NoError(t, os.Mkdir(leaf, 0o755))
	fd, err := syscall.Open(leaf, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	require.NoError(t, err)
	cmd := exec.Command(py, "-c", zombieLeader)
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd, Setsid: true}
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	syscall.Close(fd)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }() // reaps it once its last thread is gone
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // a pidfd or the tgid: the whole thread group
		<-done
		_ = removeLeaf(leaf, time.Second)
	})
	line, _ := bufio.NewReader(out).ReadString('\n')
	require.Equal(t, "leader exits\n", line)
	pid := cmd.Process.Pid
	proctest.Poll(t, 10*time.Second, "a zombie leader with a live thread", func() bool {
		st, err := procstat.Read("/proc", pid)
		return err == nil && st.State == 'Z' && procstat.OtherThreads("/proc", pid)
	})
	require.Equal(t, []int{pid}, procsBelow(leaf), "cgroup.procs still lists it")

	swept, err := Sweep(h, parent)
	require.NoError(t, err)
	assert.Equal(t, []Swept{{Path: leaf, Killed: 1}}, swept)
	assert.NoDirExists(t, leaf, "the leaf is removed")
	select {
	case <-done:
		assert.Equal(t, syscall.SIGKILL, cmd.ProcessState.Sys().(syscall.WaitStatus).Signal())
	case <-time.After(5 * time.Second):
		t.Errorf("pid %d still runs after the sweep: threads %v", pid, liveThreads(pid))
	}
}

// liveThreads lists pid's threads that are neither zombies nor dead.
func liveThreads(pid int) []string {
	dirs, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*"))
	var live []string
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue
		}
		tid, _ := strconv.Atoi(filepath.Base(d))
		if st, err := procstat.Parse(tid, b); err == nil && st.State != 'Z' && st.State != 'X' {
			live = append(live, filepath.Base(d)+":"+string(st.State))
		}
	}
	return live
}
