package config

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/drover-dev/drover/internal/board"
)

// board: is the column layout (the board package's type; this file reads it).

var boardKeys = []string{"prefix", "columns"}

func decodeBoard(d *decoder, n *yaml.Node) board.Board {
	b := board.Default()
	f := d.fields(n, "board", boardKeys, strict)
	if v, ok := f["prefix"]; ok {
		b.Prefix = d.str(v, "board.prefix", expandPlain)
	}
	if v, ok := f["columns"]; ok {
		v = deref(v)
		if v == nil || v.Kind != yaml.SequenceNode {
			d.errf(v, "board.columns", "must be a list of {name, role} entries")
			return b
		}
		b.Columns = nil
		for i, c := range v.Content {
			p := fmt.Sprintf("board.columns[%d]", i)
			cf := d.fields(c, p, []string{"name", "role"}, strict)
			if cf == nil {
				continue
			}
			b.Columns = append(b.Columns, board.Column{
				Name: d.str(cf["name"], p+".name", expandPlain),
				Role: board.Role(d.str(cf["role"], p+".role", expandPlain)),
			})
		}
	}
	return b
}

// validateBoard checks the board itself; false means the other checks
// cannot name its columns.
func validateBoard(d *decoder, cfg *Config, top map[string]*yaml.Node) bool {
	if err := cfg.Board.Validate(); err != nil {
		path, msg, _ := strings.Cut(err.Error(), ": ")
		d.errf(at(top, "board"), path, "%s", msg)
		return false
	}
	return true
}
