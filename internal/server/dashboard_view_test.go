package server

import "testing"

func TestCommandIn(t *testing.T) {
	for how, want := range map[string]string{
		"fix the spec, then drover card resume DRV-4":                                "drover card resume DRV-4",
		"drover card edit DRV-9 --spec-file spec.json, then resume it":               "drover card edit DRV-9 --spec-file spec.json",
		"log in again; run `drover agent resume claude`.":                            "drover agent resume claude",
		"drover card resume DRV-2.":                                                  "drover card resume DRV-2",
		"ask the drover maintainers, then drover card reopen DRV-3 (a fresh budget)": "drover card reopen DRV-3",
		"the drover config is fine; fix the repository":                              "",
		"name one": "",
	} {
		if got := commandIn(how); got != want {
			t.Errorf("commandIn(%q) = %q, want %q", how, got, want)
		}
	}
}
