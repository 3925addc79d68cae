package hnsw

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/indextest"
)

func TestMarshalRoundTrip(t *testing.T) {
	for _, m := range metrics {
		t.Run(m.String(), func(t *testing.T) {
			f := getFixture(t, m)
			var buf bytes.Buffer
			require.NoError(t, f.idx.Marshal(&buf))
			data := buf.Bytes()
			back, err := Unmarshal(bytes.NewReader(data))
			require.NoError(t, err)
			require.Equal(t, f.idx.Len(), back.Len())
			require.Equal(t, f.idx.Config().M, back.Config().M)
			require.Equal(t, m, back.Metric())
			for i := range fixQ {
				want, err := f.idx.Search(f.query(i), 10, index.SearchParams{Ef: 40}, nil)
				require.NoError(t, err)
				got, err := back.Search(f.query(i), 10, index.SearchParams{Ef: 40}, nil)
				require.NoError(t, err)
				require.Equal(t, want, got)
			}
			var again bytes.Buffer
			require.NoError(t, back.Marshal(&again))
			require.Equal(t, data, again.Bytes())
		})
	}
}

func TestUnmarshalCorrupt(t *testing.T) {
	idx, err := Build(context.Background(), indextest.Gaussian(newRng(), 300, 8), 8, index.L2, Config{M: 4, EfConstruction: 20, Seed: 1})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, idx.Marshal(&buf))
	good := buf.Bytes()

	for _, tc := range []struct {
		name string
		mut  func([]byte) []byte
	}{
		{"magic", func(b []byte) []byte { b[0] = 'X'; return b }},
		{"version", func(b []byte) []byte { b[8] = 2; return b }},
		{"metric", func(b []byte) []byte { b[12] = 7; return b }},
		{"rows", func(b []byte) []byte { b[40]++; return b }},
		{"vector bit", func(b []byte) []byte { b[headerSize+300+5] ^= 1; return b }},
		{"link bit", func(b []byte) []byte { b[len(b)-100] ^= 0x80; return b }},
		{"checksum", func(b []byte) []byte { b[len(b)-1] ^= 1; return b }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.mut(bytes.Clone(good))
			_, err := Unmarshal(bytes.NewReader(b))
			require.Error(t, err)
			require.ErrorIs(t, err, ErrCorrupt, "%v", err)
		})
	}
}

// TestUnmarshalRejectsDamage: every truncation and every flipped byte of a
// small index is an error wrapping ErrCorrupt, never a panic.
func TestUnmarshalRejectsDamage(t *testing.T) {
	idx, err := Build(context.Background(), indextest.Gaussian(newRng(), 40, 4), 4, index.IP, Config{M: 2, EfConstruction: 8, Seed: 1, Workers: 1})
	require.NoError(t, err)
	indextest.RequireRejects(t, indextest.Bytes(t, idx), ErrCorrupt, indextest.FromReader(Unmarshal))
}
