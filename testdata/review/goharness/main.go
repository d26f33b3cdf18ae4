// Command goharness is the review's Go harness: it runs argv[1] through the
// Go binding (embedded mode with -embedded, else $SHELLSUP_BIN) and prints
// the result or the error. Flags: -pidns, -user NAME, -procs N.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	shellsup "github.com/shellsup/shellsup/bindings/go"
	"github.com/shellsup/shellsup/bindings/go/embedded"
)

func main() {
	embedded.Init()
	emb := flag.Bool("embedded", false, "run the supervisor embedded")
	pidns := flag.Bool("pidns", false, "--pidns")
	user := flag.String("user", "", "--user")
	procs := flag.Int("procs", 0, "--max-procs")
	then := flag.String("then", "", "a second command, run after the first in the same process")
	flag.Parse()
	if *emb {
		os.Unsetenv("SHELLSUP_BIN")
	}
	req := shellsup.Request{Command: flag.Arg(0), Timeout: 20 * time.Second, Cwd: "/tmp", PIDNamespace: *pidns, User: *user,
		Env: []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent"}}
	if *procs > 0 {
		req.MaxProcs = int64(*procs)
	}
	for _, c := range []string{flag.Arg(0), *then} {
		if c == "" {
			continue
		}
		req.Command = c
		res, err := shellsup.Run(context.Background(), req)
		if err != nil {
			fmt.Println("ERR", err)
		}
		fmt.Printf("RESULT exit=%d stdout=%q stderr=%q cleanup=%+v\n", res.ExitCode, res.Stdout, res.Stderr, res.Cleanup)
	}
}
