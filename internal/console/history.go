package console

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// A series is one plotted quantity, computed from two successive samples
// of the registry (rates and mean latencies need both).
type series struct {
	title, unit string
	value       func(prev, cur snapshot, dt float64) (float64, bool)
}

// plotted are the console's plots.
var plotted = []series{
	{"Requests", "per s", func(p, c snapshot, dt float64) (float64, bool) {
		return rate(p.sum("milvus_proxy_req_count"), c.sum("milvus_proxy_req_count"), dt)
	}},
	{"Search and query latency", "ms (mean)", func(p, c snapshot, _ float64) (float64, bool) {
		n := c.histCount("milvus_proxy_sq_latency") - p.histCount("milvus_proxy_sq_latency")
		if n <= 0 {
			return 0, true
		}
		return (c.histSum("milvus_proxy_sq_latency") - p.histSum("milvus_proxy_sq_latency")) / n, true
	}},
	{"Inserted vectors", "per s", func(p, c snapshot, dt float64) (float64, bool) {
		return rate(p.sum("milvus_proxy_insert_vectors_count"), c.sum("milvus_proxy_insert_vectors_count"), dt)
	}},
	{"Resident memory", "MiB", func(_, c snapshot, _ float64) (float64, bool) {
		return c.sum("process_resident_memory_bytes") / (1 << 20), true
	}},
}

func rate(prev, cur, dt float64) (float64, bool) {
	if dt <= 0 || cur < prev { // a counter that went back (a restart of the registry)
		return 0, false
	}
	return (cur - prev) / dt, true
}

// snapshot is the registry's families by name at one time.
type snapshot map[string]*dto.MetricFamily

// sum adds the values of every sample of a counter or gauge family.
func (s snapshot) sum(name string) float64 {
	var t float64
	for _, m := range s[name].GetMetric() {
		switch {
		case m.Counter != nil:
			t += m.GetCounter().GetValue()
		case m.Gauge != nil:
			t += m.GetGauge().GetValue()
		}
	}
	return t
}

func (s snapshot) histCount(name string) float64 {
	var t float64
	for _, m := range s[name].GetMetric() {
		t += float64(m.GetHistogram().GetSampleCount())
	}
	return t
}

func (s snapshot) histSum(name string) float64 {
	var t float64
	for _, m := range s[name].GetMetric() {
		t += m.GetHistogram().GetSampleSum()
	}
	return t
}

// history keeps the last n points of every plotted series.
type history struct {
	mu     sync.Mutex
	n      int
	prev   snapshot
	prevAt time.Time
	at     []time.Time
	values [][]float64 // per series, aligned with at
}

func newHistory(n int) *history {
	if n < 2 {
		n = 2
	}
	return &history{n: n, values: make([][]float64, len(plotted))}
}

// sample reads g at now and appends a point to every series.
func (h *history) sample(g prometheus.Gatherer, now time.Time) {
	mfs, err := g.Gather()
	if err != nil && len(mfs) == 0 {
		return
	}
	cur := snapshot{}
	for _, mf := range mfs {
		cur[mf.GetName()] = mf
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.prev != nil {
		dt := now.Sub(h.prevAt).Seconds()
		h.at = append(h.at, now)
		for i, s := range plotted {
			v, ok := s.value(h.prev, cur, dt)
			if !ok {
				v = 0
			}
			h.values[i] = append(h.values[i], v)
		}
		if len(h.at) > h.n {
			h.at = h.at[len(h.at)-h.n:]
			for i := range h.values {
				h.values[i] = h.values[i][len(h.values[i])-h.n:]
			}
		}
	}
	h.prev, h.prevAt = cur, now
}

// plot is one rendered series: an SVG polyline in a 600×120 box.
type plot struct {
	Title, Unit, Points, Last, Max string
	Samples                        int
	From, To                       string
}

// Plot box size, in SVG user units.
const plotW, plotH = 600.0, 120.0

func (h *history) plots() []plot {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]plot, len(plotted))
	for i, s := range plotted {
		p := plot{Title: s.title, Unit: s.unit, Samples: len(h.at)}
		vs := h.values[i]
		if len(vs) > 0 {
			top := 0.0
			for _, v := range vs {
				top = max(top, v)
			}
			scale := 1.0
			if top > 0 {
				scale = (plotH - 4) / top
			}
			var b strings.Builder
			for j, v := range vs {
				x := plotW * float64(j) / float64(max(h.n-1, 1))
				fmt.Fprintf(&b, "%.1f,%.1f ", x, plotH-2-v*scale)
			}
			p.Points = strings.TrimSpace(b.String())
			p.Last, p.Max = short(vs[len(vs)-1]), short(top)
			p.From, p.To = h.at[0].UTC().Format("15:04:05"), h.at[len(h.at)-1].UTC().Format("15:04:05")
		}
		out[i] = p
	}
	return out
}

func short(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3g", v)
}
