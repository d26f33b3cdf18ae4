//go:build linux

package embedded_test

import (
	"context"
	"fmt"
	"log"
	"time"

	shellsup "github.com/shellsup/shellsup/bindings/go"
)

// A harness that is its own shellsup: embedded.Init at the top of main (here,
// of TestMain), then Run as usual. No shellsup binary is installed; the
// program re-executes itself as the supervisor. The bindings/go README shows
// the same harness as a whole program, and a test builds it in a module of
// its own.
func Example() {
	res, err := shellsup.Run(context.Background(), shellsup.Request{
		Command: "echo hello; sleep 300 & exit 3", // the background sleep does not survive the run
		Timeout: 5 * time.Minute,
		Progress: func(stream, text string) error {
			fmt.Printf("[%s] %s", stream, text) // an error returned here cancels the run
			return nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("exit %d, %d process(es) cleaned up\n", res.ExitCode, res.Cleanup.Signalled)
	// Output:
	// [stdout] hello
	// exit 3, 1 process(es) cleaned up
}
