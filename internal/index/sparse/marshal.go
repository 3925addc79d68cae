package sparse

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
)

// magic opens every index file; the trailing digit is the format version.
var magic = [8]byte{'S', 'T', 'R', 'S', 'P', 'R', 'S', '1'}

// ErrCorrupt is wrapped by every Unmarshal error about the file's content.
var ErrCorrupt = errors.New("sparse: corrupt index file")

// header is the fixed-size start of the file (little-endian).
type header struct {
	Magic          [8]byte
	Kind           uint32
	DropRatioBuild float32
	Dropped        uint32
	Rows           uint32
	NNZ            uint64
	Lists          uint32
	_              uint32
	Postings       uint64
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Marshal writes the index in the format described in the package
// documentation.
func (x *Index) Marshal(w io.Writer) error {
	h := header{Magic: magic, Kind: uint32(x.kind), DropRatioBuild: x.dropRatioBuild,
		Rows: uint32(x.Len()), NNZ: uint64(len(x.fwdIdx)), Lists: uint32(len(x.dims)), Postings: uint64(len(x.postRow))}
	if x.dropped {
		h.Dropped = 1
	}
	crc := crc32.New(castagnoli)
	mw := io.MultiWriter(w, crc)
	for _, v := range []any{h, x.rowOff, x.fwdIdx, x.fwdVal, x.dims, x.listOff, x.maxAbs, x.postRow, x.postVal} {
		if err := binary.Write(mw, binary.LittleEndian, v); err != nil {
			return fmt.Errorf("sparse: marshal: %w", err)
		}
	}
	if err := binary.Write(w, binary.LittleEndian, crc.Sum32()); err != nil {
		return fmt.Errorf("sparse: marshal: %w", err)
	}
	return nil
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// Unmarshal reads an index written by Marshal, checking its checksum and
// every offset, order and bound, so that a damaged file is an error and
// never a panic at search time.
func Unmarshal(r io.Reader) (*Index, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("sparse: unmarshal: %w", err)
	}
	hsize := binary.Size(header{})
	if len(data) < hsize+4 {
		return nil, corrupt("%d bytes is shorter than the header", len(data))
	}
	body := data[:len(data)-4]
	if got, want := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(data[len(data)-4:]); got != want {
		return nil, corrupt("checksum %08x, the file says %08x", got, want)
	}
	var h header
	if err := binary.Read(bytes.NewReader(body[:hsize]), binary.LittleEndian, &h); err != nil {
		return nil, corrupt("header: %v", err)
	}
	if h.Magic != magic {
		return nil, corrupt("bad magic %q", h.Magic[:])
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
	x := &Index{kind: Kind(h.Kind), dropRatioBuild: h.DropRatioBuild, dropped: h.Dropped == 1,
		rowOff: make([]uint64, h.Rows+1), fwdIdx: make([]uint32, h.NNZ), fwdVal: make([]float32, h.NNZ),
		dims: make([]uint32, h.Lists), listOff: make([]uint64, h.Lists+1), maxAbs: make([]float32, h.Lists),
		postRow: make([]uint32, h.Postings), postVal: make([]float32, h.Postings)}
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
