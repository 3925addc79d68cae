package column

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
)

func TestGeometryWKTRoundTrip(t *testing.T) {
	for in, want := range map[string]string{
		"POINT(13.399710 52.518010)":                "POINT (13.39971 52.51801)",
		"POINT (1.23456789012345 9.87654321098765)": "POINT (1.23456789012345 9.87654321098765)",
		"point(1 2)":               "POINT (1 2)",
		"POINT EMPTY":              "POINT EMPTY",
		"POLYGON EMPTY":            "POLYGON EMPTY",
		"GEOMETRYCOLLECTION EMPTY": "GEOMETRYCOLLECTION EMPTY",
		"GEOMETRYCOLLECTION(POINT(1 1), LINESTRING(2 2, 3 3))": "GEOMETRYCOLLECTION (POINT (1 1), LINESTRING (2 2, 3 3))",
		"MULTIPOLYGON (((0 0, 2 0, 2 2, 0 2, 0 0)))":           "MULTIPOLYGON (((0 0, 2 0, 2 2, 0 2, 0 0)))",
	} {
		b, err := ParseWKT(in)
		require.NoError(t, err, in)
		require.Equal(t, byte(1), b[0], "NDR byte order")
		got, err := WKBToWKT(b)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
}

func TestGeometryInvalidWKT(t *testing.T) {
	for _, s := range []string{
		"INVALID WKT STRING", "POINT ()", "POINT (abc def)", "POLYGON ((0 0, 1 1))",
		"LINESTRING (0 0)", "POINT (1 2 3 4 5)", "POLYGON ((0 0, 1 0, 1 1, 0 1))", "",
	} {
		_, err := ParseWKT(s)
		require.ErrorContains(t, err, "syntax error", s)
	}
}

func TestGeometryFieldData(t *testing.T) {
	f := &schemapb.FieldSchema{Name: "geo", DataType: schemapb.DataType_Geometry, Nullable: true}
	wire := &schemapb.FieldData{
		Type: schemapb.DataType_Geometry, FieldName: "geo", ValidData: []bool{true, false, true},
		Field: &schemapb.FieldData_Scalars{Scalars: &schemapb.ScalarField{Data: &schemapb.ScalarField_GeometryWktData{
			GeometryWktData: &schemapb.GeometryWktArray{Data: []string{"POINT (1 2)", "LINESTRING (0 0, 1 1)"}},
		}}},
	}
	c, err := FromFieldData(f, wire)
	require.NoError(t, err)
	g := c.(*Geometries)
	require.Equal(t, 3, g.Len())
	require.True(t, g.IsNull(1))

	// Internally the column travels as WKB; clients get WKT back.
	internal := ToFieldData("geo", 101, c)
	require.NotNil(t, internal.GetScalars().GetGeometryData())
	again, err := FromFieldData(f, internal)
	require.NoError(t, err)
	require.Equal(t, g.Data, again.(*Geometries).Data)
	out, err := GeometryToWKT(internal)
	require.NoError(t, err)
	require.Equal(t, []string{"POINT (1 2)", "", "LINESTRING (0 0, 1 1)"}, out.GetScalars().GetGeometryWktData().GetData())
	require.Equal(t, []bool{true, false, true}, out.GetValidData())

	bad := &schemapb.FieldData{
		Type: schemapb.DataType_Geometry, FieldName: "geo",
		Field: &schemapb.FieldData_Scalars{Scalars: &schemapb.ScalarField{Data: &schemapb.ScalarField_GeometryWktData{
			GeometryWktData: &schemapb.GeometryWktArray{Data: []string{"POINT (1 2)", "POINT ()"}},
		}}},
	}
	_, err = FromFieldData(f, bad)
	require.ErrorContains(t, err, "invalid Geometry data, transform to wkb failed: syntax error")

	sub := g.Take([]int{2, 0})
	require.Equal(t, [][]byte{g.Data[2], g.Data[0]}, sub.(*Geometries).Data)
	all := &Geometries{}
	AppendAll(all, g)
	all.AppendFrom(g, 0)
	require.Equal(t, 4, all.Len())
	require.Equal(t, []bool{true, false, true, true}, all.Valid)
}
