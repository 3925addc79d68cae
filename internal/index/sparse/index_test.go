package sparse

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index/indextest"
)

func TestValidate(t *testing.T) {
	pair := func(idx uint32, v float32) []byte {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, idx)
		binary.LittleEndian.PutUint32(b[4:], math.Float32bits(v))
		return b
	}
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	for _, tc := range []struct {
		name, err string
		row       []byte
	}{
		{"empty", "", []byte{}},
		{"ok", "", cat(pair(1, 0.5), pair(7, 0), pair(MaxIndex, 2))},
		{"nil", "nil sparse", nil},
		{"partial pair", "multiple of 8", cat(pair(1, 1), []byte{1, 2, 3})},
		{"max index", "less than 2^32-1", pair(math.MaxUint32, 1)},
		{"unsorted", "unsorted or same indices", cat(pair(5, 1), pair(3, 1))},
		{"duplicate", "unsorted or same indices", cat(pair(5, 1), pair(5, 2))},
		{"nan", "NaN or Inf", pair(1, float32(math.NaN()))},
		{"inf", "NaN or Inf", pair(1, float32(math.Inf(1)))},
		{"negative", "negative value", pair(1, -0.5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(tc.row)
			if tc.err == "" {
				require.NoError(t, err)
				v, err := Parse(tc.row)
				require.NoError(t, err)
				require.Equal(t, tc.row, v.Encode(), "decode/encode round trip")
				return
			}
			require.ErrorContains(t, err, tc.err)
		})
	}
}

func TestDot(t *testing.T) {
	a := Vector{Indices: []uint32{1, 3, 9}, Values: []float32{1, 2, 3}}
	b := Vector{Indices: []uint32{0, 3, 9, 12}, Values: []float32{5, 4, 0.5, 7}}
	require.Equal(t, float32(2*4+3*0.5), Dot(a, b))
	require.Equal(t, Dot(a, b), DotRow(a, b.Encode()))
	require.Equal(t, float32(0), Dot(a, Vector{}))
	require.Equal(t, int64(13), Dim(b.Encode()))
	require.Equal(t, int64(0), Dim(nil))
}

func TestParams(t *testing.T) {
	p, err := ParseBuildParams("AUTOINDEX", nil)
	require.NoError(t, err)
	require.Equal(t, BuildParams{Kind: Inverted}, p)
	p, err = ParseBuildParams("sparse_wand", map[string]string{"drop_ratio_build": "0.2"})
	require.NoError(t, err)
	require.Equal(t, BuildParams{Kind: WAND, DropRatioBuild: 0.2}, p)
	for _, bad := range []string{"-0.1", "1", "1.3", "a", ""} {
		_, err := ParseBuildParams("SPARSE_INVERTED_INDEX", map[string]string{"drop_ratio_build": bad})
		require.ErrorContains(t, err, "invalid drop_ratio_build", bad)
	}
	for _, algo := range InvertedIndexAlgos {
		_, err := ParseBuildParams("SPARSE_WAND", map[string]string{"inverted_index_algo": algo})
		require.NoError(t, err, algo)
	}
	for _, bad := range []string{"NOPE", "", "daat_maxscore"} {
		_, err := ParseBuildParams("SPARSE_INVERTED_INDEX", map[string]string{"inverted_index_algo": bad})
		require.ErrorContains(t, err, "sparse inverted index algo "+bad+" not found or not supported", bad)
	}
	_, err = ParseBuildParams("HNSW", nil)
	require.Error(t, err)
	require.NoError(t, CheckDropRatioSearch(0.99))
	require.Error(t, CheckDropRatioSearch(1))
	require.Error(t, CheckDropRatioSearch(-0.01))
}

// TestExactEquivalence: with nothing dropped, both index kinds return
// exactly the brute-force top k (rows and scores), with and without a
// filter mask.
func TestExactEquivalence(t *testing.T) {
	rows := synth(1, 3000, 2000, 20)
	rows[17] = []byte{} // an empty row is indexed and never a hit
	queries := synth(2, 60, 2000, 8)
	r := rand.New(rand.NewPCG(3, 3))
	allowed := make([]bool, len(rows))
	for i := range allowed {
		allowed[i] = r.IntN(3) > 0
	}
	for _, kind := range []Kind{Inverted, WAND} {
		x, err := Build(context.Background(), rows, BuildParams{Kind: kind})
		require.NoError(t, err)
		require.Equal(t, len(rows), x.Len())
		for qi, qb := range queries {
			q := Decode(qb)
			for _, k := range []int{1, 10, 100} {
				for _, mask := range [][]bool{nil, allowed} {
					got, err := x.Search(q, k, SearchParams{}, mask)
					require.NoError(t, err)
					require.Equal(t, exact(rows, q, k, mask), got, "%s query %d k %d", kind, qi, k)
				}
			}
		}
	}
}

