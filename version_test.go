package shellsup

import (
	"regexp"
	"testing"
)

func TestVersionIsSemantic(t *testing.T) {
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(Version()) {
		t.Fatalf("VERSION holds %q, want MAJOR.MINOR.PATCH on one line", Version())
	}
}
