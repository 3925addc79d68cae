package ivf

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/indextest"
)

// TestPQPrecomputedTables: an L2 IVF_PQ search with the precomputed
// per-list tables returns the rows and, within rounding, the scores of the
// search that builds each list's table from the query residual.
func TestPQPrecomputedTables(t *testing.T) {
	f := fix()
	x := f.index(t, PQ, index.L2)
	// The fixture is small for its nlist: no tables kept by default.
	require.False(t, x.usePQPre())
	require.Nil(t, x.pqPre)
	y, err := load(indextest.Bytes(t, x))
	require.NoError(t, err)
	require.Nil(t, y.pqPre)
	y.buildPQPre()
	require.Len(t, y.pqPre, x.cfg.Nlist*x.cfg.M*x.ksub)
	require.Greater(t, y.MemoryBytes(), x.MemoryBytes())
	for i := range fixQ {
		want, err := x.Search(f.query(i), 10, index.SearchParams{Nprobe: 16}, nil)
		require.NoError(t, err)
		got, err := y.Search(f.query(i), 10, index.SearchParams{Nprobe: 16}, nil)
		require.NoError(t, err)
		requireSameHits(t, want, got)
	}
}

// TestPQPrecomputedKept: a segment large for its nlist keeps the tables,
// rebuilds them on Unmarshal (they are not serialized) and scores as the
// per-list table path does.
func TestPQPrecomputedKept(t *testing.T) {
	const n, dim = 6000, 32
	data := clustered(11, 3, n, dim, 40, 6)
	cfg := Defaults(PQ)
	cfg.Nlist, cfg.M, cfg.Nbits = 8, 4, 8
	x, err := Build(context.Background(), data, dim, index.L2, cfg)
	require.NoError(t, err)
	require.True(t, x.usePQPre())
	require.Len(t, x.pqPre, 8*4*256)
	y, err := load(indextest.Bytes(t, x))
	require.NoError(t, err)
	require.Equal(t, x.pqPre, y.pqPre)
	z, err := load(indextest.Bytes(t, x))
	require.NoError(t, err)
	z.pqPre = nil
	qs := clustered(11, 4, 20, dim, 40, 6)
	for i := range 20 {
		q := qs[i*dim : (i+1)*dim]
		want, err := z.Search(q, 10, index.SearchParams{Nprobe: 3}, nil)
		require.NoError(t, err)
		got, err := y.Search(q, 10, index.SearchParams{Nprobe: 3}, nil)
		require.NoError(t, err)
		requireSameHits(t, want, got)
	}
}
