package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// TestRestartReady measures how soon a server killed with SIGKILL serves
// again with a large loaded collection: from exec to /healthz ready, to
// the first successful Strong search (top 3) and to GetLoadState Loaded.
// It runs over a data directory TestMemoryAfterLoad built (collection
// "mem", loaded), and for each round and each binary in STRATA_READY_BINS
// (comma separated; default the tree's own) starts the server, takes the
// three times and kills it with SIGKILL, so every measured start follows
// a kill -9. The first start of each binary is a warm-up (page cache) and
// is not reported. With STRATA_READY_WAL=N each measured start is over a
// fresh copy of the directory in which a server first inserted N more rows
// (not flushed: the restart replays them from the WAL) before its kill -9.
// A benchmark, skipped unless STRATA_READY_DIR is set
// (docs/bench/restart.md):
//
//	STRATA_READY_DIR=/tmp/mem200k STRATA_READY_DIM=128 STRATA_READY_ROUNDS=3 \
//	STRATA_READY_BINS=/tmp/strata-base,/tmp/strata-new \
//	go test -count=1 -v -timeout 30m -run TestRestartReady ./e2e/
func TestRestartReady(t *testing.T) {
	dir := os.Getenv("STRATA_READY_DIR")
	if dir == "" {
		t.Skip("a benchmark: set STRATA_READY_DIR (a directory TestMemoryAfterLoad built), STRATA_READY_BINS, STRATA_READY_ROUNDS")
	}
	vdim, _ := strconv.Atoi(os.Getenv("STRATA_READY_DIM"))
	if vdim == 0 {
		vdim = 128
	}
	rounds, _ := strconv.Atoi(os.Getenv("STRATA_READY_ROUNDS"))
	if rounds == 0 {
		rounds = 3
	}
	bins := strings.Split(os.Getenv("STRATA_READY_BINS"), ",")
	if bins[0] == "" {
		bins = []string{buildBinary(t)}
	}
	walRows, _ := strconv.Atoi(os.Getenv("STRATA_READY_WAL"))
	t.Logf("| binary | healthz s | first Strong search s | Loaded s |")
	for round := 0; round <= rounds; round++ {
		for _, bin := range bins {
			from := dir
			if walRows > 0 {
				from = withWAL(t, bin, dir, vdim, walRows)
			}
			hz, search, loaded := restartTimes(t, bin, from, vdim)
			if from != dir {
				require.NoError(t, os.RemoveAll(from))
			}
			if round == 0 {
				continue // warm-up
			}
			t.Logf("| %s | %.3f | %.3f | %.3f |", filepath.Base(bin), hz.Seconds(), search.Seconds(), loaded.Seconds())
		}
	}
}

// restartTimes starts bin over dir, measures the time from exec to
// /healthz ready, to the first successful Strong search of "mem" and to
// GetLoadState Loaded, then kills the server with SIGKILL.
func restartTimes(t *testing.T, bin, dir string, vdim int) (healthz, search, loaded time.Duration) {
	t.Helper()
	p := &proc{stderr: &lockedBuffer{}, done: make(chan struct{})}
	p.addr = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	p.metrics = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	p.cmd = exec.Command(bin, "standalone", "--addr", p.addr, "--metrics-addr", p.metrics, "--data-dir", dir, "--log-level", "warn")
	p.cmd.Stdout, p.cmd.Stderr = p.stderr, p.stderr
	start := time.Now()
	require.NoError(t, p.cmd.Start())
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	defer p.kill(t)
	hc := &http.Client{Timeout: time.Second}
	for {
		select {
		case <-p.done:
			t.Fatalf("server exited: %v\n%s", p.err, p.stderr.String())
		default:
		}
		if resp, err := hc.Get("http://" + p.metrics + "/healthz"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		require.Less(t, time.Since(start), 5*time.Minute, "not healthy; stderr:\n%s", p.stderr.String())
		time.Sleep(2 * time.Millisecond)
	}
	healthz = time.Since(start)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := milvusclient.New(ctx, &milvusclient.ClientConfig{Address: p.addr})
	require.NoError(t, err)
	defer func() { _ = c.Close(context.Background()) }()
	q := []entity.Vector{entity.FloatVector(make([]float32, vdim))}
	for {
		rs, err := c.Search(ctx, milvusclient.NewSearchOption("mem", 3, q).WithConsistencyLevel(entity.ClStrong))
		if err == nil && len(rs) == 1 && rs[0].ResultCount == 3 {
			break
		}
		require.NoError(t, ctx.Err(), "no successful search: %v", err)
		time.Sleep(2 * time.Millisecond)
	}
	search = time.Since(start)
	for {
		st, err := c.GetLoadState(ctx, milvusclient.NewGetLoadStateOption("mem"))
		if err == nil && st.State == entity.LoadStateLoaded {
			break
		}
		require.NoError(t, ctx.Err(), "not Loaded: %v", err)
		time.Sleep(2 * time.Millisecond)
	}
	loaded = time.Since(start)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	<-p.done
	return healthz, search, loaded
}

// withWAL copies dir, has bin insert rows more rows into "mem" there
// without flushing them, kills it with SIGKILL and returns the copy.
func withWAL(t *testing.T, bin, dir string, vdim, rows int) string {
	t.Helper()
	cp := filepath.Join(t.TempDir(), "data")
	out, err := exec.Command("cp", "-a", dir, cp).CombinedOutput()
	require.NoError(t, err, "%s", out)
	p := startProc(t, bin, cp)
	c := p.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const batch = 5000
	for from := 0; from < rows; from += batch {
		n := min(batch, rows-from)
		ids := make([]int64, n)
		vecs := make([][]float32, n)
		for i := range ids {
			ids[i] = int64(1<<40 + from + i)
			vecs[i] = make([]float32, vdim)
			vecs[i][0] = float32(from + i)
		}
		_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption("mem").
			WithInt64Column("id", ids).WithFloatVectorColumn("vec", vdim, vecs))
		require.NoError(t, err)
	}
	p.kill(t)
	return cp
}
