package ivf

import (
	"context"
	"math"
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
	parallelForMin(ctx, n, workers, 256, fn)
}

// parallelForMin is parallelFor with chunks of at least minChunk items
// (except the last), for callers whose items are already large (blocks of
// rows).
func parallelForMin(ctx context.Context, n, workers, minChunk int, fn func(lo, hi int)) {
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

// assignBlock is the number of rows assign and assignIP score against all
// the centroids with one distance.Queries.DotMatrix call: the rows are the
// kernel's queries (48 × 128 dimensions pack into 24 KiB, which stays in L1,
// and 48 is a whole number of the panels of both the AVX2 and the AVX-512
// panel kernels) and the centroids stream past them once per block, so
// every centroid value loaded serves several rows, as in the GEMM faiss's
// k-means calls. Blocks are fixed slices of the rows, so the result does
// not depend on the number of workers.
const assignBlock = 48

// blockDots calls fn(lo, hi, dots) for every block of assignBlock rows of
// data, in parallel, with dots[(i-lo)*k+c] = <row i, centroid c>. prepared,
// when not nil, holds the blocks already prepared by prepareBlocks.
func blockDots(ctx context.Context, data []float32, dim int, centroids []float32, workers int, prepared []*distance.Queries, fn func(lo, hi int, dots []float32)) {
	n, k := len(data)/dim, len(centroids)/dim
	blocks := (n + assignBlock - 1) / assignBlock
	parallelForMin(ctx, blocks, workers, 4, func(blo, bhi int) {
		buf := make([]float32, assignBlock*k)
		for b := blo; b < bhi; b++ {
			if ctx.Err() != nil {
				return
			}
			lo, hi := b*assignBlock, min((b+1)*assignBlock, n)
			dots := buf[:(hi-lo)*k]
			if prepared != nil {
				prepared[b].DotMatrix(centroids, dots)
			} else {
				distance.NewQueries(data[lo*dim:hi*dim], dim).DotMatrix(centroids, dots)
			}
			fn(lo, hi, dots)
		}
	})
}

// preparedMaxBytes bounds the training rows whose blocks kmeans prepares
// once for all its assignment steps: the prepared copy is as large as the
// rows.
const preparedMaxBytes = 256 << 20

// prepareBlocks returns the blocks of assignBlock rows of data prepared for
// blockDots (packed into the panels of the matrix kernel), or nil when
// assign would not use them: a centroid table below blockedMinBytes, or more
// than preparedMaxBytes of rows. Packing is ~6 % of an assignment pass, and
// the rows of a k-means run do not change between its passes.
func prepareBlocks(ctx context.Context, data []float32, dim, k, workers int) []*distance.Queries {
	if k*dim*4 < blockedMinBytes || len(data)*4 > preparedMaxBytes {
		return nil
	}
	n := len(data) / dim
	qs := make([]*distance.Queries, (n+assignBlock-1)/assignBlock)
	parallelForMin(ctx, len(qs), workers, 4, func(blo, bhi int) {
		for b := blo; b < bhi; b++ {
			lo, hi := b*assignBlock, min((b+1)*assignBlock, n)
			qs[b] = distance.NewQueries(data[lo*dim:hi*dim], dim)
		}
	})
	if ctx.Err() != nil {
		return nil
	}
	return qs
}

// blockedMinBytes is the centroid table size from which assign and
// assignIP use the blocked products of blockDots. A smaller table stays in
// the core's L1 and L2 caches, where scoring one row against every centroid
// with the batched kernel is as fast and needs no separate argmin pass
// (measured with BenchmarkBuildFlat: nlist 128 × 64 dimensions, 32 KiB, is
// ~15 % slower blocked; nlist 1024 × 128, 512 KiB, builds 1.6× faster).
const blockedMinBytes = 128 << 10

// assign returns, for each of the len(data)/dim rows, the index of its
// nearest centroid by squared L2 distance (the lowest index on ties). With
// a large centroid table the centroids are ranked by ||c||² - 2<x, c>,
// which orders them as ||x - c||² does (up to rounding), from the block
// products of blockDots.
//
// Once ctx ends, part of the output is left unset (see parallelFor).
func assign(ctx context.Context, data []float32, dim int, centroids []float32, workers int) []int32 {
	return assignPrepared(ctx, data, dim, centroids, workers, nil)
}

// assignPrepared is assign with the blocks of data prepared by
// prepareBlocks (nil: prepared per pass).
func assignPrepared(ctx context.Context, data []float32, dim int, centroids []float32, workers int, prepared []*distance.Queries) []int32 {
	n, k := len(data)/dim, len(centroids)/dim
	out := make([]int32, n)
	if len(centroids)*4 < blockedMinBytes {
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
			}
		})
		return out
	}
	cn := make([]float32, k)
	distance.SquaredNorms(centroids, dim, cn)
	blockDots(ctx, data, dim, centroids, workers, prepared, func(lo, hi int, dots []float32) {
		for i := lo; i < hi; i++ {
			out[i] = int32(argminL2(dots[(i-lo)*k:(i-lo+1)*k], cn))
		}
	})
	return out
}

