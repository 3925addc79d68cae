package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// TestMmapMemory compares a loaded HNSW collection served from the heap
// with the same collection served from mapped cache files
// (queryNode.mmap.vectorIndex): for each mode in STRATA_MMAP_MODES
// (comma separated: "off", "on" = vectorIndex, "all" = vectorIndex,
// vectorField and scalarField; default off,on,off,on) a fresh process
// loads the collection TestMemoryAfterLoad builds (same STRATA_MEM_*
// settings and directory) and reports the load time, RSS split into
// anonymous memory (Go heap and stacks) and mapped file pages, peak RSS,
// the latency of the first search after the load and the median and p99
// of the next ones, and RSS after a search that returns vectors. It is a
// benchmark, skipped unless STRATA_MEM_ROWS is set (docs/bench/mmap.md):
//
//	STRATA_MEM_ROWS=200000 STRATA_MEM_DIM=128 STRATA_MEM_DIR=/tmp/mem200k \
//	go test -count=1 -v -timeout 60m -run TestMmapMemory ./e2e/
func TestMmapMemory(t *testing.T) {
	rows, vdim, dir := memBenchEnv(t, "STRATA_MMAP_MODES")
	modes := strings.Split(os.Getenv("STRATA_MMAP_MODES"), ",")
	if modes[0] == "" {
		modes = []string{"off", "on", "off", "on"}
	}
	bin := buildBinary(t)
	const coll = "mem"
	indexBytes := buildMemCollection(t, bin, dir, coll, rows, vdim)
	t.Logf("rows %d dim %d: raw vectors %.1f MiB, index files %.1f MiB", rows, vdim,
		mebi(int64(rows)*int64(vdim)*4), mebi(indexBytes))
	t.Logf("| mmap | load s | RSS MiB | RssAnon MiB | RssFile MiB | peak RSS MiB | first search ms | warm p50 ms | warm p99 ms | RSS after vector output MiB |")
	rng := rand.New(rand.NewPCG(7, 15))
	query := func() []entity.Vector {
		v := make([]float32, vdim)
		for j := range v {
			v[j] = rng.Float32() * 10
		}
		return []entity.Vector{entity.FloatVector(v)}
	}
	for _, mode := range modes {
		cfg := filepath.Join(t.TempDir(), "strata.json")
		require.NoError(t, os.WriteFile(cfg, mmapConfig(mode), 0o644))
		p := startProc(t, bin, dir, "--config", cfg)
		c := p.client(t)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		// A restart reloads what was loaded at the stop: start released.
		require.NoError(t, c.ReleaseCollection(ctx, milvusclient.NewReleaseCollectionOption(coll)))
		start := time.Now()
		lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
		require.NoError(t, err)
		require.NoError(t, lt.Await(ctx))
		took := time.Since(start)
		rss, anon, file := procStatus(p, "VmRSS:"), procStatus(p, "RssAnon:"), procStatus(p, "RssFile:")
		search := func(out bool) time.Duration {
			opt := milvusclient.NewSearchOption(coll, 10, query()).WithSearchParam("ef", "64")
			if out {
				opt = opt.WithOutputFields("vec")
			}
			s := time.Now()
			rs, err := c.Search(ctx, opt)
			require.NoError(t, err)
			require.Equal(t, 10, rs[0].ResultCount)
			return time.Since(s)
		}
		first := search(false)
		var warm []time.Duration
		for range 500 {
			warm = append(warm, search(false))
		}
		slices.Sort(warm)
		for range 20 {
			search(true)
		}
		time.Sleep(time.Second)
		t.Logf("| %s | %.1f | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f | %.2f | %.0f |", mode, took.Seconds(),
			mebi(rss), mebi(anon), mebi(file), mebi(procStatus(p, "VmHWM:")),
			ms(first), ms(warm[len(warm)/2]), ms(warm[len(warm)*99/100]), mebi(procStatus(p, "VmRSS:")))
		require.NoError(t, c.ReleaseCollection(ctx, milvusclient.NewReleaseCollectionOption(coll)))
		cancel()
		require.Equal(t, 0, p.term(t))
	}
}

// ms converts a duration to milliseconds.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// mmapConfig is the configuration document of a TestMmapMemory mode.
func mmapConfig(mode string) []byte {
	return fmt.Appendf(nil, `{"queryNode": {"mmap": {"vectorIndex": %t, "vectorField": %t, "scalarField": %t}}}`,
		mode != "off", mode == "all", mode == "all")
}

