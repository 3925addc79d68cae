package proxy

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/index/distance"
)

func vecField(t schemapb.DataType, dim string) *schemapb.FieldSchema {
	return &schemapb.FieldSchema{Name: "v", DataType: t, TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: dim}}}
}

func group(t *testing.T, pt commonpb.PlaceholderType, values ...[]byte) []byte {
	b, err := proto.Marshal(&commonpb.PlaceholderGroup{Placeholders: []*commonpb.PlaceholderValue{{Tag: "$0", Type: pt, Values: values}}})
	require.NoError(t, err)
	return b
}

func TestQueryVectors(t *testing.T) {
	f16 := make([]byte, 4)
	distance.EncodeFloat16(f16, []float32{1.5, -2})
	f32 := make([]byte, 8)
	copy(f32, []byte{0, 0, 0xc0, 0x3f, 0, 0, 0, 0xc0}) // 1.5, -2

	v, b, err := queryVectors(group(t, commonpb.PlaceholderType_Float16Vector, f16), vecField(schemapb.DataType_Float16Vector, "2"))
	require.NoError(t, err)
	require.Nil(t, b)
	require.Equal(t, [][]float32{{1.5, -2}}, v)
	v, _, err = queryVectors(group(t, commonpb.PlaceholderType_FloatVector, f32), vecField(schemapb.DataType_BFloat16Vector, "2"))
	require.NoError(t, err, "half-precision fields take float32 queries")
	require.Equal(t, [][]float32{{1.5, -2}}, v)
	v, _, err = queryVectors(group(t, commonpb.PlaceholderType_Int8Vector, []byte{0xff, 3}), vecField(schemapb.DataType_Int8Vector, "2"))
	require.NoError(t, err)
	require.Equal(t, [][]float32{{-1, 3}}, v)
	_, b, err = queryVectors(group(t, commonpb.PlaceholderType_BinaryVector, []byte{1, 2}, []byte{3, 4}), vecField(schemapb.DataType_BinaryVector, "16"))
	require.NoError(t, err)
	require.Equal(t, [][]byte{{1, 2}, {3, 4}}, b)

	for _, tc := range []struct {
		name  string
		raw   []byte
		field *schemapb.FieldSchema
		err   string
	}{
		{"binary too short", group(t, commonpb.PlaceholderType_BinaryVector, []byte{1}), vecField(schemapb.DataType_BinaryVector, "16"), "query vector 0 has 1 bytes"},
		{"float query on binary", group(t, commonpb.PlaceholderType_FloatVector, f32), vecField(schemapb.DataType_BinaryVector, "16"), "do not match"},
		{"float query on int8", group(t, commonpb.PlaceholderType_FloatVector, f32), vecField(schemapb.DataType_Int8Vector, "8"), "do not match"},
		{"bf16 query on f16", group(t, commonpb.PlaceholderType_BFloat16Vector, f16), vecField(schemapb.DataType_Float16Vector, "2"), "do not match"},
		{"f16 NaN", group(t, commonpb.PlaceholderType_Float16Vector, []byte{0, 0x7e, 0, 0}), vecField(schemapb.DataType_Float16Vector, "2"), "NaN or Inf"},
		{"no vectors", group(t, commonpb.PlaceholderType_Int8Vector), vecField(schemapb.DataType_Int8Vector, "2"), "no query vectors"},
		{"malformed", []byte{0xff}, vecField(schemapb.DataType_Int8Vector, "2"), "malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := queryVectors(tc.raw, tc.field)
			require.ErrorContains(t, err, tc.err)
		})
	}
}

func TestVectorIndexMetric(t *testing.T) {
	bin, f16, i8 := vecField(schemapb.DataType_BinaryVector, "64"), vecField(schemapb.DataType_Float16Vector, "8"), vecField(schemapb.DataType_Int8Vector, "8")
	for _, tc := range []struct {
		field  *schemapb.FieldSchema
		it     string
		params map[string]string
		want   string
		err    string
	}{
		{bin, "BIN_FLAT", map[string]string{}, "HAMMING", ""},
		{bin, "BIN_IVF_FLAT", map[string]string{"metric_type": "jaccard", "nlist": "32"}, "JACCARD", ""},
		{bin, "AUTOINDEX", map[string]string{}, "HAMMING", ""},
		{bin, "BIN_IVF_FLAT", map[string]string{"nlist": "0"}, "", "nlist(0)"},
		{bin, "HNSW", map[string]string{}, "", "can't build with index type HNSW"},
		{bin, "BIN_FLAT", map[string]string{"metric_type": "L2"}, "", "supported: [HAMMING JACCARD]"},
		{f16, "HNSW", map[string]string{"metric_type": "ip"}, "IP", ""},
		{f16, "IVF_PQ", map[string]string{"m": "3"}, "", "not a multiple of m(3)"},
		{f16, "BIN_FLAT", map[string]string{}, "", "can't build with index type BIN_FLAT"},
		{i8, "HNSW", map[string]string{"metric_type": "HAMMING"}, "", "supported: [L2 IP COSINE]"},
		{i8, "FLAT", map[string]string{}, "", "data type Int8Vector can't build with this index FLAT"},
		{i8, "BIN_FLAT", map[string]string{}, "", "data type Int8Vector can't build with this index BIN_FLAT"},
		{i8, "AUTOINDEX", map[string]string{}, "COSINE", ""},
		{i8, "NOPE", map[string]string{}, "", "invalid index type"},
	} {
		t.Run(tc.field.GetDataType().String()+"/"+tc.it, func(t *testing.T) {
			got, err := vectorIndexMetric(tc.field, tc.it, tc.params)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	m, err := searchMetric(bin, "", "")
	require.NoError(t, err)
	require.Equal(t, "HAMMING", m)
	_, err = searchMetric(bin, "jaccard", "HAMMING")
	require.ErrorContains(t, err, "metric type not match")
	_, err = searchMetric(f16, "JACCARD", "")
	require.ErrorContains(t, err, `Float16Vector field "v"`)
}

func TestCheckByteVectors(t *testing.T) {
	ok := &column.ByteVectors{T: schemapb.DataType_Float16Vector, Dim: 2, Width: 4, Data: []byte{0, 0x3c, 0xff, 0x7b}}
	require.NoError(t, checkByteVectors("v", ok))
	inf := &column.ByteVectors{T: schemapb.DataType_Float16Vector, Dim: 2, Width: 4, Data: []byte{0, 0x3c, 0, 0, 0, 0, 0, 0xfc}}
	require.ErrorContains(t, checkByteVectors("v", inf), "row 1 contains NaN or Inf")
	nan := &column.ByteVectors{T: schemapb.DataType_BFloat16Vector, Dim: 1, Width: 2, Data: []byte{0xc1, 0x7f}}
	require.ErrorContains(t, checkByteVectors("v", nan), `field "v"`)
	bin := &column.ByteVectors{T: schemapb.DataType_BinaryVector, Dim: 16, Width: 2, Data: []byte{0xff, 0xff}}
	require.NoError(t, checkByteVectors("v", bin))
}
