package registry

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/distance"
	"github.com/strata-db/strata/internal/index/hnsw"
	"github.com/strata-db/strata/internal/index/scalar"
	"github.com/strata-db/strata/internal/index/sparse"
)

const dim = 8

func field(dt schemapb.DataType) *schemapb.FieldSchema {
	f := &schemapb.FieldSchema{Name: "f", DataType: dt}
	switch dt {
	case schemapb.DataType_FloatVector, schemapb.DataType_Float16Vector, schemapb.DataType_BFloat16Vector,
		schemapb.DataType_Int8Vector, schemapb.DataType_BinaryVector:
		f.TypeParams = []*commonpb.KeyValuePair{{Key: "dim", Value: "8"}}
		if dt == schemapb.DataType_BinaryVector {
			f.TypeParams[0].Value = "64"
		}
	case schemapb.DataType_Array:
		f.ElementType = schemapb.DataType_Int64
	}
	return f
}

func must(t *testing.T, name string) *Type {
	t.Helper()
	tp, ok := Lookup(name)
	require.True(t, ok, name)
	return tp
}

func TestTableIsConsistent(t *testing.T) {
	names, keys := map[string]bool{}, map[string]bool{}
	for _, tp := range Types() {
		t.Run(tp.Name, func(t *testing.T) {
			require.False(t, names[tp.Name], "duplicate name")
			names[tp.Name] = true
			require.NotEmpty(t, tp.Fields)
			got, ok := Lookup(tp.Name)
			require.True(t, ok)
			require.Same(t, tp, got)
			for _, a := range tp.Aliases {
				got, _ := Lookup(a)
				require.Same(t, tp, got, a)
			}
			if tp.Build == nil {
				require.Empty(t, tp.FileKey, "a type that builds nothing writes no file")
				require.Nil(t, tp.Load)
				return
			}
			require.NotEmpty(t, tp.FileKey)
			require.NotNil(t, tp.Load)
			require.False(t, keys[tp.FileKey], "duplicate file key")
			keys[tp.FileKey] = true
			got, ok = ByFileKey(tp.FileKey)
			require.True(t, ok)
			require.Same(t, tp, got)
			if tp.Family == Dense || tp.Family == Binary || tp.Family == Sparse {
				require.NotEmpty(t, tp.Metrics)
			}
		})
	}
	for _, tp := range Types() {
		if tp.Name == AutoIndex {
			continue
		}
		for _, dt := range tp.Fields {
			require.True(t, must(t, AutoIndex).Accepts(dt), "AUTOINDEX serves %s", dt)
		}
	}
}

func TestLookupResolveAuto(t *testing.T) {
	for _, tc := range []struct {
		name string
		want string // "" = not found
	}{
		{"HNSW", "HNSW"},
		{"hnsw", ""},
		{"IVF_PQ", "IVF_PQ"},
		{"AUTOINDEX", "AUTOINDEX"},
		{"autoindex", ""},
		{"sparse_wand", "SPARSE_WAND"},
		{"Trie", "Trie"},
		{"TRIE", "Trie"},
		{"trie", ""},
		{"RTREE", "RTREE"},
		{"EMB_LIST_HNSW", "EMB_LIST_HNSW"},
		{"NOPE", ""},
		{"", ""},
	} {
		tp, ok := Lookup(tc.name)
		require.Equal(t, tc.want != "", ok, tc.name)
		if ok {
			require.Equal(t, tc.want, tp.Name, tc.name)
		}
	}
	for _, tc := range []struct {
		name string
		dt   schemapb.DataType
		want string
	}{
		{"AUTOINDEX", schemapb.DataType_FloatVector, "HNSW"},
		{"autoindex", schemapb.DataType_Int8Vector, "HNSW"},
		{"AUTOINDEX", schemapb.DataType_BFloat16Vector, "HNSW"},
		{"AUTOINDEX", schemapb.DataType_BinaryVector, "BIN_IVF_FLAT"},
		{"autoindex", schemapb.DataType_SparseFloatVector, "SPARSE_INVERTED_INDEX"},
		{"AUTOINDEX", schemapb.DataType_Geometry, "RTREE"},
		{"AUTOINDEX", schemapb.DataType_Timestamptz, "STL_SORT"},
		{"AUTOINDEX", schemapb.DataType_JSON, "INVERTED"},
		{"AUTOINDEX", schemapb.DataType_VarChar, "INVERTED"},
		{"hnsw", schemapb.DataType_FloatVector, "HNSW"},
		{"trie", schemapb.DataType_VarChar, "Trie"},
		{"AUTOINDEX", schemapb.DataType_None, ""},
	} {
		tp, ok := Resolve(tc.name, tc.dt)
		require.Equal(t, tc.want != "", ok, "%s on %s", tc.name, tc.dt)
		if ok {
			require.Equal(t, tc.want, tp.Name, "%s on %s", tc.name, tc.dt)
		}
	}
	require.True(t, Builds("AUTOINDEX"))
	require.True(t, Builds("sparse_wand"))
	require.False(t, Builds("FLAT"))
	require.False(t, Builds("NOPE"))
}

