//go:build !noasm

package hnsw

import "unsafe"

// prefetch asks the CPU to start loading the memory at p into cache. It is
// only a hint: it has no effect on results.
//
//go:noescape
func prefetch(p unsafe.Pointer)
