package rabitq

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/indexfile"
	"github.com/strata-db/strata/internal/index/quant"
)

// headerSize is the size of the fixed header, magic and version included.
const headerSize = 48

// noRefine is the refine encoding byte of an index without a refine store.
const noRefine = 255

// ErrCorrupt is wrapped by every Unmarshal error caused by malformed data.
var ErrCorrupt = errors.New("rabitq: corrupt index data")

// format is the file envelope.
var format = indexfile.Format{Magic: "STRRABQ\x00", Version: 1, VersionSize: 4, Corrupt: ErrCorrupt}

// Marshal writes the index in the format documented in doc.go.
func (x *Index) Marshal(w io.Writer) error {
	bw := format.NewWriter(w)
	var hb [headerSize]byte
	h := hb[:]
	le := binary.LittleEndian
	le.PutUint32(h[12:], uint32(x.metric))
	le.PutUint32(h[16:], uint32(x.dim))
	le.PutUint32(h[20:], uint32(x.cfg.Nlist))
	h[24] = noRefine
	if x.rf != nil {
		h[24] = byte(x.rf.Kind())
	}
	le.PutUint64(h[32:], x.cfg.Seed)
	le.PutUint64(h[40:], uint64(x.n))
	if _, err := bw.Write(h[format.HeaderSize():]); err != nil {
		return fmt.Errorf("rabitq: marshal: %w", err)
	}
	bw.Float32s(x.rot)
	bw.Float32s(x.cents)
	bw.Int32s(x.offs)
	bw.Int32s(x.rows)
	bw.Float32s(x.norms)
	bw.Float32s(x.ipoo)
	bw.Float32s(x.cr)
	_, _ = bw.Write(x.codes)
	if x.rf != nil {
		x.rf.Write(bw)
	}
	if err := bw.Close(); err != nil {
		return fmt.Errorf("rabitq: marshal: %w", err)
	}
	return nil
}

// Unmarshal reads an index written by Marshal, checking its checksum,
// parameters and that the lists hold every row exactly once. Errors
// caused by bad data wrap ErrCorrupt.
func Unmarshal(rd io.Reader) (*Index, error) {
	x, err := unmarshal(rd)
	if err != nil && !errors.Is(err, ErrCorrupt) {
		err = fmt.Errorf("rabitq: unmarshal: %w", err)
	}
	return x, err
}

func unmarshal(rd io.Reader) (*Index, error) {
	r, err := format.NewReader(rd)
	if err != nil {
		return nil, err
	}
	h, err := r.Header(headerSize)
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	metric := index.Metric(le.Uint32(h[12:]))
	dim := le.Uint32(h[16:])
	cfg := Config{Nlist: int(le.Uint32(h[20:])), RefineType: quant.FP32, Seed: le.Uint64(h[32:])}
	if h[24] != noRefine {
		cfg.Refine, cfg.RefineType = true, quant.Kind(h[24])
	}
	n := le.Uint64(h[40:])
	if !metric.Float() {
		return nil, format.ErrorAt(12, "metric %d", metric)
	}
	if dim == 0 || dim > 1<<16 {
		return nil, format.ErrorAt(16, "dim %d", dim)
	}
	if err := cfg.Validate(); err != nil {
		return nil, format.ErrorAt(20, "%v", err)
	}
	if n > math.MaxInt32 {
		return nil, format.ErrorAt(40, "row count %d", n)
	}
	x := newIndex(int(dim), metric, cfg)
	x.n = int(n)
	d := uint64(dim)
	if x.rot, err = r.Float32s(d * d); err != nil {
		return nil, err
	}
	if x.cents, err = r.Float32s(uint64(cfg.Nlist) * d); err != nil {
		return nil, err
	}
	offsAt := r.Offset()
	if x.offs, err = r.Int32s(uint64(cfg.Nlist) + 1); err != nil {
		return nil, err
	}
	rowsAt := r.Offset()
	if x.rows, err = r.Int32s(n); err != nil {
		return nil, err
	}
	if x.norms, err = r.Float32s(n); err != nil {
		return nil, err
	}
	if x.ipoo, err = r.Float32s(n); err != nil {
		return nil, err
	}
	if x.cr, err = r.Float32s(n); err != nil {
		return nil, err
	}
	if x.codes, err = r.Bytes(n * uint64(x.nbytes)); err != nil {
		return nil, err
	}
	if cfg.Refine {
		if x.rf, err = quant.Read(r, format, cfg.RefineType, int(dim), 0, 0, n); err != nil {
			return nil, err
		}
	}
	if err := r.Close(); err != nil {
		return nil, err
	}
	if x.offs[0] != 0 || int(x.offs[cfg.Nlist]) != x.n {
		return nil, format.ErrorAt(offsAt, "lists span %d..%d of %d rows", x.offs[0], x.offs[cfg.Nlist], x.n)
	}
	for l := range cfg.Nlist {
		if x.offs[l+1] < x.offs[l] {
			return nil, format.ErrorAt(offsAt+4*int64(l+1), "list %d ends before it starts", l)
		}
	}
	seen := make([]bool, x.n)
	for i, row := range x.rows {
		if row < 0 || int(row) >= x.n || seen[row] {
			return nil, format.ErrorAt(rowsAt+4*int64(i), "row %d out of range or repeated", row)
		}
		seen[row] = true
	}
	for i, v := range x.ipoo {
		if !(v > 0) || math.IsInf(float64(v), 0) {
			return nil, format.Errorf("correction %v of slot %d", v, i)
		}
	}
	x.derive()
	return x, nil
}