func TestNames(t *testing.T) {
	require.Equal(t, []string{"BIN_FLAT", "BIN_IVF_FLAT", "AUTOINDEX"}, Names(schemapb.DataType_BinaryVector))
	require.Equal(t, []string{"HNSW", "HNSW_SQ", "AUTOINDEX"}, Names(schemapb.DataType_Int8Vector))
	require.Equal(t, []string{"FLAT", "IVF_FLAT", "IVF_SQ8", "IVF_PQ", "HNSW", "HNSW_SQ", "HNSW_PQ", "DISKANN", "SCANN", "IVF_RABITQ", "AUTOINDEX"},
		Names(schemapb.DataType_FloatVector))
	require.Equal(t, Names(schemapb.DataType_FloatVector), Names(schemapb.DataType_Float16Vector))
	require.Equal(t, []string{"FLAT", "IVF_FLAT", "HNSW", "DISKANN", "EMB_LIST_HNSW", "AUTOINDEX"}, Names(schemapb.DataType_ArrayOfVector))
	require.Equal(t, []string{"SPARSE_INVERTED_INDEX", "SPARSE_WAND", "AUTOINDEX"}, Names(schemapb.DataType_SparseFloatVector))
	require.Equal(t, []string{"RTREE", "AUTOINDEX"}, Names(schemapb.DataType_Geometry))
}

func TestMetrics(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   []string
		no   []string
	}{
		{"HNSW", []string{"L2", "ip", "COSINE"}, []string{"HAMMING", "BM25"}},
		{"IVF_SQ8", []string{"L2", "IP", "COSINE"}, []string{"JACCARD"}},
		{"BIN_IVF_FLAT", []string{"HAMMING", "jaccard"}, []string{"L2", "IP"}},
		{"SPARSE_WAND", []string{"IP", "BM25"}, []string{"L2", "COSINE"}},
		{"INVERTED", nil, []string{"L2"}},
	} {
		tp := must(t, tc.name)
		for _, m := range tc.ok {
			require.True(t, tp.AllowsMetric(m), "%s %s", tc.name, m)
		}
		for _, m := range tc.no {
			require.False(t, tp.AllowsMetric(m), "%s %s", tc.name, m)
		}
	}
}

