package proxy

import (
	"context"
	"strconv"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/index/registry"
)

// checkScalarIndex validates a scalar index request as Milvus does and
// returns the index type to record: an empty type means INVERTED, and
// AUTOINDEX is checked (and built) as INVERTED.
func checkScalarIndex(f *schemapb.FieldSchema, it string, params map[string]string) (string, error) {
	if t, ok, err := checkGeometryIndex(f, it); ok {
		return t, err
	}
	if f.GetDataType() == schemapb.DataType_Timestamptz {
		if err := checkTimestamptzIndex(f, it); err != nil {
			return "", err
		}
	}
	if it == "" {
		it = "INVERTED"
	}
	tp, ok := registry.Lookup(it)
	if it == registry.AutoIndex {
		tp, ok = registry.Lookup("INVERTED")
	}
	if !ok || tp.Family != registry.Scalar {
		if ok && tp.Accepts(schemapb.DataType_FloatVector) {
			return "", errcode.Invalid("index type %s is for vector fields; field %s is %s: use INVERTED, STL_SORT, BITMAP or Trie",
				it, f.GetName(), f.GetDataType())
		}
		return "", errcode.Invalid("invalid parameter[expected=valid index][actual=invalid index type: %s]", it)
	}
	if err := tp.Check(f, params); err != nil {
		return "", errcode.Invalid("%v", err)
	}
	return it, nil
}

// vectorIndexTypeError explains why it cannot index the vector field f.
func vectorIndexTypeError(f *schemapb.FieldSchema, it string) error {
	if tp, ok := registry.Lookup(it); ok && tp.Family == registry.Scalar {
		return errcode.Invalid("index type %s is for scalar fields; field %s is %s: use a vector index type such as HNSW, IVF_FLAT or AUTOINDEX",
			it, f.GetName(), f.GetDataType())
	}
	return errcode.Invalid("invalid parameter[expected=valid index][actual=invalid index type: %s]", it)
}

// checkIndexProperty checks a property AlterIndex sets: only the keys
// catalog.IsConfigurableIndexParam allows, each taking a bool.
func checkIndexProperty(key, value string) error {
	if !catalog.IsConfigurableIndexParam(key) {
		return errcode.Invalid("%s is not a configable index property", key)
	}
	if _, err := strconv.ParseBool(value); err != nil {
		return errcode.Invalid("invalid %s value: %s, expected: true, false", key, value)
	}
	return nil
}

// AlterIndex sets or deletes configurable properties (mmap.enabled) of an
// index of a released collection; DescribeIndex shows them among the params.
func (p *Proxy) AlterIndex(ctx context.Context, req *milvuspb.AlterIndexRequest) (*commonpb.Status, error) {
	set := map[string]string{}
	for _, kv := range req.GetExtraParams() {
		if err := checkIndexProperty(kv.GetKey(), kv.GetValue()); err != nil {
			return errcode.Status(err), nil
		}
		set[kv.GetKey()] = kv.GetValue()
	}
	for _, k := range req.GetDeleteKeys() {
		if !catalog.IsConfigurableIndexParam(k) {
			return errcode.Status(errcode.Invalid("%s is not a configable index property", k)), nil
		}
	}
	if len(set) == 0 && len(req.GetDeleteKeys()) == 0 {
		return errcode.Status(errcode.Invalid("no index property to alter: give extra_params or delete_keys")), nil
	}
	col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return errcode.Status(err), nil
	}
	if req.GetIndexName() == "" {
		return errcode.Status(errcode.Invalid("index name is empty")), nil
	}
	if err := p.query.WaitLoad(ctx, col.ID); err != nil {
		return errcode.Status(err), nil
	}
	loaded, _, err := p.query.Loaded(ctx, col.ID)
	if err != nil {
		return errcode.Status(err), nil
	}
	if loaded {
		return errcode.Status(errcode.New(errcode.CollectionLoaded,
			"can't alter index on loaded collection, please release the collection first: collection already loaded[collection=%s]",
			col.Name)), nil
	}
	if v, ok := set["indexoffsetcache.enabled"]; ok {
		// Milvus keeps an offset cache for BITMAP indexes only; Strata
		// records the property (its indexes answer the same either way).
		if on, _ := strconv.ParseBool(v); on {
			idxs, err := p.data.Indexes(ctx, col.ID)
			if err != nil {
				return errcode.Status(err), nil
			}
			for _, idx := range idxs {
				if idx.Name == req.GetIndexName() && !strings.EqualFold(idx.Params["index_type"], "BITMAP") {
					return errcode.Status(errcode.Invalid("only bitmap index support indexoffsetcache.enabled now")), nil
				}
			}
		}
	}
	return errcode.Status(p.data.AlterIndex(ctx, col.ID, req.GetIndexName(), set, req.GetDeleteKeys())), nil
}