// argminL2 returns the first c minimising norms[c] - 2*dots[c] with the
// dispatched kernels (see scanKernels.argmin).
func argminL2(dots, norms []float32) int { return scanImpl.argmin(dots, norms) }

// argmin returns the first c with the least key norms[c] - 2*dots[c] among
// the keys below +Inf, or 0 when there is none (a NaN key never wins). The
// assembly scores sixteen keys per step in two independent chains; the
// lane minima are merged here, lower index first on ties, and the last
// len(dots)%16 keys are scanned after them.
func (k scanKernels) argmin(dots, norms []float32) int {
	n16 := len(dots) &^ 15
	if k.argminL2 == nil || n16 == 0 {
		return argminL2Generic(dots, norms)
	}
	norms = norms[:len(dots)]
	var (
		vals [16]float32
		idx  [16]int32
	)
	k.argminL2(dots[:n16], norms[:n16], &vals, &idx)
	best, bd := 0, float32(math.Inf(1))
	for j, v := range vals {
		if c := int(idx[j]); v < bd || (v == bd && c < best) {
			best, bd = c, v
		}
	}
	for c := n16; c < len(dots); c++ {
		if v := norms[c] - 2*dots[c]; v < bd {
			best, bd = c, v
		}
	}
	return best
}

// argminL2Generic is the portable argmin (see scanKernels.argmin). It keeps
// four independent running minima (c mod 4) so that the compare-and-select
// of one does not wait for the previous one, then merges them, lower index
// first on ties.
func argminL2Generic(dots, norms []float32) int {
	k := len(dots)
	norms = norms[:k]
	inf := float32(math.Inf(1))
	bv := [4]float32{inf, inf, inf, inf}
	var bi [4]int
	c := 0
	for ; c+4 <= k; c += 4 {
		d, n := dots[c:c+4:c+4], norms[c:c+4:c+4]
		if v := n[0] - 2*d[0]; v < bv[0] {
			bv[0], bi[0] = v, c
		}
		if v := n[1] - 2*d[1]; v < bv[1] {
			bv[1], bi[1] = v, c+1
		}
		if v := n[2] - 2*d[2]; v < bv[2] {
			bv[2], bi[2] = v, c+2
		}
		if v := n[3] - 2*d[3]; v < bv[3] {
			bv[3], bi[3] = v, c+3
		}
	}
	for ; c < k; c++ {
		if v := norms[c] - 2*dots[c]; v < bv[c&3] {
			bv[c&3], bi[c&3] = v, c
		}
	}
	best, bd := bi[0], bv[0]
	for j := 1; j < 4; j++ {
		if bv[j] < bd || (bv[j] == bd && bi[j] < best) {
			best, bd = bi[j], bv[j]
		}
	}
	return best
}

// assignIP returns, for each of the len(data)/dim rows, the index of the
// centroid with the largest inner product (the lowest index on ties).
//
// Once ctx ends, part of the output is left unset (see parallelFor).
func assignIP(ctx context.Context, data []float32, dim int, centroids []float32, workers int) []int32 {
	n, k := len(data)/dim, len(centroids)/dim
	out := make([]int32, n)
	argmax := func(i int, row []float32) {
		best, bd := 0, row[0]
		for c, d := range row[1:] {
			if d > bd {
				best, bd = c+1, d
			}
		}
		out[i] = int32(best)
	}
	if len(centroids)*4 < blockedMinBytes {
		parallelFor(ctx, n, workers, func(lo, hi int) {
			buf := make([]float32, k)
			for i := lo; i < hi; i++ {
				distance.DotBatch(data[i*dim:(i+1)*dim], centroids, buf)
				argmax(i, buf)
			}
		})
		return out
	}
	blockDots(ctx, data, dim, centroids, workers, nil, func(lo, hi int, dots []float32) {
		for i := lo; i < hi; i++ {
			argmax(i, dots[(i-lo)*k:(i-lo+1)*k])
		}
	})
	return out
}

