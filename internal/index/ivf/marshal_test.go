package ivf

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/indextest"
)

var errMismatch = errors.New("concurrent search result differs")

// load is Unmarshal over a whole file.
var load = indextest.FromReader(Unmarshal)

func TestMarshalRoundTrip(t *testing.T) {
	data := clustered(7, 7, 2000, 16, 10, 4)
	queries := clustered(7, 8, 20, 16, 10, 4)
	for _, k := range []Kind{Flat, SQ8, PQ} {
		for _, m := range metrics {
			t.Run(k.String()+"/"+m.String(), func(t *testing.T) {
				cfg := Defaults(k)
				cfg.Nlist, cfg.M, cfg.Nbits = 16, 4, 6
				x, err := Build(context.Background(), data, 16, m, cfg)
				require.NoError(t, err)
				b := indextest.Bytes(t, x)
				y, err := Unmarshal(bytes.NewReader(b))
				require.NoError(t, err)
				require.Equal(t, x.Len(), y.Len())
				require.Equal(t, x.Dim(), y.Dim())
				require.Equal(t, x.Metric(), y.Metric())
				require.Equal(t, x.Config().Nlist, y.Config().Nlist)
				require.Equal(t, x.MemoryBytes(), y.MemoryBytes())
				require.Equal(t, b, indextest.Bytes(t, y))
				for i := range 20 {
					q := queries[i*16 : (i+1)*16]
					a, err := x.Search(q, 10, index.SearchParams{Nprobe: 4}, nil)
					require.NoError(t, err)
					c, err := y.Search(q, 10, index.SearchParams{Nprobe: 4}, nil)
					require.NoError(t, err)
					require.Equal(t, a, c)
				}
			})
		}
	}
}

// TestUnmarshalCorrupt: every truncation and every flipped byte of a file
// of each kind is rejected as corrupt, without a panic.
func TestUnmarshalCorrupt(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.kind.String(), func(t *testing.T) {
			indextest.RequireRejects(t, indextest.Bytes(t, smallIndex(t, tc.kind, tc.metric)), ErrCorrupt, load)
		})
	}
}

// TestUnmarshalBadLists rewrites the list table consistently with the
// checksum, which only checkLists can catch.
func TestUnmarshalBadLists(t *testing.T) {
	data := clustered(7, 7, 50, 4, 3, 2)
	cfg := Defaults(Flat)
	cfg.Nlist = 2
	x, err := Build(context.Background(), data, 4, index.L2, cfg)
	require.NoError(t, err)
	rows := x.rows
	x.rows = append([]int32(nil), rows...)
	x.rows[1] = x.rows[0]
	_, err = load(indextest.Bytes(t, x))
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorContains(t, err, "repeated")

	x.rows = rows
	x.offsets = []uint32{0, 60, 50}
	_, err = load(indextest.Bytes(t, x))
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorContains(t, err, "list offset 50 after 60")
}
