package config

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// Store is where drover keeps its state. An empty DSN means the caller
// decides (the CLI's --store flag or its default beside the config).
type Store struct {
	DSN string `json:"dsn"` // may hold a password: masked by Redacted
}

func decodeStore(d *decoder, n *yaml.Node, baseDir string) Store {
	var s Store
	n = deref(n)
	if n != nil && n.Kind == yaml.MappingNode {
		f := d.fields(n, "store", []string{"dsn"}, strict)
		s.DSN = d.str(f["dsn"], "store.dsn", expandSecret)
	} else {
		s.DSN = d.str(n, "store", expandSecret)
	}
	if rest, ok := strings.CutPrefix(s.DSN, "sqlite:"); ok && rest != "" && !strings.HasPrefix(rest, "file:") && rest != ":memory:" {
		s.DSN = "sqlite:" + resolvePath(rest, baseDir)
	} else if s.DSN != "" && !strings.HasPrefix(s.DSN, "sqlite:") && !strings.HasPrefix(s.DSN, "postgres://") && !strings.HasPrefix(s.DSN, "postgresql://") {
		d.errf(n, "store", "is not a store address; use sqlite:PATH or postgres://USER@HOST/DB")
	}
	return s
}
