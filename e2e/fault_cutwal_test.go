//go:build fault

package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/wal"
)

// cutWALDir writes, through the built binary, one collection "cut" on one
// pchannel: 100 inserts of 2 rows (keys 0…199) that are flushed, so the
// vchannel's checkpoint passes them, then 5 inserts of 20 rows (keys
// 200…299) that stay in a growing segment, after the checkpoint. (The many
// small records put the checkpoint far past an early damaged record, further
// than the server's idle time ticks fill before the test's new inserts.) It stops the server and
// returns the data dir, the pchannel and the frame index (in the newest
// WAL file) of every insert record, in order.
func cutWALDir(t *testing.T, bin string) (string, string, []int) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := startProc(t, bin, dir)
	c := p.client(t)
	pch := walFaultCreate(ctx, t, c, "cut", 1)[0]
	batch := func(from int64, n int) {
		ids := make([]int64, n)
		for i := range ids {
			ids[i] = from + int64(i)
		}
		require.NoError(t, walFaultInsert(ctx, c, "cut", ids))
	}
	for i := range 100 {
		batch(int64(2*i), 2)
	}
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption("cut"))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	for i := range 5 {
		batch(200+int64(20*i), 20)
	}
	n, err := walFaultCount(ctx, c, "cut")
	require.NoError(t, err)
	require.Equal(t, int64(300), n)
	require.Equal(t, 0, p.term(t), "stderr:\n%s", p.stderr.String())

	b, err := os.ReadFile(walNewestSegment(t, dir, pch))
	require.NoError(t, err)
	starts, lengths := walFrames(b)
	var inserts []int
	for i, at := range starts {
		msgs, err := wal.DecodeRecord(b[at+8 : at+8+lengths[i]])
		require.NoError(t, err)
		if len(msgs) == 1 && msgs[0].Type == wal.TypeInsert {
			inserts = append(inserts, i)
		}
	}
	require.Len(t, inserts, 105, "one record per insert")
	return dir, pch, inserts
}

// TestFaultCutWAL: a flipped bit in the newest WAL file of a collection's
// pchannel, in a record before the vchannel's checkpoint (flushed rows)
// or after it (rows only in the WAL): `strata check` finds it (exit 1,
// naming the file and the collection), `strata repair --cut-wal` cuts the
// pchannel there and pads it past every offset the meta store references,
// after which the check is clean and the server serves the flushed rows
// and the rows before the damage, and takes new inserts into the same
// collection that are served at once, after a flush and after a restart.
// Without the padding the new records would get offsets below the
// checkpoint, which the data node skips as already persisted: the flush
// below would never finish and the rows would be gone after the restart.
func TestFaultCutWAL(t *testing.T) {
	bin := buildBinary(t)
	src, pch, inserts := cutWALDir(t, bin)
	for _, tc := range []struct {
		name    string
		record  int    // which insert record is damaged
		where   string // what check says about the checkpoint
		served  int64  // rows served after the repair
		removed string // what the repair says was lost
	}{
		// The third flushed insert: every flushed row is in binlogs; the
		// growing segment's rows, all after the damage, are lost.
		{"BeforeCheckpoint", 2, "before its checkpoint", 200, "were not flushed and are lost"},
		// The third growing insert: the flushed rows and the two growing
		// inserts before it stay.
		{"AfterCheckpoint", 102, "after its checkpoint", 240, "were not flushed and are lost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			copyDir(t, src, dir)
			seg := walNewestSegment(t, dir, pch)
			b, err := os.ReadFile(seg)
			require.NoError(t, err)
			starts, lengths := walFrames(b)
			f := inserts[tc.record]
			b[starts[f]+8+lengths[f]/2] ^= 0x04
			require.NoError(t, os.WriteFile(seg, b, 0o644))

			out, errOut, code := runTool(t, bin, "check", "--data-dir", dir)
			require.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
			var line string
			for l := range strings.SplitSeq(out, "\n") {
				if strings.HasPrefix(l, "DAMAGED wal:") && strings.Contains(l, "file="+seg) {
					line = l
				}
			}
			require.NotEmpty(t, line, "a line names the WAL file; stdout:\n%s", out)
			require.Contains(t, line, `collection="cut"`)
			require.Contains(t, line, "pchannel="+pch)
			require.Contains(t, line, tc.where)
			t.Log(line)

			// Refused while the server holds the data dir.
			p := startProc(t, bin, dir)
			_, errOut, code = runTool(t, bin, "repair", "--data-dir", dir, "--cut-wal", pch)
			require.NotEqual(t, 0, code)
			require.Contains(t, errOut, "locked by another process")
			require.Equal(t, 0, p.term(t))

			out, errOut, code = runTool(t, bin, "repair", "--data-dir", dir, "--cut-wal", pch)
			require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
			require.Contains(t, out, "cut pchannel "+pch+" at "+seg)
			require.Contains(t, out, seg+".damaged")
			require.Contains(t, out, "filler time ticks")
			require.Contains(t, out, `affected: collection "cut"`)
			require.Contains(t, out, tc.removed)
			t.Log(out)
			_, err = os.Stat(seg + ".damaged")
			require.NoError(t, err, "the removed bytes are kept")

			out, errOut, code = runTool(t, bin, "check", "--data-dir", dir)
			require.Equal(t, 0, code, "clean after the repair; stdout:\n%s\nstderr:\n%s", out, errOut)
			require.Contains(t, out, "clean: no damage found")

			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			p = startProc(t, bin, dir)
			c := p.client(t)
			count := func(want int64, what string) {
				t.Helper()
				var n int64
				require.Eventually(t, func() bool {
					var err error
					n, err = walFaultCount(ctx, c, "cut")
					return err == nil && n == want
				}, 30*time.Second, 200*time.Millisecond, "%s: %d rows served, want %d; log:\n%s", what, n, want, p.stderr.String())
			}
			// New inserts into the same collection, on the cut pchannel, at
			// once: before the server's own time ticks (every read appends
			// one, and so does an idle pchannel) could fill a gap below the
			// checkpoint.
			newIDs := make([]int64, 50)
			for i := range newIDs {
				newIDs[i] = 1000 + int64(i)
			}
			require.NoError(t, walFaultInsert(ctx, c, "cut", newIDs[:25]))
			require.NoError(t, walFaultInsert(ctx, c, "cut", newIDs[25:]))
			count(tc.served+50, "the rows kept and the new inserts")
			fctx, fcancel := context.WithTimeout(ctx, 30*time.Second)
			defer fcancel()
			ft, err := c.Flush(fctx, milvusclient.NewFlushOption("cut"))
			require.NoError(t, err)
			require.NoError(t, ft.Await(fctx), "the data node flushes the new rows (it does not skip them)")
			count(tc.served+50, "after a flush")
			rs, err := c.Query(ctx, milvusclient.NewQueryOption("cut").WithFilter("id >= 1000").WithOutputFields("id"))
			require.NoError(t, err)
			require.Equal(t, 50, rs.ResultCount)
			require.Equal(t, 0, p.term(t), "stderr:\n%s", p.stderr.String())

			p = startProc(t, bin, dir)
			c = p.client(t)
			count(tc.served+50, "after a restart")
			_, writes, problems := healthDetail(t, p)
			require.True(t, writes)
			require.Empty(t, problems, "/healthz/detail is clean")
			require.Equal(t, 0, p.term(t))
			out, _, code = runTool(t, bin, "check", "--data-dir", dir)
			require.Equal(t, 0, code, "still clean; stdout:\n%s", out)
		})
	}
}
