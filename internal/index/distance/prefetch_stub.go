//go:build !amd64 || noasm

package distance

// Prefetch asks the CPU to start loading the cache lines of v into its
// caches; this build has no assembly, so it does nothing.
func Prefetch([]float32) {}
