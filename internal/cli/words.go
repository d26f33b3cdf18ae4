package cli

import (
	"flag"
	"sort"
	"strconv"
	"strings"

	"github.com/shellsup/shellsup/request"
)

// subcommands are the words shellsup takes in place of options.
var subcommands = []string{"decode", "sweep"}

// requireDoubleDash refuses a COMMAND not preceded by "--": a word that is
// neither an option nor a subcommand (a typo such as "decod") must not run
// as bash -c "decod". rest is what the flags left of argv.
func requireDoubleDash(argv, rest []string, fs *flag.FlagSet) error {
	if len(rest) == 0 {
		return nil
	}
	if i := len(argv) - len(rest); i > 0 && argv[i-1] == "--" {
		return nil
	}
	for _, sub := range subcommands {
		if rest[0] == sub {
			return request.Invalidf("%q is a subcommand: it comes first, as in shellsup %s; a COMMAND follows --: shellsup [options] -- COMMAND; see shellsup --help", sub, sub)
		}
	}
	if near := closest(rest[0], words(fs)); near != "" {
		return request.Invalidf("unknown word %q: did you mean %q? (a COMMAND follows --: shellsup [options] -- COMMAND); see shellsup --help", rest[0], near)
	}
	return request.Invalidf("%s is not an option or a subcommand: the COMMAND follows --, as in shellsup [options] -- %s; see shellsup --help",
		quoteAll(rest), strconv.Quote(strings.Join(rest, " ")))
}

// optionNames are the options fs takes, spelled --name, in order, and --help.
func optionNames(fs *flag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, "--"+f.Name) })
	sort.Strings(names)
	return append(names, "--help")
}

// words are what may stand before the COMMAND: the subcommands and the
// options.
func words(fs *flag.FlagSet) []string {
	return append(append([]string{}, subcommands...), optionNames(fs)...)
}

// closest is the one word of candidates that typed most likely misspells
// (dashes aside: "version" means "--version", "-timout" "--timeout"),
// within an edit distance of 1, or 2 for words of 6 letters or more;
// "" when none is that close, or two are equally close.
func closest(typed string, candidates []string) string {
	bare := strings.TrimLeft(typed, "-")
	limit := 1
	if len(bare) >= 6 {
		limit = 2
	}
	best, bestDist, tie := "", limit+1, false
	for _, c := range candidates {
		d := distance(bare, strings.TrimLeft(c, "-"))
		switch {
		case d < bestDist:
			best, bestDist, tie = c, d, false
		case d == bestDist:
			tie = true
		}
	}
	if tie || bare == "" {
		return ""
	}
	return best
}

// distance is the Levenshtein distance of a and b, in bytes (the words
// compared are ASCII option names).
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, " ")
}
