package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/app"
)

func TestMemoryLimit(t *testing.T) {
	p := func(v int64) *int64 { return &v }
	const gib = int64(1) << 30
	require.Equal(t, 6*gib, memoryLimit(nil, false, 8*gib), "default: 3/4 of what is available")
	require.Equal(t, int64(0), memoryLimit(nil, true, 8*gib), "GOMEMLIMIT wins over the default")
	require.Equal(t, int64(0), memoryLimit(nil, false, 0), "unknown memory: no limit")
	require.Equal(t, 2*gib, memoryLimit(p(2*gib), true, 8*gib), "the config file wins over everything")
	require.Equal(t, int64(0), memoryLimit(p(0), false, 8*gib), "0 disables")
	require.Equal(t, int64(0), memoryLimit(p(-5), false, 8*gib))
}

func TestParseMemInfo(t *testing.T) {
	require.Equal(t, int64(24_000_000*1024), parseMemTotal([]byte("MemTotal:       24000000 kB\nMemFree: 1 kB\n")))
	require.Equal(t, int64(0), parseMemTotal([]byte("MemFree: 1 kB\n")))
	require.Equal(t, int64(0), parseMemTotal([]byte("MemTotal: x kB\n")))
	n, ok := parseCgroupMax([]byte("4294967296\n"))
	require.True(t, ok)
	require.Equal(t, int64(4294967296), n)
	_, ok = parseCgroupMax([]byte("max\n"))
	require.False(t, ok)
}

func TestLoadConfigFileMemoryLimit(t *testing.T) {
	cfg := app.Defaults()
	var proc processConfig
	require.NoError(t, loadConfigFile(writeConfig(t, `{"memoryLimit": 4294967296}`), &cfg, &proc))
	require.NotNil(t, proc.MemoryLimit)
	require.Equal(t, int64(4294967296), *proc.MemoryLimit)
	proc = processConfig{}
	require.NoError(t, loadConfigFile(writeConfig(t, `{}`), &cfg, &proc))
	require.Nil(t, proc.MemoryLimit)
}
