package hnsw

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/quant"
)

// Parameter limits, as Milvus enforces them for HNSW.
const (
	// MinM and MaxM bound Config.M.
	MinM, MaxM = 2, 2048
	// MinEfConstruction is the smallest accepted Config.EfConstruction.
	MinEfConstruction = 1
	// MaxEfConstruction is the largest accepted Config.EfConstruction.
	MaxEfConstruction = math.MaxInt32
)

// Config holds the build parameters of an index.
type Config struct {
	// M is the number of links a node keeps per upper layer; layer 0 keeps
	// up to 2*M. Milvus accepts [2, 2048].
	M int
	// EfConstruction is the candidate list size used while inserting.
	EfConstruction int
	// Seed seeds the level generator. Builds with the same data, Config and
	// Workers == 1 are identical.
	Seed uint64
	// Workers is the number of goroutines inserting in parallel; 0 means
	// runtime.GOMAXPROCS(0). Parallel builds are not deterministic.
	Workers int
	// Quant selects a quantized index (HNSW_SQ, HNSW_PQ): the zero value
	// keeps float32 vectors (HNSW).
	Quant QuantConfig
}

// Defaults returns the Milvus defaults: M=16, EfConstruction=200 (Milvus
// requires both; these are the values its documentation uses), Seed=42 and
// all cores.
func Defaults() Config {
	return Config{M: 16, EfConstruction: 200, Seed: 42}
}

// Validate checks the parameters against the Milvus limits.
func (c Config) Validate() error {
	var errs []error
	if c.M < MinM || c.M > MaxM {
		errs = append(errs, fmt.Errorf("hnsw: M(%d) out of range [%d, %d]", c.M, MinM, MaxM))
	}
	if c.EfConstruction < MinEfConstruction || c.EfConstruction > MaxEfConstruction {
		errs = append(errs, fmt.Errorf("hnsw: efConstruction(%d) out of range [%d, %d]",
			c.EfConstruction, MinEfConstruction, MaxEfConstruction))
	}
	if c.Workers < 0 {
		errs = append(errs, fmt.Errorf("hnsw: workers(%d) must not be negative", c.Workers))
	}
	return errors.Join(errs...)
}

// ParseParams reads the Milvus HNSW build parameters M and efConstruction
// from an index's parameters (absent ones keep their defaults) and checks
// them against the Milvus limits. The error names the offending parameter.
func ParseParams(params map[string]string) (Config, error) {
	cfg := Defaults()
	for key, dst := range map[string]*int{"M": &cfg.M, "efConstruction": &cfg.EfConstruction} {
		v, ok := params[key]
		if !ok {
			continue
		}
		n, err := index.IntParam(key, v)
		if err != nil {
			return Config{}, fmt.Errorf("hnsw: %w", err)
		}
		*dst = n
	}
	if cfg.M < MinM || cfg.M > MaxM {
		return Config{}, fmt.Errorf("hnsw: param 'M' (%d) should be in range [%d, %d]", cfg.M, MinM, MaxM)
	}
	if cfg.EfConstruction < MinEfConstruction || cfg.EfConstruction > MaxEfConstruction {
		return Config{}, fmt.Errorf("hnsw: param 'efConstruction' (%d) should be in range [%d, %d]",
			cfg.EfConstruction, MinEfConstruction, MaxEfConstruction)
	}
	return cfg, nil
}

// refineTypeNames lists the refine types in Milvus's error message.
const refineTypeNames = "[sq4u, sq6, sq8, fp16, bf16, fp32, flat]"

// parseRefine reads the refine and refine_type parameters shared by
// HNSW_SQ and HNSW_PQ into q. refine is a boolean ("true", "false", any
// case); refine_type is SQ6, SQ8, FP16, BF16, FP32 or FLAT (any case) and
// takes effect only with refine true, which defaults it to FP32.
func parseRefine(params map[string]string, q *QuantConfig) error {
	if v, ok := params["refine"]; ok {
		switch strings.ToLower(strings.Trim(v, `" `)) {
		case "true":
			q.Refine = true
		case "false":
		default:
			return fmt.Errorf("hnsw: param 'refine' (%s) should be a boolean", v)
		}
	}
	q.RefineType = quant.FP32
	if v, ok := params["refine_type"]; ok {
		t, known := quant.ParseKind(strings.Trim(v, `"`))
		if !known || strings.EqualFold(v, "SQ4U") {
			return fmt.Errorf("hnsw: invalid refine type : %s, optional types are %s", v, refineTypeNames)
		}
		q.RefineType = t
	}
	return nil
}

// ParseSQParams reads the Milvus HNSW_SQ build parameters: those of HNSW
// (M, efConstruction), sq_type (SQ6, SQ8, FP16 or BF16; default SQ8),
// refine and refine_type. The errors are worded as Milvus words them.
func ParseSQParams(params map[string]string) (Config, error) {
	cfg, err := ParseParams(params)
	if err != nil {
		return Config{}, err
	}
	cfg.Quant.Kind = quant.SQ8
	if v, ok := params["sq_type"]; ok {
		t, known := quant.ParseKind(v)
		if !known || t == quant.FP32 {
			return Config{}, fmt.Errorf("hnsw: invalid scalar quantizer type")
		}
		cfg.Quant.Kind = t
	}
	if err := parseRefine(params, &cfg.Quant); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// Default HNSW_PQ parameters, as Milvus (knowhere) sets them.
const (
	// DefaultPQM is the default number of PQ sub-vectors, m.
	DefaultPQM = 32
	// DefaultPQNbits is the default PQ code width, nbits.
	DefaultPQNbits = 8
)

// ParsePQParams reads the Milvus HNSW_PQ build parameters: those of HNSW,
// m (default 32; it must divide dim when dim > 0), nbits (default 8),
// refine and refine_type.
func ParsePQParams(params map[string]string, dim int) (Config, error) {
	cfg, err := ParseParams(params)
	if err != nil {
		return Config{}, err
	}
	cfg.Quant = QuantConfig{Kind: quant.PQ, M: DefaultPQM, Nbits: DefaultPQNbits}
	for _, key := range []string{"m", "nbits"} {
		v, ok := params[key]
		if !ok {
			continue
		}
		n, err := index.IntParam(key, v)
		if err != nil {
			return Config{}, fmt.Errorf("hnsw: %w", err)
		}
		if key == "m" {
			cfg.Quant.M = n
		} else {
			cfg.Quant.Nbits = n
		}
	}
	if err := parseRefine(params, &cfg.Quant); err != nil {
		return Config{}, err
	}
	if err := cfg.Quant.validate(dim); err != nil {
		return Config{}, err
	}
	return cfg, nil
}
