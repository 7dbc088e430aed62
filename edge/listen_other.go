//go:build !linux

package main

import "errors"

func setReusePort(uintptr) error {
	return errors.New("more than one listener (listeners, LISTGATE_EDGE_LISTENERS) needs Linux")
}
