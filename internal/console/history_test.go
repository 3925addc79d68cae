package console

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

// TestHistoryRatesAndMeans: the plots are per-second rates of the request
// and insert counters and the mean search latency between two samples; a
// counter that goes back counts as 0, and only the last n points are kept.
func TestHistoryRatesAndMeans(t *testing.T) {
	reg := prometheus.NewRegistry()
	req := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "milvus_proxy_req_count"}, []string{"status"})
	lat := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "milvus_proxy_sq_latency"})
	reg.MustRegister(req, lat)
	h := newHistory(3)
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	h.sample(reg, t0)
	require.Zero(t, h.plots()[0].Samples, "one sample makes no point")

	req.WithLabelValues("success").Add(40)
	req.WithLabelValues("fail").Add(10)
	lat.Observe(2)
	lat.Observe(4)
	h.sample(reg, t0.Add(10*time.Second))
	p := h.plots()
	require.Equal(t, 1, p[0].Samples)
	require.Equal(t, "5.00", p[0].Last, "50 requests in 10 s")
	require.Equal(t, "3.00", p[1].Last, "mean of 2 and 4 ms")
	require.Equal(t, "0", p[2].Last, "no inserts")

	for i := 2; i <= 5; i++ {
		h.sample(reg, t0.Add(time.Duration(i)*10*time.Second))
	}
	p = h.plots()
	require.Equal(t, 3, p[0].Samples, "the window keeps n points")
	require.Equal(t, "0", p[0].Last, "no requests since")
	require.Equal(t, "12:00:30", p[0].From)
	require.Equal(t, "12:00:50", p[0].To)

	v, ok := rate(10, 5, 1)
	require.False(t, ok, "a counter that went back")
	require.Zero(t, v)
}
