//go:build !testseams

package supervisor

// seamCgroupRoot is "" in production: the real cgroup hierarchies.
func seamCgroupRoot() string { return "" }
