package rest

import (
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/errcode"
)

// fieldOpReq is one entry of an upsert's `fieldOps`: a partial-update op
// ("REPLACE", "ARRAY_APPEND" or "ARRAY_REMOVE", any case) on one field.
type fieldOpReq struct {
	FieldName string `json:"fieldName"`
	Op        string `json:"op"`
}

// fieldOps converts an upsert's `fieldOps` to the gRPC form; an op name it
// does not know is refused with code 1100 and Milvus's message.
func fieldOps(reqs []fieldOpReq) ([]*schemapb.FieldPartialUpdateOp, error) {
	var out []*schemapb.FieldPartialUpdateOp
	for _, r := range reqs {
		name := strings.ToUpper(strings.TrimSpace(r.Op))
		op, ok := schemapb.FieldPartialUpdateOp_OpType_value[name]
		if !ok {
			return nil, errorf(errcode.IllegalArgument, "unsupported partial update op: %s: invalid parameter", r.Op)
		}
		out = append(out, &schemapb.FieldPartialUpdateOp{FieldName: r.FieldName, Op: schemapb.FieldPartialUpdateOp_OpType(op)})
	}
	return out, nil
}

// sentSchema is the schema of a partial update's columns: only the fields
// some row gives, so the others keep their stored values instead of being
// sent as null or refused as missing.
func sentSchema(schema *schemapb.CollectionSchema, rows []map[string]any) *schemapb.CollectionSchema {
	out := proto.Clone(schema).(*schemapb.CollectionSchema)
	out.Fields = out.Fields[:0]
	for _, f := range schema.GetFields() {
		if anyHas(rows, f.GetName()) {
			out.Fields = append(out.Fields, f)
		}
	}
	return out
}

func anyHas(rows []map[string]any, key string) bool {
	for _, r := range rows {
		if _, ok := r[key]; ok {
			return true
		}
	}
	return false
}
