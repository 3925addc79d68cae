//go:build fault

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// writeCheckDir writes, through the server, two collections ("keep" and
// "hurt") of one flushed and indexed segment each, and returns the data
// dir and the ID of each collection.
func writeCheckDir(t *testing.T, bin string) (string, map[string]int64) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := startProc(t, bin, dir)
	c := p.client(t)
	ids := map[string]int64{}
	rng := rand.New(rand.NewPCG(5, 5))
	for i, coll := range []string{"keep", "hurt"} {
		require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, moviesSchema(coll)).WithShardNum(1)))
		_, err := c.Insert(ctx, insertOption(coll, genMovies(i*10000, 1000, rng)))
		require.NoError(t, err)
		ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
		require.NoError(t, err)
		require.NoError(t, ft.Await(ctx))
		it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "vector", index.NewHNSWIndex(entity.L2, 8, 32)))
		require.NoError(t, err)
		require.NoError(t, it.Await(ctx))
		lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
		require.NoError(t, err)
		require.NoError(t, lt.Await(ctx))
		desc, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption(coll))
		require.NoError(t, err)
		ids[coll] = desc.ID
	}
	require.Equal(t, 0, p.term(t), "stderr:\n%s", p.stderr.String())
	return dir, ids
}

// insertLogs returns the insert binlogs of a collection under the data dir,
// as object keys ("files/insert_log/{coll}/{part}/{seg}/{field}/{log}"),
// largest first.
func insertLogs(t *testing.T, dir string, coll int64) []string {
	t.Helper()
	storage := filepath.Join(dir, "storage")
	var keys []string
	sizes := map[string]int64{}
	root := filepath.Join(storage, "files", "insert_log", fmt.Sprint(coll))
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		key, err := filepath.Rel(storage, p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		keys = append(keys, filepath.ToSlash(key))
		sizes[filepath.ToSlash(key)] = info.Size()
		return nil
	}))
	require.NotEmpty(t, keys)
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if sizes[keys[j]] > sizes[keys[i]] {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	return keys
}

// copyDir copies a data dir (regular files and directories) to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	}))
}

