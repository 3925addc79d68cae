package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCPUTicks(t *testing.T) {
	// A real line's shape; the name holds a space and a parenthesis.
	stat := "4242 (strata (x) y) S 1 4242 4242 0 -1 4194560 12345 0 3 0 1500 230 0 0 20 0 12 0 777 0 0"
	n, err := cpuTicks(stat)
	require.NoError(t, err)
	require.EqualValues(t, 1730, n)

	for _, bad := range []string{"", "4242 strata S 1", "4242 (strata) S 1 2 3", "4242 (s) S 1 2 3 4 5 6 7 8 9 10 x 230"} {
		_, err := cpuTicks(bad)
		require.Error(t, err, bad)
	}
}

func TestParseIO(t *testing.T) {
	n, err := parseIO(strings.NewReader("rchar: 1000\nwchar: 234\nsyscr: 9\nread_bytes: 4096\n"))
	require.NoError(t, err)
	require.EqualValues(t, 1234, n)
	_, err = parseIO(strings.NewReader("rchar: 1000\n"))
	require.Error(t, err)
	_, err = parseIO(strings.NewReader("rchar: x\nwchar: 1\n"))
	require.Error(t, err)
}

func TestParseInts(t *testing.T) {
	v, err := parseInts("1, 4,8")
	require.NoError(t, err)
	require.Equal(t, []int{1, 4, 8}, v)
	for _, bad := range []string{"", "1,,2", "0", "-3", "a"} {
		_, err := parseInts(bad)
		require.Error(t, err, bad)
	}
}

func TestMedian(t *testing.T) {
	require.InDelta(t, 0.0, median(nil), 0)
	require.InDelta(t, 2.0, median([]float64{3, 1, 2}), 0)
	require.InDelta(t, 2.5, median([]float64{4, 1, 3, 2}), 0)
}
