package column

// Timestamptz columns.
//
// A Timestamptz value is an instant, held as an int64 count of microseconds
// since 1970-01-01T00:00:00Z (UTC), the representation Milvus 2.6 uses in
// its binlogs (an Arrow int64 payload) and in ScalarField.timestamptz_data.
// In memory it is an Ints column whose T is DataType_Timestamptz, so filters,
// sort indexes, group-by and compaction treat it like any int64 column.
//
// Clients write and read ISO-8601 strings: ParseTimestamptz turns one into
// the instant (a string without an offset is read in a default IANA time
// zone) and FormatTimestamptz renders an instant in a time zone.

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
)

// DefaultTimezone is the time zone used when neither the request, the
// collection nor its database names one.
const DefaultTimezone = "UTC"

// TimezoneKey is the collection / database property and query parameter
// naming an IANA time zone for Timestamptz fields.
const TimezoneKey = "timezone"

// Offsets outside [-12:00, +14:00] are refused, as in Milvus.
const (
	maxOffsetSeconds = 14 * 3600
	minOffsetSeconds = -12 * 3600
)

// naiveLayouts are the accepted forms without a UTC offset.
var naiveLayouts = []string{
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999",
}

// LoadTimezone resolves an IANA time zone name ("UTC", "Asia/Shanghai").
// An empty name is refused.
func LoadTimezone(name string) (*time.Location, error) {
	if name == "" {
		return nil, errors.New("column: empty time zone name")
	}
	return time.LoadLocation(name)
}

// ParseTimestamptz parses an RFC 3339 string with an offset ("Z", "+08:00";
// a space may stand for the "T") or a naive "YYYY-MM-DD[T ]hh:mm:ss[.fraction]" string, which is read in
// the time zone tz, and returns microseconds since the Unix epoch.
func ParseTimestamptz(s, tz string) (int64, error) {
	iso := s
	if len(s) > 10 && s[10] == ' ' {
		iso = s[:10] + "T" + s[11:] // "2024-12-31 22:00:00Z" as Milvus accepts it
	}
	if t, err := time.Parse(time.RFC3339Nano, iso); err == nil {
		if _, off := t.Zone(); off > maxOffsetSeconds || off < minOffsetSeconds {
			return 0, fmt.Errorf("UTC offset hour %d is out of the valid range [%d, %d]", off/3600, minOffsetSeconds/3600, maxOffsetSeconds/3600)
		}
		return t.UnixMicro(), nil
	}
	loc, err := LoadTimezone(tz)
	if err != nil {
		return 0, fmt.Errorf("invalid default timezone string '%s': %w", tz, err)
	}
	for _, layout := range naiveLayouts {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t.UnixMicro(), nil
		}
	}
	return 0, fmt.Errorf("invalid timestamp string: '%s'. Does not match any known format", s)
}

// FormatTimestamptz renders micros (microseconds since the Unix epoch) in
// loc as RFC 3339 with at most six fraction digits and no trailing zeros:
// "2025-01-01T06:00:00+08:00", "2024-12-31T22:00:00.5Z".
func FormatTimestamptz(micros int64, loc *time.Location) string {
	return time.UnixMicro(micros).In(loc).Format(time.RFC3339Nano)
}

// TimestamptzToStrings converts a Timestamptz wire column (timestamptz_data)
// in place into ISO strings rendered in loc (string_data), which is how
// Milvus returns the type to clients. Other columns are left alone.
func TimestamptzToStrings(fd *schemapb.FieldData, loc *time.Location) {
	if fd.GetType() != schemapb.DataType_Timestamptz {
		return
	}
	d := fd.GetScalars().GetTimestamptzData()
	if d == nil {
		return
	}
	out := make([]string, len(d.GetData()))
	for i, v := range d.GetData() {
		out[i] = FormatTimestamptz(v, loc)
	}
	fd.GetScalars().Data = &schemapb.ScalarField_StringData{StringData: &schemapb.StringArray{Data: out}}
}

// TimestamptzFromStrings converts a Timestamptz wire column sent as ISO
// strings (string_data, as clients send it) in place into timestamptz_data,
// reading naive strings in tz. On failure it returns the first string that
// does not parse and its error, and leaves the column unchanged.
func TimestamptzFromStrings(fd *schemapb.FieldData, tz string) (bad string, err error) {
	sd := fd.GetScalars().GetStringData()
	if fd.GetType() != schemapb.DataType_Timestamptz || sd == nil {
		return "", nil
	}
	out := make([]int64, len(sd.GetData()))
	for i, s := range sd.GetData() {
		v, err := ParseTimestamptz(strings.TrimSpace(s), tz)
		if err != nil {
			return s, err
		}
		out[i] = v
	}
	fd.GetScalars().Data = &schemapb.ScalarField_TimestamptzData{TimestamptzData: &schemapb.TimestamptzArray{Data: out}}
	return "", nil
}

func timestamptzFromFieldData(f *schemapb.FieldSchema, fd *schemapb.FieldData, valid []bool) (Column, error) {
	sc := fd.GetScalars()
	var data []int64
	switch {
	case sc.GetTimestamptzData() != nil:
		data = sc.GetTimestamptzData().GetData()
	case sc.GetLongData() != nil:
		data = sc.GetLongData().GetData()
	default:
		return nil, fmt.Errorf("column: field %q: data of type %s does not fit the field type %s (timestamptz values must be converted from strings first)",
			f.GetName(), fd.GetType(), f.GetDataType())
	}
	return &Ints{Nulls{valid}, schemapb.DataType_Timestamptz, expand(data, valid)}, nil
}

func timestamptzScalars(data []int64) *schemapb.ScalarField {
	return &schemapb.ScalarField{Data: &schemapb.ScalarField_TimestamptzData{TimestamptzData: &schemapb.TimestamptzArray{Data: data}}}
}
