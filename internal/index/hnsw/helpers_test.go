package hnsw

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/distance"
	"github.com/strata-db/strata/internal/index/indextest"
)

// exact is the brute-force reference: the k best allowed rows under m,
// scored as Milvus does, ties by row.
func exact(data []float32, dim int, m index.Metric, q []float32, k int, allowed []bool) []index.Hit {
	qn := distance.Norm(q)
	return indextest.TopK(len(data)/dim, k, m, func(i int) (float32, bool) {
		if allowed != nil && !allowed[i] {
			return 0, false
		}
		row := data[i*dim : (i+1)*dim]
		switch m {
		case index.L2:
			return distance.L2Squared(q, row), true
		case index.IP:
			return distance.Dot(q, row), true
		case index.Cosine:
			if rn := distance.Norm(row); rn > 0 && qn > 0 {
				return distance.Dot(q, row) / (qn * rn), true
			}
		}
		return 0, true
	})
}

// lowRank returns n vectors of dimension dim lying near a random
// latent-dimensional subspace: x = z*A + 0.1*noise with z ~ N(0, I_latent).
// Real embeddings have a low intrinsic dimension; i.i.d. Gaussian vectors in
// 64 dimensions do not, and on them HNSW (ours and hnswlib alike) reaches
// only ~0.80 recall@10 at ef=64. The same seed gives the same subspace.
func lowRank(seed uint64, n, dim, latent int) []float32 {
	basis := indextest.Gaussian(rand.New(rand.NewPCG(seed, 0)), latent, dim)
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	v := make([]float32, n*dim)
	z := make([]float32, latent)
	for i := range n {
		for j := range z {
			z[j] = float32(rng.NormFloat64())
		}
		row := v[i*dim : (i+1)*dim]
		for c := range row {
			row[c] = 0.1 * float32(rng.NormFloat64())
		}
		for j, zj := range z {
			for c, a := range basis[j*dim : (j+1)*dim] {
				row[c] += zj * a
			}
		}
	}
	return v
}

// fixture is a shared random data set and index, built once per metric
// because building dominates the test time.
type fixture struct {
	dim     int
	data    []float32
	queries []float32
	idx     *Index
}

const (
	fixN, fixDim, fixQ = 20000, 64, 200
)

var (
	fixMu    sync.Mutex
	fixtures = map[index.Metric]*fixture{}
)

func getFixture(t testing.TB, m index.Metric) *fixture {
	t.Helper()
	fixMu.Lock()
	defer fixMu.Unlock()
	if f, ok := fixtures[m]; ok {
		return f
	}
	seed := 100 + uint64(m)
	f := &fixture{dim: fixDim, data: lowRank(seed, fixN, fixDim, 24), queries: lowRank(seed, fixQ, fixDim, 24)}
	idx, err := Build(context.Background(), f.data, fixDim, m, Config{M: 16, EfConstruction: 200, Seed: 7})
	require.NoError(t, err)
	f.idx = idx
	fixtures[m] = f
	return f
}

func (f *fixture) query(i int) []float32 { return f.queries[i*f.dim : (i+1)*f.dim] }

func newRng() *rand.Rand { return rand.New(rand.NewPCG(42, 42)) }
