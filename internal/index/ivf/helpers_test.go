package ivf

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/distance"
	"github.com/strata-db/strata/internal/index/indextest"
)

// clustered returns n vectors of dimension dim drawn from a mixture of
// `centers` clusters. Centres are N(0, I); a point is its centre plus
// 0.3*z*B, where z ~ N(0, I_latent) and B is a random latent×dim basis
// shared by all clusters, plus 0.05*N(0, I) noise. Real embeddings are
// clustered and have a low intrinsic dimension; i.i.d. isotropic noise
// would make the neighbours within a cluster a worst case for PQ. The same
// seed gives the same centres and basis; salt varies the points.
func clustered(seed, salt uint64, n, dim, centers, latent int) []float32 {
	crng := rand.New(rand.NewPCG(seed, 0))
	cent := make([]float32, centers*dim)
	for i := range cent {
		cent[i] = float32(crng.NormFloat64())
	}
	basis := make([]float32, latent*dim)
	for i := range basis {
		basis[i] = 0.3 * float32(crng.NormFloat64())
	}
	rng := rand.New(rand.NewPCG(seed, salt))
	v := make([]float32, n*dim)
	for i := range n {
		c := rng.IntN(centers)
		row := v[i*dim : (i+1)*dim]
		for j := range row {
			row[j] = cent[c*dim+j] + 0.05*float32(rng.NormFloat64())
		}
		for l := range latent {
			z := float32(rng.NormFloat64())
			for j, b := range basis[l*dim : (l+1)*dim] {
				row[j] += z * b
			}
		}
	}
	return v
}

// exact is the brute-force reference: the k best allowed rows under m,
// scored as Milvus does, ties by row. For COSINE it scores the normalised
// vectors by inner product, as the index does.
func exact(data []float32, dim int, m index.Metric, q []float32, k int, allowed []bool) []index.Hit {
	if m == index.Cosine {
		q = slices.Clone(q)
		normalize(q)
	}
	row := make([]float32, dim)
	return indextest.TopK(len(data)/dim, k, m, func(i int) (float32, bool) {
		if allowed != nil && !allowed[i] {
			return 0, false
		}
		copy(row, data[i*dim:(i+1)*dim])
		switch m {
		case index.L2:
			return distance.L2Squared(q, row), true
		case index.Cosine:
			normalize(row)
		}
		return distance.Dot(q, row), true
	})
}

const (
	fixN, fixDim, fixQ, fixNlist = 20000, 64, 100, 128
	fixCenters, fixLatent        = 200, 8
)

// fixture is the shared data set; indexes and ground truth are built once
// per configuration because building dominates the test time.
type fixture struct {
	data, queries []float32
	mu            sync.Mutex
	idx           map[string]*Index
	truth         map[index.Metric][][]index.Hit
}

var fix = sync.OnceValue(func() *fixture {
	return &fixture{
		data:    clustered(11, 1, fixN, fixDim, fixCenters, fixLatent),
		queries: clustered(11, 2, fixQ, fixDim, fixCenters, fixLatent),
		idx:     map[string]*Index{},
		truth:   map[index.Metric][][]index.Hit{},
	}
})

func (f *fixture) query(i int) []float32 { return f.queries[i*fixDim : (i+1)*fixDim] }

// testConfig is the configuration the fixture indexes use: nlist 128 and,
// for PQ, m = dim/8 = 8 sub-quantizers of 8 bits (one byte per 8 floats);
// 10 k-means iterations instead of 20 keep the builds quick.
func testConfig(k Kind) Config {
	cfg := Defaults(k)
	cfg.Nlist = fixNlist
	cfg.Iterations = 10
	if k == PQ {
		cfg.M = fixDim / 8
	}
	return cfg
}

func (f *fixture) index(t testing.TB, k Kind, m index.Metric) *Index {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	key := fmt.Sprint(k, m)
	if x, ok := f.idx[key]; ok {
		return x
	}
	x, err := Build(context.Background(), f.data, fixDim, m, testConfig(k))
	require.NoError(t, err)
	f.idx[key] = x
	return x
}

// groundTruth returns the exact top-10 of every query under m.
func (f *fixture) groundTruth(m index.Metric) [][]index.Hit {
	f.mu.Lock()
	defer f.mu.Unlock()
	if g, ok := f.truth[m]; ok {
		return g
	}
	g := make([][]index.Hit, fixQ)
	for i := range g {
		g[i] = exact(f.data, fixDim, m, f.query(i), 10, nil)
	}
	f.truth[m] = g
	return g
}

// requireSameHits checks that got holds the rows of want in the same order
// with scores equal up to rounding: the batched distance kernels sum in
// another order than the pairwise ones the reference uses.
func requireSameHits(t *testing.T, want, got []index.Hit) {
	t.Helper()
	require.Len(t, got, len(want))
	for j := range want {
		require.Equal(t, want[j].Row, got[j].Row, "hit %d", j)
		require.InDelta(t, want[j].Score, got[j].Score, 1e-5*max(1, math.Abs(float64(want[j].Score))), "hit %d", j)
	}
}
