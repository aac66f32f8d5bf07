//go:build !linux

package proc

// KillTagged is Linux only (it reads /proc); elsewhere it finds nothing.
func KillTagged(key, value string) int { return 0 }

// Tagged is Linux only, like KillTagged: elsewhere it is always empty.
type Tagged map[string][]int

// FindTagged finds nothing off Linux.
func FindTagged(key string) Tagged { return Tagged{} }

// Kill kills nothing off Linux.
func (t Tagged) Kill(key, value string) int { return 0 }
