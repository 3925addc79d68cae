package embedded_test

import (
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/metastore/embedded"
	"github.com/strata-db/strata/internal/metastore/kvtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func open(t *testing.T, path string) *embedded.Store {
	t.Helper()
	s, err := embedded.Open(path, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

func TestConformance(t *testing.T) {
	kvtest.RunConformance(t,
		func(t *testing.T) metastore.KV {
			return open(t, filepath.Join(t.TempDir(), "meta.db"))
		},
		func(t *testing.T, kv metastore.KV) metastore.KV {
			return open(t, kv.(*embedded.Store).Path())
		},
	)
}

func TestOpenErrors(t *testing.T) {
	tests := []struct {
		name string
		path func(t *testing.T) string
	}{
		{name: "missing directory", path: func(t *testing.T) string { return filepath.Join(t.TempDir(), "no", "such", "meta.db") }},
		{name: "path is a directory", path: func(t *testing.T) string { return t.TempDir() }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := embedded.Open(tc.path(t), nil)
			require.Error(t, err)
		})
	}
}
