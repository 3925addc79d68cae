package sparse

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/strata-db/strata/internal/index/indexfile"
)

// ErrCorrupt is wrapped by every Unmarshal error about the file's content.
var ErrCorrupt = errors.New("sparse: corrupt index file")

// format is the file envelope; the magic's trailing digit is the format
// version.
var format = indexfile.Format{Magic: "STRSPRS1", Corrupt: ErrCorrupt}

// header is the fixed-size start of the payload (little-endian), after the
// magic.
type header struct {
	Kind           uint32
	DropRatioBuild float32
	Dropped        uint32
	Rows           uint32
	NNZ            uint64
	Lists          uint32
	_              uint32
	Postings       uint64
}

// Marshal writes the index in the format described in the package
// documentation.
func (x *Index) Marshal(w io.Writer) error {
	h := header{
		Kind: uint32(x.kind), DropRatioBuild: x.dropRatioBuild,
		Rows: uint32(x.Len()), NNZ: uint64(len(x.fwdIdx)), Lists: uint32(len(x.dims)), Postings: uint64(len(x.postRow)),
	}
	if x.dropped {
		h.Dropped = 1
	}
	fw := format.NewWriter(w)
	for _, v := range []any{h, x.rowOff, x.fwdIdx, x.fwdVal, x.dims, x.listOff, x.maxAbs, x.postRow, x.postVal} {
		if err := binary.Write(fw, binary.LittleEndian, v); err != nil {
			return fmt.Errorf("sparse: marshal: %w", err)
		}
	}
	if err := fw.Close(); err != nil {
		return fmt.Errorf("sparse: marshal: %w", err)
	}
	return nil
}

// corrupt returns an error wrapping ErrCorrupt.
var corrupt = format.Errorf

// Unmarshal reads an index written by Marshal, checking its checksum and
// every offset, order and bound, so that a damaged file is an error and
// never a panic at search time.
func Unmarshal(r io.Reader) (*Index, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("sparse: unmarshal: %w", err)
	}
	body, err := format.Open(data)
	if err != nil {
		return nil, err
	}
	hsize := binary.Size(header{})
	if len(body) < hsize {
		return nil, corrupt("%d bytes is shorter than the header", len(data))
	}
	var h header
	if err := binary.Read(bytes.NewReader(body[:hsize]), binary.LittleEndian, &h); err != nil {
		return nil, corrupt("header: %v", err)
	}
	if h.Kind != uint32(Inverted) && h.Kind != uint32(WAND) {
		return nil, corrupt("unknown kind %d", h.Kind)
	}
	if !(h.DropRatioBuild >= 0 && h.DropRatioBuild < 1) || h.Dropped > 1 || h.Rows >= math.MaxInt32 {
		return nil, corrupt("bad header fields")
	}
	// Sizes in bytes of the sections, checked against the file's length
	// before anything is allocated.
	want := uint64(hsize) + 8*(uint64(h.Rows)+1) + 8*h.NNZ + 4*uint64(h.Lists) + 8*(uint64(h.Lists)+1) +
		4*uint64(h.Lists) + 8*h.Postings
	if h.NNZ > uint64(len(body)) || h.Postings > uint64(len(body)) || uint64(h.Lists) > uint64(len(body)) ||
		want != uint64(len(body)) {
		return nil, corrupt("%d bytes do not hold %d rows, %d values, %d lists and %d postings",
			len(body), h.Rows, h.NNZ, h.Lists, h.Postings)
	}
	x := &Index{
		kind: Kind(h.Kind), dropRatioBuild: h.DropRatioBuild, dropped: h.Dropped == 1,
		rowOff: make([]uint64, h.Rows+1), fwdIdx: make([]uint32, h.NNZ), fwdVal: make([]float32, h.NNZ),
		dims: make([]uint32, h.Lists), listOff: make([]uint64, h.Lists+1), maxAbs: make([]float32, h.Lists),
		postRow: make([]uint32, h.Postings), postVal: make([]float32, h.Postings),
	}
	rd := bytes.NewReader(body[hsize:])
	for _, v := range []any{x.rowOff, x.fwdIdx, x.fwdVal, x.dims, x.listOff, x.maxAbs, x.postRow, x.postVal} {
		if err := binary.Read(rd, binary.LittleEndian, v); err != nil {
			return nil, corrupt("%v", err)
		}
	}
	if err := x.check(); err != nil {
		return nil, err
	}
	x.buildBlocks()
	return x, nil
}

// check verifies the invariants Search relies on.
func (x *Index) check() error {
	if err := checkOffsets(x.rowOff, uint64(len(x.fwdIdx))); err != nil {
		return corrupt("row offsets: %v", err)
	}
	for r := 0; r+1 < len(x.rowOff); r++ {
		for j := x.rowOff[r] + 1; j < x.rowOff[r+1]; j++ {
			if x.fwdIdx[j] <= x.fwdIdx[j-1] {
				return corrupt("row %d: indices are not ascending", r)
			}
		}
	}
	for i, v := range x.fwdVal {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return corrupt("value %d is NaN or Inf", i)
		}
	}
	if err := checkOffsets(x.listOff, uint64(len(x.postRow))); err != nil {
		return corrupt("list offsets: %v", err)
	}
	rows := uint32(x.Len())
	for l := range x.dims {
		if l > 0 && x.dims[l] <= x.dims[l-1] {
			return corrupt("list dimensions are not ascending")
		}
		var m float32
		for j := x.listOff[l]; j < x.listOff[l+1]; j++ {
			if x.postRow[j] >= rows || (j > x.listOff[l] && x.postRow[j] <= x.postRow[j-1]) {
				return corrupt("list %d: rows are out of range or not ascending", l)
			}
			v := x.postVal[j]
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return corrupt("list %d: a value is NaN or Inf", l)
			}
			m = max(m, float32(math.Abs(float64(v))))
		}
		if x.maxAbs[l] != m {
			return corrupt("list %d: upper bound %v, the largest value is %v", l, x.maxAbs[l], m)
		}
	}
	return nil
}

// checkOffsets verifies that offs starts at 0, never decreases and ends at total.
func checkOffsets(offs []uint64, total uint64) error {
	if offs[0] != 0 || offs[len(offs)-1] != total {
		return fmt.Errorf("they span [%d, %d], want [0, %d]", offs[0], offs[len(offs)-1], total)
	}
	for i := 1; i < len(offs); i++ {
		if offs[i] < offs[i-1] {
			return fmt.Errorf("offset %d decreases", i)
		}
	}
	return nil
}
