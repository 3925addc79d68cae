package e2e

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/app"
)

// TestPprofOffByDefault checks that /debug/pprof/ is served on the metrics
// port only when the configuration asks for it.
func TestPprofOffByDefault(t *testing.T) {
	for _, on := range []bool{false, true} {
		cfg := app.Defaults()
		cfg.DataDir = t.TempDir()
		cfg.Addr, cfg.MetricsAddr = "127.0.0.1:0", "127.0.0.1:0"
		cfg.Pprof = on
		srv, err := app.Listen(cfg, slog.New(slog.DiscardHandler))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- srv.Run(ctx) }()
		require.Eventually(t, srv.Ready, 20*time.Second, 20*time.Millisecond)
		get := func(path string) int {
			resp, err := http.Get("http://" + srv.MetricsAddr() + path)
			require.NoError(t, err)
			_ = resp.Body.Close()
			return resp.StatusCode
		}
		require.Equal(t, http.StatusOK, get("/metrics"))
		want := http.StatusNotFound
		if on {
			want = http.StatusOK
		}
		require.Equal(t, want, get("/debug/pprof/"), "pprof %v", on)
		cancel()
		require.NoError(t, <-done)
	}
}
