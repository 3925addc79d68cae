package ivf

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/indextest"
)

// TestKMeansEarlyStop checks the coarse k-means's stopping rule and seeding
// sample on a small clustered set (6,000 × 16, 60 clusters, 48 centroids,
// so k-means++ draws from 384 of the rows): the result is the same whatever
// the number of workers; it is exactly the result of a run cut off after
// some number of iterations below the cap, where the last assignment moved
// at most stopFraction of the rows and the one before more; and the labels
// it returns are the rows' nearest centroids.
func TestKMeansEarlyStop(t *testing.T) {
	const n, dim, k, seed = 6000, 16, 48, 9
	data := clustered(3, 1, n, dim, 60, 4)
	run := func(iters, workers int, opt lloyd) ([]float32, []int32) {
		cfg := Defaults(Flat)
		cfg.Iterations, cfg.Workers = iters, workers
		cent, labels, err := kmeans(context.Background(), data, dim, k, cfg, opt, rand.New(rand.NewPCG(seed, 1)))
		require.NoError(t, err)
		return cent, labels
	}
	early := lloyd{stop: stopFraction, seedRows: seedPointsPerCentroid, labels: true}
	cent, labels := run(20, 1, early)
	cent3, labels3 := run(20, 3, early)
	require.Equal(t, cent, cent3, "centroids depend on the number of workers")
	require.Equal(t, labels, labels3)
	require.Equal(t, assign(context.Background(), data, dim, cent, 1), labels)

	// The early stop is a truncation: find the iteration count whose
	// plain run (stopping only when no row moves) gives the same result.
	cut := lloyd{seedRows: seedPointsPerCentroid, labels: true}
	var prev [][]int32
	stopped := -1
	for it := 0; it < 20; it++ {
		c, l := run(it, 1, cut)
		prev = append(prev, l)
		if slices.Equal(c, cent) {
			require.Equal(t, labels, l)
			stopped = it
			break
		}
	}
	require.Positive(t, stopped, "the run did not stop before the 20-iteration cap")
	moved := func(a, b []int32) int {
		m := 0
		for i := range a {
			if a[i] != b[i] {
				m++
			}
		}
		return m
	}
	limit := int(stopFraction * n)
	require.LessOrEqual(t, moved(prev[stopped-1], prev[stopped]), limit)
	if stopped >= 2 {
		require.Greater(t, moved(prev[stopped-2], prev[stopped-1]), limit)
	}
	t.Logf("stopped after %d of 20 iterations", stopped)
}

// TestBuildEarlyStopRecall compares Build's training (k-means++ on a
// sample, early stop) with the full procedure (k-means++ over every
// training row, all 20 iterations) on the clustered fixture: recall@10 at
// nprobe 4 and 16 stays within 0.02 of the full procedure's. It also
// checks that IVF_FLAT's lists, taken from the k-means labels, hold every
// row nearest to its list's centroid.
func TestBuildEarlyStopRecall(t *testing.T) {
	f := fix()
	cfg := testConfig(Flat)
	cfg.Iterations = 20
	fast, err := Build(context.Background(), f.data, fixDim, index.L2, cfg)
	require.NoError(t, err)
	full, err := build(context.Background(), f.data, fixDim, index.L2, cfg, lloyd{})
	require.NoError(t, err)
	truth := f.groundTruth(index.L2)
	for _, np := range []int{4, 16} {
		recall := func(x *Index) float64 {
			var sum float64
			for i := range fixQ {
				got, err := x.Search(f.query(i), 10, index.SearchParams{Nprobe: np}, nil)
				require.NoError(t, err)
				sum += indextest.Recall(got, truth[i])
			}
			return sum / fixQ
		}
		rf, rfull := recall(fast), recall(full)
		t.Logf("nprobe=%d recall@10: early stop %.4f, full %.4f", np, rf, rfull)
		require.GreaterOrEqual(t, rf, rfull-0.02)
	}
	want := assign(context.Background(), f.data, fixDim, fast.centroids, 1)
	for l := range fast.cfg.Nlist {
		for p := fast.offsets[l]; p < fast.offsets[l+1]; p++ {
			require.Equal(t, int32(l), want[fast.rows[p]])
		}
	}
}
