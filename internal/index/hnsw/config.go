package hnsw

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
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
		n, err := strconv.Atoi(strings.Trim(v, `" `))
		if err != nil {
			return Config{}, fmt.Errorf("hnsw: param '%s' (%q) should be an integer", key, v)
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
