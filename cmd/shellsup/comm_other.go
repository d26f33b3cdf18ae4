//go:build !linux

package main

func nameSelf() {}
