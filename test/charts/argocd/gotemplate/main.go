// Renders every string of an ApplicationSet template the way the ApplicationSet
// controller does with goTemplate: true and missingkey=error (Go text/template over
// the cluster generator's parameters). Input on stdin: {"template": ..., "params": ...}.
// Prints the rendered template as JSON, or the first template error and exits 1.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/template"
)

func render(v interface{}, params map[string]interface{}) (interface{}, error) {
	switch t := v.(type) {
	case string:
		tpl, err := template.New("").Option("missingkey=error").Parse(t)
		if err != nil {
			return nil, err
		}
		var b strings.Builder
		if err := tpl.Execute(&b, params); err != nil {
			return nil, err
		}
		return b.String(), nil
	case map[string]interface{}:
		out := map[string]interface{}{}
		for k, x := range t {
			r, err := render(x, params)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []interface{}:
		out := make([]interface{}, len(t))
		for i, x := range t {
			r, err := render(x, params)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	default:
		return v, nil
	}
}

func main() {
	var in struct {
		Template interface{} `json:"template"`
		Params   struct {
			Name           string `json:"name"`
			NameNormalized string `json:"nameNormalized"`
			Server         string `json:"server"`
			Metadata       struct {
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		} `json:"params"`
	}
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// The cluster generator's parameter shape: metadata.labels/annotations are map[string]string.
	params := map[string]interface{}{
		"name":           in.Params.Name,
		"nameNormalized": in.Params.NameNormalized,
		"server":         in.Params.Server,
		"metadata": map[string]interface{}{
			"labels":      in.Params.Metadata.Labels,
			"annotations": in.Params.Metadata.Annotations,
		},
	}
	out, err := render(in.Template, params)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
