//go:build fault

package e2e

import (
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// TestFaultProxyVarCharAutoIDKill9: the built binary acknowledges an insert
// into a VarChar auto-ID collection, is killed with SIGKILL before a flush,
// and replays the insert on every restart without exiting: the rows come
// back with the string IDs the insert returned.
func TestFaultProxyVarCharAutoIDKill9(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	p := startProc(t, bin, dir)
	c := p.client(t)
	ctx := ctxT(t)
	const coll = "vcauto"
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, varcharAutoIDSchema(coll))))
	res, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).
		WithInt64Column("n", []int64{1, 2}).WithFloatVectorColumn("v", 2, [][]float32{{1, 0}, {0, 1}}))
	require.NoError(t, err)
	want := map[string]int64{}
	for i := 0; i < res.IDs.Len(); i++ {
		id, err := res.IDs.GetAsString(i)
		require.NoError(t, err)
		want[id] = int64(i + 1)
	}
	require.Len(t, want, 2)
	p.kill(t)

	for restart := 0; restart < 2; restart++ {
		p = startProc(t, bin, dir)
		// The data node replays the insert at once; a record it cannot
		// apply used to stop the server within a second of every start.
		time.Sleep(time.Second)
		select {
		case <-p.done:
			t.Fatalf("restart %d: the server exited: %v\n%s", restart, p.err, p.stderr.String())
		default:
		}
		c = p.client(t)
		indexAndLoad(ctx, t, c, coll, entity.L2)
		requireVarCharRows(ctx, t, c, coll, want)
		p.kill(t)
	}
}
