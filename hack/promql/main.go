// promql parses PromQL expressions with the Prometheus server's own parser
// (github.com/prometheus/prometheus/promql/parser, what promtool and rule
// loading use). Reads a JSON array of expressions on stdin and prints a JSON
// array of the same length: null for an expression that parses, else the
// parser's error. Exits 1 when any expression fails.
//
// Built by hack/promql/build.sh; the chart tests run it on the alert
// expressions of the PrometheusRule the chart renders.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/prometheus/prometheus/promql/parser"
)

func main() {
	var exprs []string
	if err := json.NewDecoder(os.Stdin).Decode(&exprs); err != nil {
		fmt.Fprintln(os.Stderr, "promql: stdin is not a JSON array of strings:", err)
		os.Exit(2)
	}
	// default options: the functions and syntax a stock Prometheus accepts
	p := parser.NewParser(parser.Options{})
	results := make([]*string, len(exprs))
	failed := false
	for i, e := range exprs {
		if _, err := p.ParseExpr(e); err != nil {
			msg := err.Error()
			results[i] = &msg
			failed = true
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(results); err != nil {
		fmt.Fprintln(os.Stderr, "promql:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}
