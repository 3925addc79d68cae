package storage

import (
	"math/rand/v2"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
)

// BenchmarkEncodeInsertLogFloatVector encodes a 768-dim FloatVector column of
// 10k rows; SetBytes makes the MB/s column the raw vector bytes per second.
func BenchmarkEncodeInsertLogFloatVector(b *testing.B) {
	const rows, d = 10_000, 768
	r := rand.New(rand.NewPCG(1, 2))
	vec := make([]float32, rows*d)
	for i := range vec {
		vec[i] = r.Float32()
	}
	col := &column.FloatVectors{Dim: d, Data: vec}
	field := fieldOf(101, schemapb.DataType_FloatVector, dim(d))
	b.SetBytes(int64(len(vec) * 4))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeInsertLog(testDesc(), field, col); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeBinlogFloatVector decodes the same file.
func BenchmarkDecodeBinlogFloatVector(b *testing.B) {
	const rows, d = 10_000, 768
	r := rand.New(rand.NewPCG(1, 2))
	vec := make([]float32, rows*d)
	for i := range vec {
		vec[i] = r.Float32()
	}
	data, err := EncodeInsertLog(testDesc(), fieldOf(101, schemapb.DataType_FloatVector, dim(d)), &column.FloatVectors{Dim: d, Data: vec})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(vec) * 4))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeBinlog(data); err != nil {
			b.Fatal(err)
		}
	}
}
