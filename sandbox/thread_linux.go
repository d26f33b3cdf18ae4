package sandbox

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// OnThread runs run on a goroutine locked to a thread that is not the
// process's main thread, and never unlocks that thread: run may leave it
// restricted (Restrict, EnterNetwork), and the Go runtime then retires it
// when the goroutine ends. Not the main thread, because the main thread is
// the thread-group leader, the one other processes see: a restricted leader
// would share the command's Landlock domain, letting the command signal
// shellsup through the signal scope, and a locked main thread is parked
// for ever rather than retired. OnThread returns when run has.
func OnThread(run func()) {
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() != unix.Getpid() {
			run() // never unlocked: see above
			close(done)
			return
		}
		// The main thread: held here, so the goroutine below runs on
		// another one; then given back untouched.
		inner := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			run() // never unlocked
			close(inner)
		}()
		<-inner
		runtime.UnlockOSThread()
		close(done)
	}()
	<-done
}
