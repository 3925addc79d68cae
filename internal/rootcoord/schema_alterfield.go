package rootcoord

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
)

// Field property keys AlterField accepts besides the type params it
// checks itself (max_length, max_capacity).
const (
	// FieldDescriptionKey sets the field's description.
	FieldDescriptionKey = "field.description"
	// MmapKey and WarmupKey are loading hints kept in the type params;
	// they cannot change while the collection is loaded.
	MmapKey   = catalog.MmapKey
	WarmupKey = "warmup"
)

// AlterField sets and deletes properties of one field of a collection
// (Milvus 2.6 AlterCollectionField): its description, the max_length of a
// VarChar (or of VarChar array elements), the max_capacity of an array,
// and the mmap.enabled and warmup hints, which a loaded collection (loaded
// true) refuses. Other keys cannot change. The schema version becomes the
// change's timestamp and the new schema is announced on the collection's
// vchannels, as AddField does.
func (c *Core) AlterField(ctx context.Context, db, coll, field string, set map[string]string, del []string,
	loaded bool,
) error {
	c.ddl.Lock()
	defer c.ddl.Unlock()
	old, err := c.Collection(db, coll)
	if err != nil {
		return err
	}
	schema := proto.Clone(old.Schema).(*schemapb.CollectionSchema)
	var f *schemapb.FieldSchema
	for _, g := range schema.GetFields() {
		if g.GetName() == field && g.GetFieldID() >= 100 && !g.GetIsDynamic() {
			f = g
		}
	}
	if f == nil {
		f = structAlterField(schema, field)
	}
	if f == nil {
		return errcode.InvalidParam("field %s does not exist in collection %s", field, old.Name)
	}
	for _, k := range append(slices.Sorted(maps.Keys(set)), del...) {
		if err := checkFieldProperty(f, k, set[k], loaded); err != nil {
			return err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(set)) {
		if k == FieldDescriptionKey {
			f.Description = set[k]
		} else {
			f.TypeParams = setTypeParam(f.TypeParams, k, set[k])
		}
	}
	for _, k := range del {
		if k == FieldDescriptionKey {
			f.Description = ""
		} else {
			f.TypeParams = setTypeParam(f.TypeParams, k, "")
		}
	}
	syncStructAlter(schema, f)
	_, err = c.saveSchema(ctx, old, schema)
	return err
}

// checkFieldProperty checks one key (and, when set, its value) that
// AlterField changes on field f. The messages are Milvus's.
func checkFieldProperty(f *schemapb.FieldSchema, key, value string, loaded bool) error {
	t := f.GetDataType()
	switch key {
	case FieldDescriptionKey:
		return nil
	case MmapKey, WarmupKey:
		if loaded {
			return errcode.Invalid("can not alter collection field properties if collection loaded")
		}
		if key == MmapKey && value != "" {
			if _, err := strconv.ParseBool(strings.ToLower(value)); err != nil {
				return errcode.InvalidParam("invalid mmap.enabled value: %s, expected: true, false", value)
			}
		}
		return nil
	case "max_length":
		if t != schemapb.DataType_VarChar && !(t == schemapb.DataType_Array && f.GetElementType() == schemapb.DataType_VarChar) {
			return errcode.InvalidParam("can not modify the maxlength for non-string types")
		}
		if value == "" {
			return errcode.InvalidParam("max_length cannot be deleted from field %s", f.GetName())
		}
		return checkMaxLength(f.GetName(), value)
	case "max_capacity":
		if t != schemapb.DataType_Array {
			return errcode.InvalidParam("can not modify the maxcapacity for non-array types")
		}
		n, err := strconv.Atoi(value)
		if err != nil || n <= 0 || n > MaxArrayCap {
			return errcode.InvalidParam("the maximum capacity specified for a Array should be in (0, %d]", MaxArrayCap)
		}
		return nil
	}
	return errcode.InvalidParam("%s does not allow update in collection field param", key)
}

// setTypeParam sets key to value in params (value "" deletes it).
func setTypeParam(params []*commonpb.KeyValuePair, key, value string) []*commonpb.KeyValuePair {
	out := make([]*commonpb.KeyValuePair, 0, len(params)+1)
	for _, kv := range params {
		if kv.GetKey() != key {
			out = append(out, kv)
		}
	}
	if value != "" {
		out = append(out, &commonpb.KeyValuePair{Key: key, Value: value})
	}
	return out
}
