// Package suggest finds the known word an operator probably meant, for the
// "(did you mean …?)" hints in config and prompt errors.
package suggest

import (
	"fmt"
	"strings"
)

// Closest returns the word of known closest to s when s is plausibly a typo
// of it (at most two edits, and fewer than half of s), or "".
func Closest(s string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if dist := levenshtein(strings.ToLower(s), k); dist < bestD {
			best, bestD = k, dist
		}
	}
	if best != "" && bestD > len(s)/2 {
		return ""
	}
	return best
}

// DidYouMean is the hint for a suggestion: ` (did you mean "x"?)`, or "" when
// there is none.
func DidYouMean(s string) string {
	if s == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", s)
}

func levenshtein(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
