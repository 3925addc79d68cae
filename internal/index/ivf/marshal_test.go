package ivf

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
)

var errMismatch = errors.New("concurrent search result differs")

func marshal(t *testing.T, x *Index) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, x.Marshal(&buf))
	return buf.Bytes()
}

func TestMarshalRoundTrip(t *testing.T) {
	data := clustered(7, 7, 2000, 16, 10, 4)
	queries := clustered(7, 8, 20, 16, 10, 4)
	for _, k := range []Kind{Flat, SQ8, PQ} {
		for _, m := range metrics {
			t.Run(k.String()+"/"+m.String(), func(t *testing.T) {
				cfg := Defaults(k)
				cfg.Nlist, cfg.M, cfg.Nbits = 16, 4, 6
				x, err := Build(data, 16, m, cfg)
				require.NoError(t, err)
				b := marshal(t, x)
				y, err := Unmarshal(bytes.NewReader(b))
				require.NoError(t, err)
				require.Equal(t, x.Len(), y.Len())
				require.Equal(t, x.Dim(), y.Dim())
				require.Equal(t, x.Metric(), y.Metric())
				require.Equal(t, x.Config().Nlist, y.Config().Nlist)
				require.Equal(t, x.MemoryBytes(), y.MemoryBytes())
				require.Equal(t, b, marshal(t, y))
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

func TestUnmarshalCorrupt(t *testing.T) {
	data := clustered(7, 7, 500, 16, 10, 4)
	cfg := Defaults(PQ)
	cfg.Nlist, cfg.M = 8, 4
	x, err := Build(data, 16, index.L2, cfg)
	require.NoError(t, err)
	good := marshal(t, x)
	for _, tc := range []struct {
		name string
		mut  func([]byte) []byte
	}{
		{"empty", func([]byte) []byte { return nil }},
		{"magic", func(b []byte) []byte { b[0] = 'X'; return b }},
		{"version", func(b []byte) []byte { b[8] = 9; return b }},
		{"kind", func(b []byte) []byte { b[12] = 7; return b }},
		{"nlist", func(b []byte) []byte { b[24], b[25], b[26] = 0, 0, 0; return b }},
		{"payload bit", func(b []byte) []byte { b[len(b)/2] ^= 1; return b }},
		{"checksum", func(b []byte) []byte { b[len(b)-1] ^= 1; return b }},
		{"truncated", func(b []byte) []byte { return b[:len(b)-10] }},
		{"trailing header only", func(b []byte) []byte { return b[:headerSize] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.mut(bytes.Clone(good))
			_, err := Unmarshal(bytes.NewReader(b))
			require.ErrorIs(t, err, ErrCorrupt)
		})
	}
}

// TestUnmarshalBadLists rewrites the list table consistently with the
// checksum, which only checkLists can catch.
func TestUnmarshalBadLists(t *testing.T) {
	data := clustered(7, 7, 50, 4, 3, 2)
	cfg := Defaults(Flat)
	cfg.Nlist = 2
	x, err := Build(data, 4, index.L2, cfg)
	require.NoError(t, err)
	rows := x.rows
	x.rows = append([]int32(nil), rows...)
	x.rows[1] = x.rows[0]
	_, err = Unmarshal(bytes.NewReader(marshal(t, x)))
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorContains(t, err, "repeated")

	x.rows = rows
	x.offsets = []uint32{0, 60, 50}
	_, err = Unmarshal(bytes.NewReader(marshal(t, x)))
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorContains(t, err, "list offset 50 after 60")
}
