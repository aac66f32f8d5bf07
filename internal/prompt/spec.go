package prompt

import (
	"bytes"
	"encoding/json"
)

// object is a JSON object from a card's spec as the template sees it: Liquid
// reads its fields and loops over it like any map, and printing it whole
// ({{ card.spec }}, {{ card.spec.config }}) writes JSON instead of Go's map
// syntax. An array printed whole keeps Liquid's own rule (its elements one
// after another; | join: ", " separates them); an object inside it prints as
// JSON.
type object map[string]any

// String is the object as compact JSON with its keys sorted, HTML left as it
// is (a prompt is not a web page).
func (o object) String() string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any(o)); err != nil {
		return "{}"
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// templateValue turns a decoded JSON value into what the template sees:
// every object, however deep, becomes an object.
func templateValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		o := make(object, len(x))
		for k, e := range x {
			o[k] = templateValue(e)
		}
		return o
	case []any:
		for i, e := range x {
			x[i] = templateValue(e)
		}
		return x
	}
	return v
}
