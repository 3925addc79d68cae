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
	// NameSubstructure and NameSuperstructure are BIN_FLAT's structure
	// metrics (scored by exact search only): a row matches when the query
	// is a substructure of it (every bit set in the query is set in the
	// row), or a superstructure (every bit set in the row is set in the
	// query); matches score 0, other rows are no hits.
	NameSubstructure   = "SUBSTRUCTURE"
	NameSuperstructure = "SUPERSTRUCTURE"
)
