package wal_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/wal"
)

func TestFlushPayloadRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		ids  []int64
	}{
		{"empty", []int64{}},
		{"one", []int64{42}},
		{"many", []int64{1, 2, 3, 460000000000000000}},
		{"extremes", []int64{math.MinInt64, -1, 0, math.MaxInt64}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := wal.EncodeFlush(tc.ids)
			require.Len(t, b, 4+8*len(tc.ids))
			require.EqualValues(t, len(tc.ids), binary.LittleEndian.Uint32(b), "count is uint32 LE")
			got, err := wal.DecodeFlush(b)
			require.NoError(t, err)
			require.Equal(t, tc.ids, got)
		})
	}
}

func TestFlushPayloadNilEncodesEmpty(t *testing.T) {
	got, err := wal.DecodeFlush(wal.EncodeFlush(nil))
	require.NoError(t, err)
	require.Empty(t, got)
}

func TestDecodeFlushRejectsBadPayloads(t *testing.T) {
	good := wal.EncodeFlush([]int64{7, 8})
	for _, tc := range []struct {
		name string
		b    []byte
		msg  string
	}{
		{"nil", nil, "short"},
		{"short header", []byte{1, 0}, "short"},
		{"truncated ids", good[:len(good)-1], "length"},
		{"trailing bytes", append(append([]byte(nil), good...), 0), "length"},
		{"count too large", binary.LittleEndian.AppendUint32(nil, 3), "length"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := wal.DecodeFlush(tc.b)
			require.ErrorContains(t, err, tc.msg)
		})
	}
}