// TestParseParams checks each type's build-parameter validation, with
// Milvus's wording.
func TestParseParams(t *testing.T) {
	f32, bin, sp := field(schemapb.DataType_FloatVector), field(schemapb.DataType_BinaryVector), field(schemapb.DataType_SparseFloatVector)
	pk := &schemapb.FieldSchema{Name: "pk", DataType: schemapb.DataType_Int64, IsPrimaryKey: true}
	for _, tc := range []struct {
		it     string
		f      *schemapb.FieldSchema
		params map[string]string
		err    string // "" = accepted
	}{
		{"HNSW", f32, map[string]string{}, ""},
		{"HNSW", f32, map[string]string{"M": "16", "efConstruction": "200"}, ""},
		{"HNSW", f32, map[string]string{"M": `"16"`, "efConstruction": `"64"`}, ""},
		{"HNSW", f32, map[string]string{"M": "1"}, "param 'M' (1) should be in range [2, 2048]"},
		{"HNSW", f32, map[string]string{"M": "x"}, "invalid integer value, key: 'M', value: 'x'"},
		{"HNSW_SQ", f32, map[string]string{"M": "True"}, "invalid integer value, key: 'M', value: 'True': invalid parameter"},
		{"HNSW_SQ", f32, map[string]string{"M": "16.0"}, "wrong data type in json"},
		{"HNSW", f32, map[string]string{"efConstruction": "0"}, "param 'efConstruction' (0) should be in range"},
		{"HNSW_SQ", f32, map[string]string{"sq_type": "SQ6", "refine": "true", "refine_type": "BF16"}, ""},
		{"HNSW_SQ", f32, map[string]string{"sq_type": "FP32"}, "invalid scalar quantizer type: invalid parameter"},
		{"HNSW_SQ", f32, map[string]string{"refine_type": "INT8"}, "invalid refine type : INT8, optional types are"},
		{"HNSW_SQ", f32, map[string]string{"refine": "1"}, "param 'refine' (1) should be a boolean: invalid parameter"},
		{"HNSW_SQ", f32, map[string]string{"M": "2049"}, "param 'M' (2049) should be in range [2, 2048]"},
		{"HNSW_PQ", f32, map[string]string{"m": "4", "nbits": "8", "refine": "true"}, ""},
		{"HNSW_PQ", f32, map[string]string{}, "not a multiple of m(32)"},
		{"HNSW_PQ", f32, map[string]string{"m": "3"}, "not a multiple of m(3)"},
		{"HNSW_PQ", f32, map[string]string{"m": "4", "nbits": "0"}, "param 'nbits' (0) should be in range [1, 16]"},
		{"IVF_RABITQ", f32, map[string]string{"nlist": "64", "refine": "true", "refine_type": "SQ6"}, ""},
		{"IVF_RABITQ", f32, map[string]string{"nlist": "65537"}, "param 'nlist' (65537) should be in range [1, 65536]"},
		{"IVF_RABITQ", f32, map[string]string{"refine_type": "PQ"}, "invalid refine type : PQ, optional types are [sq6, sq8, fp16, bf16, fp32, flat]: invalid parameter"},
		{"IVF_FLAT", f32, map[string]string{"nlist": `"64"`}, ""},
		{"IVF_FLAT", f32, map[string]string{"nlist": "0"}, "nlist"},
		{"IVF_PQ", f32, map[string]string{"m": "4", "nbits": "8"}, ""},
		{"IVF_PQ", f32, map[string]string{"m": "3"}, "not a multiple of m(3)"},
		{"FLAT", f32, map[string]string{"anything": "goes"}, ""},
		{"DISKANN", f32, map[string]string{"max_degree": "56", "search_list_size": "100", "pq_code_budget_gb_ratio": "0.125"}, ""},
		{"DISKANN", f32, map[string]string{"max_degree": "0"}, "param 'max_degree' (0) should be in range [1, 512]"},
		{"DISKANN", f32, map[string]string{"search_list_size": "x"}, "invalid integer value, key: 'search_list_size', value: 'x'"},
		{"DISKANN", f32, map[string]string{"pq_code_budget_gb_ratio": "0.5"}, "param 'pq_code_budget_gb_ratio' (0.5) should be in range (0, 0.25]"},
		{"BIN_IVF_FLAT", bin, map[string]string{"nlist": "32"}, ""},
		{"BIN_IVF_FLAT", bin, map[string]string{"nlist": "0"}, "nlist(0)"},
		{"SPARSE_INVERTED_INDEX", sp, map[string]string{"drop_ratio_build": "0.2"}, ""},
		{"SPARSE_WAND", sp, map[string]string{"drop_ratio_build": "1"}, "invalid drop_ratio_build: 1, must be in range [0, 1)"},
		{"SPARSE_WAND", sp, map[string]string{"inverted_index_algo": "FAST"}, "sparse inverted index algo FAST not found"},
		{"INVERTED", field(schemapb.DataType_Array), nil, ""},
		{"INVERTED", field(schemapb.DataType_JSON), map[string]string{}, "json index must specify cast type"},
		{"INVERTED", field(schemapb.DataType_JSON), map[string]string{"json_cast_type": "double"}, ""},
		{"STL_SORT", field(schemapb.DataType_Bool), nil, "STL_SORT are only supported on numeric or varchar field"},
		{"BITMAP", pk, nil, "create bitmap index on primary key not supported"},
		{"BITMAP", field(schemapb.DataType_Int32), map[string]string{scalar.BitmapCardinalityKey: "2000"}, "failed to check bitmap cardinality limit"},
		{"TRIE", field(schemapb.DataType_Int64), nil, "TRIE are only supported on varchar field"},
		{"Trie", field(schemapb.DataType_VarChar), nil, ""},
		{"RTREE", field(schemapb.DataType_Geometry), map[string]string{"x": "y"}, ""},
	} {
		t.Run(tc.it+"/"+tc.f.GetDataType().String(), func(t *testing.T) {
			err := must(t, tc.it).Check(tc.f, tc.params)
			if tc.err == "" {
				require.NoError(t, err, "%v", tc.params)
				return
			}
			require.ErrorContains(t, err, tc.err, "%v", tc.params)
		})
	}
}

