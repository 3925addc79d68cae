package expr

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/index/scalar"
)

type geoBatch struct {
	n    int
	cols map[int64]column.Column
}

func (b geoBatch) Len() int                      { return b.n }
func (b geoBatch) Column(id int64) column.Column { return b.cols[id] }

func geoSchema() *schemapb.CollectionSchema {
	return &schemapb.CollectionSchema{Fields: []*schemapb.FieldSchema{
		{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{FieldID: 101, Name: "geo", DataType: schemapb.DataType_Geometry, Nullable: true},
		{FieldID: 102, Name: "n", DataType: schemapb.DataType_Int64},
	}}
}

func geoRows(t *testing.T, wkts ...string) geoBatch {
	t.Helper()
	g := &column.Geometries{Nulls: column.Nulls{Valid: make([]bool, len(wkts))}, Data: make([][]byte, len(wkts))}
	ids := &column.Ints{T: schemapb.DataType_Int64}
	for i, w := range wkts {
		ids.Data = append(ids.Data, int64(i))
		if w == "" {
			continue
		}
		b, err := column.ParseWKT(w)
		require.NoError(t, err, w)
		g.Data[i], g.Valid[i] = b, true
	}
	return geoBatch{n: len(wkts), cols: map[int64]column.Column{100: ids, 101: g, 102: ids}}
}

func geoMatching(t *testing.T, filter string, b geoBatch) []int {
	t.Helper()
	e, err := Compile(filter, geoSchema(), nil)
	require.NoError(t, err, filter)
	m, err := e.Eval(b)
	require.NoError(t, err, filter)
	var out []int
	for i, ok := range m {
		if ok {
			out = append(out, i)
		}
	}
	return out
}

func TestSpatialPredicates(t *testing.T) {
	b := geoRows(t,
		"POINT (5 5)",   // 0 inside the square
		"POINT (10 5)",  // 1 on its edge
		"POINT (20 20)", // 2 outside
		"POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0))", // 3 the square itself
		"POLYGON ((5 5, 15 5, 15 15, 5 15, 5 5))", // 4 overlaps it
		"LINESTRING (-5 5, 15 5)",                 // 5 crosses it
		"",                                        // 6 null
		"POINT EMPTY",                             // 7 empty
		"POLYGON ((10 0, 20 0, 20 10, 10 10, 10 0))", // 8 touches along an edge
	)
	sq := "'POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0))'"
	for _, tc := range []struct {
		filter string
		want   []int
	}{
		{"ST_WITHIN(geo, " + sq + ")", []int{0, 3}},
		{"st_intersects(geo, " + sq + ")", []int{0, 1, 3, 4, 5, 8}},
		{"ST_CONTAINS(geo, 'POINT (6 6)')", []int{3, 4}},
		{"ST_EQUALS(geo, " + sq + ")", []int{3}},
		{"ST_EQUALS(geo, 'POINT (5 5)')", []int{0}},
		{"ST_TOUCHES(geo, " + sq + ")", []int{1, 8}},
		{"ST_OVERLAPS(geo, " + sq + ")", []int{4}},
		{"ST_CROSSES(geo, " + sq + ")", []int{5}},
		{"NOT ST_EQUALS(geo, 'POINT (5 5)')", []int{1, 2, 3, 4, 5, 7, 8}},
		{"geo IS NULL", []int{6}},
		{"geo is not null and n > 2", []int{3, 4, 5, 7, 8}},
		{"ST_ISVALID(geo)", []int{0, 1, 2, 3, 4, 5, 7, 8}},
	} {
		require.Equal(t, tc.want, geoMatching(t, tc.filter, b), tc.filter)
	}
}

func TestSpatialTemplate(t *testing.T) {
	b := geoRows(t, "POINT (1 1)", "POINT (50 50)")
	tv := map[string]*schemapb.TemplateValue{"q": {Val: &schemapb.TemplateValue_StringVal{StringVal: "POLYGON ((0 0, 2 0, 2 2, 0 2, 0 0))"}}}
	e, err := Compile("ST_WITHIN(geo, {q})", geoSchema(), tv)
	require.NoError(t, err)
	m, err := e.Eval(b)
	require.NoError(t, err)
	require.Equal(t, []bool{true, false}, m)
}

func TestDWithinMeters(t *testing.T) {
	// One degree of latitude is about 111.2 km on a 6371 km sphere.
	b := geoRows(t, "POINT (0 0)", "POINT (0 0.001)", "POINT (0 0.01)", "POINT (0 1)",
		"LINESTRING (-1 0.005, 1 0.005)")
	require.Equal(t, []int{0}, geoMatching(t, "ST_DWITHIN(geo, 'POINT (0 0)', 0)", b))
	require.Equal(t, []int{0, 1}, geoMatching(t, "ST_DWITHIN(geo, 'POINT (0 0)', 200)", b))
	require.Equal(t, []int{0, 1, 2, 4}, geoMatching(t, "ST_DWITHIN(geo, 'POINT (0 0)', 2000)", b))
	require.Equal(t, []int{0, 1, 2, 3, 4}, geoMatching(t, "st_dwithin(geo, 'POINT (0 0)', 112000.5)", b))
}

func TestSpatialErrors(t *testing.T) {
	for _, f := range []string{
		"ST_WITHIN(n, 'POINT (1 1)')", // not a geometry field
		"ST_CONTAINS(geo)",            // missing argument
		"ST_WITHIN()",                 // no arguments
		"ST_INTERSECTS(geo, 'POINT (1 1)', 'POINT (2 2)')",
		"ST_WITHIN(geo, 'POINT (abc)')", // invalid WKT
		"ST_DWITHIN(geo, 'INVALID_WKT', 1000)",
		"ST_DWITHIN(geo, 'POINT (1 1)', -100)", // negative distance
		"ST_DWITHIN(geo, 'POINT (1 1)')",
		"ST_DWITHIN(geo, 'POLYGON ((0 0, 1 0, 1 1, 0 0))', 10)", // not a point
		"St_Within(geo, 'POINT (1 1)')",                         // mixed case is not a Milvus spelling
		"geo == 'POINT (1 1)'",                                  // geometry is not comparable
	} {
		_, err := Compile(f, geoSchema(), nil)
		require.Error(t, err, f)
	}
}

// rtreeBatch is a geoBatch with an RTREE index on the geometry field.
type rtreeBatch struct {
	geoBatch
	idx *scalar.RTree
}

func (b rtreeBatch) Index(id int64) any {
	if id == 101 {
		return b.idx
	}
	return nil
}

// TestSpatialWithRTree checks that filters give the same rows with and
// without the RTREE index, over random shapes and every predicate.
func TestSpatialWithRTree(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var wkts []string
	for i := range 400 {
		x, y := rng.Float64()*100, rng.Float64()*100
		switch i % 4 {
		case 0:
			wkts = append(wkts, fmt.Sprintf("POINT (%.2f %.2f)", x, y))
		case 1:
			s := 5 + rng.Float64()*10
			wkts = append(wkts, fmt.Sprintf("POLYGON ((%.2f %.2f, %.2f %.2f, %.2f %.2f, %.2f %.2f, %.2f %.2f))",
				x, y, x+s, y, x+s, y+s, x, y+s, x, y))
		case 2:
			wkts = append(wkts, fmt.Sprintf("LINESTRING (%.2f %.2f, %.2f %.2f)", x, y, rng.Float64()*100, rng.Float64()*100))
		default:
			wkts = append(wkts, "")
		}
	}
	wkts = append(wkts, "POLYGON ((70 30, 80 30, 80 40, 70 40, 70 30))") // touches the query square
	plain := geoRows(t, wkts...)
	indexed := rtreeBatch{plain, scalar.BuildRTree(plain.cols[101].(*column.Geometries))}
	q := "'POLYGON ((30 30, 70 30, 70 70, 30 70, 30 30))'"
	for _, f := range []string{
		"ST_INTERSECTS(geo, " + q + ")", "ST_WITHIN(geo, " + q + ")", "ST_CONTAINS(geo, 'POINT (50 50)')",
		"ST_TOUCHES(geo, " + q + ")", "ST_OVERLAPS(geo, " + q + ")", "ST_CROSSES(geo, 'LINESTRING (0 50, 100 50)')",
		"ST_EQUALS(geo, '" + wkts[0] + "')", "ST_DWITHIN(geo, 'POINT (50 50)', 500000)", "ST_ISVALID(geo)",
	} {
		e, err := Compile(f, geoSchema(), nil)
		require.NoError(t, err)
		want, err := e.Eval(plain)
		require.NoError(t, err)
		got, err := e.Eval(indexed)
		require.NoError(t, err)
		require.Equal(t, want, got, f)
		require.Contains(t, want, true, "%s should match some rows", f)
	}
}
