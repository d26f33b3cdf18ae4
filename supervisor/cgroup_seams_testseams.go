//go:build testseams

package supervisor

import "os"

// seamCgroupRoot, in a test build, is SHELLSUP_TEST_CGROUP_ROOT: a scratch
// directory standing in for the cgroup2 mount and shellsup's own cgroup,
// with no v1 hierarchies, for the tests of refusals.
func seamCgroupRoot() string { return os.Getenv("SHELLSUP_TEST_CGROUP_ROOT") }
