package column

import (
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
)

func TestParseTimestamptz(t *testing.T) {
	utc := func(s string) int64 {
		v, err := time.Parse(time.RFC3339Nano, s)
		require.NoError(t, err)
		return v.UnixMicro()
	}
	for _, tc := range []struct {
		in, tz string
		want   int64
	}{
		{"2024-12-31T22:00:00Z", "Asia/Shanghai", utc("2024-12-31T22:00:00Z")},
		{"2024-12-31 22:00:00Z", "UTC", utc("2024-12-31T22:00:00Z")},
		{"2024-12-31T22:00:00-08:00", "UTC", utc("2025-01-01T06:00:00Z")},
		{"2024-12-31 22:00:00+08:00", "UTC", utc("2024-12-31T14:00:00Z")},
		{"2024-12-31 22:00:00", "Asia/Shanghai", utc("2024-12-31T14:00:00Z")},
		{"2024-12-31T22:00:00.123456", "UTC", utc("2024-12-31T22:00:00.123456Z")},
		{"0000-01-01 00:00:00", "UTC", utc("0000-01-01T00:00:00Z")},
		{"9999-12-31T23:59:59", "UTC", utc("9999-12-31T23:59:59Z")},
		{"2024-02-29T00:00:00+03:00", "UTC", utc("2024-02-28T21:00:00Z")},
	} {
		got, err := ParseTimestamptz(tc.in, tc.tz)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
	for _, bad := range []string{
		"invalid_time_format", "2025-04-31 00:00:00", "2025-02-29 00:00:00",
		"2025-01-01T00:00:00+24:00", "2025-01-01T00:00:00+15:00", "2025-01-01",
	} {
		_, err := ParseTimestamptz(bad, "UTC")
		require.Error(t, err, bad)
	}
	_, err := ParseTimestamptz("timestamp", "UTC")
	require.EqualError(t, err, "invalid timestamp string: 'timestamp'. Does not match any known format")
	_, err = ParseTimestamptz("2025-01-01 00:00:00", "Nowhere/City")
	require.Error(t, err)
}

func TestFormatTimestamptz(t *testing.T) {
	sh, err := LoadTimezone("Asia/Shanghai")
	require.NoError(t, err)
	v, err := ParseTimestamptz("2024-12-31T22:00:00Z", "UTC")
	require.NoError(t, err)
	require.Equal(t, "2025-01-01T06:00:00+08:00", FormatTimestamptz(v, sh))
	require.Equal(t, "2024-12-31T22:00:00Z", FormatTimestamptz(v, time.UTC))
	require.Equal(t, "2024-12-31T22:00:00.5Z", FormatTimestamptz(v+500_000, time.UTC))
	_, err = LoadTimezone("")
	require.Error(t, err)
}

// TestTimestamptzWire: strings in, micros through FromFieldData /
// ToFieldData (the WAL form), strings out.
func TestTimestamptzWire(t *testing.T) {
	f := &schemapb.FieldSchema{Name: "ts", DataType: schemapb.DataType_Timestamptz, Nullable: true}
	fd := &schemapb.FieldData{
		FieldName: "ts", Type: schemapb.DataType_Timestamptz, ValidData: []bool{true, false, true},
		Field: &schemapb.FieldData_Scalars{Scalars: &schemapb.ScalarField{Data: &schemapb.ScalarField_StringData{
			StringData: &schemapb.StringArray{Data: []string{"1970-01-01T00:00:01Z", "1970-01-01 08:00:00"}},
		}}},
	}
	_, err := FromFieldData(f, fd)
	require.Error(t, err, "strings must be converted first")
	bad, err := TimestamptzFromStrings(fd, "Asia/Shanghai")
	require.NoError(t, err, bad)
	c, err := FromFieldData(f, fd)
	require.NoError(t, err)
	ints := c.(*Ints)
	require.Equal(t, schemapb.DataType_Timestamptz, ints.Type())
	require.Equal(t, []int64{1_000_000, 0, 0}, ints.Data)
	require.True(t, ints.IsNull(1))

	out := ToFieldData("ts", 100, c)
	require.Equal(t, []int64{1_000_000, 0, 0}, out.GetScalars().GetTimestamptzData().GetData())
	back, err := FromFieldData(f, out)
	require.NoError(t, err)
	require.Equal(t, c, back)
	TimestamptzToStrings(out, time.UTC)
	require.Equal(t, []string{"1970-01-01T00:00:01Z", "1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z"}, out.GetScalars().GetStringData().GetData())

	wrong := &schemapb.FieldData{
		FieldName: "ts", Type: schemapb.DataType_Timestamptz,
		Field: &schemapb.FieldData_Scalars{Scalars: &schemapb.ScalarField{Data: &schemapb.ScalarField_StringData{
			StringData: &schemapb.StringArray{Data: []string{"2025-01-01T00:00:00Z", "nope"}},
		}}},
	}
	bad, err = TimestamptzFromStrings(wrong, "UTC")
	require.Error(t, err)
	require.Equal(t, "nope", bad)
	require.NotNil(t, wrong.GetScalars().GetStringData(), "left unchanged on failure")
}
