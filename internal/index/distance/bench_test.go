package distance

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchDims are the vector dimensions benchmarked: a small embedding, BERT,
// MNIST/Fashion-MNIST and OpenAI ada-002.
var benchDims = []int{128, 768, 784, 1536}

// benchImpls lists every implementation on this CPU plus the dispatched
// public entry points.
func benchImpls() []kernels {
	return append(availableKernels(), kernels{
		name:     "dispatch",
		l2:       L2Squared,
		dot:      Dot,
		l2Batch:  L2SquaredBatch,
		dotBatch: DotBatch,
	})
}

// reportGBs adds a GB/s metric for bytes read per iteration.
func reportGBs(b *testing.B, bytes int64) {
	b.Helper()
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(bytes)*float64(b.N)/s/1e9, "GB/s")
	}
}

func benchPair(b *testing.B, pick func(kernels) func(a, b []float32) float32) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, k := range benchImpls() {
		fn := pick(k)
		for _, dim := range benchDims {
			b.Run(fmt.Sprintf("%s/dim=%d", k.name, dim), func(b *testing.B) {
				x, y := randVec(r, dim, 0), randVec(r, dim, 0)
				bytes := int64(2 * dim * 4)
				b.SetBytes(bytes)
				var sink float32
				for b.Loop() {
					sink += fn(x, y)
				}
				reportGBs(b, bytes)
				_ = sink
			})
		}
	}
}

func BenchmarkL2Squared(b *testing.B) {
	benchPair(b, func(k kernels) func(a, b []float32) float32 { return k.l2 })
}

func BenchmarkDot(b *testing.B) {
	benchPair(b, func(k kernels) func(a, b []float32) float32 { return k.dot })
}

// benchBatch compares one query with rows×dim data through the batched kernel
// and through a loop over the single-vector kernel.
func benchBatch(b *testing.B, rows, dim int) {
	r := rand.New(rand.NewPCG(2, 2))
	q := randVec(r, dim, 0)
	data := randVec(r, rows*dim, 0)
	out := make([]float32, rows)
	bytes := int64(rows * dim * 4)
	for _, k := range benchImpls() {
		b.Run(k.name+"/batch", func(b *testing.B) {
			b.SetBytes(bytes)
			for b.Loop() {
				k.l2Batch(q, data, out)
			}
			reportGBs(b, bytes)
		})
		b.Run(k.name+"/loop", func(b *testing.B) {
			b.SetBytes(bytes)
			for b.Loop() {
				for i := range out {
					out[i] = k.l2(q, data[i*dim:(i+1)*dim])
				}
			}
			reportGBs(b, bytes)
		})
	}
}

// BenchmarkL2SquaredBatchFashionMNIST scans the Fashion-MNIST training set
// shape (60,000 × 784 float32, 188 MB), a memory-bandwidth-bound workload.
func BenchmarkL2SquaredBatchFashionMNIST(b *testing.B) { benchBatch(b, 60000, 784) }

// BenchmarkL2SquaredBatchCached scans 4,096 × 128 float32 (2 MB), which stays
// in cache, so the kernels are compute-bound.
func BenchmarkL2SquaredBatchCached(b *testing.B) { benchBatch(b, 4096, 128) }

func benchBinary(b *testing.B, fn func(a, b []byte) float32) {
	r := rand.New(rand.NewPCG(3, 3))
	for _, nbits := range []int{128, 768, 1536, 8192} {
		b.Run(fmt.Sprintf("bits=%d", nbits), func(b *testing.B) {
			x, y := make([]byte, nbits/8), make([]byte, nbits/8)
			for i := range x {
				x[i], y[i] = byte(r.Uint32()), byte(r.Uint32())
			}
			bytes := int64(2 * len(x))
			b.SetBytes(bytes)
			var sink float32
			for b.Loop() {
				sink += fn(x, y)
			}
			reportGBs(b, bytes)
			_ = sink
		})
	}
}

func BenchmarkHamming(b *testing.B) {
	benchBinary(b, func(a, b []byte) float32 { return float32(Hamming(a, b)) })
}

func BenchmarkJaccard(b *testing.B) { benchBinary(b, Jaccard) }
