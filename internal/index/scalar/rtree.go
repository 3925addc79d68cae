package scalar

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	sf "github.com/peterstace/simplefeatures/geom"
	"github.com/tidwall/rtree"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/index/indexfile"
)

// RTree is the RTREE index of a Geometry field: the bounding box of every
// row in an R-tree. It answers "which rows' boxes meet this box"; the
// filter evaluator then runs the exact spatial predicate on those rows
// only, so results are the same with and without the index.
//
// # File format (file key "RTREE")
//
// The shared index envelope (package indexfile: magic "STRT", uint16
// version 1, payload, CRC-32C) around this payload, little-endian:
//
//	rows     uint64
//	per row  flag byte: 0 = no box (null, empty or undecodable geometry),
//	         1 = box, followed by minX, minY, maxX, maxY as float64
//
// The tree itself is rebuilt from the boxes on load.
type RTree struct {
	boxes [][4]float64
	has   []bool
	tr    rtree.RTreeG[int32]
}

// RTreeFileKey is the file key (and index type name) of an RTREE index file.
const RTreeFileKey = "RTREE"

// ErrRTreeFormat reports an RTREE index file that does not decode.
var ErrRTreeFormat = errors.New("scalar: malformed RTREE index file")

var rtreeFormat = indexfile.Format{Magic: "STRT", Version: 1, VersionSize: 2, Corrupt: ErrRTreeFormat}

// BuildRTree indexes the bounding boxes of a Geometry column.
func BuildRTree(c *column.Geometries) *RTree {
	x := &RTree{boxes: make([][4]float64, c.Len()), has: make([]bool, c.Len())}
	for i, b := range c.Data {
		if c.IsNull(i) {
			continue
		}
		g, err := sf.UnmarshalWKB(b, sf.NoValidate{})
		if err != nil {
			continue
		}
		lo, hi, ok := g.Envelope().MinMaxXYs()
		if !ok {
			continue
		}
		x.boxes[i], x.has[i] = [4]float64{lo.X, lo.Y, hi.X, hi.Y}, true
	}
	x.fill()
	return x
}

func (x *RTree) fill() {
	for i, b := range x.boxes {
		if x.has[i] {
			x.tr.Insert([2]float64{b[0], b[1]}, [2]float64{b[2], b[3]}, int32(i))
		}
	}
}

// Len is the number of rows indexed.
func (x *RTree) Len() int { return len(x.boxes) }

// MarkBox sets out[r] for every row r whose box meets [minX,maxX]×[minY,maxY]
// and returns how many it marked; ok is false when out is not one entry per row.
func (x *RTree) MarkBox(minX, minY, maxX, maxY float64, out []bool) (n int, ok bool) {
	if len(out) != len(x.boxes) {
		return 0, false
	}
	x.tr.Search([2]float64{minX, minY}, [2]float64{maxX, maxY}, func(_, _ [2]float64, r int32) bool {
		if !out[r] {
			out[r] = true
			n++
		}
		return true
	})
	return n, true
}

// Marshal writes the index in the format documented on RTree.
func (x *RTree) Marshal(w io.Writer) error {
	var buf bytes.Buffer
	_ = binary.Write(&buf, binary.LittleEndian, uint64(len(x.boxes)))
	for i, b := range x.boxes {
		if !x.has[i] {
			buf.WriteByte(0)
			continue
		}
		buf.WriteByte(1)
		for _, v := range b {
			_ = binary.Write(&buf, binary.LittleEndian, math.Float64bits(v))
		}
	}
	fw := rtreeFormat.NewWriter(w)
	_, _ = fw.Write(buf.Bytes())
	return fw.Close()
}

// UnmarshalRTree decodes an index written by Marshal.
func UnmarshalRTree(data []byte) (*RTree, error) {
	p, err := rtreeFormat.Open(data)
	if err != nil {
		return nil, err
	}
	if len(p) < 8 {
		return nil, fmt.Errorf("%w: no row count", ErrRTreeFormat)
	}
	n := binary.LittleEndian.Uint64(p)
	p = p[8:]
	if n > uint64(len(p)) {
		return nil, fmt.Errorf("%w: %d rows in %d bytes", ErrRTreeFormat, n, len(p))
	}
	x := &RTree{boxes: make([][4]float64, n), has: make([]bool, n)}
	for i := range x.boxes {
		if len(p) == 0 {
			return nil, fmt.Errorf("%w: truncated at row %d", ErrRTreeFormat, i)
		}
		flag := p[0]
		p = p[1:]
		switch flag {
		case 0:
			continue
		case 1:
		default:
			return nil, fmt.Errorf("%w: row %d has flag %d", ErrRTreeFormat, i, flag)
		}
		if len(p) < 32 {
			return nil, fmt.Errorf("%w: truncated at row %d", ErrRTreeFormat, i)
		}
		for k := range 4 {
			x.boxes[i][k] = math.Float64frombits(binary.LittleEndian.Uint64(p[8*k:]))
		}
		x.has[i] = true
		p = p[32:]
	}
	if len(p) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrRTreeFormat, len(p))
	}
	x.fill()
	return x, nil
}