// TestTies: equal scores are ordered by row, in both kinds, and a k cut in
// the middle of a tie keeps the lowest rows.
func TestTies(t *testing.T) {
	var rows [][]byte
	for i := 0; i < 50; i++ {
		rows = append(rows, fromMap(map[uint32]float32{uint32(i % 5): 1}))
	}
	q := Decode(fromMap(map[uint32]float32{0: 1, 1: 1, 2: 1}))
	for _, kind := range []Kind{Inverted, WAND} {
		x, err := Build(context.Background(), rows, BuildParams{Kind: kind})
		require.NoError(t, err)
		got, err := x.Search(q, 7, SearchParams{}, nil)
		require.NoError(t, err)
		require.Equal(t, exact(rows, q, 7, nil), got)
		require.Equal(t, int32(0), got[0].Row)
		require.Equal(t, int32(10), got[6].Row)
	}
}

// TestDropRatios: dropping values keeps recall@10 high thanks to
// refinement, and scores stay exact.
func TestDropRatios(t *testing.T) {
	rows := synth(4, 4000, 3000, 30)
	queries := synth(5, 100, 3000, 10)
	for _, tc := range []struct {
		build, search float64
		min           float64
	}{
		{0.2, 0, 0.95},
		{0, 0.2, 0.95},
		{0.3, 0.3, 0.85},
	} {
		for _, kind := range []Kind{Inverted, WAND} {
			x, err := Build(context.Background(), rows, BuildParams{Kind: kind, DropRatioBuild: tc.build})
			require.NoError(t, err)
			var sum float64
			for _, qb := range queries {
				q := Decode(qb)
				want := exact(rows, q, 10, nil)
				got, err := x.Search(q, 10, SearchParams{DropRatioSearch: tc.search}, nil)
				require.NoError(t, err)
				for _, h := range got {
					require.Equal(t, Dot(q, Decode(rows[h.Row])), h.Score, "refined scores are exact")
				}
				sum += indextest.Recall(got, want)
			}
			rc := sum / float64(len(queries))
			t.Logf("%s build %.1f search %.1f: recall@10 %.3f", kind, tc.build, tc.search, rc)
			require.GreaterOrEqual(t, rc, tc.min)
		}
	}
}

func TestSearchErrors(t *testing.T) {
	x, err := Build(context.Background(), synth(6, 10, 50, 5), BuildParams{})
	require.NoError(t, err)
	q := Decode(fromMap(map[uint32]float32{1: 1}))
	_, err = x.Search(q, -1, SearchParams{}, nil)
	require.Error(t, err)
	_, err = x.Search(q, 1, SearchParams{DropRatioSearch: 1}, nil)
	require.ErrorContains(t, err, "drop_ratio_search")
	_, err = x.Search(q, 1, SearchParams{}, make([]bool, 3))
	require.Error(t, err)
	_, err = x.Search(Vector{Indices: []uint32{3, 1}, Values: []float32{1, 1}}, 1, SearchParams{}, nil)
	require.ErrorIs(t, err, ErrBadQuery)
	hits, err := x.Search(Vector{}, 5, SearchParams{}, nil)
	require.NoError(t, err)
	require.Empty(t, hits)
	_, err = Build(context.Background(), [][]byte{{1, 2, 3}}, BuildParams{})
	require.ErrorContains(t, err, "row 0")
}

func TestMarshalRoundTrip(t *testing.T) {
	rows := synth(8, 500, 400, 10)
	queries := synth(9, 20, 400, 5)
	for _, p := range []BuildParams{{Kind: Inverted}, {Kind: WAND, DropRatioBuild: 0.3}} {
		x, err := Build(context.Background(), rows, p)
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, x.Marshal(&buf))
		y, err := Unmarshal(bytes.NewReader(buf.Bytes()))
		require.NoError(t, err)
		require.Equal(t, x.Kind(), y.Kind())
		require.Equal(t, x.Len(), y.Len())
		require.InDelta(t, p.DropRatioBuild, y.DropRatioBuild(), 1e-6)
		require.Equal(t, x.MemoryBytes(), y.MemoryBytes())
		for _, qb := range queries {
			a, err := x.Search(Decode(qb), 10, SearchParams{}, nil)
			require.NoError(t, err)
			b, err := y.Search(Decode(qb), 10, SearchParams{}, nil)
			require.NoError(t, err)
			require.Equal(t, a, b)
		}
		var again bytes.Buffer
		require.NoError(t, y.Marshal(&again))
		require.Equal(t, buf.Bytes(), again.Bytes(), "marshal is deterministic")
	}
	// An empty index round-trips too.
	x, err := Build(context.Background(), nil, BuildParams{})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, x.Marshal(&buf))
	y, err := Unmarshal(&buf)
	require.NoError(t, err)
	require.Equal(t, 0, y.Len())
}