// TestScalarFieldsMatchCheck keeps each filter type's Fields in step with
// the scalar package's rules.
func TestScalarFieldsMatchCheck(t *testing.T) {
	params := map[string]string{"json_cast_type": "VARCHAR"}
	for _, tp := range Types() {
		if tp.Family != Scalar {
			continue
		}
		for v := range schemapb.DataType_name {
			dt := schemapb.DataType(v)
			if dt == schemapb.DataType_None || dt == schemapb.DataType_Geometry || dt >= schemapb.DataType_BinaryVector {
				continue
			}
			err := tp.Check(field(dt), params)
			require.Equal(t, err == nil, tp.Accepts(dt), "%s on %s: %v", tp.Name, dt, err)
		}
	}
}

// fixture holds small columns of each indexed data type.
type fixture struct {
	floats  *column.FloatVectors
	f16     *column.ByteVectors
	int8s   *column.ByteVectors
	binary  *column.ByteVectors
	sparse  *column.SparseVectors
	ints    *column.Ints
	strs    *column.Strings
	geoms   *column.Geometries
	nrows   int
	queryAt int
}

func newFixture(t *testing.T) fixture {
	const n = 300
	rng := rand.New(rand.NewPCG(1, 2))
	fx := fixture{nrows: n, queryAt: 17}
	fx.floats = &column.FloatVectors{Dim: dim, Data: make([]float32, n*dim)}
	for i := range fx.floats.Data {
		fx.floats.Data[i] = float32(rng.NormFloat64())
	}
	fx.f16 = &column.ByteVectors{T: schemapb.DataType_Float16Vector, Dim: dim, Width: 2 * dim, Data: make([]byte, n*2*dim)}
	distance.EncodeFloat16(fx.f16.Data, fx.floats.Data)
	fx.int8s = &column.ByteVectors{T: schemapb.DataType_Int8Vector, Dim: dim, Width: dim, Data: make([]byte, n*dim)}
	for i := range fx.int8s.Data {
		fx.int8s.Data[i] = byte(rng.IntN(256))
	}
	fx.binary = &column.ByteVectors{T: schemapb.DataType_BinaryVector, Dim: 64, Width: 8, Data: make([]byte, n*8)}
	for i := range fx.binary.Data {
		fx.binary.Data[i] = byte(rng.IntN(256))
	}
	fx.sparse = &column.SparseVectors{Dim: 100}
	fx.ints = &column.Ints{T: schemapb.DataType_Int64}
	fx.strs = &column.Strings{T: schemapb.DataType_VarChar}
	fx.geoms = &column.Geometries{}
	for i := range n {
		v := sparse.Vector{}
		for d := uint32(i % 7); d < 100; d += uint32(3 + i%5) {
			v.Indices = append(v.Indices, d)
			v.Values = append(v.Values, float32(1+rng.IntN(9)))
		}
		fx.sparse.Data = append(fx.sparse.Data, v.Encode())
		fx.ints.Data = append(fx.ints.Data, int64(i%10))
		fx.strs.Data = append(fx.strs.Data, string(rune('a'+i%26)))
		g, err := column.ParseWKT("POINT (" + string(rune('0'+i%10)) + " 1)")
		require.NoError(t, err)
		fx.geoms.Data = append(fx.geoms.Data, g)
	}
	return fx
}