// TestMmapLargerThanMemory loads the collection TestMemoryAfterLoad builds
// into a server confined to a memory cgroup (v1) smaller than its index,
// once with mmap off and once on, and reports whether the load and 200
// searches succeed, with the cgroup's peak usage. The caller creates the
// cgroup and sets its limit (memory.limit_in_bytes); the test moves each
// server into it and empties the mmap cache first, so the cache files'
// pages are charged to the cgroup too; the server runs in the cgroup from
// its start. A benchmark, skipped unless
// STRATA_MMAP_CGROUP names the cgroup directory (docs/bench/mmap.md).
func TestMmapLargerThanMemory(t *testing.T) {
	cg := os.Getenv("STRATA_MMAP_CGROUP")
	if cg == "" {
		t.Skip("a benchmark: set STRATA_MMAP_CGROUP and STRATA_MEM_ROWS (and STRATA_MEM_DIM, STRATA_MEM_DIR)")
	}
	rows, vdim, dir := memBenchEnv(t, "STRATA_MMAP_CGROUP")
	bin := buildBinary(t)
	const coll = "mem"
	indexBytes := buildMemCollection(t, bin, dir, coll, rows, vdim)
	limit, err := os.ReadFile(filepath.Join(cg, "memory.limit_in_bytes"))
	require.NoError(t, err)
	lim, _ := strconv.ParseInt(strings.TrimSpace(string(limit)), 10, 64)
	t.Logf("index files %.1f MiB, cgroup limit %.1f MiB", mebi(indexBytes), mebi(lim))
	t.Logf("| mmap | loaded | load s | searches ok | search p50 ms | cgroup peak MiB | RssAnon MiB | RssFile MiB |")
	for _, mode := range []string{"off", "on"} {
		require.NoError(t, os.RemoveAll(filepath.Join(dir, "cache", "mmap")))
		cfg := filepath.Join(t.TempDir(), "strata.json")
		require.NoError(t, os.WriteFile(cfg, mmapConfig(mode), 0o644))
		// Start released (a restart reloads what was loaded at the stop),
		// then start the measured server inside the cgroup from its first
		// instruction: a wrapper joins it and execs the binary.
		pre := startProc(t, bin, dir)
		require.NoError(t, pre.client(t).ReleaseCollection(context.Background(), milvusclient.NewReleaseCollectionOption(coll)))
		require.Equal(t, 0, pre.term(t))
		wrapper := filepath.Join(t.TempDir(), "in-cgroup")
		require.NoError(t, os.WriteFile(wrapper, fmt.Appendf(nil, "#!/bin/sh\necho $$ > %s/cgroup.procs\nexec %s \"$@\"\n", cg, bin), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(cg, "memory.max_usage_in_bytes"), []byte("0"), 0o644))
		p := startProc(t, wrapper, dir, "--config", cfg)
		c := p.client(t)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		start := time.Now()
		var took time.Duration
		var lat []time.Duration
		loaded, ok := "yes", 0
		lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
		if err == nil {
			err = lt.Await(ctx)
		}
		took = time.Since(start)
		if err != nil {
			loaded = "no: " + strings.SplitN(err.Error(), "\n", 2)[0]
		} else {
			rng := rand.New(rand.NewPCG(3, 15))
			for range 200 {
				v := make([]float32, vdim)
				for j := range v {
					v[j] = rng.Float32() * 10
				}
				s := time.Now()
				rs, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 10, []entity.Vector{entity.FloatVector(v)}))
				if err != nil || rs[0].ResultCount != 10 {
					t.Logf("search %d failed: %v", ok, err)
					break
				}
				lat = append(lat, time.Since(s))
				ok++
			}
		}
		peak, _ := os.ReadFile(filepath.Join(cg, "memory.max_usage_in_bytes"))
		pk, _ := strconv.ParseInt(strings.TrimSpace(string(peak)), 10, 64)
		p50 := 0.0
		if len(lat) > 0 {
			slices.Sort(lat)
			p50 = ms(lat[len(lat)/2])
		}
		t.Logf("| %s | %s | %.1f | %d / 200 | %.2f | %.0f | %.0f | %.0f |", mode, loaded, took.Seconds(), ok, p50, mebi(pk),
			mebi(procStatus(p, "RssAnon:")), mebi(procStatus(p, "RssFile:")))
		if loaded == "yes" {
			_ = c.ReleaseCollection(ctx, milvusclient.NewReleaseCollectionOption(coll))
		}
		cancel()
		p.kill(t)
	}
}
