//go:build !amd64 || noasm

package distance

// selectKernels returns the generic kernels: this build has no assembly.
func selectKernels() kernels { return genericKernels() }

// availableKernels lists every implementation usable on this machine.
func availableKernels() []kernels { return []kernels{genericKernels()} }
