package diskann

import (
	"encoding/binary"
	"io"
	"math"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/indexfile"
	"github.com/strata-db/strata/internal/index/quant"
)

// Format is the envelope of a DISKANN index file (see the package
// documentation).
var Format = indexfile.Format{Magic: "STRATA-DISKANN", Version: 1, VersionSize: 4, Corrupt: ErrCorrupt}

// headerSize is the length of the fixed header, envelope included.
const headerSize = 56

// sector is the alignment of the records' offset.
const sector = 4096

// codesEnd returns the file offset just past the PQ codes.
func (x *Index) codesEnd() int64 {
	m := int64(x.pq.Size())
	return headerSize + 4*int64(1<<pqNbits)*int64(x.dim) + int64(x.n)*m
}

// recordsOffset returns the records' offset: the codes' end rounded up to
// a sector.
func (x *Index) recordsOffset() int64 { return (x.codesEnd() + sector - 1) &^ (sector - 1) }

// Marshal writes the index file (see the package documentation).
func (x *Index) Marshal(w io.Writer) error {
	bw := Format.NewWriter(w)
	h := make([]byte, headerSize-Format.HeaderSize())
	le := binary.LittleEndian
	h[0] = byte(x.metric)
	h[1] = pqNbits
	le.PutUint32(h[2:], uint32(x.dim))
	le.PutUint64(h[6:], uint64(x.n))
	le.PutUint32(h[14:], uint32(x.maxDegree))
	le.PutUint32(h[18:], uint32(x.pq.Size()))
	le.PutUint32(h[22:], uint32(x.recSize))
	le.PutUint32(h[26:], x.medoid)
	le.PutUint64(h[30:], uint64(x.recordsOffset()))
	_, _ = bw.Write(h)
	x.pq.Write(bw)
	_, _ = bw.Write(make([]byte, x.recordsOffset()-x.codesEnd()))
	rec := make([]byte, x.recSize)
	for i := range x.n {
		if _, err := x.src.ReadAt(rec, x.recOff+int64(i)*int64(x.recSize)); err != nil {
			return err
		}
		_, _ = bw.Write(rec)
	}
	return bw.Close()
}

// Open loads the index file of size bytes that r reads: it reads the file
// once from start to end, keeping the header, PQ codebooks and codes,
// checking every node record and the checksum, and then serves searches
// by reading records from r by position. r must stay open and unchanged
// while the index is used. A malformed file fails with an error wrapping
// ErrCorrupt.
func Open(r io.ReaderAt, size int64) (*Index, error) {
	rd, err := Format.NewReader(indexfile.Sized{Reader: io.NewSectionReader(r, 0, size), N: size})
	if err != nil {
		return nil, err
	}
	h, err := rd.Header(headerSize)
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	metric := index.Metric(h[18])
	nbits := int(h[19])
	dim := int(le.Uint32(h[20:]))
	n64 := le.Uint64(h[24:])
	maxDegree := int(le.Uint32(h[32:]))
	m := int(le.Uint32(h[36:]))
	recSize := int(le.Uint32(h[40:]))
	med := le.Uint32(h[44:])
	recOff := le.Uint64(h[48:])
	switch {
	case !metric.Float():
		return nil, Format.ErrorAt(18, "metric %d", h[18])
	case nbits != pqNbits:
		return nil, Format.ErrorAt(19, "PQ nbits %d", nbits)
	case dim <= 0 || dim > 1<<20:
		return nil, Format.ErrorAt(20, "dim %d", dim)
	case n64 > math.MaxUint32 || n64 > uint64(size):
		return nil, Format.ErrorAt(24, "%d rows", n64)
	case maxDegree < 1 || maxDegree > MaxMaxDegree:
		return nil, Format.ErrorAt(32, "max_degree %d", maxDegree)
	case m < 1 || m > dim || dim%m != 0:
		return nil, Format.ErrorAt(36, "PQ m %d for dim %d", m, dim)
	case recSize != recordSize(dim, maxDegree):
		return nil, Format.ErrorAt(40, "record size %d, want %d", recSize, recordSize(dim, maxDegree))
	case n64 > 0 && uint64(med) >= n64:
		return nil, Format.ErrorAt(44, "medoid %d of %d rows", med, n64)
	}
	n := int(n64)
	x := &Index{
		metric: metric, ip: metric != index.L2, dim: dim, n: n, maxDegree: maxDegree,
		recSize: recSize, medoid: med,
	}
	if x.pq, err = quant.Read(rd, Format, quant.PQ, dim, m, nbits, n64); err != nil {
		return nil, err
	}
	if want := x.recordsOffset(); recOff != uint64(want) {
		return nil, Format.ErrorAt(48, "records offset %d, want %d", recOff, want)
	}
	if _, err := rd.Bytes(recOff - uint64(x.codesEnd())); err != nil {
		return nil, err
	}
	if uint64(size-int64(recOff)-4) != n64*uint64(recSize) {
		return nil, Format.Errorf("%d bytes of records for %d rows of %d bytes", size-int64(recOff)-4, n, recSize)
	}
	for i := range n {
		rec, err := rd.Next(recSize)
		if err != nil {
			return nil, err
		}
		if _, err := x.parseRecord(rec); err != nil {
			return nil, Format.ErrorAt(int64(recOff)+int64(i)*int64(recSize), "node %d: %v", i, err)
		}
	}
	if err := rd.Close(); err != nil {
		return nil, err
	}
	x.src, x.recOff = r, int64(recOff)
	return x, nil
}
