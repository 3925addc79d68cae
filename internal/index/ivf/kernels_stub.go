//go:build !amd64 || noasm

package ivf

// selectScanKernels returns the generic kernels: this build has no assembly.
func selectScanKernels() scanKernels { return genericScanKernels() }

// availableScanKernels lists every implementation usable on this machine.
func availableScanKernels() []scanKernels { return []scanKernels{genericScanKernels()} }