// TestCheckAndRepair: `strata check` finds a clean data dir clean (exit 0)
// and a damaged insert binlog (a flipped byte, a truncation, a deletion)
// damaged (exit 1, with a line naming the segment and the file);
// `strata repair --drop-segment` accepts the loss of that segment, after
// which the check is clean again and the server starts and serves the other
// collection in full.
func TestFaultCheckAndRepair(t *testing.T) {
	bin := buildBinary(t)
	clean, ids := writeCheckDir(t, bin)

	out, errOut, code := runTool(t, bin, "check", "--data-dir", clean)
	require.Equal(t, 0, code, "a clean dir checks clean; stdout:\n%s\nstderr:\n%s", out, errOut)
	require.Contains(t, out, "clean: no damage found")
	require.NotContains(t, out, "DAMAGED")

	key := insertLogs(t, clean, ids["hurt"])[0] // the vector field's binlog
	parts := strings.Split(key, "/")            // files insert_log coll part seg field log
	require.Len(t, parts, 7)
	seg := parts[4]

	damages := []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"flipped byte", func(t *testing.T, path string) {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			data[len(data)/2] ^= 0x40
			require.NoError(t, os.WriteFile(path, data, 0o644))
		}},
		{"truncated", func(t *testing.T, path string) {
			fi, err := os.Stat(path)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(path, fi.Size()/2))
		}},
		{"deleted", func(t *testing.T, path string) { require.NoError(t, os.Remove(path)) }},
	}
	// A damaged index file is found by loading it (every index file carries a CRC).
	t.Run("index file", func(t *testing.T) {
		dir := t.TempDir()
		copyDir(t, clean, dir)
		var file string
		require.NoError(t, filepath.WalkDir(filepath.Join(dir, "storage", "files", "index_files"), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && file == "" {
				file = p
			}
			return err
		}))
		require.NotEmpty(t, file)
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		data[len(data)/2] ^= 0x01
		require.NoError(t, os.WriteFile(file, data, 0o644))
		out, _, code := runTool(t, bin, "check", "--data-dir", dir)
		require.Equal(t, 1, code, out)
		require.Contains(t, out, "DAMAGED index:")
		require.Contains(t, out, "index file does not load")
	})

	var damaged string
	for _, tc := range damages {
		dir := t.TempDir() // the last one outlives its subtest
		t.Run(tc.name, func(t *testing.T) {
			copyDir(t, clean, dir)
			tc.damage(t, filepath.Join(dir, "storage", filepath.FromSlash(key)))
			out, errOut, code := runTool(t, bin, "check", "--data-dir", dir)
			require.Equal(t, 1, code, "damage is found; stdout:\n%s\nstderr:\n%s", out, errOut)
			var line string
			for l := range strings.SplitSeq(out, "\n") {
				if strings.HasPrefix(l, "DAMAGED") && strings.Contains(l, "segment="+seg) && strings.Contains(l, "file="+key) {
					line = l
				}
			}
			require.NotEmpty(t, line, "a line names segment %s and file %s; stdout:\n%s", seg, key, out)
			require.Contains(t, line, `collection="hurt"`)
			t.Log(line)
			damaged = dir
		})
	}
	require.NotEmpty(t, damaged)

	// The JSON report names the same damage.
	out, _, code = runTool(t, bin, "check", "--data-dir", damaged, "--json")
	require.Equal(t, 1, code)
	var report struct {
		Clean  bool `json:"clean"`
		Damage []struct {
			Kind      string `json:"kind"`
			SegmentID int64  `json:"segment_id"`
			File      string `json:"file"`
		} `json:"damage"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &report), out)
	require.False(t, report.Clean)
	require.Len(t, report.Damage, 1)
	require.Equal(t, "binlog", report.Damage[0].Kind)
	require.Equal(t, seg, fmt.Sprint(report.Damage[0].SegmentID))
	require.Equal(t, key, report.Damage[0].File)

	// Check and repair refuse while a server holds the data dir.
	p := startProc(t, bin, damaged)
	out, _, code = runTool(t, bin, "check", "--data-dir", damaged)
	require.Equal(t, 2, code, "a locked dir cannot be checked; stdout:\n%s", out)
	require.Contains(t, out, "locked by another process")
	_, errOut, code = runTool(t, bin, "repair", "--data-dir", damaged, "--drop-segment", seg)
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, "locked by another process")
	require.Equal(t, 0, p.term(t))

	out, errOut, code = runTool(t, bin, "repair", "--data-dir", damaged, "--drop-segment", seg)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	require.Contains(t, out, "dropped segment "+seg)
	require.Contains(t, out, `collection "hurt"`)
	require.Contains(t, out, "1000 rows lost")

	out, errOut, code = runTool(t, bin, "check", "--data-dir", damaged)
	require.Equal(t, 0, code, "clean after the repair; stdout:\n%s\nstderr:\n%s", out, errOut)

	// The server starts and serves the other collection in full.
	p = startProc(t, bin, damaged)
	c := p.client(t)
	ctx := ctxT(t)
	for coll, want := range map[string]int64{"keep": 1000, "hurt": 0} {
		require.Eventually(t, func() bool {
			rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithOutputFields("count(*)").
				WithConsistencyLevel(entity.ClStrong))
			if err != nil {
				return false
			}
			n, err := rs.GetColumn("count(*)").GetAsInt64(0)
			return err == nil && n == want
		}, 30*time.Second, 200*time.Millisecond, "collection %s serves %d rows", coll, want)
	}
	rs, err := c.Search(ctx, milvusclient.NewSearchOption("keep", 5,
		[]entity.Vector{entity.FloatVector(genMovies(0, 1, rand.New(rand.NewPCG(5, 5)))[0].vec)}).
		WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	require.Equal(t, 5, rs[0].ResultCount)
	require.Equal(t, 0, p.term(t))
}