// stopFraction is the early stop of the coarse k-means (Build's): once an
// assignment step moves at most this fraction of the training rows to
// another cluster, and no cluster is empty, the centroids are final. Lloyd's
// objective falls by less and less as the assignment settles; on the
// clustered benchmark data (100,000 × 128, nlist 1024) 2 % is reached after
// 7–8 iterations, and stopping at 1 % instead (11–12) changed recall@10 by
// at most 0.003. faiss, which Milvus runs, stops after a fixed 10
// iterations.
const stopFraction = 0.02

// seedPointsPerCentroid bounds the rows k-means++ seeding of the coarse
// k-means draws its centroids from: a uniform sample of at most
// seedPointsPerCentroid*k training rows. D² sampling over the sample picks
// centroids spread like the data at a fraction of the cost of a pass over
// every training row per centroid, and the Lloyd iterations that follow run
// on all the training rows.
const seedPointsPerCentroid = 8

// lloyd selects the stopping rule and outputs of one k-means run.
type lloyd struct {
	// stop is the fraction of rows that may still change cluster when the
	// iterations stop early (see stopFraction); 0 stops only once no row
	// changes, which gives exactly the centroids of the full iteration
	// count.
	stop float64
	// seedRows, when positive, bounds the rows k-means++ seeding samples
	// from at seedRows*k (see seedPointsPerCentroid).
	seedRows int
	// labels asks for the labels of the final centroids.
	labels bool
}

// kmeans clusters the len(data)/dim rows of data into k centroids with
// Lloyd's algorithm under squared L2 distance and returns them row-major.
// After seeding by cfg.Init it runs at most cfg.Iterations iterations,
// fewer when an assignment step changes the cluster of at most
// opt.stop*rows rows and leaves no cluster empty (see lloyd). With
// opt.labels it also returns each row's nearest centroid under the returned
// centroids (the assignment step that decided to stop, or one more after
// the last iteration), so a caller that clustered every row need not
// assign them again. rng drives every random choice, so the result depends
// only on the data, k, cfg, opt and the state of rng. With no more rows
// than centroids, the rows themselves (repeated as needed) are the
// centroids; with no rows they are zero (and labels are not returned).
//
// It returns ctx.Err() soon after ctx ends.
func kmeans(ctx context.Context, data []float32, dim, k int, cfg Config, opt lloyd, rng *rand.Rand) ([]float32, []int32, error) {
	n := len(data) / dim
	cent := make([]float32, k*dim)
	if n == 0 {
		return cent, nil, nil
	}
	if n <= k {
		for c := range k {
			r := c % n
			copy(cent[c*dim:(c+1)*dim], data[r*dim:(r+1)*dim])
		}
		return cent, nil, nil
	}
	workers := workerCount(cfg.Workers)
	switch cfg.Init {
	case InitRandom:
		for c, r := range sampleRows(n, k, rng) {
			copy(cent[c*dim:(c+1)*dim], data[r*dim:(r+1)*dim])
		}
	default:
		seedData := data
		if opt.seedRows > 0 && n > opt.seedRows*k {
			seedData = gather(data, dim, sampleRows(n, opt.seedRows*k, rng))
		}
		if err := seedPlusPlus(ctx, seedData, dim, k, cent, workers, rng); err != nil {
			return nil, nil, err
		}
	}

	sums := make([]float64, k*dim)
	sizes := make([]int, k)
	if cfg.Iterations == 0 && !opt.labels {
		return cent, nil, nil
	}
	prepared := prepareBlocks(ctx, data, dim, k, workers)
	var prev []int32
	for it := 0; ; it++ {
		if it == cfg.Iterations && !opt.labels {
			return cent, nil, nil
		}
		labels := assignPrepared(ctx, data, dim, cent, workers, prepared)
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if it == cfg.Iterations {
			return cent, labels, nil
		}
		clear(sizes)
		moved := 0
		for i, c := range labels {
			sizes[c]++
			if prev != nil && prev[i] != c {
				moved++
			}
		}
		if prev != nil && float64(moved) <= opt.stop*float64(n) && !hasEmpty(sizes) {
			if !opt.labels {
				labels = nil
			}
			return cent, labels, nil
		}
		updateCentroids(data, dim, labels, sizes, cent, sums)
		splitEmpty(cent, dim, sizes, rng)
		prev = labels
	}
}

