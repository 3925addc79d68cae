package diskann

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/strata-db/strata/internal/index"
)

// Parameter defaults and limits, as Milvus documents them for DISKANN.
const (
	// DefaultMaxDegree is max_degree's default.
	DefaultMaxDegree = 56
	// MaxMaxDegree is the largest accepted max_degree (the smallest is 1).
	MaxMaxDegree = 512
	// DefaultSearchListSize is search_list_size's default (the build's
	// candidate list).
	DefaultSearchListSize = 100
	// DefaultPQCodeBudgetRatio is pq_code_budget_gb_ratio's default: the
	// PQ codes take an eighth of the raw vectors' size.
	DefaultPQCodeBudgetRatio = 0.125
	// MaxPQCodeBudgetRatio is the largest accepted pq_code_budget_gb_ratio
	// (it must be above 0).
	MaxPQCodeBudgetRatio = 0.25
	// DefaultSearchList is the search parameter search_list's default;
	// a search refuses a value below k.
	DefaultSearchList = 100
)

// Config holds the build parameters of an index.
type Config struct {
	// MaxDegree is the most neighbours a node keeps (max_degree, [1, 512]).
	MaxDegree int
	// SearchListSize is the candidate list of the graph build
	// (search_list_size, >= 1).
	SearchListSize int
	// PQCodeBudgetRatio is the PQ codes' size as a fraction of the raw
	// float32 vectors' (pq_code_budget_gb_ratio, (0, 0.25]).
	PQCodeBudgetRatio float64
	// Seed seeds the graph build and the PQ training.
	Seed uint64
	// Workers is the number of build goroutines; 0 means all cores.
	Workers int
}

// Defaults returns Milvus's defaults.
func Defaults() Config {
	return Config{
		MaxDegree: DefaultMaxDegree, SearchListSize: DefaultSearchListSize,
		PQCodeBudgetRatio: DefaultPQCodeBudgetRatio, Seed: 42,
	}
}

// Validate checks the parameters against Milvus's limits; the error names
// each offending parameter.
func (c Config) Validate() error {
	var errs []error
	if c.MaxDegree < 1 || c.MaxDegree > MaxMaxDegree {
		errs = append(errs, fmt.Errorf("diskann: param 'max_degree' (%d) should be in range [1, %d]", c.MaxDegree, MaxMaxDegree))
	}
	if c.SearchListSize < 1 || c.SearchListSize > math.MaxInt32 {
		errs = append(errs, fmt.Errorf("diskann: param 'search_list_size' (%d) should be in range [1, %d]", c.SearchListSize, math.MaxInt32))
	}
	if !(c.PQCodeBudgetRatio > 0 && c.PQCodeBudgetRatio <= MaxPQCodeBudgetRatio) {
		errs = append(errs, fmt.Errorf("diskann: param 'pq_code_budget_gb_ratio' (%g) should be in range (0, %g]", c.PQCodeBudgetRatio, MaxPQCodeBudgetRatio))
	}
	if c.Workers < 0 {
		errs = append(errs, fmt.Errorf("diskann: workers(%d) must not be negative", c.Workers))
	}
	return errors.Join(errs...)
}

// ParseParams reads the Milvus DISKANN build parameters max_degree,
// search_list_size and pq_code_budget_gb_ratio from an index's parameters
// (absent ones keep their defaults) and validates them.
func ParseParams(params map[string]string) (Config, error) {
	cfg := Defaults()
	for _, key := range []string{"max_degree", "search_list_size"} {
		v, ok := params[key]
		if !ok {
			continue
		}
		n, err := index.IntParam(key, v)
		if err != nil {
			return Config{}, fmt.Errorf("diskann: %w", err)
		}
		if key == "max_degree" {
			cfg.MaxDegree = n
		} else {
			cfg.SearchListSize = n
		}
	}
	if v, ok := params["pq_code_budget_gb_ratio"]; ok {
		f, err := strconv.ParseFloat(strings.Trim(v, `" `), 64)
		if err != nil {
			return Config{}, fmt.Errorf("diskann: invalid float value, key: 'pq_code_budget_gb_ratio', value: '%s'", v)
		}
		cfg.PQCodeBudgetRatio = f
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// SearchList returns the candidate list size of a search for k hits:
// ef (the request's search_list; 0 selects DefaultSearchList, raised to k
// as Milvus's default is). A given value below k is refused.
func SearchList(ef, k int) (int, error) {
	if ef == 0 {
		return max(DefaultSearchList, k), nil
	}
	if ef < k {
		return 0, fmt.Errorf("diskann: search_list(%d) should be larger than k(%d)", ef, k)
	}
	return ef, nil
}

// PQSubspaces returns the number of PQ sub-spaces (code bytes a row) for
// vectors of dimension dim under the code budget ratio: the largest
// divisor of dim not above ratio*4*dim, at least 1.
func PQSubspaces(dim int, ratio float64) int {
	budget := int(ratio * 4 * float64(dim))
	for m := min(budget, dim); m > 1; m-- {
		if dim%m == 0 {
			return m
		}
	}
	return 1
}
