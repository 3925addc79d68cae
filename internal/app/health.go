package app

import (
	"encoding/json"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-db/strata/internal/health"
)

// healthDetail is the readiness detail served on /healthz/detail.
type healthDetail struct {
	// Ready is what /healthz answers: the server is serving.
	Ready bool `json:"ready"`
	// Status is "ok", "degraded" (some part has a problem), "starting", or
	// "standby" (a cluster member waiting to lead the coordinator
	// election).
	Status string `json:"status"`
	// WritesAvailable is false when some problem stops writes.
	WritesAvailable bool             `json:"writesAvailable"`
	Problems        []health.Problem `json:"problems"`
	// Loading lists the collections still loading (after a restart the
	// server is ready before the collections it had loaded are loaded
	// again; each says Loading to GetLoadState until it serves).
	Loading []string `json:"loading"`
	// Cluster is the process's membership: node ID, role, and whether it
	// is the coordinator (absent without membership).
	Cluster *clusterDetail `json:"cluster,omitempty"`
}

// serveHealthDetail answers /healthz/detail with a JSON healthDetail: HTTP
// 200 when ready (degraded or not; /healthz stays the plain liveness and
// readiness answer), 503 while starting.
func (s *Server) serveHealthDetail(w http.ResponseWriter, r *http.Request) {
	d := healthDetail{Ready: s.ready.Load(), Status: "starting", WritesAvailable: true, Problems: []health.Problem{}, Loading: []string{}}
	member := s.cluster.Load()
	d.Cluster = member.detail(r.Context())
	if n := s.node.Load(); n != nil {
		// A node process: its session (it campaigns in no election).
		node := n.member.Node()
		d.Cluster = &clusterDetail{NodeID: node.ID, Role: node.Role, Address: node.Address}
	}
	if state := member.standing(); state != "" {
		d.Status = state
	}
	if d.Ready {
		d.Loading = s.loading()
		d.Problems = append(d.Problems, health.Gather(s.health...)...)
		d.Status = "ok"
		if len(d.Problems) > 0 {
			d.Status = "degraded"
		}
	}
	for _, p := range d.Problems {
		if p.WritesUnavailable {
			d.WritesAvailable = false
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if !d.Ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(d)
}

// registerHealthMetrics exports the problem count per component and the
// quarantined WAL messages per consumer.
func registerHealthMetrics(reg prometheus.Registerer, sources []health.Source, quarantined map[string]func() int64) {
	reg.MustRegister(&problemCollector{sources: sources, desc: prometheus.NewDesc("strata_health_problems",
		"Degraded parts of the server (see /healthz/detail), by component.", []string{"component"}, nil)})
	for component, count := range quarantined {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "strata_wal_quarantined_messages_total",
			Help:        "WAL messages a consumer could not apply and skipped (logged with their position).",
			ConstLabels: prometheus.Labels{"component": component},
		}, func() float64 { return float64(count()) }))
	}
}

// problemCollector counts the current problems by component at each scrape.
type problemCollector struct {
	sources []health.Source
	desc    *prometheus.Desc
}

// Describe implements prometheus.Collector.
func (c *problemCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *problemCollector) Collect(ch chan<- prometheus.Metric) {
	counts := map[string]int{"wal": 0, "metastore": 0, "datanode": 0, "querynode": 0}
	for _, p := range health.Gather(c.sources...) {
		counts[p.Component]++
	}
	for component, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), component)
	}
}