// updateCentroids moves every non-empty cluster's centroid to the mean of
// its rows (labels gives each row's cluster, sizes the cluster sizes); sums
// is k*dim scratch. The sums are float64 and taken in row order, so the
// result does not depend on the number of workers.
func updateCentroids(data []float32, dim int, labels []int32, sizes []int, cent []float32, sums []float64) {
	clear(sums)
	for i, c := range labels {
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
}

// hasEmpty reports whether any cluster size is 0.
func hasEmpty(sizes []int) bool {
	for _, s := range sizes {
		if s == 0 {
			return true
		}
	}
	return false
}

// seedChunk is the number of rows whose distances seedPlusPlus sums into
// one partial total. Chunks are fixed slices of the rows, so the seeding
// does not depend on the number of workers.
const seedChunk = 1024

// seedSkip is the factor of the triangle-inequality test of seedPlusPlus,
// 4 (the squared 2) with a margin for rounding.
const seedSkip = 4 * (1 + 1e-4)

// seedAhead is how many candidate rows ahead seedPlusPlus prefetches.
const seedAhead = 4

// seedPlusPlus fills cent with k rows of data chosen by D² sampling: the
// first uniformly, each next one with probability proportional to its
// squared distance to the nearest centroid chosen so far. It returns
// ctx.Err() soon after ctx ends.
//
// Each round lowers every row's distance to the new centroid c, but skips
// the rows that cannot come closer: if ||c - a||² >= 4 ||x - a||², where a
// is x's nearest centroid so far, then ||x - c|| >= ||x - a|| by the
// triangle inequality (as in Elkan's k-means). Once a few centroids are
// chosen most rows are skipped without reading their vectors, so seeding
// costs a fraction of a Lloyd iteration and still picks exactly what the
// full scan picks. Each chunk of rows keeps the sum of its distances, so
// drawing the next row walks the chunk sums and then one chunk.
func seedPlusPlus(ctx context.Context, data []float32, dim, k int, cent []float32, workers int, rng *rand.Rand) error {
	n := len(data) / dim
	minD := make([]float32, n)
	near := make([]int32, n)
	cc2 := make([]float32, k)
	chunks := (n + seedChunk - 1) / seedChunk
	part := make([]float64, chunks)
	first := rng.IntN(n)
	copy(cent[:dim], data[first*dim:(first+1)*dim])
	// update lowers minD to the distances to centroid c and refreshes the
	// chunk sums; for c == 0 it sets minD.
	update := func(c int) {
		cc := cent[c*dim : (c+1)*dim]
		distance.L2SquaredBatch(cc, cent[:c*dim], cc2[:c])
		parallelForMin(ctx, chunks, workers, 1, func(clo, chi int) {
			cand := make([]int32, 0, seedChunk)
			for ch := clo; ch < chi; ch++ {
				lo, hi := ch*seedChunk, min((ch+1)*seedChunk, n)
				// The rows that can come closer to c, then their
				// distances with the rows seedAhead candidates on
				// prefetched: the candidates are scattered, which
				// defeats the hardware prefetcher.
				cand = cand[:0]
				for i := lo; i < hi; i++ {
					if c == 0 || cc2[near[i]] < seedSkip*minD[i] {
						cand = append(cand, int32(i))
					}
				}
				for j, i := range cand {
					if j+seedAhead < len(cand) {
						p := int(cand[j+seedAhead])
						distance.Prefetch(data[p*dim : (p+1)*dim])
					}
					d := distance.L2Squared(data[int(i)*dim:(int(i)+1)*dim], cc)
					if c == 0 {
						minD[i] = d
					} else if d < minD[i] {
						minD[i], near[i] = d, int32(c)
					}
				}
				var sum float64
				for _, d := range minD[lo:hi] {
					sum += float64(d)
				}
				part[ch] = sum
			}
		})
	}
	update(0)
	for c := 1; c < k; c++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		var total float64
		for _, p := range part {
			total += p
		}
		pick := rng.IntN(n)
		if total > 0 {
			if p := drawD2(minD, part, rng.Float64()*total); p >= 0 {
				pick = p
			}
		}
		copy(cent[c*dim:(c+1)*dim], data[pick*dim:(pick+1)*dim])
		update(c)
	}
	return ctx.Err()
}

// drawD2 returns the row at which the running sum of minD first exceeds r,
// skipping whole chunks of seedChunk rows by their sums part, or -1 when
// rounding carries r past the end.
func drawD2(minD []float32, part []float64, r float64) int {
	for ch, p := range part {
		if r >= p {
			r -= p
			continue
		}
		lo, hi := ch*seedChunk, min((ch+1)*seedChunk, len(minD))
		for i, d := range minD[lo:hi] {
			r -= float64(d)
			if r < 0 {
				return lo + i
			}
		}
		r = 0 // rounding: the chunk's rows summed to less than p
	}
	return -1
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
	cent, _, err := kmeans(ctx, data, dim, k, cfg, lloyd{}, rand.New(rand.NewPCG(seed, 0x1bf5_8fe3_d2c1_a06b)))
	return cent, err
}
