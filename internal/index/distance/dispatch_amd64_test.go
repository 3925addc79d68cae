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
		require.Equal(t, "popcnt", ks[len(ks)-2].binName)
	}
	require.Equal(t, "generic", ks[len(ks)-1].binName)
}