// columnFor returns the fixture column a type is built over, with its
// field's data type and metric.
func (fx fixture) columnFor(tp *Type) (column.Column, string) {
	switch tp.Family {
	case Dense:
		return fx.floats, "L2"
	case Binary:
		return fx.binary, "HAMMING"
	case Sparse:
		return fx.sparse, "IP"
	case Geometry:
		return fx.geoms, ""
	}
	if tp.Name == "Trie" {
		return fx.strs, ""
	}
	return fx.ints, ""
}

// TestBuildMarshalLoadSearch builds every type that builds, writes it,
// loads it back by its file key and checks that the loaded index answers.
func TestBuildMarshalLoadSearch(t *testing.T) {
	fx := newFixture(t)
	for _, tp := range Types() {
		if tp.Build == nil {
			continue
		}
		t.Run(tp.Name, func(t *testing.T) {
			c, metric := fx.columnFor(tp)
			params := map[string]string{"index_type": tp.Name, "metric_type": metric, "nlist": "8", "m": "4"}
			x, err := tp.Build(t.Context(), c, params)
			require.NoError(t, err)
			var buf bytes.Buffer
			require.NoError(t, x.Marshal(&buf))
			back, err := Load(tp.FileKey, bytes.NewReader(buf.Bytes()))
			require.NoError(t, err)
			require.Equal(t, fx.nrows, back.Len())
			fx.checkSearch(t, tp, back)
		})
	}
	_, err := Load("NOPE", bytes.NewReader(nil))
	require.ErrorContains(t, err, `unknown index file key "NOPE"`)
}

// TestLoadFileOnDisk builds a DISKANN index, writes it to a local file and
// loads it by position (LoadFile): the loaded index reads its records from
// the file and answers as the one loaded from a stream.
func TestLoadFileOnDisk(t *testing.T) {
	fx := newFixture(t)
	tp, ok := Lookup("DISKANN")
	require.True(t, ok)
	require.True(t, OnDisk(DiskANNFileKey))
	require.False(t, OnDisk(HNSWFileKey))
	x, err := tp.Build(t.Context(), fx.floats, map[string]string{"index_type": "DISKANN", "metric_type": "COSINE", "max_degree": "16"})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "DISKANN")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, x.Marshal(f))
	st, err := f.Stat()
	require.NoError(t, err)
	back, err := LoadFile(DiskANNFileKey, f, st.Size())
	require.NoError(t, err)
	fx.checkSearch(t, tp, back)
	q := fx.floats.Row(5)
	onDisk, err := back.(index.Index).Search(q, 10, index.SearchParams{}, nil)
	require.NoError(t, err)
	built, err := x.(index.Index).Search(q, 10, index.SearchParams{}, nil)
	require.NoError(t, err)
	require.Equal(t, built, onDisk)
	require.NoError(t, f.Close())
	_, err = LoadFile(HNSWFileKey, f, st.Size())
	require.ErrorContains(t, err, `index file key "HNSW" is not read from disk`)
	require.Less(t, back.(index.Index).MemoryBytes(), int64(len(fx.floats.Data)*4), "the records stay on disk")
}

