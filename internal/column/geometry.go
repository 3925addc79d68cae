package column

import (
	"encoding/binary"
	"fmt"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/twpayne/go-geom/encoding/wkb"
	"github.com/twpayne/go-geom/encoding/wkbcommon"
	"github.com/twpayne/go-geom/encoding/wkt"
)

// Geometries is a Geometry column. Each value is one geometry in
// little-endian (NDR) OGC Well-Known Binary, the form Milvus keeps in its
// segments and binlogs; clients send and receive Well-Known Text, converted
// at the edges (ParseWKT on insert, GeometryToWKT on output). An empty
// point is encoded with NaN coordinates, as GEOS and GDAL do.
type Geometries struct {
	Nulls
	Data [][]byte
}

// emptyPointNaN is the WKB option that writes and reads POINT EMPTY as NaN coordinates.
var emptyPointNaN = wkbcommon.WKBOptionEmptyPointHandling(wkbcommon.EmptyPointHandlingNaN)

// ParseWKT converts one Well-Known Text geometry into NDR WKB. The error is
// the parser's own ("syntax error: … at line 1, pos N"), as Milvus reports it.
func ParseWKT(s string) ([]byte, error) {
	g, err := wkt.Unmarshal(s)
	if err != nil {
		return nil, err
	}
	return wkb.Marshal(g, binary.LittleEndian, emptyPointNaN)
}

// WKBToWKT converts one WKB geometry into Well-Known Text in Milvus's output
// form: upper-case type, a space before each parenthesis, coordinates in
// the shortest decimal form that reads back exactly ("POINT (1.5 2)").
func WKBToWKT(b []byte) (string, error) {
	g, err := wkb.Unmarshal(b, emptyPointNaN)
	if err != nil {
		return "", err
	}
	return wkt.Marshal(g)
}

// CheckWKB reports whether b is a well-formed WKB geometry.
func CheckWKB(b []byte) error {
	_, err := wkb.Unmarshal(b, emptyPointNaN)
	return err
}

// geometriesFromFieldData reads a Geometry wire column: WKT strings (what
// clients send) are converted to WKB, WKB (what Strata's own messages
// carry) is checked. Null slots (valid false) are left empty.
func geometriesFromFieldData(f *schemapb.FieldSchema, fd *schemapb.FieldData, valid []bool) (Column, error) {
	s := fd.GetScalars()
	if w := s.GetGeometryWktData(); w != nil {
		src := expand(w.GetData(), valid)
		out := make([][]byte, len(src))
		for i, txt := range src {
			if valid != nil && !valid[i] {
				continue
			}
			b, err := ParseWKT(txt)
			if err != nil {
				return nil, fmt.Errorf("invalid Geometry data, transform to wkb failed: %w", err)
			}
			out[i] = b
		}
		return &Geometries{Nulls{valid}, out}, nil
	}
	if d := s.GetGeometryData(); d != nil {
		src := expand(d.GetData(), valid)
		for i, b := range src {
			if valid != nil && !valid[i] {
				continue
			}
			if err := CheckWKB(b); err != nil {
				return nil, fmt.Errorf("column: field %q: row %d is not valid WKB: %w", f.GetName(), i, err)
			}
		}
		return &Geometries{Nulls{valid}, src}, nil
	}
	return nil, fmt.Errorf("column: field %q: data of type %s does not fit the field type %s", f.GetName(), fd.GetType(), f.GetDataType())
}

// GeometryToWKT rewrites a Geometry wire column holding WKB into the WKT
// form clients read (Milvus's query and search output). Other columns, and
// Geometry columns already in WKT, are returned unchanged.
func GeometryToWKT(fd *schemapb.FieldData) (*schemapb.FieldData, error) {
	if fd.GetType() != schemapb.DataType_Geometry {
		return fd, nil
	}
	d := fd.GetScalars().GetGeometryData()
	if d == nil {
		return fd, nil
	}
	valid := fd.GetValidData()
	out := make([]string, len(d.GetData()))
	for i, b := range d.GetData() {
		if (len(valid) > i && !valid[i]) || len(b) == 0 {
			continue
		}
		s, err := WKBToWKT(b)
		if err != nil {
			return nil, fmt.Errorf("column: field %q: row %d: %w", fd.GetFieldName(), i, err)
		}
		out[i] = s
	}
	return &schemapb.FieldData{
		Type: fd.GetType(), FieldName: fd.GetFieldName(), FieldId: fd.GetFieldId(),
		IsDynamic: fd.GetIsDynamic(), ValidData: valid,
		Field: &schemapb.FieldData_Scalars{Scalars: &schemapb.ScalarField{
			Data: &schemapb.ScalarField_GeometryWktData{GeometryWktData: &schemapb.GeometryWktArray{Data: out}},
		}},
	}, nil
}

// Type implements Column.
func (c *Geometries) Type() schemapb.DataType { return schemapb.DataType_Geometry }

// Len implements Column.
func (c *Geometries) Len() int { return len(c.Data) }

// Take implements Column.
func (c *Geometries) Take(idx []int) Column {
	return &Geometries{Nulls{c.takeValid(idx)}, takeSlice(c.Data, idx)}
}

// AppendFrom implements Column.
func (c *Geometries) AppendFrom(src Column, i int) {
	s := src.(*Geometries)
	c.appendValid(&s.Nulls, i, len(c.Data))
	c.Data = append(c.Data, s.Data[i])
}

// MemorySize implements Column.
func (c *Geometries) MemorySize() int {
	n := 0
	for _, s := range c.Data {
		n += len(s) + 16
	}
	return n
}
