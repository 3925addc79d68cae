package index

// The Milvus names of the metrics (metric_type), as Metric.String returns
// them and ParseMetric accepts them. internal/plan aliases them for the
// read requests, with the metrics that only the query node scores.
const (
	NameL2      = "L2"
	NameIP      = "IP"
	NameCosine  = "COSINE"
	NameHamming = "HAMMING"
	NameJaccard = "JACCARD"
)
