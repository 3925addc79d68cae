package storage

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
)

// TestGeometryInsertLog checks that a Geometry column is written in the
// Milvus layout for type 24 (PayloadDataType Geometry, one BYTE_ARRAY
// column of NDR WKB, OPTIONAL when nullable) and reads back unchanged.
func TestGeometryInsertLog(t *testing.T) {
	wkb := func(s string) []byte {
		b, err := column.ParseWKT(s)
		require.NoError(t, err)
		return b
	}
	for _, tc := range []struct {
		name  string
		field *schemapb.FieldSchema
		col   *column.Geometries
	}{
		{
			"plain", fieldOf(120, schemapb.DataType_Geometry),
			&column.Geometries{Data: [][]byte{wkb("POINT (1 2)"), wkb("POLYGON ((0 0, 1 0, 1 1, 0 0))"), wkb("POINT EMPTY")}},
		},
		{
			"nullable", fieldOf(120, schemapb.DataType_Geometry, nullable),
			&column.Geometries{
				Nulls: column.Nulls{Valid: []bool{true, false, true}},
				Data:  [][]byte{wkb("LINESTRING (0 0, 1 1)"), nil, wkb("GEOMETRYCOLLECTION EMPTY")},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := EncodeInsertLog(testDesc(), tc.field, tc.col)
			require.NoError(t, err)
			b, err := DecodeBinlog(data)
			require.NoError(t, err)
			require.Equal(t, schemapb.DataType_Geometry, b.Descriptor.PayloadType)
			require.Equal(t, tc.field.GetNullable(), b.Nullable)
			got, ok := b.Column().(*column.Geometries)
			require.True(t, ok, "got %T", b.Column())
			require.Equal(t, tc.col.Valid, got.Valid)
			for i := range tc.col.Data {
				if tc.col.IsNull(i) {
					continue
				}
				require.Equal(t, tc.col.Data[i], got.Data[i])
				w, err := column.WKBToWKT(got.Data[i])
				require.NoError(t, err)
				require.NotEmpty(t, w)
			}
		})
	}
}
