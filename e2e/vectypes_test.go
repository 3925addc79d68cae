package e2e

import (
	"bytes"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index/distance"
)

// vecCase is one vector type under test: how its rows are generated,
// encoded for the SDK and scored by brute force.
type vecCase struct {
	name    string
	typ     entity.FieldType
	dim     int
	metric  entity.MetricType
	idx     index.Index
	params  string  // search params with the index
	recall  float64 // floor of recall@10 with the index
	wrongMT entity.MetricType
	fileKey string // the index file built ("" when nothing is built)
}

// vecData is the generated data of a case: raw bytes per row (the wire and
// storage form) and, for the float-like types, the decoded float64 values.
type vecData struct {
	raw    [][]byte
	floats [][]float64
}

// genVectors returns n rows clustered around 16 centres.
func genVectors(tc vecCase, n int, rng *rand.Rand) vecData {
	var d vecData
	centres := make([][]float64, 16)
	for i := range centres {
		centres[i] = make([]float64, tc.dim)
		for j := range centres[i] {
			centres[i][j] = rng.NormFloat64()
		}
	}
	for range n {
		c := centres[rng.IntN(len(centres))]
		switch tc.typ {
		case entity.FieldTypeBinaryVector:
			b := make([]byte, tc.dim/8)
			for j := range tc.dim {
				bit := c[j] > 0
				if rng.IntN(8) == 0 {
					bit = !bit
				}
				if bit {
					b[j/8] |= 1 << (j % 8)
				}
			}
			d.raw = append(d.raw, b)
			continue
		case entity.FieldTypeInt8Vector:
			b := make([]byte, tc.dim)
			f := make([]float64, tc.dim)
			for j := range b {
				v := math.Round(math.Max(-128, math.Min(127, c[j]*40+rng.NormFloat64()*12)))
				b[j], f[j] = byte(int8(v)), v
			}
			d.raw, d.floats = append(d.raw, b), append(d.floats, f)
			continue
		}
		v := make([]float32, tc.dim)
		for j := range v {
			v[j] = float32(c[j] + 0.35*rng.NormFloat64())
		}
		b := make([]byte, 2*tc.dim)
		out := make([]float32, tc.dim)
		if tc.typ == entity.FieldTypeFloat16Vector {
			distance.EncodeFloat16(b, v)
			distance.DecodeFloat16(out, b)
		} else {
			distance.EncodeBFloat16(b, v)
			distance.DecodeBFloat16(out, b)
		}
		f := make([]float64, tc.dim)
		for j := range f {
			f[j] = float64(out[j])
		}
		d.raw, d.floats = append(d.raw, b), append(d.floats, f)
	}
	return d
}

// sdkColumn wraps rows [lo, hi) of d as an SDK column named "v".
func sdkColumn(tc vecCase, d vecData, lo, hi int) column.Column {
	rows := d.raw[lo:hi]
	switch tc.typ {
	case entity.FieldTypeBinaryVector:
		return column.NewColumnBinaryVector("v", tc.dim, rows)
	case entity.FieldTypeFloat16Vector:
		return column.NewColumnFloat16Vector("v", tc.dim, rows)
	case entity.FieldTypeBFloat16Vector:
		return column.NewColumnBFloat16Vector("v", tc.dim, rows)
	}
	i8 := make([][]int8, len(rows))
	for i, r := range rows {
		i8[i] = make([]int8, len(r))
		for j, b := range r {
			i8[i][j] = int8(b)
		}
	}
	return column.NewColumnInt8Vector("v", tc.dim, i8)
}

// sdkVector is row i of d as an SDK query vector.
func sdkVector(tc vecCase, d vecData, i int) entity.Vector {
	r := d.raw[i]
	switch tc.typ {
	case entity.FieldTypeBinaryVector:
		return entity.BinaryVector(r)
	case entity.FieldTypeFloat16Vector:
		return entity.Float16Vector(r)
	case entity.FieldTypeBFloat16Vector:
		return entity.BFloat16Vector(r)
	}
	v := make(entity.Int8Vector, len(r))
	for j, b := range r {
		v[j] = int8(b)
	}
	return v
}

