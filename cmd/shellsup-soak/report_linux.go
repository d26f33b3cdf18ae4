package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// report gathers the outcomes and judges flatness.
type report struct {
	cycle     int // runs per cycle
	n         int
	endings   map[string]int
	shapes    map[string]bool
	leaked    int
	zombies   int
	failures  []string
	fdsFirst  map[string]int // shellsup fds at ready in the first cycle, per combo
	fdsLast   map[string]int // and in the last cycle seen
	fdsGrew   []string
	fdMin     int
	fdMax     int
	rss       []int64
	harnFirst [2]int // soak fds and goroutines at the end of the first cycle
	harnMax   [2]int // their largest value after it
	harnLast  [2]int
	overhead  []time.Duration
	cleanup   []time.Duration
	began     time.Time
}

func newReport(cycle int) *report {
	return &report{cycle: cycle, endings: map[string]int{}, shapes: map[string]bool{},
		fdsFirst: map[string]int{}, fdsLast: map[string]int{}, fdMin: 1 << 30, began: time.Now()}
}

func (r *report) add(i int, c combo, o outcome) {
	r.n++
	r.endings[c.ending]++
	r.shapes[c.shape.name] = true
	r.leaked += len(o.leaked)
	r.zombies += o.zombies
	if o.failure != "" {
		r.failures = append(r.failures, fmt.Sprintf("run %d %s: %s", i, c.key(), o.failure))
	}
	if o.fds >= 0 {
		if i < r.cycle {
			r.fdsFirst[c.key()] = o.fds
		} else if first, ok := r.fdsFirst[c.key()]; ok && o.fds > first {
			r.fdsGrew = append(r.fdsGrew, fmt.Sprintf("run %d %s: %d fds, %d in the first cycle", i, c.key(), o.fds, first))
		}
		r.fdsLast[c.key()] = o.fds
		r.fdMin, r.fdMax = min(r.fdMin, o.fds), max(r.fdMax, o.fds)
	}
	if o.hwm > 0 {
		r.rss = append(r.rss, o.hwm)
	}
	harn := [2]int{o.harnFds, o.harnGor}
	switch {
	case i == r.cycle-1 || (i < r.cycle && i == *runs-1):
		r.harnFirst = harn
		r.harnMax = harn
	case i >= r.cycle:
		r.harnMax = [2]int{max(r.harnMax[0], harn[0]), max(r.harnMax[1], harn[1])}
	}
	r.harnLast = harn
	if o.overhead > 0 {
		r.overhead = append(r.overhead, o.overhead)
	}
	if o.cleanup > 0 {
		r.cleanup = append(r.cleanup, o.cleanup)
	}
}

// rssHalves returns the largest peak RSS in the first and in the second half of the runs, KiB.
func (r *report) rssHalves() (first, second int64) {
	h := len(r.rss) / 2
	if h == 0 {
		return 0, 0
	}
	return slices.Max(r.rss[:h]), slices.Max(r.rss[h:])
}

// rssSlack is how much the peak RSS of the second half may exceed the first half's: page-level
// noise of the Go runtime, far below a leak of one buffer per run.
const rssSlack = 512 // KiB

// print writes the report and returns the exit status.
func (r *report) print(tiers []string) int {
	first, second := r.rssHalves()
	rssFlat := second <= first+rssSlack
	harnFlat := r.harnMax[0] <= r.harnFirst[0] && r.harnMax[1] <= r.harnFirst[1]
	fdsFlat := len(r.fdsGrew) == 0
	var ends []string
	for _, e := range endings {
		ends = append(ends, fmt.Sprintf("%s %d", e, r.endings[e]))
	}
	fmt.Printf("shellsup soak: %d runs in %v, %d per cycle (%s)\n", r.n, time.Since(r.began).Round(time.Second), r.cycle, *bin)
	fmt.Printf("  tiers:    %s\n", strings.Join(tiers, ", "))
	fmt.Printf("  endings:  %s\n", strings.Join(ends, ", "))
	fmt.Printf("  shapes:   %d (every leak shape of the integration suite, and a fast forker)\n", len(r.shapes))
	fmt.Printf("  leaks:    %d processes carrying a run's token, %d zombies, %d failed runs\n", r.leaked, r.zombies, len(r.failures))
	fmt.Printf("  shellsup fds at ready: %d..%d across shapes and endings, %s\n", r.fdMin, r.fdMax, verdict(fdsFlat, "no combination grew after the first cycle"))
	fmt.Printf("  shellsup peak RSS (own VmHWM): first half ≤ %.1f MiB, second half ≤ %.1f MiB, %s\n", float64(first)/1024, float64(second)/1024, verdict(rssFlat, "flat"))
	fmt.Printf("  harness:  fds %d → max %d, goroutines %d → max %d after the first cycle, %s\n",
		r.harnFirst[0], r.harnMax[0], r.harnFirst[1], r.harnMax[1], verdict(harnFlat, "flat"))
	fmt.Printf("  run overhead (wall − durationMs): p50 %s, p99 %s\n", pct(r.overhead, 50), pct(r.overhead, 99))
	fmt.Printf("  cleanup time (totals cleanup.ms; parent death: kill → exit): p50 %s, p99 %s\n", pct(r.cleanup, 50), pct(r.cleanup, 99))
	for i, f := range r.failures {
		if i == 10 {
			fmt.Printf("  … and %d more failed runs\n", len(r.failures)-10)
			break
		}
		fmt.Println("  " + f)
	}
	for i, g := range r.fdsGrew {
		if i == 5 {
			break
		}
		fmt.Println("  fds grew: " + g)
	}
	ok := r.leaked == 0 && r.zombies == 0 && len(r.failures) == 0 && rssFlat && harnFlat && fdsFlat
	if !ok {
		fmt.Println("  RESULT: FAIL")
		return 1
	}
	fmt.Println("  RESULT: ok, 0 leaks, flat")
	return 0
}

func verdict(ok bool, what string) string {
	if ok {
		return what
	}
	return "NOT FLAT"
}

func pct(ds []time.Duration, p int) string {
	if len(ds) == 0 {
		return "n/a"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return fmt.Sprintf("%.1f ms", float64(s[(len(s)-1)*p/100])/float64(time.Millisecond))
}
