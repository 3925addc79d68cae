package proxy

import (
	"context"
	"strconv"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
)

// AddCollectionField adds a nullable field to a collection (Milvus 2.6).
// Rows written before read it as null, or as its default value. A loaded
// collection is loaded again under the new schema before the call returns,
// so reads see the field at once.
func (p *Proxy) AddCollectionField(ctx context.Context, req *milvuspb.AddCollectionFieldRequest) (*commonpb.Status, error) {
	f := &schemapb.FieldSchema{}
	if err := proto.Unmarshal(req.GetSchema(), f); err != nil {
		return errcode.Status(errcode.Invalid("the field schema is not a valid FieldSchema: %v", err)), nil
	}
	old, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return errcode.Status(err), nil
	}
	col, err := p.meta.AddField(ctx, old.DBName, old.Name, f)
	if err != nil {
		return errcode.Status(err), nil
	}
	return errcode.Status(p.reloadSchema(ctx, col)), nil
}

// reloadSchema loads a loaded collection again, with the partitions it had,
// so the query node reads it under its new schema.
func (p *Proxy) reloadSchema(ctx context.Context, col *catalog.Collection) error {
	// A load in progress read the old schema: wait for it, then reload.
	if err := p.query.WaitLoad(ctx, col.ID); err != nil {
		return err
	}
	loaded, parts, err := p.query.Loaded(ctx, col.ID)
	if err != nil || !loaded {
		return err
	}
	replicas, err := p.query.Replicas(ctx, col.ID) // loaded again as many times
	if err != nil {
		return err
	}
	p.query.Release(col.ID)
	return p.query.Load(ctx, col.ID, parts, len(replicas), nil)
}

// AlterCollectionField sets or deletes properties of one field (Milvus
// 2.6): its description ("field.description"), max_length, max_capacity,
// and the mmap.enabled and warmup hints, which a loaded collection refuses.
func (p *Proxy) AlterCollectionField(ctx context.Context, req *milvuspb.AlterCollectionFieldRequest) (*commonpb.Status, error) {
	col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return errcode.Status(err), nil
	}
	// Milvus reads the key "mmap_enabled" (pymilvus's spelling) as "mmap.enabled".
	fieldKey := func(k string) string {
		if k == "mmap_enabled" {
			return catalog.MmapKey
		}
		return k
	}
	set := map[string]string{}
	for _, kv := range req.GetProperties() {
		set[fieldKey(kv.GetKey())] = kv.GetValue()
	}
	var del []string
	for _, k := range req.GetDeleteKeys() {
		del = append(del, fieldKey(k))
	}
	if err := p.query.WaitLoad(ctx, col.ID); err != nil {
		return errcode.Status(err), nil
	}
	loaded, _, err := p.query.Loaded(ctx, col.ID)
	if err != nil {
		return errcode.Status(err), nil
	}
	return errcode.Status(p.meta.AlterField(ctx, col.DBName, col.Name, req.GetFieldName(), set, del, loaded)), nil
}

// dynamicFieldKey is the collection property that turns the dynamic field on.
const dynamicFieldKey = "dynamicfield.enabled"

// alterDynamicField applies "dynamicfield.enabled" of an AlterCollection,
// which changes the schema rather than being kept as a property: true adds
// `$meta` (a loaded collection is loaded again under the new schema), false
// on a collection that has it is refused, as is deleting the key. It
// removes the key from set.
func (p *Proxy) alterDynamicField(ctx context.Context, col *catalog.Collection, set map[string]string, del []string) error {
	for _, k := range del {
		if k == dynamicFieldKey {
			return errcode.InvalidParam("cannot delete key %s", dynamicFieldKey)
		}
	}
	v, ok := set[dynamicFieldKey]
	if !ok {
		return nil
	}
	delete(set, dynamicFieldKey)
	on, err := strconv.ParseBool(strings.ToLower(v))
	if err != nil {
		return errcode.InvalidParam("%s %q should be true or false", dynamicFieldKey, v)
	}
	if !on {
		if col.DynamicField() != nil {
			return errcode.InvalidParam("dynamic schema cannot supported to be disabled")
		}
		return nil
	}
	changed, err := p.meta.EnableDynamicField(ctx, col.DBName, col.Name)
	if err != nil || changed == nil {
		return err
	}
	return p.reloadSchema(ctx, changed)
}
