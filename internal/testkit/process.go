package testkit

import (
	"bytes"
	"os"
	"strconv"
)

// Alive reports whether pid is a live process (it exists in /proc and is
// neither a zombie nor dead). Linux only, like the suites that use it.
func Alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	st := b[i+2]
	return st != 'Z' && st != 'X'
}
