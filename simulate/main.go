// Command simulate runs Karpenter v1.13's provisioning scheduler offline on one JSON
// input (internal/contract) and prints the plan as JSON. `npm run simulate` builds the
// input from dist/<env>/ and the catalogue, and renders the output.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/karpenter-gitops/simulate/internal/contract"
	"github.com/karpenter-gitops/simulate/internal/karpsim"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	input := fs.String("input", "-", "simulation input JSON file, - for stdin")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	r := stdin
	if *input != "-" {
		f, err := os.Open(*input)
		if err != nil {
			fmt.Fprintf(stderr, "simulate: %v\n", err)
			return 1
		}
		defer f.Close()
		r = f
	}
	in, err := contract.Decode(r)
	if err != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", err)
		return 1
	}
	out, err := karpsim.Simulate(context.Background(), in)
	if err != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", err)
		return 1
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintf(stderr, "simulate: writing output: %v\n", err)
		return 1
	}
	return 0
}
