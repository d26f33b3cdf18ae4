//go:build !linux

package shellsup

func holdUndumpable()    {}
func releaseUndumpable() {}
func keepUndumpable()    {}
