package shellsup_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	shellsup "github.com/shellsup/shellsup/bindings/go"
)

// Run a command, streaming its output as it arrives. The shellsup binary is
// found through $SHELLSUP_BIN or $PATH.
func Example() {
	res, err := shellsup.Run(context.Background(), shellsup.Request{
		Command: `echo hello; sleep 300 & exit 3`, // the background sleep does not survive
		Timeout: 30 * time.Second,
		Progress: func(stream, text string) error {
			fmt.Printf("%s: %q\n", stream, text)
			return nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("exit %d, stdout %q, %d process(es) signalled at cleanup\n",
		res.ExitCode, res.Stdout, res.Cleanup.Signalled)
	// Output:
	// stdout: "hello\n"
	// exit 3, stdout "hello\n", 1 process(es) signalled at cleanup
}

// Infrastructure failures are *Error values with a category; a non-zero
// exit, a timeout and a cancellation are not errors.
func ExampleError() {
	_, err := shellsup.Run(context.Background(), shellsup.Request{Command: "true", Timeout: -time.Second})
	var e *shellsup.Error
	if errors.As(err, &e) {
		fmt.Println(e.Category, e.IsRetryable())
		fmt.Println(err)
	}
	// Output:
	// validation false
	// shellsup: validation: timeout must be greater than 0 and at most 600 seconds (got -1s)
}

// Cancelling the context cancels the run; Run returns once shellsup has
// cleaned up.
func ExampleRun_cancel() {
	ctx, cancel := context.WithCancel(context.Background())
	res, err := shellsup.Run(ctx, shellsup.Request{
		Command: `echo started; sleep 300`,
		Grace:   new(time.Duration(0)), // SIGKILL right after SIGTERM
		Progress: func(stream, text string) error {
			cancel() // e.g. the user pressed stop
			return nil
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	fmt.Println(res.Cancelled, res.CancelReason, res.Stdout == "started\n")
	// Output: true request true
}
