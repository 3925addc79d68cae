//go:build !amd64 || noasm

package distance

// selectMatrix returns the generic matrix kernels: this build has no
// assembly.
func selectMatrix() matrixKernels { return genericMatrix() }

// availableMatrix lists every matrix implementation usable on this machine.
func availableMatrix() []matrixKernels { return []matrixKernels{genericMatrix()} }
