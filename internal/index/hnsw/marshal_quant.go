package hnsw

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/strata-db/strata/internal/index/indexfile"
	"github.com/strata-db/strata/internal/index/quant"
)

// Serialized format of a quantized index (HNSW_SQ, HNSW_PQ), version 1.
// All integers and floats are little-endian. The header and graph are
// those of the plain format (marshal.go); the float32 vectors are replaced
// by the quantized store and the optional refine store.
//
//	offset  size  field
//	0       8     magic "STRHNSWQ"
//	8       4     version (1)
//	12      4     metric (0 L2, 1 IP, 2 COSINE)
//	16      4     dim
//	20      4     M
//	24      4     efConstruction
//	28      4     reserved, 0
//	32      8     seed
//	40      8     n, the number of rows
//	48      8     entry point row, -1 when n == 0
//	56      8     upperWords, the length of the upper-layer link array
//	64      1     encoding (1 SQ8, 2 SQ6, 3 FP16, 4 BF16, 5 PQ)
//	65      1     refine encoding (0 FP32, 1 SQ8, 2 SQ6, 3 FP16, 4 BF16;
//	              255 no refine store)
//	66      2     reserved, 0
//	68      4     PQ m, the number of sub-vectors (0 unless PQ)
//	72      4     PQ nbits, the code width, 1 to 8 (0 unless PQ)
//	76      4     reserved, 0
//	80      n     levels, one byte per row
//	...           the store: see below
//	...           the refine store, when the refine encoding is not 255
//	...     4*n*(2M+1)       layer-0 link blocks, as in the plain format
//	...     4*upperWords     upper-layer link blocks, as in the plain format
//	...     4     CRC-32C (Castagnoli) of every preceding byte
//
// A store is, by encoding (vectors are unit length for COSINE before
// encoding):
//
//	SQ8, SQ6  4*dim vmin, then 4*dim scale (float32), then n*dim code
//	          bytes: x ~ vmin[j] + scale[j]*code (codes <= 255 or 63)
//	FP16      n*dim*2 bytes of IEEE 754 binary16 values
//	BF16      n*dim*2 bytes of bfloat16 values
//	PQ        4*m*2^nbits*(dim/m) codebooks (float32; sub-space j's
//	          2^nbits codewords of dim/m floats, row-major, one after
//	          another), then n*m code bytes, the codeword of each
//	          sub-vector
//	FP32      4*n*dim float32 vectors (refine store only)
const quantHeaderSize = 80

// noRefine is the refine encoding byte of an index without a refine store.
const noRefine = 255

// quantFormat is the file envelope of a quantized index.
var quantFormat = indexfile.Format{Magic: "STRHNSWQ", Version: 1, VersionSize: 4, Corrupt: ErrCorrupt}

// marshalQuant writes a quantized index; the caller holds x.mu.
func (x *Index) marshalQuant(w io.Writer) error {
	bw := quantFormat.NewWriter(w)
	var hb [quantHeaderSize]byte
	h := hb[:]
	le := binary.LittleEndian
	le.PutUint32(h[12:], uint32(x.metric))
	le.PutUint32(h[16:], uint32(x.dim))
	le.PutUint32(h[20:], uint32(x.cfg.M))
	le.PutUint32(h[24:], uint32(x.cfg.EfConstruction))
	le.PutUint64(h[32:], x.cfg.Seed)
	le.PutUint64(h[40:], uint64(x.n))
	le.PutUint64(h[48:], uint64(int64(x.entry)))
	le.PutUint64(h[56:], uint64(len(x.upper)))
	h[64] = byte(x.qz.Kind())
	h[65] = noRefine
	if x.rf != nil {
		h[65] = byte(x.rf.Kind())
	}
	le.PutUint32(h[68:], uint32(x.cfg.Quant.M))
	le.PutUint32(h[72:], uint32(x.cfg.Quant.Nbits))
	if _, err := bw.Write(h[quantFormat.HeaderSize():]); err != nil {
		return fmt.Errorf("hnsw: marshal: %w", err)
	}
	if _, err := bw.Write(x.levels); err != nil {
		return fmt.Errorf("hnsw: marshal: %w", err)
	}
	x.qz.Write(bw)
	if x.rf != nil {
		x.rf.Write(bw)
	}
	bw.Uint32s(x.links0)
	bw.Uint32s(x.upper)
	if err := bw.Close(); err != nil {
		return fmt.Errorf("hnsw: marshal: %w", err)
	}
	return nil
}

// UnmarshalQuantized reads a quantized index written by Marshal (an index
// built with a Config.Quant), verifying its checksum and the consistency
// of the graph and codes. Errors caused by bad data wrap ErrCorrupt.
func UnmarshalQuantized(rd io.Reader) (*Index, error) {
	x, err := unmarshalQuant(rd)
	if err != nil && !errors.Is(err, ErrCorrupt) {
		err = fmt.Errorf("hnsw: unmarshal: %w", err)
	}
	return x, err
}

func unmarshalQuant(rd io.Reader) (*Index, error) {
	r, err := quantFormat.NewReader(rd)
	if err != nil {
		return nil, err
	}
	h, err := r.Header(quantHeaderSize)
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	kind, refine := quant.Kind(h[64]), h[65]
	q := QuantConfig{Kind: kind, M: int(le.Uint32(h[68:])), Nbits: int(le.Uint32(h[72:]))}
	if refine != noRefine {
		q.Refine, q.RefineType = true, quant.Kind(refine)
	}
	if kind == quant.FP32 {
		return nil, quantFormat.ErrorAt(64, "encoding %d", kind)
	}
	return readGraph(quantFormat, r, h, Config{Quant: q}, func(x *Index, n uint64) (err error) {
		if x.qz, err = quant.Read(r, quantFormat, q.Kind, x.dim, q.M, q.Nbits, n); err != nil {
			return err
		}
		if q.Refine {
			x.rf, err = quant.Read(r, quantFormat, q.RefineType, x.dim, 0, 0, n)
		}
		return err
	})
}
