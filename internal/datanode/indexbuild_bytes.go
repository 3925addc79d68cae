package datanode

import (
	"context"
	"fmt"
	"io"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/binivf"
)

// marshaler is a built index, ready to be written.
type marshaler interface {
	Marshal(w io.Writer) error
}

// buildFieldIndex builds an index of the given (upper-case) type over a
// vector column and returns it with its file key. Float16, BFloat16 and
// Int8 vectors are widened to float32 for the float indexes (the widened
// copy lives only during the build; HNSW and IVF_FLAT keep float32 vectors
// as they do for FloatVector fields). BinaryVector columns build
// BIN_IVF_FLAT (also for AUTOINDEX, as Milvus does). It returns ctx.Err()
// soon after ctx ends.
func buildFieldIndex(ctx context.Context, indexType string, params map[string]string, c column.Column, metric index.Metric) (marshaler, string, error) {
	switch c := c.(type) {
	case *column.FloatVectors:
		return buildVectorIndex(ctx, indexType, params, c, metric)
	case *column.ByteVectors:
		if c.T == schemapb.DataType_BinaryVector {
			if indexType != "BIN_IVF_FLAT" && indexType != "AUTOINDEX" {
				return nil, "", fmt.Errorf("a BinaryVector field cannot have an %s index", indexType)
			}
			cfg, err := binivf.ParseParams(params)
			if err != nil {
				return nil, "", err
			}
			x, err := binivf.Build(ctx, c.Data, c.Dim, metric, cfg)
			if err != nil {
				return nil, "", err
			}
			return x, "BIN_IVF_FLAT", nil
		}
		if indexType == "BIN_IVF_FLAT" {
			return nil, "", fmt.Errorf("a %s field cannot have a BIN_IVF_FLAT index", c.T)
		}
		return buildVectorIndex(ctx, indexType, params, c.Widen(), metric)
	}
	return nil, "", fmt.Errorf("a %s field cannot have an %s index", c.Type(), indexType)
}
