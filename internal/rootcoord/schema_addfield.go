package rootcoord

import (
	"context"
	"fmt"
	"strconv"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/wal"
)

// AddField adds field f to a collection's schema (Milvus 2.6
// AddCollectionField). The field must be nullable, since the rows already
// written hold no value for it (they read as null, or as its default value
// when it has one: column.Fill); it cannot be a primary, partition or
// second clustering key, nor auto-ID. It gets the next field ID after the
// largest in the schema. The schema version (SchemaVersionTS) becomes the
// change's timestamp, the record is saved, then the new schema is announced
// on the collection's vchannels (wal.TypeSchemaChange), so every insert
// after the announcement carries the field. It returns the new collection.
func (c *Core) AddField(ctx context.Context, db, coll string, in *schemapb.FieldSchema) (*catalog.Collection, error) {
	c.ddl.Lock()
	defer c.ddl.Unlock()
	old, err := c.Collection(db, coll)
	if err != nil {
		return nil, err
	}
	schema := proto.Clone(old.Schema).(*schemapb.CollectionSchema)
	f, err := checkAddedField(schema, in, c.cfg.Limits)
	if err != nil {
		return nil, err
	}
	// User fields stay together, before `$meta` and the system fields.
	at := len(schema.Fields)
	for i, g := range schema.Fields {
		if g.GetIsDynamic() || g.GetFieldID() < 100 {
			at = i
			break
		}
	}
	schema.Fields = append(schema.Fields[:at], append([]*schemapb.FieldSchema{f}, schema.Fields[at:]...)...)
	return c.saveSchema(ctx, old, schema)
}

// checkAddedField validates a field to add to schema and returns its stored
// form, with its field ID. The messages are Milvus's.
func checkAddedField(schema *schemapb.CollectionSchema, in *schemapb.FieldSchema, limits Limits) (*schemapb.FieldSchema, error) {
	name := in.GetName()
	if err := catalog.ValidateName("field", name); err != nil {
		return nil, err
	}
	users, vectors := 0, 0
	var maxID int64
	for _, g := range schema.GetFields() {
		maxID = max(maxID, g.GetFieldID())
		if g.GetName() == name {
			return nil, errcode.InvalidParam("duplicate field name: %s", name)
		}
		if g.GetFieldID() < 100 || g.GetIsDynamic() {
			continue
		}
		users++
		if isVector(g.GetDataType()) {
			vectors++
		}
		if in.GetIsClusteringKey() && g.GetIsClusteringKey() {
			return nil, errcode.InvalidParam("already has another clutering key field, field name: %s", name)
		}
	}
	if users >= limits.MaxFields {
		return nil, errcode.InvalidParam("The number of fields has reached the maximum value %d", limits.MaxFields)
	}
	if isVector(in.GetDataType()) && vectors >= limits.MaxVectorFields {
		return nil, errcode.Invalid("maximum vector field's number should be limited to %d", limits.MaxVectorFields)
	}
	switch {
	case in.GetIsPrimaryKey():
		return nil, errcode.InvalidParam("not support to add primary key field, field name = %s", name)
	case in.GetIsPartitionKey():
		return nil, errcode.InvalidParam("not support to add partition key field, field name  = %s", name)
	case in.GetAutoID():
		return nil, errcode.InvalidParam("only primary field can speficy AutoID with true, field name = %s", name)
	case in.GetIsDynamic():
		return nil, errcode.InvalidParam("not support to add dynamic field, field name = %s", name)
	case !in.GetNullable():
		return nil, errcode.InvalidParam("added field must be nullable, please check it, field name = %s", name)
	}
	f := &schemapb.FieldSchema{
		FieldID: maxID + 1, Name: name, Description: in.GetDescription(), DataType: in.GetDataType(),
		TypeParams: in.GetTypeParams(), IndexParams: in.GetIndexParams(), ElementType: in.GetElementType(),
		DefaultValue: in.GetDefaultValue(), Nullable: true, IsClusteringKey: in.GetIsClusteringKey(),
	}
	if f.GetDataType() == schemapb.DataType_VarChar {
		v, ok := typeParam(f, "max_length")
		if !ok {
			return nil, errcode.InvalidParam("type param(max_length) should be specified for the field(%s) of collection %s",
				name, schema.GetName())
		}
		if n, err := strconv.Atoi(v); err == nil && (n <= 0 || n > MaxVarCharLen) {
			return nil, errcode.InvalidParam("the maximum length specified for the field(%s) should be in (0, %d], but got %d instead",
				name, MaxVarCharLen, n)
		}
	}
	if err := checkField(f); err != nil {
		return nil, err
	}
	if err := checkFieldAnalyzer(schema, f); err != nil {
		return nil, err
	}
	if err := checkMatchField(f); err != nil {
		return nil, err
	}
	return f, nil
}

// EnableDynamicField turns a collection's dynamic field on (Milvus
// "dynamicfield.enabled" = true): the `$meta` field is added with the next
// field ID, rows written before read it as an empty object (column.Fill),
// and the change is saved and announced like AddField. It returns the new
// collection, or nil when the dynamic field was already on.
func (c *Core) EnableDynamicField(ctx context.Context, db, coll string) (*catalog.Collection, error) {
	c.ddl.Lock()
	defer c.ddl.Unlock()
	old, err := c.Collection(db, coll)
	if err != nil {
		return nil, err
	}
	if old.DynamicField() != nil {
		return nil, nil
	}
	schema := proto.Clone(old.Schema).(*schemapb.CollectionSchema)
	var maxID int64
	at := len(schema.Fields)
	for i, g := range schema.Fields {
		maxID = max(maxID, g.GetFieldID())
		if g.GetFieldID() < 100 && at == len(schema.Fields) {
			at = i
		}
	}
	meta := &schemapb.FieldSchema{
		FieldID: maxID + 1, Name: DynamicField, DataType: schemapb.DataType_JSON,
		IsDynamic: true, Description: "dynamic schema",
	}
	schema.Fields = append(schema.Fields[:at], append([]*schemapb.FieldSchema{meta}, schema.Fields[at:]...)...)
	schema.EnableDynamicField = true
	return c.saveSchema(ctx, old, schema)
}

// saveSchema saves a collection's new schema with a new schema version and
// announces it on the collection's vchannels (wal.TypeSchemaChange).
func (c *Core) saveSchema(ctx context.Context, old *catalog.Collection, schema *schemapb.CollectionSchema) (*catalog.Collection, error) {
	raw, err := proto.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("rootcoord: encode schema: %w", err)
	}
	ts, err := c.tso.Allocate(ctx, 1)
	if err != nil {
		return nil, fmt.Errorf("rootcoord: allocate timestamp: %w", err)
	}
	col := *old
	col.Schema, col.CollectionInfo.Schema, col.SchemaVersionTS = schema, raw, ts
	if err := c.save(ctx, &col); err != nil {
		return nil, err
	}
	if _, err := c.announce(ctx, &col.CollectionInfo, wal.TypeSchemaChange, raw); err != nil {
		return nil, err
	}
	return &col, nil
}
