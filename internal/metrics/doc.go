// Package metrics declares the Prometheus series Strata exports under
// Milvus's names, help texts and label sets (Milvus pkg/metrics), so that
// the published Milvus Grafana dashboards and alerts work against Strata.
//
// Two kinds of series live here:
//
//   - Events (request counts and latencies, flushed rows, finished index
//     builds) are counters and histograms that the API interceptor and the
//     decorators in internal/app record as requests and tasks finish
//     (Proxy, RootCoord, QueryNode, DataNode, IndexNode).
//   - State (segments, entities, collections, index tasks, channel
//     checkpoints and lag) is computed at each scrape from read-only views
//     of the components (StateCollector), so it cannot drift from the
//     components' own bookkeeping.
//
// Labels follow Milvus: node_id is "1" in standalone, statuses are
// "total"/"success"/"fail", latencies are milliseconds with Milvus's
// buckets. docs/ops/metrics.md lists what is implemented and what is not.
package metrics
