//go:build amd64 && !noasm

package distance

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/cpu"
)

// TestAssemblyExercised makes sure that every assembly implementation this
// CPU supports is both listed (and so covered by the equivalence tests) and
// preferred in the right order by the dispatcher.
func TestAssemblyExercised(t *testing.T) {
	var names []string
	for _, k := range availableKernels() {
		names = append(names, k.name)
	}
	want := []string{}
	if cpu.X86.HasAVX512F {
		want = append(want, "avx512")
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		want = append(want, "avx2")
	}
	want = append(want, "generic")
	require.Equal(t, want, names)
	require.Equal(t, want[0], Impl())

	ks := availableKernels()
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512VPOPCNTDQ && cpu.X86.HasAVX512BW {
		require.Equal(t, "vpopcntq", ks[0].binName)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasPOPCNT {
		require.Equal(t, "vpshufb", ks[len(ks)-2].binName)
	}
	require.Equal(t, "generic", ks[len(ks)-1].binName)
}

// extraBinaryKernels lists the binary kernels that no dispatch table holds
// on this CPU but that run on others (scalar POPCNT, used by CPUs without
// AVX2), so the equivalence tests and benchmarks cover them too.
// The AVX2 kernels above switch to the nibble lookup only for long
// operands; "vpshufb-all" uses it at every length, so the short lengths of
// the equivalence tests reach its block loops and tails.
func extraBinaryKernels() []binaryKernel {
	var out []binaryKernel
	if cpu.X86.HasPOPCNT {
		out = append(out, binaryKernel{"popcnt", hammingPOPCNT, jaccardPOPCNT})
	}
	if cpu.X86.HasPOPCNT && cpu.X86.HasAVX2 {
		out = append(out, binaryKernel{"vpshufb-all", func(a, b []byte) int {
			n := len(a) &^ 31
			return hammingBlocksAVX2(a[:n], b[:n]) + hammingPOPCNT(a[n:], b[n:])
		}, func(a, b []byte) float32 {
			n := len(a) &^ 31
			i, u := jaccardBlocksAVX2(a[:n], b[:n])
			i2, u2 := jaccardCountsPOPCNT(a[n:], b[n:])
			return jaccard(i+i2, u+u2)
		}})
	}
	return out
}
