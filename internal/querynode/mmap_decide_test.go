package querynode

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/catalog"
)

// TestMmapDecision: the object's own mmap.enabled (index parameter for an
// index, field type parameter for raw data) wins over the collection
// property, which wins over the node default for the field's kind (vector
// or scalar); values parse as Milvus parses them and anything else counts
// as no setting.
func TestMmapDecision(t *testing.T) {
	vec := &schemapb.FieldSchema{FieldID: 101, DataType: schemapb.DataType_FloatVector}
	scalar := &schemapb.FieldSchema{FieldID: 102, DataType: schemapb.DataType_Int64}
	withParam := func(f *schemapb.FieldSchema, v string) *schemapb.FieldSchema {
		g := proto.Clone(f).(*schemapb.FieldSchema)
		g.TypeParams = []*commonpb.KeyValuePair{{Key: "mmap.enabled", Value: v}}
		return g
	}
	coll := func(v string) *catalog.Collection {
		if v == "" {
			return &catalog.Collection{}
		}
		return &catalog.Collection{CollectionInfo: catalog.CollectionInfo{Properties: map[string]string{"mmap.enabled": v}}}
	}
	for _, tc := range []struct {
		name        string
		cfg         MmapConfig
		coll        *catalog.Collection
		f           *schemapb.FieldSchema
		params      map[string]string
		index, data bool
	}{
		{name: "defaults off", coll: coll(""), f: vec},
		{name: "vector defaults", cfg: MmapConfig{VectorIndex: true}, coll: coll(""), f: vec, index: true},
		{name: "vector field default", cfg: MmapConfig{VectorField: true}, coll: coll(""), f: vec, data: true},
		{name: "scalar defaults", cfg: MmapConfig{ScalarIndex: true, ScalarField: true, VectorIndex: false}, coll: coll(""), f: scalar, index: true, data: true},
		{name: "vector default not scalar", cfg: MmapConfig{VectorIndex: true, VectorField: true}, coll: coll(""), f: scalar},
		{name: "collection over default", cfg: MmapConfig{VectorIndex: true, VectorField: true}, coll: coll("false"), f: vec},
		{name: "collection True", coll: coll("True"), f: vec, index: true, data: true},
		{name: "index over collection", coll: coll("false"), f: vec, params: map[string]string{"mmap.enabled": "true"}, index: true},
		{name: "index off over collection", coll: coll("true"), f: vec, params: map[string]string{"mmap.enabled": "False"}, data: true},
		{name: "field over collection", coll: coll("true"), f: withParam(vec, "false"), index: true},
		{name: "field on", coll: coll(""), f: withParam(scalar, "1"), data: true},
		{name: "junk is no setting", cfg: MmapConfig{VectorIndex: true}, coll: coll("maybe"), f: vec, params: map[string]string{"mmap.enabled": "yes"}, index: true},
		{name: "nil collection", cfg: MmapConfig{VectorField: true}, f: vec, data: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.index, tc.cfg.mmapIndex(tc.coll, tc.f, tc.params), "index")
			require.Equal(t, tc.data, tc.cfg.mmapField(tc.coll, tc.f), "raw data")
		})
	}
	require.True(t, mappableField(vec))
	require.False(t, mappableField(&schemapb.FieldSchema{FieldID: 103, DataType: schemapb.DataType_VarChar}))
	require.False(t, mappableField(&schemapb.FieldSchema{FieldID: 104, DataType: schemapb.DataType_Int64, Nullable: true}))
	require.False(t, mappableField(&schemapb.FieldSchema{FieldID: 1, DataType: schemapb.DataType_Int64}), "timestamps")
}