// checkSearch runs one query through a loaded index: a row's own vector
// finds that row first (dense and binary; IVF_PQ and IVF_RABITQ, 1-bit
// codes without refine, within their top 10), the
// best sparse hit is the exact best inner product, and filter indexes mark
// the rows that match.
func (fx fixture) checkSearch(t *testing.T, tp *Type, x Built) {
	q := fx.queryAt
	p := index.SearchParams{Ef: 64, Nprobe: 8}
	switch x := x.(type) {
	case index.Index:
		hits, err := x.Search(fx.floats.Row(q), 10, p, nil)
		require.NoError(t, err)
		rows := make([]int32, len(hits))
		for i, h := range hits {
			rows[i] = h.Row
		}
		if tp.Name == "IVF_PQ" || tp.Name == "IVF_RABITQ" {
			require.Contains(t, rows, int32(q))
			return
		}
		require.Equal(t, int32(q), rows[0])
	case index.BinaryIndex:
		hits, err := x.SearchBinary(fx.binary.Row(q), 1, p, nil)
		require.NoError(t, err)
		require.Equal(t, index.Hit{Row: int32(q), Score: 0}, hits[0])
	case *sparse.Index:
		qv := sparse.Decode(fx.sparse.Data[q])
		hits, err := x.Search(qv, 1, sparse.SearchParams{}, nil)
		require.NoError(t, err)
		best := float32(0)
		for _, r := range fx.sparse.Data {
			best = max(best, sparse.DotRow(qv, r))
		}
		require.InDelta(t, best, hits[0].Score, 1e-3)
	case *scalar.Index:
		out := make([]bool, fx.nrows)
		var n int
		var ok bool
		if tp.Name == "Trie" {
			n, ok = x.MarkPrefix("c", out)
		} else {
			n, ok = x.MarkInts(3, 3, out)
		}
		require.True(t, ok)
		want := 30 // rows with i%10 == 3
		if tp.Name == "Trie" {
			want = 12 // rows with i%26 == 2 ("c")
		}
		require.Equal(t, want, n)
	case *scalar.RTree:
		out := make([]bool, fx.nrows)
		n, ok := x.MarkBox(3, 0, 3, 2, out)
		require.True(t, ok)
		require.Equal(t, fx.nrows/10, n)
	default:
		t.Fatalf("%s loads as %T", tp.Name, x)
	}
}

// TestParseParamsAgreesWithBuild pins that CreateIndex-time validation and
// the build parse parameters alike: a build succeeds exactly when
// ParseParams accepts. (The data node once re-parsed HNSW's M with a bare
// Atoi, so a quoted "\"16\"" passed CreateIndex and failed the build.)
func TestParseParamsAgreesWithBuild(t *testing.T) {
	fx := newFixture(t)
	f32, f16, i8 := field(schemapb.DataType_FloatVector), field(schemapb.DataType_Float16Vector), field(schemapb.DataType_Int8Vector)
	for _, tc := range []struct {
		it     string
		f      *schemapb.FieldSchema
		c      column.Column
		params map[string]string
	}{
		{"HNSW", f32, fx.floats, map[string]string{"M": `"16"`, "efConstruction": `"40"`}},
		{"HNSW", f32, fx.floats, map[string]string{"M": " 8 "}},
		{"HNSW", f32, fx.floats, map[string]string{"M": "1"}},
		{"HNSW", f32, fx.floats, map[string]string{"M": "sixteen"}},
		{"HNSW", f16, fx.f16, map[string]string{"M": `"4"`}},
		{"HNSW", i8, fx.int8s, map[string]string{"efConstruction": `"32"`}},
		{"HNSW_SQ", f32, fx.floats, map[string]string{"sq_type": "SQ8", "refine": "true"}},
		{"HNSW_SQ", f16, fx.f16, map[string]string{"sq_type": "BF16", "refine_type": "SQ8", "refine": `"true"`}},
		{"HNSW_SQ", i8, fx.int8s, map[string]string{"sq_type": "SQ6"}},
		{"HNSW_SQ", f32, fx.floats, map[string]string{"sq_type": "INT8"}},
		{"HNSW_PQ", f32, fx.floats, map[string]string{"m": "2", "nbits": "4", "refine": "true", "refine_type": "FP16"}},
		{"HNSW_PQ", f32, fx.floats, map[string]string{"m": "3"}},
		{"IVF_RABITQ", f32, fx.floats, map[string]string{"nlist": "4", "refine": "true", "refine_type": "BF16"}},
		{"IVF_RABITQ", f16, fx.f16, map[string]string{"nlist": "0"}},
		{"IVF_FLAT", f32, fx.floats, map[string]string{"nlist": `"8"`}},
		{"DISKANN", f16, fx.f16, map[string]string{"max_degree": `"24"`, "search_list_size": "40"}},
		{"DISKANN", f32, fx.floats, map[string]string{"pq_code_budget_gb_ratio": "0"}},
		{"IVF_SQ8", f16, fx.f16, map[string]string{"nlist": "0"}},
		{"IVF_PQ", f32, fx.floats, map[string]string{"nlist": "4", "m": `"2"`}},
		{"IVF_PQ", f32, fx.floats, map[string]string{"nlist": "4", "m": "3"}},
		{"BIN_IVF_FLAT", field(schemapb.DataType_BinaryVector), fx.binary, map[string]string{"nlist": `"4"`}},
		{"BIN_IVF_FLAT", field(schemapb.DataType_BinaryVector), fx.binary, map[string]string{"nlist": "-1"}},
		{"SPARSE_WAND", field(schemapb.DataType_SparseFloatVector), fx.sparse, map[string]string{"drop_ratio_build": "0.5"}},
		{"SPARSE_WAND", field(schemapb.DataType_SparseFloatVector), fx.sparse, map[string]string{"drop_ratio_build": "2"}},
	} {
		t.Run(tc.it, func(t *testing.T) {
			tp := must(t, tc.it)
			params := maps(tc.params, "metric_type", map[Family]string{Dense: "COSINE", Binary: "JACCARD", Sparse: "IP"}[tp.Family])
			checkErr := tp.Check(tc.f, params)
			x, buildErr := tp.Build(t.Context(), tc.c, params)
			if checkErr != nil {
				require.Error(t, buildErr, "ParseParams refused %v: %v", tc.params, checkErr)
				return
			}
			require.NoError(t, buildErr, "ParseParams accepted %v", tc.params)
			require.Equal(t, fx.nrows, x.Len())
			if h, ok := x.(*hnsw.Index); ok {
				want, err := hnsw.ParseParams(params)
				require.NoError(t, err)
				require.Equal(t, want.M, h.Config().M)
				require.Equal(t, want.EfConstruction, h.Config().EfConstruction)
			}
		})
	}
}

