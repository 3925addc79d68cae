//go:build !amd64 || noasm

package hnsw

import "unsafe"

// prefetch is a no-op where no prefetch instruction is wired up.
func prefetch(unsafe.Pointer) {}
