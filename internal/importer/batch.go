package importer

import (
	"encoding/json"
	"fmt"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
)

// DynamicField is the name of the hidden JSON field of a dynamic collection,
// as bulk writers name its column, file or key.
const DynamicField = "$meta"

// builder collects one field's values for a batch of rows.
type builder struct {
	f        *schemapb.FieldSchema
	col      column.Column
	valid    []bool
	optional bool
	// text holds the values of fields that travel to the proxy as text,
	// which parses them as it parses an insert's: Geometry (WKT) and
	// Timestamptz (ISO 8601, nulls left out: the validity says where).
	text   []string
	asText bool
}

func newBuilder(f *schemapb.FieldSchema) (*builder, error) {
	if t := f.GetDataType(); t == schemapb.DataType_Geometry || t == schemapb.DataType_Timestamptz {
		return &builder{f: f, asText: true, optional: f.GetNullable() || f.GetDefaultValue() != nil}, nil
	}
	c, err := column.New(f)
	if err != nil {
		return nil, err
	}
	return &builder{f: f, col: c, optional: f.GetNullable() || f.GetDefaultValue() != nil}, nil
}

// add appends one file value (nil: null or missing), converted for the
// field's type.
func (b *builder) add(v any) error {
	if v == nil {
		if !b.optional {
			return fmt.Errorf("field %q: the value is missing or null, and the field is neither nullable nor has a default value", b.f.GetName())
		}
		b.valid = append(b.valid, false)
		if b.asText {
			if b.f.GetDataType() == schemapb.DataType_Geometry {
				b.text = append(b.text, "") // WKT columns keep a slot per row, as REST sends them
			}
			return nil
		}
		return b.appendZero()
	}
	if b.asText {
		str, ok := v.(string)
		if !ok {
			return fmt.Errorf("field %q: %s is not a string", b.f.GetName(), show(v))
		}
		if b.optional {
			b.valid = append(b.valid, true)
		}
		b.text = append(b.text, str)
		return nil
	}
	x, err := cellValue(b.f, v)
	if err != nil {
		return fmt.Errorf("field %q: %w", b.f.GetName(), err)
	}
	if b.optional {
		b.valid = append(b.valid, true)
	}
	if err := column.AppendValue(b.col, x); err != nil {
		return fmt.Errorf("field %q: %w", b.f.GetName(), err)
	}
	return nil
}

func (b *builder) appendZero() error {
	if b.f.GetDataType() == schemapb.DataType_JSON {
		return column.AppendValue(b.col, []byte("null"))
	}
	return column.AppendValue(b.col, nil)
}

// fieldData returns the collected values as a wire column.
func (b *builder) fieldData() *schemapb.FieldData {
	if b.asText {
		sf := &schemapb.ScalarField{Data: &schemapb.ScalarField_StringData{StringData: &schemapb.StringArray{Data: b.text}}}
		if b.f.GetDataType() == schemapb.DataType_Geometry {
			sf = &schemapb.ScalarField{Data: &schemapb.ScalarField_GeometryWktData{GeometryWktData: &schemapb.GeometryWktArray{Data: b.text}}}
		}
		return &schemapb.FieldData{
			Type: b.f.GetDataType(), FieldName: b.f.GetName(), FieldId: b.f.GetFieldID(), ValidData: b.valid,
			Field: &schemapb.FieldData_Scalars{Scalars: sf},
		}
	}
	if b.optional {
		column.SetValidity(b.col, b.valid)
	}
	return column.ToFieldData(b.f.GetName(), b.f.GetFieldID(), b.col)
}

// batch is one batch of rows read from a file, field by field.
type batch struct {
	structs  map[string]*structBuilder
	sorder   []*structBuilder
	fields   map[string]*builder
	order    []*builder
	dynamic  bool
	meta     [][]byte // the dynamic field's objects, one per row
	hasMeta  bool
	rows     int
	autoPK   string // the auto-ID primary key's name ("" = none)
	outputs  map[string]bool
	schema   *schemapb.CollectionSchema
	keepAuto bool
}

