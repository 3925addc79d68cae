package e2e

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// TestMemoryAfterLoad measures what a loaded HNSW collection costs: a
// server process builds the collection (clustered vectors, flushed, HNSW
// M 16 efConstruction 64) in STRATA_MEM_DIR once, then for each binary
// in STRATA_MEM_BINS (comma separated; default the tree's own) a fresh
// process loads it and reports its RSS, peak RSS (VmHWM, the load's peak),
// Go heap in use and live heap after a GC. It is a benchmark, skipped
// unless STRATA_MEM_ROWS is set (docs/bench/memory-held-once.md):
//
//	STRATA_MEM_ROWS=200000 STRATA_MEM_DIM=128 STRATA_MEM_DIR=/tmp/mem200k \
//	STRATA_MEM_BINS=/tmp/strata-base,/tmp/strata-new \
//	go test -count=1 -v -timeout 60m -run TestMemoryAfterLoad ./e2e/
//
// memBenchEnv reads the memory benchmarks' settings: STRATA_MEM_ROWS (unset:
// the test is skipped, naming extra among the other settings),
// STRATA_MEM_DIM (default 128) and STRATA_MEM_DIR (default a temporary
// directory).
func memBenchEnv(t *testing.T, extra string) (rows, dim int, dir string) {
	t.Helper()
	rows, _ = strconv.Atoi(os.Getenv("STRATA_MEM_ROWS"))
	if rows == 0 {
		t.Skipf("a benchmark: set STRATA_MEM_ROWS (and STRATA_MEM_DIM, STRATA_MEM_DIR, %s)", extra)
	}
	dim, _ = strconv.Atoi(os.Getenv("STRATA_MEM_DIM"))
	if dim == 0 {
		dim = 128
	}
	if dir = os.Getenv("STRATA_MEM_DIR"); dir == "" {
		dir = t.TempDir()
	}
	return rows, dim, dir
}

func TestMemoryAfterLoad(t *testing.T) {
	rows, vdim, dir := memBenchEnv(t, "STRATA_MEM_BINS")
	bins := strings.Split(os.Getenv("STRATA_MEM_BINS"), ",")
	if bins[0] == "" {
		bins = []string{buildBinary(t)}
	}
	const coll = "mem"
	indexBytes := buildMemCollection(t, bins[len(bins)-1], dir, coll, rows, vdim)
	raw := int64(rows) * int64(vdim) * 4
	t.Logf("rows %d dim %d: raw vectors %.1f MiB, index files %.1f MiB", rows, vdim, mebi(raw), mebi(indexBytes))
	t.Logf("| binary | load s | RSS MiB | peak RSS MiB | live heap MiB | RSS / index |")
	for _, bin := range bins {
		p := startProc(t, bin, dir)
		idle := procStatus(p, "VmRSS:")
		c := p.client(t)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		start := time.Now()
		lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
		require.NoError(t, err)
		require.NoError(t, lt.Await(ctx))
		took := time.Since(start)
		rs, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 3, []entity.Vector{entity.FloatVector(make([]float32, vdim))}).
			WithOutputFields("vec"))
		require.NoError(t, err)
		require.Equal(t, 3, rs[0].ResultCount)
		time.Sleep(2 * time.Second)
		alive := heapAfterGC(p)
		time.Sleep(2 * time.Second)
		rss := procStatus(p, "VmRSS:")
		t.Logf("| %s | %.1f | %.0f | %.0f | %.0f | %.2f | (idle RSS before load %.0f MiB)", filepath.Base(bin), took.Seconds(),
			mebi(rss), mebi(procStatus(p, "VmHWM:")), mebi(alive), float64(rss)/float64(indexBytes), mebi(idle))
		require.Equal(t, 0, p.term(t))
	}
}

// procStatus returns a size field of the process's /proc status (VmRSS:,
// VmHWM: the peak), in bytes; 0 when unknown.
func procStatus(p *proc, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// heapAfterGC makes the server collect garbage and returns the Go heap
// still allocated (HeapAlloc of the heap profile taken right after); 0
// when unknown.
func heapAfterGC(p *proc) int64 {
	client := &http.Client{Timeout: time.Minute}
	resp, err := client.Get("http://" + p.metrics + "/debug/pprof/heap?gc=1&debug=1")
	if err != nil {
		return 0
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	for line := range strings.SplitSeq(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "# HeapAlloc = "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// mebi converts bytes to MiB.
func mebi(n int64) float64 { return float64(n) / (1 << 20) }

// buildMemCollection builds, once per dir (a marker file records it), the
// benchmark collection coll: rows clustered vectors of dimension vdim
// (1,000 Gaussian centres + unit noise), one shard, flushed and indexed
// with HNSW M 16 efConstruction 64 (L2), by a process of binary bin. It
// returns the bytes of the index files.
func buildMemCollection(t *testing.T, bin, dir, coll string, rows, vdim int) int64 {
	t.Helper()
	marker := filepath.Join(dir, "built")
	if _, err := os.Stat(marker); err != nil {
		start := time.Now()
		p := startProc(t, bin, dir)
		c := p.client(t)
		ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
		defer cancel()
		schema := entity.NewSchema().WithName(coll).
			WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
			WithField(entity.NewField().WithName("vec").WithDataType(entity.FieldTypeFloatVector).WithDim(int64(vdim)))
		require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema).WithShardNum(1)))
		rng := rand.New(rand.NewPCG(1, 15))
		centres := make([][]float32, 1000)
		for i := range centres {
			centres[i] = make([]float32, vdim)
			for j := range centres[i] {
				centres[i][j] = rng.Float32() * 10
			}
		}
		const batch = 5000
		for from := 0; from < rows; from += batch {
			n := min(batch, rows-from)
			ids := make([]int64, n)
			vecs := make([][]float32, n)
			for i := range vecs {
				ids[i] = int64(from + i)
				ctr := centres[rng.IntN(len(centres))]
				v := make([]float32, vdim)
				for j := range v {
					v[j] = ctr[j] + float32(rng.NormFloat64())
				}
				vecs[i] = v
			}
			_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).
				WithInt64Column("id", ids).WithFloatVectorColumn("vec", vdim, vecs))
			require.NoError(t, err)
		}
		ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
		require.NoError(t, err)
		require.NoError(t, ft.Await(ctx))
		it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "vec", index.NewHNSWIndex(entity.L2, 16, 64)))
		require.NoError(t, err)
		require.NoError(t, it.Await(ctx))
		require.Eventually(t, func() bool {
			d, err := c.DescribeIndex(ctx, milvusclient.NewDescribeIndexOption(coll, "vec"))
			return err == nil && d.IndexedRows == int64(rows)
		}, 30*time.Minute, time.Second)
		require.Equal(t, 0, p.term(t))
		require.NoError(t, os.WriteFile(marker, nil, 0o644))
		t.Logf("built %d×%d with HNSW in %s", rows, vdim, time.Since(start).Round(time.Second))
	}
	var indexBytes int64
	require.NoError(t, filepath.WalkDir(filepath.Join(dir, "storage", "files", "index_files"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			fi, err := d.Info()
			if err == nil {
				indexBytes += fi.Size()
			}
			return err
		}
		return err
	}))
	return indexBytes
}
