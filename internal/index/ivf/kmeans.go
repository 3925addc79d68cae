package ivf

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/strata-db/strata/internal/index/distance"
)

// splitEps is the relative perturbation that separates a centroid split to
// refill an empty cluster from the centroid it was copied from.
const splitEps = 1.0 / 1024

// workerCount resolves Config.Workers.
func workerCount(w int) int {
	if w <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return w
}

// parallelFor calls fn over [0, n) split into contiguous chunks, on up to
// workers goroutines that it starts and joins before returning. Every
// caller writes only the outputs of its own chunk, so results do not depend
// on the number of workers. Once ctx ends the chunks not yet started are
// skipped: the caller checks ctx.Err() afterwards and discards the output.
func parallelFor(ctx context.Context, n, workers int, fn func(lo, hi int)) {
	const minChunk = 256
	if n == 0 {
		return
	}
	chunks := min(workers*4, (n+minChunk-1)/minChunk)
	if workers <= 1 || chunks <= 1 {
		fn(0, n)
		return
	}
	size := (n + chunks - 1) / chunks
	var (
		wg   sync.WaitGroup
		next = make(chan int, chunks)
	)
	for lo := 0; lo < n; lo += size {
		next <- lo
	}
	close(next)
	for range min(workers, chunks) {
		wg.Go(func() {
			for lo := range next {
				if ctx.Err() != nil {
					continue
				}
				fn(lo, min(lo+size, n))
			}
		})
	}
	wg.Wait()
}

// sampleRows returns the indices of min(n, limit) distinct rows drawn
// uniformly by rng, in ascending order; all rows when n <= limit.
func sampleRows(n, limit int, rng *rand.Rand) []int {
	if n <= limit {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	// Partial Fisher-Yates over a permutation, then a bitmap to restore
	// row order (which keeps the gathered sample cache friendly).
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	for i := range limit {
		j := i + rng.IntN(n-i)
		perm[i], perm[j] = perm[j], perm[i]
	}
	picked := make([]bool, n)
	for _, r := range perm[:limit] {
		picked[r] = true
	}
	idx := make([]int, 0, limit)
	for i, p := range picked {
		if p {
			idx = append(idx, i)
		}
	}
	return idx
}

// assign returns, for each of the len(data)/dim rows, the index of its
// nearest centroid by squared L2 distance (the lowest index on ties), and
// writes that distance to dists when dists is non-nil.
//
// Once ctx ends, part of the output is left unset (see parallelFor).
func assign(ctx context.Context, data []float32, dim int, centroids []float32, workers int, dists []float32) []int32 {
	n, k := len(data)/dim, len(centroids)/dim
	out := make([]int32, n)
	parallelFor(ctx, n, workers, func(lo, hi int) {
		buf := make([]float32, k)
		for i := lo; i < hi; i++ {
			distance.L2SquaredBatch(data[i*dim:(i+1)*dim], centroids, buf)
			best, bd := 0, buf[0]
			for c, d := range buf[1:] {
				if d < bd {
					best, bd = c+1, d
				}
			}
			out[i] = int32(best)
			if dists != nil {
				dists[i] = bd
			}
		}
	})
	return out
}

// assignIP returns, for each of the len(data)/dim rows, the index of the
// centroid with the largest inner product (the lowest index on ties).
//
// Once ctx ends, part of the output is left unset (see parallelFor).
func assignIP(ctx context.Context, data []float32, dim int, centroids []float32, workers int) []int32 {
	n, k := len(data)/dim, len(centroids)/dim
	out := make([]int32, n)
	parallelFor(ctx, n, workers, func(lo, hi int) {
		buf := make([]float32, k)
		for i := lo; i < hi; i++ {
			distance.DotBatch(data[i*dim:(i+1)*dim], centroids, buf)
			best, bd := 0, buf[0]
			for c, d := range buf[1:] {
				if d > bd {
					best, bd = c+1, d
				}
			}
			out[i] = int32(best)
		}
	})
	return out
}

// kmeans clusters the len(data)/dim rows of data into k centroids with
// Lloyd's algorithm under squared L2 distance and returns them row-major.
// It runs cfg.Iterations iterations after seeding by cfg.Init; rng drives
// every random choice, so the result depends only on the data, k, cfg and
// the state of rng. With no more rows than centroids, the rows themselves
// (repeated as needed) are the centroids; with no rows they are zero.
//
// It returns ctx.Err() soon after ctx ends.
func kmeans(ctx context.Context, data []float32, dim, k int, cfg Config, rng *rand.Rand) ([]float32, error) {
	n := len(data) / dim
	cent := make([]float32, k*dim)
	if n == 0 {
		return cent, nil
	}
	if n <= k {
		for c := range k {
			r := c % n
			copy(cent[c*dim:(c+1)*dim], data[r*dim:(r+1)*dim])
		}
		return cent, nil
	}
	workers := workerCount(cfg.Workers)
	switch cfg.Init {
	case InitRandom:
		for c, r := range sampleRows(n, k, rng) {
			copy(cent[c*dim:(c+1)*dim], data[r*dim:(r+1)*dim])
		}
	default:
		if err := seedPlusPlus(ctx, data, dim, k, cent, workers, rng); err != nil {
			return nil, err
		}
	}

	sums := make([]float64, k*dim)
	sizes := make([]int, k)
	for range cfg.Iterations {
		labels := assign(ctx, data, dim, cent, workers, nil)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		clear(sums)
		clear(sizes)
		for i, c := range labels {
			sizes[c]++
			s := sums[int(c)*dim : int(c+1)*dim]
			for j, v := range data[i*dim : (i+1)*dim] {
				s[j] += float64(v)
			}
		}
		for c, sz := range sizes {
			if sz == 0 {
				continue
			}
			inv := 1 / float64(sz)
			for j, s := range sums[c*dim : (c+1)*dim] {
				cent[c*dim+j] = float32(s * inv)
			}
		}
		splitEmpty(cent, dim, sizes, rng)
	}
	return cent, nil
}

// seedPlusPlus fills cent with k rows of data chosen by D² sampling: the
// first uniformly, each next one with probability proportional to its
// squared distance to the nearest centroid chosen so far. It returns
// ctx.Err() soon after ctx ends.
func seedPlusPlus(ctx context.Context, data []float32, dim, k int, cent []float32, workers int, rng *rand.Rand) error {
	n := len(data) / dim
	minD := make([]float32, n)
	first := rng.IntN(n)
	copy(cent[:dim], data[first*dim:(first+1)*dim])
	parallelFor(ctx, n, workers, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			minD[i] = distance.L2Squared(data[i*dim:(i+1)*dim], cent[:dim])
		}
	})
	for c := 1; c < k; c++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		var total float64
		for _, d := range minD {
			total += float64(d)
		}
		pick := rng.IntN(n)
		if total > 0 {
			r := rng.Float64() * total
			for i, d := range minD {
				r -= float64(d)
				if r < 0 {
					pick = i
					break
				}
			}
		}
		cc := cent[c*dim : (c+1)*dim]
		copy(cc, data[pick*dim:(pick+1)*dim])
		parallelFor(ctx, n, workers, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				if d := distance.L2Squared(data[i*dim:(i+1)*dim], cc); d < minD[i] {
					minD[i] = d
				}
			}
		})
	}
	return ctx.Err()
}

