package ivf

import (
	"testing"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/indextest"
)

// BenchmarkMarshal writes the fixture's IVF_FLAT index (20000 x 64).
func BenchmarkMarshal(b *testing.B) { indextest.BenchmarkMarshal(b, fix().index(b, Flat, index.L2)) }

// BenchmarkUnmarshal reads the file BenchmarkMarshal writes.
func BenchmarkUnmarshal(b *testing.B) {
	indextest.BenchmarkUnmarshal(b, fix().index(b, Flat, index.L2), load)
}