// TestUnmarshalCorrupt: every truncation and every single flipped byte is
// an error wrapping ErrCorrupt, never a panic.
func TestUnmarshalCorrupt(t *testing.T) {
	x, err := Build(context.Background(), synth(10, 30, 40, 4), BuildParams{Kind: WAND})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, x.Marshal(&buf))
	data := buf.Bytes()
	indextest.RequireRejects(t, data, ErrCorrupt, indextest.FromReader(Unmarshal))
	// A structurally wrong file with a valid checksum is caught by the checks.
	bad := bytes.Clone(data[:len(data)-4])
	hsize := binary.Size(header{})
	binary.LittleEndian.PutUint64(bad[format.HeaderSize()+hsize:], 5) // rowOff[0] != 0
	bad = binary.LittleEndian.AppendUint32(bad, crc32.Checksum(bad, crc32.MakeTable(crc32.Castagnoli)))
	_, err = Unmarshal(bytes.NewReader(bad))
	require.ErrorContains(t, err, "row offsets")
}

// TestWANDPrunes: WAND scores far fewer rows than the posting lists of the
// query hold, yet returns the same top k as the inverted search.
func TestWANDPrunes(t *testing.T) {
	rows := uniform(11, 20000, 5000, 40)
	x, err := Build(context.Background(), rows, BuildParams{Kind: WAND})
	require.NoError(t, err)
	var scored, candidates int
	for _, qb := range uniform(12, 50, 5000, 10) {
		q := Decode(qb)
		terms, _ := x.terms(q, 0)
		touched := map[uint32]bool{}
		for _, tm := range terms {
			for _, r := range x.postRow[x.listOff[tm.list]:x.listOff[tm.list+1]] {
				touched[r] = true
			}
		}
		hits, n := x.searchWAND(terms, 10, nil, wandAuto)
		require.Equal(t, x.searchInverted(terms, 10, nil), hits)
		scored += n
		candidates += len(touched)
	}
	t.Logf("WAND scored %d of %d candidate rows (%.1f%%)", scored, candidates, 100*float64(scored)/float64(candidates))
	require.Less(t, scored, candidates/2)
}

// TestRandomizedTies compares both kinds with the exact search on many
// small random indexes whose values come from a tiny set, so that equal
// scores are common and the k-th place is often a tie; lists are long
// enough to span several blocks.
func TestRandomizedTies(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 37))
	vals := []float32{0.5, 1, 2}
	for round := 0; round < 60; round++ {
		n, vocab := 50+r.IntN(400), 3+r.IntN(30)
		rows := make([][]byte, n)
		for i := range rows {
			m := map[uint32]float32{}
			for j := r.IntN(6); j > 0; j-- {
				m[uint32(r.IntN(vocab))] = vals[r.IntN(len(vals))]
			}
			rows[i] = fromMap(m)
		}
		var allowed []bool
		if round%2 == 1 {
			allowed = make([]bool, n)
			for i := range allowed {
				allowed[i] = r.IntN(4) > 0
			}
		}
		inv, err := Build(context.Background(), rows, BuildParams{Kind: Inverted})
		require.NoError(t, err)
		wand, err := Build(context.Background(), rows, BuildParams{Kind: WAND})
		require.NoError(t, err)
		for qi := 0; qi < 10; qi++ {
			m := map[uint32]float32{}
			for j := 1 + r.IntN(5); j > 0; j-- {
				m[uint32(r.IntN(vocab+2))] = vals[r.IntN(len(vals))]
			}
			q := Decode(fromMap(m))
			k := 1 + r.IntN(20)
			want := exact(rows, q, k, allowed)
			for _, x := range []*Index{inv, wand} {
				got, err := x.Search(q, k, SearchParams{}, allowed)
				require.NoError(t, err)
				require.Equal(t, want, got, "round %d query %d k %d %s", round, qi, k, x.Kind())
			}
		}
	}
}