// newBatch starts a batch whose columns are the named fields (nil: every
// field a row may hold, for row-based files).
func newBatch(schema *schemapb.CollectionSchema, names []string) (*batch, error) {
	b := &batch{
		fields: map[string]*builder{}, structs: map[string]*structBuilder{}, dynamic: schema.GetEnableDynamicField(),
		outputs: map[string]bool{}, schema: schema,
	}
	subs := map[int64]bool{} // the sub-field columns of struct fields
	structs := map[string]*schemapb.StructArrayFieldSchema{}
	for _, sa := range schema.GetStructArrayFields() {
		structs[sa.GetName()] = sa
		for _, f := range sa.GetFields() {
			subs[f.GetFieldID()] = true
		}
	}
	addStruct := func(sa *schemapb.StructArrayFieldSchema) error {
		sb, err := newStructBuilder(sa)
		if err != nil {
			return err
		}
		b.structs[sa.GetName()] = sb
		b.sorder = append(b.sorder, sb)
		return nil
	}
	for _, fn := range schema.GetFunctions() {
		for _, o := range fn.GetOutputFieldNames() {
			b.outputs[o] = true
		}
	}
	userField := func(f *schemapb.FieldSchema) bool {
		return f.GetFieldID() >= 100 && !f.GetIsDynamic() && f.GetName() != DynamicField && !subs[f.GetFieldID()]
	}
	if names == nil {
		for _, sa := range schema.GetStructArrayFields() {
			if err := addStruct(sa); err != nil {
				return nil, err
			}
		}
		for _, f := range schema.GetFields() {
			if !userField(f) || b.outputs[f.GetName()] {
				continue
			}
			if f.GetIsPrimaryKey() && f.GetAutoID() {
				b.autoPK = f.GetName()
				continue
			}
			if err := b.addField(f); err != nil {
				return nil, err
			}
		}
		return b, nil
	}
	byName := map[string]*schemapb.FieldSchema{}
	for _, f := range schema.GetFields() {
		if userField(f) {
			byName[f.GetName()] = f
		}
	}
	for _, n := range names {
		if n == DynamicField {
			if !b.dynamic {
				return nil, fmt.Errorf("the collection has no dynamic field, but the file has a %q column", DynamicField)
			}
			b.hasMeta = true
			continue
		}
		if sa := structs[n]; sa != nil {
			if err := addStruct(sa); err != nil {
				return nil, err
			}
			continue
		}
		f := byName[n]
		if f == nil {
			return nil, fmt.Errorf("the file has a column %q that is not a field of the collection", n)
		}
		if b.outputs[n] {
			return nil, fmt.Errorf("field %q is the output of a function; the file must not give it", n)
		}
		if err := b.addField(f); err != nil {
			return nil, err
		}
	}
	return b, nil
}

func (b *batch) addField(f *schemapb.FieldSchema) error {
	fb, err := newBuilder(f)
	if err != nil {
		return fmt.Errorf("field %q: %w", f.GetName(), err)
	}
	b.fields[f.GetName()] = fb
	b.order = append(b.order, fb)
	return nil
}

