package hnsw

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseParams(t *testing.T) {
	cfg, err := ParseParams(map[string]string{"M": "32", "efConstruction": `"128"`, "metric_type": "L2"})
	require.NoError(t, err)
	require.Equal(t, 32, cfg.M)
	require.Equal(t, 128, cfg.EfConstruction)
	cfg, err = ParseParams(nil)
	require.NoError(t, err)
	require.Equal(t, Defaults(), cfg)
	for params, msg := range map[[2]string]string{
		{"M", "1"}: "param 'M' (1) should be in range [2, 2048]", {"M", "2049"}: "[2, 2048]",
		{"M", "x"}: "invalid integer value, key: 'M', value: 'x'", {"M", "True"}: "invalid integer value, key: 'M', value: 'True'",
		{"efConstruction", "[100]"}: "invalid integer value, key: 'efConstruction', value: '[100]'",
		{"M", "16.0"}:               "param 'M' (16.0) should be an integer: wrong data type in json", {"efConstruction", "0"}: "param 'efConstruction' (0)",
		{"efConstruction", "3000000000"}: "efConstruction",
	} {
		_, err := ParseParams(map[string]string{params[0]: params[1]})
		require.ErrorContains(t, err, msg, "%v", params)
	}
}
