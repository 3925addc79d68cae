// Command gobench measures Strata's BM25 full-text search in process, on
// the bm25check corpus (tools/bm25check/corpus.py): the documents are
// analyzed (standard analyzer) and hashed into term-frequency rows as the
// BM25 function does, one SPARSE_INVERTED_INDEX is built over them, and
// every query runs the query node's two steps on one goroutine (GOMAXPROCS
// 1): the statistics pass (Index.Stats: documents, average length, document
// frequency of the query's terms) and the top-10 search (Index.SearchBM25).
// Query analysis is timed apart. It prints one JSON object: build seconds,
// CPU and wall seconds of the searches, the heap the index holds, and each
// query's top-10 (row, score) for tools/bm25check/bench.py to compare.
//
//	go run ./tools/bm25check/gobench -corpus /tmp/bm25bench/corpus -passes 5
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"syscall"
	"time"

	"github.com/strata-db/strata/internal/analyzer"
	"github.com/strata-db/strata/internal/index/sparse"
)

func main() {
	dir := flag.String("corpus", "/tmp/bm25bench/corpus", "folder with corpus.jsonl and queries.jsonl")
	passes := flag.Int("passes", 5, "times every query runs")
	prof := flag.String("cpuprofile", "", "write a CPU profile of the searches to this file")
	flag.Parse()
	profile = *prof
	runtime.GOMAXPROCS(1)
	if err := run(*dir, *passes); err != nil {
		fmt.Fprintln(os.Stderr, "gobench:", err)
		os.Exit(1)
	}
}

// profile is the -cpuprofile file ("" for none).
var profile string

func readTexts(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var r struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, err
		}
		out = append(out, r.Text)
	}
	return out, sc.Err()
}

// termFreqs is the BM25 function's output for text: token hash → count,
// sorted by hash.
func termFreqs(a analyzer.Analyzer, text string) sparse.Vector {
	tf := map[uint32]float32{}
	for _, t := range a.Analyze(text) {
		tf[analyzer.Hash(t.Text)]++
	}
	v := sparse.Vector{}
	for d := range tf {
		v.Indices = append(v.Indices, d)
	}
	slices.Sort(v.Indices)
	for _, d := range v.Indices {
		v.Values = append(v.Values, tf[d])
	}
	return v
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

func heapMB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

type hit struct {
	Row   int64   `json:"row"`
	Score float32 `json:"score"`
}

func run(dir string, passes int) error {
	docs, err := readTexts(filepath.Join(dir, "corpus.jsonl"))
	if err != nil {
		return err
	}
	queries, err := readTexts(filepath.Join(dir, "queries.jsonl"))
	if err != nil {
		return err
	}
	a, err := analyzer.New("")
	if err != nil {
		return err
	}
	h0 := heapMB()
	t0 := time.Now()
	rows := make([][]byte, len(docs))
	for i, d := range docs {
		rows[i] = termFreqs(a, d).Encode()
	}
	analyzeS := time.Since(t0).Seconds()
	t1 := time.Now()
	x, err := sparse.Build(context.Background(), rows, sparse.BuildParams{Kind: sparse.Inverted})
	if err != nil {
		return err
	}
	buildS := time.Since(t1).Seconds()
	rows = nil
	heap := heapMB() - h0

	t2, c2 := time.Now(), cpuSeconds()
	qv := make([]sparse.Vector, len(queries))
	for p := 0; p < passes; p++ {
		for i, q := range queries {
			qv[i] = termFreqs(a, q)
		}
	}
	qAnalyzeCPU, qAnalyzeWall := cpuSeconds()-c2, time.Since(t2).Seconds()

	results := make([][]hit, len(queries))
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	t3, c3 := time.Now(), cpuSeconds()
	for p := 0; p < passes; p++ {
		for i, q := range qv {
			st := sparse.Stats{DF: make([]int64, len(q.Indices))}
			if err := x.Stats(q.Indices, nil, &st); err != nil {
				return err
			}
			w := sparse.Vector{Indices: q.Indices, Values: make([]float32, len(q.Values))}
			for j, df := range st.DF {
				w.Values[j] = float32(q.Values[j] * float32(st.IDF(df)))
			}
			b := sparse.BM25{K1: 1.2, B: 0.75, Avgdl: float32(st.Avgdl())}
			hs, err := x.SearchBM25(w, 10, b, sparse.SearchParams{}, nil)
			if err != nil {
				return err
			}
			if p == passes-1 {
				for _, h := range hs {
					results[i] = append(results[i], hit{Row: int64(h.Row), Score: h.Score})
				}
			}
		}
	}
	searchCPU, searchWall := cpuSeconds()-c3, time.Since(t3).Seconds()
	if profile != "" {
		pprof.StopCPUProfile()
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"docs": len(docs), "queries": len(queries), "passes": passes,
		"analyze_docs_s": analyzeS, "build_s": buildS, "index_heap_mb": heap,
		"query_analyze_cpu_s": qAnalyzeCPU, "query_analyze_wall_s": qAnalyzeWall,
		"cpu_s": searchCPU, "wall_s": searchWall, "results": results,
	})
}
