//go:build amd64 && !noasm

package distance

// prefetchLines issues a PREFETCHT0 for every cache line of v.
//
//go:noescape
func prefetchLines(v []float32)

// Prefetch asks the CPU to start loading the cache lines of v into its
// caches, so that a kernel reading v soon after does not wait for memory:
// a scan that reads scattered rows (ivf's k-means++ seeding, the probed
// lists of an IVF search) prefetches the next rows while it scores the
// current ones. It is a hint: it reads nothing Go can observe, never
// faults, and does nothing in builds without assembly.
func Prefetch(v []float32) { prefetchLines(v) }