// addRow appends one row-based record (a JSON object).
func (b *batch) addRow(row map[string]any) error {
	if b.autoPK != "" && !b.keepAuto {
		if _, ok := row[b.autoPK]; ok {
			// Sent anyway: the proxy's check refuses it unless the
			// collection allows inserting auto-ID keys.
			if b.rows > 0 {
				return fmt.Errorf("field %q is given by some rows only", b.autoPK)
			}
			f := fieldNamed(b.schema, b.autoPK)
			if err := b.addField(f); err != nil {
				return err
			}
			b.keepAuto = true
		}
	}
	for _, fb := range b.order {
		v, ok := row[fb.f.GetName()]
		if !ok {
			v = nil
		}
		if err := fb.add(v); err != nil {
			return err
		}
	}
	for _, sb := range b.sorder {
		if err := sb.add(row[sb.sa.GetName()]); err != nil {
			return err
		}
	}
	if b.dynamic {
		extra := map[string]any{}
		for k, v := range row {
			if _, known := b.fields[k]; known || b.structs[k] != nil || k == b.autoPK || b.outputs[k] {
				continue
			}
			if k == DynamicField {
				m, ok := v.(map[string]any)
				if !ok {
					return fmt.Errorf("the dynamic field %q must be a JSON object", DynamicField)
				}
				for mk, mv := range m {
					extra[mk] = mv
				}
				continue
			}
			extra[k] = v
		}
		enc, err := json.Marshal(extra)
		if err != nil {
			return fmt.Errorf("dynamic fields: %w", err)
		}
		b.meta = append(b.meta, enc)
	} else {
		for k := range row {
			if _, known := b.fields[k]; !known && b.structs[k] == nil && k != b.autoPK && !b.outputs[k] {
				return fmt.Errorf("field %q is not in the collection's schema, and the collection has no dynamic field", k)
			}
		}
	}
	b.rows++
	return nil
}

// addMeta appends one row's dynamic-field value from a column-based file (a
// JSON object, as text or decoded).
func (b *batch) addMeta(v any) error {
	switch x := v.(type) {
	case nil:
		b.meta = append(b.meta, []byte("{}"))
		return nil
	case string:
		var m map[string]any
		if err := json.Unmarshal([]byte(x), &m); err != nil || m == nil {
			return fmt.Errorf("the dynamic field %q must be a JSON object, not %.40q", DynamicField, x)
		}
		b.meta = append(b.meta, []byte(x))
		return nil
	case map[string]any:
		enc, err := json.Marshal(x)
		if err != nil {
			return err
		}
		b.meta = append(b.meta, enc)
		return nil
	}
	return fmt.Errorf("the dynamic field %q must be a JSON object", DynamicField)
}

// fieldData returns the batch as wire columns for the proxy's checks.
func (b *batch) fieldData() []*schemapb.FieldData {
	out := make([]*schemapb.FieldData, 0, len(b.order)+1)
	for _, fb := range b.order {
		out = append(out, fb.fieldData())
	}
	for _, sb := range b.sorder {
		out = append(out, sb.fieldData())
	}
	if b.dynamic && (b.hasMeta || b.meta != nil) {
		out = append(out, &schemapb.FieldData{
			Type: schemapb.DataType_JSON, FieldName: DynamicField, IsDynamic: true,
			Field: &schemapb.FieldData_Scalars{Scalars: &schemapb.ScalarField{
				Data: &schemapb.ScalarField_JsonData{JsonData: &schemapb.JSONArray{Data: b.meta}},
			}},
		})
	}
	return out
}

func fieldNamed(schema *schemapb.CollectionSchema, name string) *schemapb.FieldSchema {
	for _, f := range schema.GetFields() {
		if f.GetName() == name {
			return f
		}
	}
	return nil
}

// fillColumns reads rows [lo, hi) of a column-based file into a new batch
// of the named columns; cell returns column k's value of row i.
func fillColumns(schema *schemapb.CollectionSchema, names []string, lo, hi int, cell func(k, i int) (any, error)) (*batch, error) {
	b, err := newBatch(schema, names)
	if err != nil {
		return nil, err
	}
	for k, name := range names {
		fb, sb := b.fields[name], b.structs[name]
		for i := lo; i < hi; i++ {
			v, err := cell(k, i)
			if err != nil {
				return nil, &rowError{row: i, err: fmt.Errorf("field %q: %w", name, err)}
			}
			switch {
			case sb != nil:
				err = sb.add(v)
			case fb == nil:
				err = b.addMeta(v)
			default:
				err = fb.add(v)
			}
			if err != nil {
				return nil, &rowError{row: i, err: err}
			}
		}
	}
	b.rows = hi - lo
	return b, nil
}
