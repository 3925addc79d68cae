//go:build !amd64 || noasm

package distance

// extraBinaryKernels lists binary kernels outside the dispatch tables: none
// without assembly.
func extraBinaryKernels() []binaryKernel { return nil }
