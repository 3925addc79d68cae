package rootcoord

import (
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
)

// Timestamptz fields and the "timezone" property.
//
// A Timestamptz field holds instants as int64 microseconds since the Unix
// epoch (UTC). Its default value arrives as an ISO-8601 string; at create
// time it is parsed (a string without an offset in the collection's time
// zone) and stored as ValueField.timestamptz_data, as Milvus 2.6 does.
//
// The time zone used to read naive strings and to render values is the
// request's "timezone" parameter, else the collection property "timezone",
// else UTC. A collection created in a database whose "timezone" property is
// set gets that property copied at creation; later changes to the database
// do not reach existing collections.

// checkTimestamptzField checks a Timestamptz field's schema.
func checkTimestamptzField(f *schemapb.FieldSchema) error {
	if f.GetIsPrimaryKey() {
		return errcode.Invalid("field %q: the data type of the primary key should be Int64 or VarChar", f.GetName())
	}
	return nil
}

// checkTimezoneProps refuses a "timezone" property that is not an IANA
// time zone name.
func checkTimezoneProps(props map[string]string) error {
	tz, ok := props[column.TimezoneKey]
	if !ok {
		return nil
	}
	if _, err := column.LoadTimezone(tz); err != nil {
		return errcode.InvalidParam("unknown or invalid IANA Time Zone ID: %s", tz)
	}
	return nil
}

// inheritTimezone returns the properties of a new collection: props, plus
// the database's "timezone" when props does not name one, else "UTC" — a
// Milvus 2.6 collection always shows its zone ({"timezone": "UTC"} by
// default).
func inheritTimezone(props, dbProps map[string]string) map[string]string {
	if _, has := props[column.TimezoneKey]; has {
		return props
	}
	tz, ok := dbProps[column.TimezoneKey]
	if !ok {
		tz = column.DefaultTimezone
	}
	out := make(map[string]string, len(props)+1)
	for k, v := range props {
		out[k] = v
	}
	out[column.TimezoneKey] = tz
	return out
}

// resolveTimestamptzDefaults rewrites the ISO string default values of
// Timestamptz fields into microseconds, reading naive strings in the zone
// named by props (UTC when none).
func resolveTimestamptzDefaults(schema *schemapb.CollectionSchema, props map[string]string) error {
	tz := props[column.TimezoneKey]
	if tz == "" {
		tz = column.DefaultTimezone
	}
	for _, f := range schema.GetFields() {
		dv := f.GetDefaultValue()
		if f.GetDataType() != schemapb.DataType_Timestamptz || dv.GetStringData() == "" {
			continue
		}
		v, err := column.ParseTimestamptz(dv.GetStringData(), tz)
		if err != nil {
			return errcode.Invalid("%v", err)
		}
		f.DefaultValue = &schemapb.ValueField{Data: &schemapb.ValueField_TimestamptzData{TimestamptzData: v}}
	}
	return nil
}

// resolveAddedTimestamptzDefault rewrites the ISO string default of an
// added Timestamptz field into microseconds, reading a naive string in the
// collection's time zone. A string that is no timestamp is refused with
// Milvus's message, word for word (its %w misuse included, as clients see
// it).
func resolveAddedTimestamptzDefault(f *schemapb.FieldSchema, props map[string]string) error {
	s := &schemapb.CollectionSchema{Fields: []*schemapb.FieldSchema{f}}
	if err := resolveTimestamptzDefaults(s, props); err != nil {
		return errcode.InvalidParam("invalid default value of field, name: %s, err: %%!w(*errors.errorString=&{%s})",
			f.GetName(), err.Error())
	}
	return nil
}
