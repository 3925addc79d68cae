package hnsw

import (
	"fmt"

	"github.com/strata-db/strata/internal/index/quant"
)

// Quant is a vector encoding (package quant's Kind): how a quantized index
// stores the vectors its graph walks over (Milvus HNSW_SQ's sq_type, or PQ
// for HNSW_PQ), and how its refine store keeps them (refine_type).
type Quant = quant.Kind

// The encodings, as package quant defines them.
const (
	// FP32 keeps float32 vectors: plain HNSW, and the exact refine type.
	FP32 = quant.FP32
	// SQ8 keeps 256 levels per dimension, one byte each.
	SQ8 = quant.SQ8
	// SQ6 keeps 64 levels per dimension, one byte each.
	SQ6 = quant.SQ6
	// FP16 keeps half-precision values.
	FP16 = quant.FP16
	// BF16 keeps bfloat16 values.
	BF16 = quant.BF16
	// PQ keeps product-quantizer codes.
	PQ = quant.PQ
)

// ParseQuant parses a Milvus sq_type or refine_type name in any case:
// SQ6, SQ8, FP16, BF16, FP32 and its alias FLAT.
func ParseQuant(s string) (Quant, bool) { return quant.ParseKind(s) }

// PQ parameter limits, as Milvus (knowhere) enforces them for HNSW_PQ, and
// what this package builds.
const (
	// MinPQM and MaxPQM bound QuantConfig.M.
	MinPQM, MaxPQM = 1, 65536
	// MinPQNbits and MaxPQNbits bound QuantConfig.Nbits as Milvus accepts
	// it; codes wider than MaxSupportedPQNbits are refused at validation.
	MinPQNbits, MaxPQNbits = 1, 16
	// MaxSupportedPQNbits is the widest PQ code built: one byte per
	// sub-vector.
	MaxSupportedPQNbits = 8
)

// QuantConfig selects the encoding of a quantized index. The zero value
// (Kind FP32, no refine) is a plain HNSW index.
type QuantConfig struct {
	// Kind is the encoding the graph is searched with: FP32 (none), SQ8,
	// SQ6, FP16, BF16 or PQ.
	Kind Quant
	// M and Nbits are PQ's number of sub-vectors (it must divide the
	// dimension) and code width.
	M, Nbits int
	// Refine keeps a second copy of the vectors, encoded as RefineType,
	// with which a search re-ranks its best refine_k*k candidates.
	Refine bool
	// RefineType is the refine store's encoding (FP32 is exact).
	RefineType Quant
}

// validate checks c for vectors of dimension dim.
func (c QuantConfig) validate(dim int) error {
	switch c.Kind {
	case FP32:
		if c.Refine {
			return fmt.Errorf("hnsw: refine is not supported for this index")
		}
		return nil
	case SQ8, SQ6, FP16, BF16:
	case PQ:
		if c.M < MinPQM || c.M > MaxPQM {
			return fmt.Errorf("hnsw: param 'm' (%d) should be in range [%d, %d]", c.M, MinPQM, MaxPQM)
		}
		if c.Nbits < MinPQNbits || c.Nbits > MaxPQNbits {
			return fmt.Errorf("hnsw: param 'nbits' (%d) should be in range [%d, %d]", c.Nbits, MinPQNbits, MaxPQNbits)
		}
		if c.Nbits > MaxSupportedPQNbits {
			return fmt.Errorf("hnsw: nbits(%d) is not supported, use at most %d", c.Nbits, MaxSupportedPQNbits)
		}
		if dim > 0 && dim%c.M != 0 {
			return fmt.Errorf("hnsw: dimension %d is not a multiple of m(%d)", dim, c.M)
		}
	default:
		return fmt.Errorf("hnsw: invalid vector encoding %v", c.Kind)
	}
	if c.Refine && c.RefineType > BF16 {
		return fmt.Errorf("hnsw: invalid refine type %v", c.RefineType)
	}
	return nil
}
