package shellsup_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"regexp"
	"time"

	shellsup "github.com/shellsup/shellsup/bindings/go"
)

// Start a real server as a job, wait until it is ready, use it, and stop
// it. The README's Jobs section shows this function as it is.
func ExampleStart() {
	job, err := shellsup.Start(context.Background(), shellsup.Request{
		Command:  "python3 -u -m http.server 0 --bind 127.0.0.1",
		Lifetime: time.Hour, // stopped after an hour, or when this program dies, at the latest
	})
	if err != nil {
		log.Fatal(err)
	}
	defer job.Close() // never leave it running: kills it if need be, closes its files

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	serving := regexp.MustCompile(`Serving HTTP on \S+ port (\d+)`)
	if err := job.WaitFor(ctx, shellsup.Ready{Pattern: serving}); err != nil {
		log.Fatal(err) // a *shellsup.ExitedError, with its output, if it died first
	}
	out, err := job.Read() // what it printed so far
	if err != nil {
		log.Fatal(err)
	}
	url := "http://127.0.0.1:" + serving.FindStringSubmatch(out.Stdout)[1] + "/"
	if err := job.WaitFor(ctx, shellsup.Ready{URL: url}); err != nil {
		log.Fatal(err)
	}
	resp, err := http.Get(url)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println(resp.Status)

	res, err := job.Kill(2 * time.Second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Cancelled, res.CancelReason, res.Cleanup.Clean(), job.Running())
	// Output:
	// 200 OK
	// true request true false
}
