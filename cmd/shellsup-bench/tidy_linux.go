package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// mixedText is 16 MiB of text as build and test logs have it: plain lines,
// coloured status lines, tqdm-style progress redraws, OSC 8 hyperlinks.
func mixedText() []byte {
	var b strings.Builder
	for i := 0; b.Len() < 16<<20; i++ {
		switch i % 8 {
		case 0:
			fmt.Fprintf(&b, "\x1b[32mPASS\x1b[0m TestSomething/case_%d (0.00s)\n", i)
		case 1:
			b.WriteString("\r 42% |████████▍           | 42/100 [00:01<00:02, 41.9it/s]")
		case 2:
			b.WriteString("\r100% |████████████████████| 100/100 [00:02<00:00, 44.1it/s]\n")
		case 3:
			b.WriteString("\x1b]8;;file:///src/main.go\x1b\\main.go\x1b]8;;\x1b\\:12:3: warning: unused variable\n")
		default:
			fmt.Fprintf(&b, "plain log line number %d with some ordinary words in it\n", i)
		}
	}
	return []byte(b.String())
}

// tidyDrain measures --tidy's CPU cost on 1 GiB of mixed text, against
// the same run without it: with a tail capture, where every byte is decoded
// and tidied, and with the default head capture, where the pipe is spliced
// away once the budget is spent.
func tidyDrain() {
	if !hasOption("--tidy") {
		row("drain 1 GiB of mixed text with `--tidy`", "", "", "this binary has no --tidy", "CPU ≤ 1.15×", nil)
		return
	}
	dir, err := os.MkdirTemp("", "shellsup-bench-tidy-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(dir)
	f := filepath.Join(dir, "mixed.txt")
	if err := os.WriteFile(f, mixedText(), 0o644); err != nil {
		fatal(err)
	}
	gen := "for i in $(seq " + strconv.Itoa(gib/(16<<20)) + "); do cat " + f + "; done"
	for _, capture := range []string{"tail", "head"} {
		var plain, tidied []time.Duration
		for i := 0; i < *heavy; i++ {
			plain = append(plain, supRun("--frames", "--capture", capture, "--", gen).cpu)
			tidied = append(tidied, supRun("--frames", "--capture", capture, "--tidy", "--", gen).cpu)
		}
		p, t := median(plain), median(tidied)
		row(fmt.Sprintf("drain 1 GiB of mixed text, `--capture %s`, CPU time of shellsup: without vs with `--tidy` (%d runs)", capture, *heavy),
			ms(p), ms(t), fmt.Sprintf("%.2f×", float64(t)/float64(p)), "≤ 1.15×", ptr(float64(t) <= 1.15*float64(p)))
	}
}
