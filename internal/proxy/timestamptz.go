package proxy

import (
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
)

// Timestamptz at the proxy: clients send and receive ISO-8601 strings, the
// rest of Strata holds int64 microseconds (see column.ParseTimestamptz).
// Naive strings on insert are read in the collection's "timezone"
// property; results are rendered in the request's "timezone" parameter,
// else the collection's, else UTC.

// collectionTimezone is the collection's "timezone" property, or UTC.
func collectionTimezone(col *catalog.Collection) string {
	if tz := col.Properties[column.TimezoneKey]; tz != "" {
		return tz
	}
	return column.DefaultTimezone
}

// readTimezone resolves the time zone a read renders Timestamptz values in.
func readTimezone(col *catalog.Collection, params []*commonpb.KeyValuePair) (string, *time.Location, error) {
	tz := kvValue(params, column.TimezoneKey)
	if tz == "" {
		tz = collectionTimezone(col)
	}
	loc, err := column.LoadTimezone(tz)
	if err != nil {
		return "", nil, errcode.InvalidParam("unknown or invalid IANA Time Zone ID: %s", tz)
	}
	return tz, loc, nil
}

// timestamptzIn converts a Timestamptz column sent as strings into
// microseconds before it is validated like any other column.
func timestamptzIn(col *catalog.Collection, f *schemapb.FieldSchema, fd *schemapb.FieldData) error {
	if f.GetDataType() != schemapb.DataType_Timestamptz {
		return nil
	}
	bad, err := column.TimestamptzFromStrings(fd, collectionTimezone(col))
	if err != nil {
		return errcode.InvalidParam("got invalid timestamptz string '%s': invalid timezone name; "+
			"must be a valid IANA Time Zone ID (e.g., 'Asia/Shanghai' or 'UTC')", bad)
	}
	return nil
}

// timestamptzOut renders the Timestamptz columns of a result in loc.
func timestamptzOut(loc *time.Location, fds ...*schemapb.FieldData) {
	for _, fd := range fds {
		if fd != nil {
			column.TimestamptzToStrings(fd, loc)
		}
	}
}

// timestamptzDefaultsOut renders the stored (microsecond) default values
// of Timestamptz fields of s, a copy of col's schema, as ISO strings in the
// collection's time zone, as Milvus's describe_collection shows them.
func timestamptzDefaultsOut(s *schemapb.CollectionSchema, col *catalog.Collection) {
	loc, err := column.LoadTimezone(collectionTimezone(col))
	if err != nil {
		loc = time.UTC
	}
	for _, f := range s.GetFields() {
		dv := f.GetDefaultValue()
		if f.GetDataType() != schemapb.DataType_Timestamptz || dv == nil {
			continue
		}
		if v, ok := dv.GetData().(*schemapb.ValueField_TimestamptzData); ok {
			dv.Data = &schemapb.ValueField_StringData{StringData: column.FormatTimestamptz(v.TimestamptzData, loc)}
		}
	}
}

// checkTimestamptzIndex allows only STL_SORT (AUTOINDEX builds it) on a
// Timestamptz field, as Milvus 2.6 does.
func checkTimestamptzIndex(f *schemapb.FieldSchema, it string) error {
	switch it {
	case "", "AUTOINDEX", "STL_SORT":
		return nil
	}
	return errcode.Invalid("%s are not supported on %s field: invalid parameter[expected=valid index params][actual=invalid index params]",
		it, f.GetDataType())
}
