package hnsw

import (
	"fmt"

	"github.com/strata-db/strata/internal/index/quant"
)

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
	Kind quant.Kind
	// M and Nbits are PQ's number of sub-vectors (it must divide the
	// dimension) and code width.
	M, Nbits int
	// Refine keeps a second copy of the vectors, encoded as RefineType,
	// with which a search re-ranks its best refine_k*k candidates.
	Refine bool
	// RefineType is the refine store's encoding (FP32 is exact).
	RefineType quant.Kind
}

// validate checks c for vectors of dimension dim.
func (c QuantConfig) validate(dim int) error {
	switch c.Kind {
	case quant.FP32:
		if c.Refine {
			return fmt.Errorf("hnsw: refine is not supported for this index")
		}
		return nil
	case quant.SQ8, quant.SQ6, quant.FP16, quant.BF16:
	case quant.PQ:
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
	if c.Refine && c.RefineType > quant.BF16 {
		return fmt.Errorf("hnsw: invalid refine type %v", c.RefineType)
	}
	return nil
}