// score is the exact score of row r of d against query q under metric.
func score(metric entity.MetricType, d, q vecData, r, qi int) float64 {
	switch metric {
	case entity.HAMMING:
		return float64(distance.Hamming(q.raw[qi], d.raw[r]))
	case entity.JACCARD:
		return float64(distance.Jaccard(q.raw[qi], d.raw[r]))
	}
	a, b := q.floats[qi], d.floats[r]
	var dot, na, nb, l2 float64
	for j := range a {
		dot += a[j] * b[j]
		na += a[j] * a[j]
		nb += b[j] * b[j]
		l2 += (a[j] - b[j]) * (a[j] - b[j])
	}
	switch metric {
	case entity.L2:
		return l2
	case entity.IP:
		return dot
	}
	return dot / math.Sqrt(na*nb)
}

func higherBetter(m entity.MetricType) bool { return m == entity.IP || m == entity.COSINE }

// trueTopK returns the k best exact scores of q over every row, best first.
func trueTopK(metric entity.MetricType, d, q vecData, qi, k int) []float64 {
	s := make([]float64, len(d.raw))
	for r := range s {
		s[r] = score(metric, d, q, r, qi)
	}
	if higherBetter(metric) {
		sort.Sort(sort.Reverse(sort.Float64Slice(s)))
	} else {
		sort.Float64s(s)
	}
	return s[:k]
}

// TestVectorTypes drives every fixed-width vector type through the Go SDK:
// insert (sealed and growing rows), query output byte-exact, exact search
// before any index, index build, search through the index with recall
// against brute force (tie-aware: a hit counts when it scores at least as
// well as the true k-th best), and the bad inputs that must fail clearly.
func TestVectorTypes(t *testing.T) {
	for _, tc := range []vecCase{
		{
			"binary_hamming", entity.FieldTypeBinaryVector, 128, entity.HAMMING, index.NewBinIvfFlatIndex(entity.HAMMING, 16),
			`{"nprobe": 4}`, 0.85, entity.L2, "BIN_IVF_FLAT",
		},
		{
			"binary_jaccard", entity.FieldTypeBinaryVector, 64, entity.JACCARD, index.NewBinFlatIndex(entity.JACCARD),
			``, 1, entity.IP, "",
		},
		{
			"float16_l2_hnsw", entity.FieldTypeFloat16Vector, 32, entity.L2, index.NewHNSWIndex(entity.L2, 16, 100),
			`{"ef": 64}`, 0.9, entity.HAMMING, "HNSW",
		},
		{
			"bfloat16_cosine_ivf", entity.FieldTypeBFloat16Vector, 32, entity.COSINE, index.NewIvfFlatIndex(entity.COSINE, 16),
			`{"nprobe": 4}`, 0.85, entity.JACCARD, "IVF_FLAT",
		},
		{
			"int8_ip_autoindex", entity.FieldTypeInt8Vector, 24, entity.IP, index.NewAutoIndex(entity.IP),
			`{"ef": 64}`, 0.85, entity.HAMMING, "HNSW",
		},
		// Int8Vector fields take HNSW only, as in Milvus 2.6.
		{
			"int8_l2_hnsw", entity.FieldTypeInt8Vector, 16, entity.L2, index.NewHNSWIndex(entity.L2, 16, 100),
			`{"ef": 64}`, 0.9, entity.JACCARD, "HNSW",
		},
		{
			"float16_ip_ivf_pq", entity.FieldTypeFloat16Vector, 32, entity.IP, index.NewIvfPQIndex(entity.IP, 16, 8, 8),
			`{"nprobe": 16}`, 0.7, entity.HAMMING, "IVF_PQ",
		}, // measured 0.855
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, t.TempDir())
			runVectorType(t, s.client(t), s.storageDir(t), tc)
		})
	}
}

