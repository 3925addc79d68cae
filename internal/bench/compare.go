package bench

import (
	"bytes"
	"context"
	_ "embed" // the comparison script
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/cpu"
)

// compareScript measures hnswlib or faiss; see its docstring.
//
//go:embed compare.py
var compareScript []byte

// Comparison holds a reference library's measurements of the same index
// type with the same parameters, data, ground truth and sweep.
type Comparison struct {
	// Library names the library and its version, e.g. "hnswlib 0.8.0".
	Library string `json:"library"`
	// BuildSeconds is the build time on Threads threads (as Strata's).
	BuildSeconds float64 `json:"build_s"`
	// BuildCPUSeconds is the process CPU time of the build.
	BuildCPUSeconds float64 `json:"build_cpu_s"`
	// MemoryBytes is the library's serialized index size, a proxy for its
	// memory.
	MemoryBytes int64 `json:"memory_bytes"`
	// Rows holds one measurement per sweep value. For FLAT, QPS1 is one
	// search call per query, as for Strata.
	Rows []Row `json:"rows"`
	// Batch is FLAT's batched search: all queries in one call.
	Batch *Batch `json:"batch"`
}

// Batch is a library's batched FLAT search: recall and throughput of one
// call with all the queries, on one thread (wall and CPU time) and on
// Threads threads.
type Batch struct {
	Recall  float64 `json:"recall"`
	QPS1    float64 `json:"qps1"`
	CPUQPS1 float64 `json:"cpuqps1"`
	QPSN    float64 `json:"qpsN"`
}

// scriptOutput is what compare.py prints: the libraries it ran, or why it
// ran none.
type scriptOutput struct {
	Libraries []*Comparison `json:"libraries"`
	Skipped   string        `json:"skipped"`
}

// UnmarshalJSON reads a Row from the script's lower-case keys.
func (r *Row) UnmarshalJSON(b []byte) error {
	var v struct {
		Param   int     `json:"param"`
		Recall  float64 `json:"recall"`
		QPS1    float64 `json:"qps1"`
		CPUQPS1 float64 `json:"cpuqps1"`
		QPSN    float64 `json:"qpsN"`
		Each    float64 `json:"cpuqps1_each"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = Row{Param: v.Param, Recall: v.Recall, QPS1: v.QPS1, CPUQPS1: v.CPUQPS1, QPSN: v.QPSN, CPUQPS1Each: v.Each}
	return nil
}

// compare writes the data and ground truth to a temporary directory and
// runs compareScript on them. A missing interpreter or library is not an
// error: it returns no comparison and a note saying why.
func compare(ctx context.Context, cfg Config, ds *Dataset, truth [][]int32, sweep []int, threads int,
	logf func(string, ...any),
) ([]*Comparison, string, error) {
	py, err := exec.LookPath(cfg.Python)
	if err != nil {
		return nil, fmt.Sprintf("no comparison: %s not found", cfg.Python), nil
	}
	dir, err := os.MkdirTemp("", "strata-bench-")
	if err != nil {
		return nil, "", fmt.Errorf("bench: %w", err)
	}
	defer os.RemoveAll(dir)

	gt := make([]int32, 0, len(truth)*cfg.K)
	for _, t := range truth {
		row := make([]int32, cfg.K)
		for i := range row {
			row[i] = -1
		}
		copy(row, t)
		gt = append(gt, row...)
	}
	files := map[string]any{"base.f32": ds.Base, "queries.f32": ds.Queries, "gt.i32": gt}
	for name, data := range files {
		var buf bytes.Buffer
		if err := binary.Write(&buf, binary.LittleEndian, data); err != nil {
			return nil, "", fmt.Errorf("bench: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o600); err != nil {
			return nil, "", fmt.Errorf("bench: %w", err)
		}
	}
	params := map[string]int{"M": cfg.HNSW.M, "efConstruction": cfg.HNSW.EfConstruction}
	if cfg.Index != "HNSW" {
		icfg, err := cfg.ivfConfig(ds.Dim)
		if err != nil {
			return nil, "", err
		}
		params = map[string]int{"nlist": icfg.Nlist, "m": icfg.M, "nbits": icfg.Nbits, "iterations": icfg.Iterations}
	}
	spec := map[string]any{
		"base": filepath.Join(dir, "base.f32"), "queries": filepath.Join(dir, "queries.f32"),
		"gt": filepath.Join(dir, "gt.i32"), "dim": ds.Dim, "k": cfg.K, "metric": cfg.Metric.String(),
		"index": cfg.Index, "params": params, "sweep": sweep, "threads": threads, "rounds": cfg.Rounds,
	}
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return nil, "", fmt.Errorf("bench: %w", err)
	}
	specPath, scriptPath := filepath.Join(dir, "spec.json"), filepath.Join(dir, "compare.py")
	if err := os.WriteFile(specPath, specJSON, 0o600); err != nil {
		return nil, "", fmt.Errorf("bench: %w", err)
	}
	if err := os.WriteFile(scriptPath, compareScript, 0o600); err != nil {
		return nil, "", fmt.Errorf("bench: %w", err)
	}

	logf("running the reference library through %s", py)
	start := time.Now()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, py, scriptPath, specPath)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = os.Environ()
	if ct := openBLASCore(); ct != "" {
		cmd.Env = append(cmd.Env, "OPENBLAS_CORETYPE="+ct)
		logf("OPENBLAS_CORETYPE=%s for the library's BLAS", ct)
	}
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		return nil, fmt.Sprintf("no comparison: %s failed: %v: %s", py, err, lastLine(stderr.String())), nil
	}
	var out scriptOutput
	if err := json.Unmarshal(lastLineBytes(stdout.Bytes()), &out); err != nil {
		return nil, "", fmt.Errorf("bench: reading the comparison script's output: %w", err)
	}
	if out.Skipped != "" {
		return nil, "no comparison: " + out.Skipped, nil
	}
	for _, c := range out.Libraries {
		if len(c.Rows) != len(sweep) {
			return nil, "", errors.New("bench: the comparison script measured a different sweep")
		}
		logf("%s: built in %.1fs", c.Library, c.BuildSeconds)
	}
	logf("comparison done in %v", time.Since(start).Round(time.Millisecond))
	return out.Libraries, "", nil
}

// openBLASCore returns the OpenBLAS kernel set to force for this CPU when
// OPENBLAS_CORETYPE is not already set: "SkylakeX" with AVX-512, "Haswell"
// with AVX2, else "". The OpenBLAS bundled with faiss-cpu wheels predates
// recent Xeons and would otherwise fall back to its SSE3 ("Prescott")
// kernels, a quarter of the machine's speed, which is no fair comparison.
func openBLASCore() string {
	if os.Getenv("OPENBLAS_CORETYPE") != "" {
		return ""
	}
	switch {
	case cpu.X86.HasAVX512F:
		return "SkylakeX"
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return "Haswell"
	}
	return ""
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func lastLineBytes(b []byte) []byte { return []byte(lastLine(string(b))) }

// ratio formats a/b, or "-" when b is not positive.
func ratio(a, b float64) string {
	if b <= 0 || math.IsNaN(a) {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}
