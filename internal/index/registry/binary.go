package registry

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/binivf"
)

// binaryFields are the data types of the binary-vector index types.
var binaryFields = []schemapb.DataType{schemapb.DataType_BinaryVector}

// binaryTypes are the index types of packed binary vectors. BIN_FLAT is
// served by exact search.
func binaryTypes() []*Type {
	metrics := []string{"HAMMING", "JACCARD"}
	return []*Type{
		// Only BIN_FLAT (exact search) takes the structure metrics, as in
		// Milvus: they are not distances an IVF can cluster by.
		{Name: "BIN_FLAT", Family: Binary, Fields: binaryFields, Metrics: append(slices.Clone(metrics), "SUBSTRUCTURE", "SUPERSTRUCTURE")},
		{
			Name: "BIN_IVF_FLAT", Family: Binary, Fields: binaryFields, Metrics: metrics, SearchParams: []string{"nprobe"},
			ParseParams: func(_ *schemapb.FieldSchema, params map[string]string) error {
				_, err := binivf.ParseParams(params)
				return err
			},
			Build:   buildBinIVF,
			FileKey: "BIN_IVF_FLAT",
			Load:    func(r io.Reader) (Built, error) { return unwrap(binivf.Unmarshal(r)) },
		},
	}
}

// buildBinIVF builds a BIN_IVF_FLAT index over a BinaryVector column.
func buildBinIVF(ctx context.Context, c column.Column, params map[string]string) (Built, error) {
	cfg, err := binivf.ParseParams(params)
	if err != nil {
		return nil, err
	}
	metric, err := index.ParseMetric(params["metric_type"])
	if err != nil {
		return nil, err
	}
	bv, ok := c.(*column.ByteVectors)
	if !ok || bv.T != schemapb.DataType_BinaryVector {
		return nil, fmt.Errorf("a %s column cannot have a BIN_IVF_FLAT index", c.Type())
	}
	return binivf.Build(ctx, bv.Data, bv.Dim, metric, cfg)
}
