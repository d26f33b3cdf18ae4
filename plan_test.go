package shellsup

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestPlanListsEveryPackage: the plan in doc.go names each package of the
// module once, and nothing else.
func TestPlanListsEveryPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []string
	for _, p := range strings.Fields(string(out)) {
		if p = strings.TrimPrefix(p, "github.com/shellsup/shellsup/"); p != "github.com/shellsup/shellsup" {
			pkgs = append(pkgs, p)
		}
	}
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for _, m := range regexp.MustCompile(`(?m)^//\t(\S+)\s`).FindAllStringSubmatch(string(doc), -1) {
		plan = append(plan, m[1])
	}
	slices.Sort(pkgs)
	slices.Sort(plan)
	if !slices.Equal(pkgs, plan) {
		t.Errorf("doc.go's plan lists\n%v\nthe module has\n%v", plan, pkgs)
	}
}
