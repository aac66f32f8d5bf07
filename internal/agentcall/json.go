package agentcall

import "encoding/json"

func jsonOf(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// field is a string field of an event's data ("" when absent).
func field(data json.RawMessage, name string) string {
	var m map[string]any
	if json.Unmarshal(data, &m) != nil {
		return ""
	}
	s, _ := m[name].(string)
	return s
}
