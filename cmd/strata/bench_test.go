package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestBenchCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run([]string{
		"bench", "--synthetic", "800,8", "--queries", "20", "--index", "ivf_flat",
		"--nlist", "8", "--sweep", "1,8", "--rounds", "1", "--python", "", "--quiet",
	}, &out, &errOut)
	require.NoError(t, err, errOut.String())
	require.Contains(t, out.String(), "strata IVF_FLAT (nlist=8)")
	require.Contains(t, out.String(), "1.0000") // nprobe=nlist is exact
	require.Empty(t, errOut.String())

	for _, args := range [][]string{
		{"bench", "--index", "ANNOY", "--synthetic", "10,2"},
		{"bench", "--metric", "HAMMING"},
		{"bench", "--sweep", "x"},
		{"bench", "--synthetic", "10"},
		{"bench", "extra"},
	} {
		require.Error(t, run(args, &out, &errOut), args)
	}
}
