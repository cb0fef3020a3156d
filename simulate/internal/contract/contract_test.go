package contract

import (
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	for _, tc := range []struct{ name, in, err string }{
		{"unknown field", `{"zones":["a"],"runs":1,"surprise":1}`, `decoding simulation input: json: unknown field "surprise"`},
		{"unknown field inside a NodePool", `{"zones":["a"],"runs":1,"nodePools":[{"spec":{"weigth":1}}]}`, `decoding simulation input: json: unknown field "weigth"`},
		{"no runs", `{"zones":["a"]}`, "runs must be at least 1, got 0"},
		{"no zones", `{"runs":1}`, "zones must list at least one zone, got none"},
		{"ok", `{"zones":["a"],"runs":1}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(tc.in))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.err {
				t.Errorf("error %q, want %q", got, tc.err)
			}
		})
	}
}
