package distance

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

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

// cpuClock measures the CPU time of the benchmark's OS thread, which, unlike
// wall time, excludes the time the thread waits for a CPU on a shared,
// loaded machine.
type cpuClock struct{ start time.Duration }

// startCPU pins the benchmark goroutine to its thread and starts the clock.
// Call it right before the b.Loop loop and stop right after it.
func startCPU(b *testing.B, bytes int64) cpuClock {
	b.Helper()
	runtime.LockOSThread()
	b.SetBytes(bytes)
	return cpuClock{start: threadCPUTime()}
}

// stop reports GB/s from wall time and, where the OS provides it, thread
// CPU ns/op and GB/s from CPU time.
func (c cpuClock) stop(b *testing.B, bytes int64) {
	b.Helper()
	end := threadCPUTime()
	runtime.UnlockOSThread()
	n := float64(b.N)
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(bytes)*n/s/1e9, "GB/s")
	}
	if cpu := end - c.start; c.start > 0 && cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/op")
		b.ReportMetric(float64(bytes)*n/cpu.Seconds()/1e9, "cpu-GB/s")
	}
}

func benchPair(b *testing.B, pick func(kernels) func(a, b []float32) float32) {
	r := rand.New(rand.NewPCG(1, 1))
	// A small embedding, BERT, MNIST/Fashion-MNIST and OpenAI ada-002.
	dims := []int{128, 768, 784, 1536}
	for _, k := range benchImpls() {
		fn := pick(k)
		for _, dim := range dims {
			b.Run(fmt.Sprintf("%s/dim=%d", k.name, dim), func(b *testing.B) {
				x, y := randVec(r, dim, 0), randVec(r, dim, 0)
				bytes := int64(2 * dim * 4)
				var sink float32
				clk := startCPU(b, bytes)
				for b.Loop() {
					sink += fn(x, y)
				}
				clk.stop(b, bytes)
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
			clk := startCPU(b, bytes)
			for b.Loop() {
				k.l2Batch(q, data, out)
			}
			clk.stop(b, bytes)
		})
		b.Run(k.name+"/loop", func(b *testing.B) {
			clk := startCPU(b, bytes)
			for b.Loop() {
				for i := range out {
					out[i] = k.l2(q, data[i*dim:(i+1)*dim])
				}
			}
			clk.stop(b, bytes)
		})
	}
}

// BenchmarkL2SquaredBatchFashionMNIST scans the Fashion-MNIST training set
// shape (60,000 × 784 float32, 188 MB), a memory-bandwidth-bound workload.
func BenchmarkL2SquaredBatchFashionMNIST(b *testing.B) { benchBatch(b, 60000, 784) }

// BenchmarkL2SquaredBatchStream scans 100,000 × 128 float32 (51 MB, far
// more than the caches), the one-query FLAT search of the kernel benchmark
// (docs/bench/kernels.md): it is bound by the core's memory read bandwidth,
// which BenchmarkSum measures.
func BenchmarkL2SquaredBatchStream(b *testing.B) { benchBatch(b, 100000, 128) }

// BenchmarkL2SquaredBatchDims scans 1 MB of rows, which stays in the L2
// cache, at several dimensions: the kernels are compute-bound, which shows
// the gain of the four-row batch kernels over a loop of single calls.
func BenchmarkL2SquaredBatchDims(b *testing.B) {
	for _, dim := range []int{8, 32, 128, 784, 1536} {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) { benchBatch(b, (1<<20)/(4*dim), dim) })
	}
}

func benchBinary(b *testing.B, pick func(binaryKernel) func(a, b []byte) float32) {
	r := rand.New(rand.NewPCG(3, 3))
	for _, k := range binaryKernels() {
		fn := pick(k)
		for _, nbits := range []int{128, 768, 1536, 8192} {
			b.Run(fmt.Sprintf("%s/bits=%d", k.name, nbits), func(b *testing.B) {
				x, y := make([]byte, nbits/8), make([]byte, nbits/8)
				for i := range x {
					x[i], y[i] = byte(r.Uint32()), byte(r.Uint32())
				}
				bytes := int64(2 * len(x))
				var sink float32
				clk := startCPU(b, bytes)
				for b.Loop() {
					sink += fn(x, y)
				}
				clk.stop(b, bytes)
				_ = sink
			})
		}
	}
}

func BenchmarkHamming(b *testing.B) {
	benchBinary(b, func(k binaryKernel) func(a, b []byte) float32 {
		return func(x, y []byte) float32 { return float32(k.hamming(x, y)) }
	})
}

func BenchmarkJaccard(b *testing.B) {
	benchBinary(b, func(k binaryKernel) func(a, b []byte) float32 { return k.jaccard })
}

// BenchmarkHammingBatch scores one query against 1,000 rows per operation
// (the inner loop of BIN_IVF_FLAT lists and exact binary search).
func BenchmarkHammingBatch(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, k := range availableKernels() {
		for _, nbits := range []int{256, 784, 2048} {
			b.Run(fmt.Sprintf("%s/%s/bits=%d", k.name, k.binName, nbits), func(b *testing.B) {
				w := nbits / 8
				q, data := make([]byte, w), make([]byte, 1000*w)
				for i := range data {
					data[i] = byte(r.Uint32())
				}
				out := make([]float32, 1000)
				clk := startCPU(b, int64(len(data)))
				for b.Loop() {
					k.hammingBatch(q, data, out)
				}
				clk.stop(b, int64(len(data)))
			})
		}
	}
}