// splitEmpty gives every empty cluster half of a large one: it copies the
// centroid of a cluster chosen with probability proportional to its size
// minus one and moves the two copies apart by splitEps in alternating
// directions, as faiss does.
func splitEmpty(cent []float32, dim int, sizes []int, rng *rand.Rand) {
	k := len(sizes)
	for c := range k {
		if sizes[c] != 0 {
			continue
		}
		total := 0
		for _, s := range sizes {
			total += max(s-1, 0)
		}
		if total == 0 {
			return // every cluster holds at most one row
		}
		r := rng.IntN(total)
		src := 0
		for i, s := range sizes {
			r -= max(s-1, 0)
			if r < 0 {
				src = i
				break
			}
		}
		a, b := cent[c*dim:(c+1)*dim], cent[src*dim:(src+1)*dim]
		copy(a, b)
		for j := range a {
			if j%2 == 0 {
				a[j] *= 1 + splitEps
				b[j] *= 1 - splitEps
			} else {
				a[j] *= 1 - splitEps
				b[j] *= 1 + splitEps
			}
		}
		sizes[c] = sizes[src] / 2
		sizes[src] -= sizes[c]
	}
}

// KMeans clusters the len(data)/dim rows of data into k centroids under
// squared L2 and returns them row-major: random seeding from the rows, then
// iterations Lloyd iterations, on workers goroutines (0 = all cores). It is
// the trainer of this package's inverted lists and product quantizers,
// exported for the product quantizers of other index packages (hnsw's
// HNSW_PQ). The result depends only on the arguments, never on workers.
// It returns ctx.Err() soon after ctx ends.
func KMeans(ctx context.Context, data []float32, dim, k, iterations, workers int, seed uint64) ([]float32, error) {
	cfg := Config{Init: InitRandom, Iterations: iterations, Workers: workers}
	return kmeans(ctx, data, dim, k, cfg, rand.New(rand.NewPCG(seed, 0x1bf5_8fe3_d2c1_a06b)))
}
