//go:build fault

package e2e

import (
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/health"
)

// healthDetail fetches /healthz/detail from a running process.
func healthDetail(t *testing.T, p *proc) (status string, writes bool, problems []health.Problem) {
	t.Helper()
	resp, err := http.Get("http://" + p.metrics + "/healthz/detail")
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	var d struct {
		Status          string           `json:"status"`
		WritesAvailable bool             `json:"writesAvailable"`
		Problems        []health.Problem `json:"problems"`
	}
	require.NoError(t, json.Unmarshal(body, &d), string(body))
	return d.Status, d.WritesAvailable, d.Problems
}

// twoCollections creates "good" (one shard) and "bad" (two), inserts rows into both and loads them; flush decides whether
// the rows are flushed to binlogs first.
func twoCollections(ctx context.Context, t *testing.T, c *milvusclient.Client, rows int, flush bool) map[string]*entity.Collection {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	out := map[string]*entity.Collection{}
	for _, name := range []string{"good", "bad"} {
		shards := int32(1)
		if name == "bad" {
			shards = 2 // so that one of its pchannels carries nothing of "good"
		}
		require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(name, moviesSchema(name)).WithShardNum(shards)))
		for i := 0; i < rows; i += 500 {
			_, err := c.Insert(ctx, insertOption(name, genMovies(i, min(500, rows-i), rng)))
			require.NoError(t, err)
		}
		if flush {
			ft, err := c.Flush(ctx, milvusclient.NewFlushOption(name))
			require.NoError(t, err)
			require.NoError(t, ft.Await(ctx))
		}
		indexAndLoad(ctx, t, c, name, entity.L2)
		desc, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption(name))
		require.NoError(t, err)
		out[name] = desc
	}
	return out
}

// requireContained checks that, after the damage to "bad", the server is up,
// "good" serves all its rows and accepts writes, and "bad" reports why it is
// not loaded (GetLoadState, reads and /healthz/detail) instead of hanging.
func requireContained(ctx context.Context, t *testing.T, p *proc, rows int, reason string) {
	t.Helper()
	c := p.client(t)
	n, err := walFaultCount(ctx, c, "good")
	require.NoError(t, err)
	require.EqualValues(t, rows, n)
	rng := rand.New(rand.NewPCG(5, 6))
	_, err = c.Insert(ctx, insertOption("good", genMovies(rows, 10, rng)))
	require.NoError(t, err)
	n, err = walFaultCount(ctx, c, "good")
	require.NoError(t, err)
	require.EqualValues(t, rows+10, n)

	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, err := c.GetLoadState(qctx, milvusclient.NewGetLoadStateOption("bad"))
	require.Error(t, err, "GetLoadState of the damaged collection: %v; log:\n%s", st, p.stderr.String())
	require.Contains(t, err.Error(), "load failed")
	require.Contains(t, err.Error(), reason)
	_, err = walFaultCount(qctx, c, "bad")
	require.Error(t, err)
	require.Contains(t, err.Error(), "collection not loaded")
	require.NoError(t, qctx.Err(), "the read failed at once, it did not wait")

	status, _, problems := healthDetail(t, p)
	require.Equal(t, "degraded", status)
	var subjects []string
	for _, pr := range problems {
		subjects = append(subjects, pr.Subject)
	}
	require.Contains(t, subjects, "collection bad", "%v", problems)
	require.Contains(t, p.stderr.String(), reason, "the log says what is damaged")
}

// A missing or cut binlog makes only its collection unloadable: the server
// starts and serves the others, the collection says why, and nothing is
// deleted.
func TestFaultDamagedBinlogIsContained(t *testing.T) {
	for _, damage := range []string{"missing", "truncated"} {
		t.Run(damage, func(t *testing.T) {
			bin := buildBinary(t)
			dir := t.TempDir()
			p := startProc(t, bin, dir)
			ctx := ctxT(t)
			const rows = 1000
			cols := twoCollections(ctx, t, p.client(t), rows, true)
			require.Zero(t, p.term(t))

			files := insertLogs(t, dir, cols["bad"].ID)
			var victim string
			for _, key := range files {
				if path.Base(path.Dir(key)) == "100" { // the primary key's binlogs (field 0, row IDs, is not read)
					victim = filepath.Join(dir, "storage", filepath.FromSlash(key))
				}
			}
			require.NotEmpty(t, victim, "a binlog of field 100 among %v", files)
			switch damage {
			case "missing":
				require.NoError(t, os.Remove(victim))
			case "truncated":
				info, err := os.Stat(victim)
				require.NoError(t, err)
				require.NoError(t, os.Truncate(victim, info.Size()/2))
			}
			p = startProc(t, bin, dir)
			requireContained(ctx, t, p, rows, filepath.Base(victim))
			after := insertLogs(t, dir, cols["bad"].ID)
			if damage == "missing" {
				require.Len(t, after, len(files)-1, "no other file of the collection was deleted")
			} else {
				require.ElementsMatch(t, files, after, "no file of the collection was deleted")
			}
		})
	}
}

// A missing sealed WAL file (its rows not flushed yet) makes the
// collections of that pchannel unloadable; the server starts, serves the
// other pchannels' collections, and reports the gap.
func TestFaultMissingWALFileIsContained(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "strata.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"wal": {"segmentSize": 8192}}`), 0o644))
	p := startProc(t, bin, dir, "--config", cfg)
	ctx := ctxT(t)
	const rows = 3000
	cols := twoCollections(ctx, t, p.client(t), rows, false)
	require.Zero(t, p.term(t))

	pch := cols["bad"].PhysicalChannels[0]
	if pch == cols["good"].PhysicalChannels[0] {
		pch = cols["bad"].PhysicalChannels[1]
	}
	pdir := filepath.Join(dir, "wal", pch)
	segs, err := filepath.Glob(filepath.Join(pdir, "*.wal"))
	require.NoError(t, err)
	sort.Strings(segs)
	require.GreaterOrEqual(t, len(segs), 3, "the rows span several WAL files")
	victim := segs[1]
	require.NoError(t, os.Remove(victim))

	p = startProc(t, bin, dir, "--config", cfg)
	requireContained(ctx, t, p, rows, filepath.Base(segs[0]))
	for _, f := range segs {
		if f != victim {
			require.FileExists(t, f, "no other WAL file was deleted")
		}
	}
}
