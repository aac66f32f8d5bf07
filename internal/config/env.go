package config

import "strings"

// expandEnv replaces $NAME and ${NAME} with environment values; $$ is a
// literal $. Anything else after $ is kept as written. It returns the names
// that were referenced but unset.
func expandEnv(s string, getenv func(string) (string, bool)) (string, []string) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	var missing []string
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		rest := s[i+1:]
		name, width := "", 0
		switch {
		case rest[0] == '$':
			b.WriteByte('$')
			i++
			continue
		case rest[0] == '{':
			end := strings.IndexByte(rest, '}')
			if end > 1 && isEnvName(rest[1:end]) {
				name, width = rest[1:end], end+1
			}
		default:
			j := 0
			for j < len(rest) && isEnvChar(rest[j], j == 0) {
				j++
			}
			name, width = rest[:j], j
		}
		if name == "" {
			b.WriteByte(c)
			continue
		}
		v, ok := getenv(name)
		if !ok || v == "" {
			missing = append(missing, name)
		}
		b.WriteString(v)
		i += width
	}
	return b.String(), missing
}

func isEnvChar(c byte, first bool) bool {
	return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (!first && c >= '0' && c <= '9')
}

func isEnvName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isEnvChar(s[i], i == 0) {
			return false
		}
	}
	return s != ""
}
