package rootcoord

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/errcode"
)

func TestPrepareSchemaGeometry(t *testing.T) {
	geo := func(dv *schemapb.ValueField) *schemapb.FieldSchema {
		return &schemapb.FieldSchema{Name: "geo", DataType: schemapb.DataType_Geometry, Nullable: true, DefaultValue: dv}
	}
	wkt := func(s string) *schemapb.ValueField {
		return &schemapb.ValueField{Data: &schemapb.ValueField_StringData{StringData: s}}
	}
	for _, f := range []*schemapb.FieldSchema{geo(nil), geo(wkt("POINT (0 0)")), geo(wkt("GEOMETRYCOLLECTION EMPTY"))} {
		out, err := PrepareSchema(with(f))
		require.NoError(t, err)
		var found bool
		for _, g := range out.GetFields() {
			if g.GetName() == "geo" {
				found = true
				require.Equal(t, schemapb.DataType_Geometry, g.GetDataType())
				require.Equal(t, f.GetDefaultValue().GetStringData(), g.GetDefaultValue().GetStringData())
			}
		}
		require.True(t, found)
	}
	pk := geo(nil)
	pk.IsPrimaryKey, pk.Nullable = true, false
	for name, tc := range map[string]struct {
		f   *schemapb.FieldSchema
		msg string
	}{
		"primary key":      {pk, "Int64 or VarChar"},
		"bad default":      {geo(wkt("POINT (abc)")), "invalid default value for geometry field"},
		"non-text default": {geo(&schemapb.ValueField{Data: &schemapb.ValueField_LongData{LongData: 1}}), "is not equal to the type(DataType_Int64) of default_value"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := PrepareSchema(with(tc.f))
			require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(err))
			require.ErrorContains(t, err, tc.msg)
		})
	}
}
