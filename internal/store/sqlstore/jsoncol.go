package sqlstore

import (
	"encoding/json"
	"fmt"
)

// JSON columns: how values are written to them and read back. A value that
// does not decode is an error naming the table, column and row, never a
// silently empty field.

// decodeJSON unmarshals the text of column col of table's row id into v.
func decodeJSON(table, col, id, text string, v any) error {
	if err := json.Unmarshal([]byte(text), v); err != nil {
		return corrupt(table, col, id, err)
	}
	return nil
}

// rawJSON checks that the text of column col of table's row id is JSON and
// returns it as is; empty text is no value (nil).
func rawJSON(table, col, id, text string) (json.RawMessage, error) {
	if text == "" {
		return nil, nil
	}
	if !json.Valid([]byte(text)) {
		return nil, corrupt(table, col, id, fmt.Errorf("%.40q", text))
	}
	return json.RawMessage(text), nil
}

func corrupt(table, col, id string, err error) error {
	return fmt.Errorf("store: %s.%s of row %s is not valid JSON: %v", table, col, id, err)
}

// jsonOrNull is v as JSON text, or SQL NULL when isNil.
func jsonOrNull(v any, isNil bool) any {
	if isNil {
		return nil
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// strList is s as a JSON array (never null).
func strList(s []string) string {
	if s == nil {
		s = []string{}
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// nullText is b as text, or SQL NULL when empty.
func nullText(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}
