package sparse

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Kind is the search algorithm of an index.
type Kind uint32

const (
	// Inverted (SPARSE_INVERTED_INDEX) scores every posting of every query
	// dimension (term at a time).
	Inverted Kind = iota
	// WAND (SPARSE_WAND) walks the posting lists document at a time and
	// skips rows whose upper bound cannot beat the current k-th score.
	WAND
)

// String returns the Milvus index type name.
func (k Kind) String() string {
	switch k {
	case Inverted:
		return "SPARSE_INVERTED_INDEX"
	case WAND:
		return "SPARSE_WAND"
	}
	return fmt.Sprintf("Kind(%d)", uint32(k))
}

// ParseKind maps a Milvus index type to a Kind: SPARSE_INVERTED_INDEX (and
// AUTOINDEX, which Milvus builds as it for sparse fields) or SPARSE_WAND.
func ParseKind(indexType string) (Kind, bool) {
	switch strings.ToUpper(indexType) {
	case "SPARSE_INVERTED_INDEX", "AUTOINDEX":
		return Inverted, true
	case "SPARSE_WAND":
		return WAND, true
	}
	return 0, false
}

// IsIndexType reports whether indexType names a sparse index type (not
// counting AUTOINDEX, which serves every vector type).
func IsIndexType(indexType string) bool {
	t := strings.ToUpper(indexType)
	return t == "SPARSE_INVERTED_INDEX" || t == "SPARSE_WAND"
}

// BuildParams configure Build.
type BuildParams struct {
	Kind Kind
	// DropRatioBuild in [0, 1) drops that fraction of all stored values,
	// the smallest by absolute value, from the posting lists. Searches then
	// refine their candidates with the full rows.
	DropRatioBuild float64
}

// InvertedIndexAlgos are the values Milvus 2.6 accepts for the
// inverted_index_algo build parameter. Every search path here returns the
// exact top k when nothing is dropped, so the choice is validated and
// recorded but does not change results.
var InvertedIndexAlgos = []string{"TAAT_NAIVE", "DAAT_WAND", "DAAT_MAXSCORE"}

// ParseBuildParams reads the Milvus index parameters of a sparse index:
// index_type, drop_ratio_build (a number in [0, 1), default 0) and
// inverted_index_algo (one of InvertedIndexAlgos, exact case, as Milvus
// checks it). The metric is checked by the caller (only IP is supported).
func ParseBuildParams(indexType string, params map[string]string) (BuildParams, error) {
	k, ok := ParseKind(indexType)
	if !ok {
		return BuildParams{}, fmt.Errorf("index type %s is not a sparse index type", indexType)
	}
	p := BuildParams{Kind: k}
	if v, ok := params["drop_ratio_build"]; ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || f < 0 || f >= 1 {
			return BuildParams{}, fmt.Errorf("invalid drop_ratio_build: %s, must be in range [0, 1)", v)
		}
		p.DropRatioBuild = f
	}
	if v, ok := params["inverted_index_algo"]; ok && !slices.Contains(InvertedIndexAlgos, v) {
		return BuildParams{}, fmt.Errorf("sparse inverted index algo %s not found or not supported, supported: %v",
			v, InvertedIndexAlgos)
	}
	return p, nil
}

// DefaultRefineFactor is how many times k candidates an approximate search
// (one that dropped values at build or search time) collects before it
// rescores them exactly.
const DefaultRefineFactor = 10

// SearchParams are the per-request knobs of Search.
type SearchParams struct {
	// DropRatioSearch in [0, 1) ignores that fraction of the query's
	// values, the smallest by absolute value.
	DropRatioSearch float64
	// RefineFactor (>= 1; 0 = DefaultRefineFactor) multiplies k for the
	// candidates of an approximate search.
	RefineFactor int
}

// CheckDropRatioSearch validates a drop_ratio_search value as Milvus does.
func CheckDropRatioSearch(f float64) error {
	if f < 0 || f >= 1 {
		return fmt.Errorf("invalid drop_ratio_search: %v, must be in range [0, 1)", f)
	}
	return nil
}
