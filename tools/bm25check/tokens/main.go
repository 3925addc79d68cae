// Command tokens prints the tokens Strata's analyzer (internal/analyzer)
// gives each line of a JSON-lines file, for tools/bm25check/check.py when
// the server has no run_analyzer: it reads {"text": ...} objects on stdin
// and writes one JSON array of token strings per line on stdout.
//
//	go run ./tools/bm25check/tokens -params '{"type":"standard"}' <corpus.jsonl >tokens.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/strata-db/strata/internal/analyzer"
)

func main() {
	params := flag.String("params", "", "analyzer_params JSON (\"\" is the standard analyzer)")
	flag.Parse()
	if err := run(*params); err != nil {
		fmt.Fprintln(os.Stderr, "tokens:", err)
		os.Exit(1)
	}
}

func run(params string) error {
	a, err := analyzer.New(params)
	if err != nil {
		return err
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for in.Scan() {
		var row struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(in.Bytes(), &row); err != nil {
			return err
		}
		toks := a.Analyze(row.Text)
		texts := make([]string, len(toks))
		for i, t := range toks {
			texts[i] = t.Text
		}
		if err := enc.Encode(texts); err != nil {
			return err
		}
	}
	if err := in.Err(); err != nil {
		return err
	}
	return out.Flush()
}
