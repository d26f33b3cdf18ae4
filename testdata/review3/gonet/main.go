// Command gonet is review 3's Go harness for finding 1: it runs argv[1]
// through the Go binding with Network: new(false) and the binding's
// defaults otherwise (--pidns-auto), and prints the sandbox report and the
// output. Run by testdata/review3/landlock-tcp-bypass-go.sh.
package main

import (
	"context"
	"fmt"
	"time"

	"flag"

	shellsup "github.com/shellsup/shellsup/bindings/go"
)

func main() {
	flag.Parse()
	req := shellsup.Request{Command: flag.Arg(0), Timeout: 20 * time.Second, Cwd: "/tmp", Network: new(false),
		Env: []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent"}}
	res, err := shellsup.Run(context.Background(), req)
	if err != nil {
		fmt.Println("ERR", err)
	}
	fmt.Printf("sandbox=%+v\nstdout=%s", res.Sandbox, res.Stdout)
}
