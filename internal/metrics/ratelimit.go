package metrics

import "github.com/prometheus/client_golang/prometheus"

// RateLimit is Milvus's milvus_proxy_rate_limit_req_count: each request the
// quota limiters check counts once with Total and once with Success
// (admitted) or Fail (refused), by msg_type, Milvus's rate type
// ("DMLInsert", "DMLDelete", "DQLSearch", "DQLQuery").
type RateLimit struct {
	reqs *prometheus.CounterVec
}

// NewRateLimit registers the series on reg.
func NewRateLimit(reg prometheus.Registerer) *RateLimit {
	m := &RateLimit{reqs: counter(proxySubsystem, "rate_limit_req_count", "count of operation executed",
		nodeIDLabel, msgTypeLabel, statusLabel)}
	reg.MustRegister(m.reqs)
	return m
}

// RateLimited records one checked request.
func (m *RateLimit) RateLimited(msgType string, admitted bool) {
	m.reqs.WithLabelValues(NodeID, msgType, Total).Inc()
	m.reqs.WithLabelValues(NodeID, msgType, status(!admitted)).Inc()
}