func runVectorType(t *testing.T, c *milvusclient.Client, storageDir string, tc vecCase) {
	ctx := ctxT(t)
	coll := "vt_" + tc.name
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("v").WithDataType(tc.typ).WithDim(int64(tc.dim)))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))

	const n, sealed, nq, k = 2000, 1500, 20, 10
	rng := rand.New(rand.NewPCG(11, uint64(len(tc.name))))
	all := genVectors(tc, n+nq, rng)
	data := vecData{raw: all.raw[:n]}
	queries := vecData{raw: all.raw[n:]}
	if all.floats != nil {
		data.floats, queries.floats = all.floats[:n], all.floats[n:]
	}
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i)
	}
	insert := func(lo, hi int) {
		_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll,
			column.NewColumnInt64("id", ids[lo:hi]), sdkColumn(tc, data, lo, hi)))
		require.NoError(t, err)
	}
	insert(0, sealed)
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	insert(sealed, n) // stays in a growing segment

	// Bad inserts: a row of the wrong byte length, a wrong row count.
	short := append([][]byte{data.raw[0][:len(data.raw[0])-1]}, data.raw[1:3]...)
	_, err = c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll, column.NewColumnInt64("id", []int64{1, 2, 3}),
		rawColumn(tc, short)))
	require.Error(t, err)
	require.Contains(t, err.Error(), "v")

	load := func() {
		lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
		require.NoError(t, err)
		require.NoError(t, lt.Await(ctx))
	}
	// A collection loads only with an index on its vector field, as in
	// Milvus: first an exact one (FLAT, BIN_FLAT; Int8Vector fields take
	// HNSW only, so they start with the case's own index).
	var exact index.Index = index.NewFlatIndex(tc.metric)
	switch tc.typ {
	case entity.FieldTypeBinaryVector:
		exact = index.NewBinFlatIndex(tc.metric)
	case entity.FieldTypeInt8Vector:
		exact = tc.idx
	}
	it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "v", exact))
	require.NoError(t, err)
	require.NoError(t, it.Await(ctx))
	load()

	// Query output is byte-exact, from the sealed and the growing segment.
	rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id in [3, 1499, 1500, 1999]").
		WithOutputFields("v").WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	require.Equal(t, 4, rs.ResultCount)
	got := vectorBytes(t, rs.GetColumn("v").FieldData())
	for i := range rs.ResultCount {
		id, err := rs.GetColumn("id").GetAsInt64(i)
		require.NoError(t, err)
		require.True(t, bytes.Equal(data.raw[id], got[i]), "row %d", id)
	}

	search := func(params string, mt entity.MetricType) ([]milvusclient.ResultSet, error) {
		vecs := make([]entity.Vector, nq)
		for q := range vecs {
			vecs[q] = sdkVector(tc, queries, q)
		}
		opt := milvusclient.NewSearchOption(coll, k, vecs).WithANNSField("v").WithConsistencyLevel(entity.ClStrong).
			WithSearchParam("metric_type", string(mt)).WithOutputFields("v")
		if params != "" {
			opt = opt.WithSearchParam("params", params)
		}
		return c.Search(ctx, opt)
	}
	// recall checks the hits' scores against brute force and returns the
	// tie-aware recall@k.
	approx := false // IVF_SQ8 and IVF_PQ score from encoded vectors
	recall := func(res []milvusclient.ResultSet) float64 {
		hit := 0
		for q, r := range res {
			want := trueTopK(tc.metric, data, queries, q, k)
			require.Equal(t, k, r.ResultCount)
			kth := want[k-1]
			for i := range r.ResultCount {
				id, err := r.IDs.GetAsInt64(i)
				require.NoError(t, err)
				exact := score(tc.metric, data, queries, int(id), q)
				tol := 1e-3 * math.Max(1, math.Abs(exact))
				if !approx {
					require.InDelta(t, exact, float64(r.Scores[i]), tol, "query %d hit %d", q, i)
				}
				if (higherBetter(tc.metric) && exact >= kth-tol) || (!higherBetter(tc.metric) && exact <= kth+tol) {
					hit++
				}
			}
			out := vectorBytes(t, r.GetColumn("v").FieldData())
			for i := range r.ResultCount {
				id, _ := r.IDs.GetAsInt64(i)
				require.True(t, bytes.Equal(data.raw[id], out[i]), "search output of row %d", id)
			}
		}
		return float64(hit) / float64(nq*k)
	}

	if tc.typ != entity.FieldTypeInt8Vector {
		res, err := search("", tc.metric)
		require.NoError(t, err)
		require.Equal(t, 1.0, recall(res), "exact search through a FLAT index")
	}
	_, err = search("", tc.wrongMT)
	require.ErrorContains(t, err, string(tc.wrongMT))

	require.NoError(t, c.ReleaseCollection(ctx, milvusclient.NewReleaseCollectionOption(coll)))
	require.NoError(t, c.DropIndex(ctx, milvusclient.NewDropIndexOption(coll, "v")))
	indexFiles := func() map[string]bool {
		files, err := filepath.Glob(filepath.Join(storageDir, "files", "index_files", "*", "*", "*", "*", tc.fileKey))
		require.NoError(t, err)
		m := map[string]bool{}
		for _, f := range files {
			m[f] = true
		}
		return m
	}
	dropped := indexFiles() // the first index's, until GC removes them
	flat, otherFlat := index.NewFlatIndex(tc.wrongMT), index.NewBinFlatIndex(tc.metric)
	otherErr := "can't build with index type"
	switch tc.typ {
	case entity.FieldTypeBinaryVector:
		flat, otherFlat = index.NewBinFlatIndex(tc.wrongMT), index.NewFlatIndex(tc.metric)
	case entity.FieldTypeInt8Vector: // HNSW only, as in Milvus 2.6
		flat, otherErr = index.NewHNSWIndex(tc.wrongMT, 8, 32), "can't build with this index BIN_FLAT"
	}
	_, err = c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "v", flat))
	require.ErrorContains(t, err, string(tc.wrongMT), "a metric that does not fit the type")
	_, err = c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "v", otherFlat))
	require.ErrorContains(t, err, otherErr, "an index type of the other family")
	it, err = c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "v", tc.idx))
	require.NoError(t, err)
	require.NoError(t, it.Await(ctx))
	desc, err := c.DescribeIndex(ctx, milvusclient.NewDescribeIndexOption(coll, "v"))
	require.NoError(t, err)
	require.EqualValues(t, sealed, desc.IndexedRows)
	require.Equal(t, string(tc.metric), desc.Params()["metric_type"])
	var built []string
	for f := range indexFiles() {
		if !dropped[f] {
			built = append(built, f)
		}
	}
	if tc.fileKey != "" {
		require.Len(t, built, 1, "one index file for the one sealed segment")
	}
	load()

	res, err := search(tc.params, tc.metric)
	require.NoError(t, err)
	approx = tc.fileKey == "IVF_SQ8" || tc.fileKey == "IVF_PQ"
	r := recall(res)
	t.Logf("%s recall@%d through %s with %s: %.3f", tc.name, k, tc.idx.IndexType(), tc.params, r)
	require.GreaterOrEqual(t, r, tc.recall)
	_, err = search(tc.params, tc.wrongMT)
	require.Error(t, err, "a metric that differs from the index's")
	if strings.HasPrefix(tc.fileKey, "IVF_") || tc.fileKey == "BIN_IVF_FLAT" {
		_, err = search(`{"nprobe": 17}`, tc.metric)
		require.ErrorContains(t, err, "nprobe(17) out of range [1, 16]", "the search reaches the index")
	}

	// A query vector of the wrong type or length.
	var wrong entity.Vector = entity.FloatVector(make([]float32, tc.dim))
	if tc.typ != entity.FieldTypeBinaryVector {
		wrong = entity.BinaryVector(make([]byte, tc.dim/8))
	}
	_, err = c.Search(ctx, milvusclient.NewSearchOption(coll, k, []entity.Vector{wrong}).WithANNSField("v"))
	require.Error(t, err)
	_, err = c.Search(ctx, milvusclient.NewSearchOption(coll, k, []entity.Vector{entity.BinaryVector([]byte{1})}).WithANNSField("v"))
	require.Error(t, err)

	// Search by primary key: the query is the stored row 5.
	svc := c.GetService()
	params := tc.params
	if params == "" {
		params = "{}"
	}
	sr, err := svc.Search(ctx, &milvuspb.SearchRequest{
		CollectionName: coll,
		SearchInput:    &milvuspb.SearchRequest_Ids{Ids: &schemapb.IDs{IdField: &schemapb.IDs_IntId{IntId: &schemapb.LongArray{Data: []int64{5}}}}},
		SearchParams: []*commonpb.KeyValuePair{
			{Key: "topk", Value: "3"},
			{Key: "anns_field", Value: "v"},
			{Key: "metric_type", Value: string(tc.metric)},
			{Key: "params", Value: params},
		},
		ConsistencyLevel: commonpb.ConsistencyLevel_Strong,
	})
	require.NoError(t, err)
	require.Zero(t, sr.GetStatus().GetCode(), sr.GetStatus().GetReason())
	self := vecData{raw: data.raw[5:6]}
	if data.floats != nil {
		self.floats = data.floats[5:6]
	}
	require.Len(t, sr.GetResults().GetScores(), 3)
	if best := trueTopK(tc.metric, data, self, 0, 1)[0]; !approx {
		require.InDelta(t, best, float64(sr.GetResults().GetScores()[0]), 1e-3*math.Max(1, math.Abs(best)))
	}

	// Upsert ten rows, then compact away the replaced ones: the output is
	// still byte-exact after the rewrite.
	_, err = c.Upsert(ctx, milvusclient.NewColumnBasedInsertOption(coll,
		column.NewColumnInt64("id", ids[:10]), sdkColumn(tc, queries, 0, 10)))
	require.NoError(t, err)
	ft, err = c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	waitCompaction(t, ctx, svc, coll)
	rs, err = c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id < 20 or id >= 1990").
		WithOutputFields("v").WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	require.Equal(t, 30, rs.ResultCount)
	got = vectorBytes(t, rs.GetColumn("v").FieldData())
	for i := range rs.ResultCount {
		id, err := rs.GetColumn("id").GetAsInt64(i)
		require.NoError(t, err)
		want := data.raw[id]
		if id < 10 {
			want = queries.raw[id]
		}
		require.True(t, bytes.Equal(want, got[i]), "row %d after upsert and compaction", id)
	}
}

// rawColumn wraps rows of any length as an SDK column of the case's type.
func rawColumn(tc vecCase, rows [][]byte) column.Column {
	return sdkColumn(tc, vecData{raw: rows}, 0, len(rows))
}

// vectorBytes splits a vector FieldData into rows.
func vectorBytes(t *testing.T, fd *schemapb.FieldData) [][]byte {
	v := fd.GetVectors()
	var raw []byte
	switch {
	case v.GetBinaryVector() != nil:
		raw = v.GetBinaryVector()
	case v.GetFloat16Vector() != nil:
		raw = v.GetFloat16Vector()
	case v.GetBfloat16Vector() != nil:
		raw = v.GetBfloat16Vector()
	case v.GetInt8Vector() != nil:
		raw = v.GetInt8Vector()
	default:
		t.Fatalf("no byte vectors in %v", fd)
	}
	w := len(raw)
	var out [][]byte
	dim := int(v.GetDim())
	switch {
	case v.GetBinaryVector() != nil:
		w = dim / 8
	case v.GetInt8Vector() != nil:
		w = dim
	default:
		w = 2 * dim
	}
	for i := 0; i+w <= len(raw); i += w {
		out = append(out, raw[i:i+w])
	}
	return out
}
