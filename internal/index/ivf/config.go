package ivf

import (
	"errors"
	"fmt"
	"strings"

	"github.com/strata-db/strata/internal/index"
)

// Kind is the encoding of the vectors stored in the inverted lists.
type Kind uint8

const (
	// Flat stores the vectors as float32 (Milvus IVF_FLAT).
	Flat Kind = iota
	// SQ8 stores one byte per dimension, scaled between the per-dimension
	// minimum and maximum of the training sample (Milvus IVF_SQ8).
	SQ8
	// PQ stores M product-quantizer codes of Nbits bits per vector, each
	// quantising the residual of one sub-space (Milvus IVF_PQ).
	PQ
)

// ParseKind parses a Milvus index type name: "IVF_FLAT", "IVF_SQ8" or
// "IVF_PQ" (case-insensitive).
func ParseKind(s string) (Kind, error) {
	switch strings.ToUpper(s) {
	case "IVF_FLAT":
		return Flat, nil
	case "IVF_SQ8":
		return SQ8, nil
	case "IVF_PQ":
		return PQ, nil
	}
	return 0, fmt.Errorf("ivf: unsupported index type %q", s)
}

// String returns the Milvus index type name of k.
func (k Kind) String() string {
	switch k {
	case Flat:
		return "IVF_FLAT"
	case SQ8:
		return "IVF_SQ8"
	case PQ:
		return "IVF_PQ"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Valid reports whether k is one of the defined kinds.
func (k Kind) Valid() bool { return k <= PQ }

// Init selects how k-means picks its initial centroids.
type Init uint8

const (
	// InitKMeansPlusPlus seeds centroids by D² sampling (Arthur and
	// Vassilvitskii, 2007). The coarse centroids are drawn from a sample of
	// at most 8 training rows per centroid, which costs less than one Lloyd
	// iteration.
	InitKMeansPlusPlus Init = iota
	// InitRandom seeds centroids with distinct random sample rows.
	InitRandom
)

// Parameter limits, as Milvus enforces them for the IVF family.
const (
	// MinNlist and MaxNlist bound Config.Nlist.
	MinNlist, MaxNlist = 1, 65536
	// MinNbits and MaxNbits bound Config.Nbits; only MaxSupportedNbits and
	// below can be built.
	MinNbits, MaxNbits = 1, 16
	// MaxSupportedNbits is the widest PQ code this package builds: codes are
	// stored one byte per sub-quantizer.
	MaxSupportedNbits = 8
	// DefaultNlist is the Milvus default number of inverted lists.
	DefaultNlist = 128
	// DefaultNbits is the Milvus default PQ code width.
	DefaultNbits = 8
	// DefaultNprobe is the number of lists probed when SearchParams.Nprobe
	// is 0 (capped at Nlist).
	DefaultNprobe = 8
)

// Config holds the build parameters of an index.
type Config struct {
	// Kind is the list encoding: Flat, SQ8 or PQ.
	Kind Kind
	// Nlist is the number of inverted lists (k-means centroids); Milvus
	// accepts [1, 65536].
	Nlist int
	// M is the number of PQ sub-quantizers; it must divide the dimension.
	// Only PQ uses it.
	M int
	// Nbits is the PQ code width in bits; Milvus accepts [1, 16] and this
	// package builds up to 8. Only PQ uses it.
	Nbits int
	// Init selects the k-means seeding.
	Init Init
	// Iterations is the most Lloyd iterations of every k-means run. The
	// coarse k-means stops earlier once an iteration moves at most 2 % of
	// the training rows to another cluster and leaves none empty; the
	// others stop earlier only once no row moves (which changes nothing).
	Iterations int
	// MaxPointsPerCentroid bounds the training sample at
	// MaxPointsPerCentroid*centroids rows, drawn at random.
	MaxPointsPerCentroid int
	// Seed seeds sampling and initialisation. Builds with the same data and
	// Config are identical whatever Workers is.
	Seed uint64
	// Workers is the number of goroutines used to assign and encode rows;
	// 0 means runtime.GOMAXPROCS(0).
	Workers int
}

// Defaults returns a Config of the given kind with the Milvus defaults
// (nlist 128, nbits 8; M is left 0 and must be set for PQ), k-means++
// seeding, at most 20 iterations, at most 256 training rows per centroid,
// seed 42 and all cores.
func Defaults(k Kind) Config {
	return Config{
		Kind:                 k,
		Nlist:                DefaultNlist,
		Nbits:                DefaultNbits,
		Init:                 InitKMeansPlusPlus,
		Iterations:           20,
		MaxPointsPerCentroid: 256,
		Seed:                 42,
	}
}

// Validate checks the parameters that do not depend on the dimension;
// Build also checks that M divides it.
func (c Config) Validate() error {
	var errs []error
	if !c.Kind.Valid() {
		errs = append(errs, fmt.Errorf("ivf: invalid kind %v", c.Kind))
	}
	if c.Nlist < MinNlist || c.Nlist > MaxNlist {
		errs = append(errs, fmt.Errorf("ivf: nlist(%d) out of range [%d, %d]", c.Nlist, MinNlist, MaxNlist))
	}
	if c.Kind == PQ {
		if c.M <= 0 {
			errs = append(errs, fmt.Errorf("ivf: m(%d) must be positive", c.M))
		}
		switch {
		case c.Nbits < MinNbits || c.Nbits > MaxNbits:
			errs = append(errs, fmt.Errorf("ivf: nbits(%d) out of range [%d, %d]", c.Nbits, MinNbits, MaxNbits))
		case c.Nbits > MaxSupportedNbits:
			errs = append(errs, fmt.Errorf("ivf: nbits(%d) is not supported, use at most %d", c.Nbits, MaxSupportedNbits))
		}
	}
	if c.Init != InitKMeansPlusPlus && c.Init != InitRandom {
		errs = append(errs, fmt.Errorf("ivf: invalid init %d", c.Init))
	}
	if c.Iterations < 0 {
		errs = append(errs, fmt.Errorf("ivf: iterations(%d) must not be negative", c.Iterations))
	}
	if c.MaxPointsPerCentroid < 1 {
		errs = append(errs, fmt.Errorf("ivf: max points per centroid(%d) must be positive", c.MaxPointsPerCentroid))
	}
	if c.Workers < 0 {
		errs = append(errs, fmt.Errorf("ivf: workers(%d) must not be negative", c.Workers))
	}
	return errors.Join(errs...)
}

// validateDim checks the parameters that depend on the dimension.
func (c Config) validateDim(dim int) error {
	if dim <= 0 {
		return fmt.Errorf("ivf: dim(%d) must be positive", dim)
	}
	if c.Kind == PQ && c.M > 0 && dim%c.M != 0 {
		return fmt.Errorf("ivf: dimension %d is not a multiple of m(%d)", dim, c.M)
	}
	return nil
}

// ParseParams returns the Config for a Milvus index type ("IVF_FLAT",
// "IVF_SQ8" or "IVF_PQ") and its index parameters as strings ("nlist", and
// for IVF_PQ "m" and "nbits"), starting from Defaults. With dim > 0 it also
// checks that m divides dim. Unknown keys are ignored.
func ParseParams(indexType string, params map[string]string, dim int) (Config, error) {
	k, err := ParseKind(indexType)
	if err != nil {
		return Config{}, err
	}
	cfg := Defaults(k)
	fields := map[string]*int{"nlist": &cfg.Nlist}
	if k == PQ {
		fields["m"], fields["nbits"] = &cfg.M, &cfg.Nbits
	}
	for _, key := range []string{"nlist", "m", "nbits"} {
		dst, want := fields[key]
		v, ok := params[key]
		if !want || !ok {
			continue
		}
		n, err := index.IntParam(key, v)
		if err != nil {
			return Config{}, fmt.Errorf("ivf: %w", err)
		}
		*dst = n
	}
	if k == PQ && cfg.M == 0 {
		return Config{}, errors.New("ivf: IVF_PQ needs the parameter m")
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	if dim > 0 {
		if err := cfg.validateDim(dim); err != nil {
			return Config{}, err
		}
	}
	return cfg, nil
}