// maps returns a copy of m with key set to v.
func maps(m map[string]string, key, v string) map[string]string {
	out := map[string]string{key: v}
	for k, x := range m {
		out[k] = x
	}
	return out
}

// TestDurableFileKeys loads index files written before the registry (the
// golden files of each format) under the file keys the data node has
// always written, "HNSW" among them.
func TestDurableFileKeys(t *testing.T) {
	require.Equal(t, "HNSW", HNSWFileKey)
	for _, tc := range []struct{ key, file string }{
		{"HNSW", "hnsw/testdata/l2.golden"},
		{"HNSW_SQ", "hnsw/testdata/sq8_fp16_l2.golden"},
		{"IVF_RABITQ", "rabitq/testdata/l2.golden"},
		{"IVF_FLAT", "ivf/testdata/flat_l2.golden"},
		{"IVF_SQ8", "ivf/testdata/sq8_ip.golden"},
		{"IVF_PQ", "ivf/testdata/pq_l2.golden"},
		{"BIN_IVF_FLAT", "binivf/testdata/hamming.golden"},
		{"SPARSE_INVERTED_INDEX", "sparse/testdata/inverted.golden"},
		{"SPARSE_WAND", "sparse/testdata/wand.golden"},
		{"INVERTED", "scalar/testdata/ints.golden"},
		{"STL_SORT", "scalar/testdata/floats.golden"},
		{"BITMAP", "scalar/testdata/bools.golden"},
		{"Trie", "scalar/testdata/strings.golden"},
		{"DISKANN", "diskann/testdata/l2.golden"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", tc.file))
			require.NoError(t, err)
			x, err := Load(tc.key, bytes.NewReader(data))
			require.NoError(t, err)
			require.Positive(t, x.Len())
		})
	}
	keys := []string{}
	for _, tp := range Types() {
		if tp.FileKey != "" {
			keys = append(keys, tp.FileKey)
		}
	}
	slices.Sort(keys)
	require.Equal(t, []string{
		"BIN_IVF_FLAT", "BITMAP", "DISKANN", "HNSW", "HNSW_PQ", "HNSW_SQ", "INVERTED", "IVF_FLAT", "IVF_PQ", "IVF_RABITQ", "IVF_SQ8", "RTREE",
		"SPARSE_INVERTED_INDEX", "SPARSE_WAND", "STL_SORT", "Trie",
	}, keys, "file keys are durable: add, never rename")
}
