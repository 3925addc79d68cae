package querynode

import (
	"math/rand/v2"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/index/distance"
	"github.com/strata-db/strata/internal/plan"
)

// byteColumn returns n random rows of type t and dimension dim (normal
// values for the half-precision types), with the float32 values they decode
// to (nil for binary).
func byteColumn(t schemapb.DataType, n, dim int, rng *rand.Rand) (*column.ByteVectors, []float32) {
	c := &column.ByteVectors{T: t, Dim: dim, Width: column.VectorWidth(t, dim)}
	c.Data = make([]byte, n*c.Width)
	if t == schemapb.DataType_BinaryVector || t == schemapb.DataType_Int8Vector {
		for i := range c.Data {
			c.Data[i] = byte(rng.Uint32())
		}
		if t == schemapb.DataType_BinaryVector {
			return c, nil
		}
		floats := make([]float32, n*dim)
		distance.DecodeInt8(floats, c.Data)
		return c, floats
	}
	floats := make([]float32, n*dim)
	for i := range floats {
		floats[i] = float32(rng.NormFloat64())
	}
	if t == schemapb.DataType_Float16Vector {
		distance.EncodeFloat16(c.Data, floats)
		distance.DecodeFloat16(floats, c.Data)
	} else {
		distance.EncodeBFloat16(c.Data, floats)
		distance.DecodeBFloat16(floats, c.Data)
	}
	return c, floats
}

// TestRowScorerBytes: exact scores over a compact column equal the scores
// over its float32 decoding (and Hamming/Jaccard over binary rows), and a
// query of the wrong kind or dimension is refused.
func TestRowScorerBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, dim = 300, 24
	for _, typ := range []schemapb.DataType{schemapb.DataType_Float16Vector, schemapb.DataType_BFloat16Vector, schemapb.DataType_Int8Vector} {
		c, floats := byteColumn(typ, n, dim, rng)
		fc := &column.FloatVectors{Dim: dim, Data: floats}
		for _, metric := range []string{plan.MetricL2, plan.MetricIP, plan.MetricCosine} {
			q := floats[7*dim : 8*dim]
			req := &plan.Search{Metric: metric, Vectors: [][]float32{q}}
			qn := []float32{distance.Norm(q)}
			got, want := make([]float32, n), make([]float32, n)
			mask1, mask2 := allTrue(n), allTrue(n)
			rs, err := newRowScorer(c, req, qn)
			require.NoError(t, err)
			require.NoError(t, rs.score(0, n, mask1, got))
			rf, err := newRowScorer(fc, req, qn)
			require.NoError(t, err)
			require.NoError(t, rf.score(0, n, mask2, want))
			require.Equal(t, want, got, "%s %s", typ, metric)
		}
		_, err := newRowScorer(c, &plan.Search{Metric: plan.MetricHamming, Binary: [][]byte{{1}}}, nil)
		require.ErrorContains(t, err, "do not match")
		rs, err := newRowScorer(c, &plan.Search{Metric: plan.MetricL2, Vectors: [][]float32{make([]float32, dim+1)}}, []float32{0})
		require.NoError(t, err)
		require.ErrorContains(t, rs.score(0, n, allTrue(n), make([]float32, n)), "dimension")
	}
	c, _ := byteColumn(schemapb.DataType_BinaryVector, n, 64, rng)
	q := c.Row(3)
	for _, metric := range []string{plan.MetricHamming, plan.MetricJaccard} {
		rs, err := newRowScorer(c, &plan.Search{Metric: metric, Binary: [][]byte{q}}, []float32{0})
		require.NoError(t, err)
		got := make([]float32, n)
		require.NoError(t, rs.score(0, n, allTrue(n), got))
		for i := range n {
			want := float32(distance.Hamming(q, c.Row(i)))
			if metric == plan.MetricJaccard {
				want = distance.Jaccard(q, c.Row(i))
			}
			require.Equal(t, want, got[i])
		}
		require.Zero(t, got[3])
	}
	_, err := newRowScorer(c, &plan.Search{Metric: plan.MetricL2, Vectors: [][]float32{{1}}}, []float32{1})
	require.ErrorContains(t, err, "do not match")
}

func allTrue(n int) []bool {
	m := make([]bool, n)
	for i := range m {
		m[i] = true
	}
	return m
}

// BenchmarkExactScore scores one query against 100,000 rows of dimension
// 128 (1024 bits for binary) per operation, as exact search does for each
// query and segment: float32 rows, compact float16, bfloat16 and int8 rows
// (widened one at a time), and binary rows.
func BenchmarkExactScore(b *testing.B) {
	const n, dim = 100000, 128
	rng := rand.New(rand.NewPCG(3, 4))
	for _, typ := range []schemapb.DataType{
		schemapb.DataType_FloatVector, schemapb.DataType_Float16Vector,
		schemapb.DataType_BFloat16Vector, schemapb.DataType_Int8Vector, schemapb.DataType_BinaryVector,
	} {
		var (
			col column.Column
			req = &plan.Search{Metric: plan.MetricL2}
		)
		switch typ {
		case schemapb.DataType_FloatVector:
			_, floats := byteColumn(schemapb.DataType_Float16Vector, n, dim, rng)
			col = &column.FloatVectors{Dim: dim, Data: floats}
			req.Vectors = [][]float32{floats[:dim]}
		case schemapb.DataType_BinaryVector:
			c, _ := byteColumn(typ, n, 8*dim, rng)
			col, req.Metric, req.Binary = c, plan.MetricHamming, [][]byte{c.Row(0)}
		default:
			c, floats := byteColumn(typ, n, dim, rng)
			col, req.Vectors = c, [][]float32{floats[:dim]}
		}
		b.Run(typ.String(), func(b *testing.B) {
			rs, err := newRowScorer(col, req, []float32{1})
			require.NoError(b, err)
			mask, scores := allTrue(n), make([]float32, n)
			for b.Loop() {
				if err := rs.score(0, n, mask, scores); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
