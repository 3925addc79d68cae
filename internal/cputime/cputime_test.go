package cputime

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestThreadAdvances(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := Thread()
	if runtime.GOOS != "linux" {
		require.Zero(t, start)
		return
	}
	require.Positive(t, start)
	x := 0
	for i := range 20_000_000 {
		x += i & 3
	}
	require.Greater(t, Thread(), start, x)
}

func TestProcessAdvances(t *testing.T) {
	start := Process()
	if runtime.GOOS != "linux" {
		require.Zero(t, start)
		return
	}
	require.Positive(t, start)
	x := 0
	for i := range 20_000_000 {
		x += i & 3
	}
	require.Greater(t, Process(), start, x)
}
