package wal_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/wal"
)

func TestRecordRoundTrip(t *testing.T) {
	msgs := []wal.Message{
		{Type: wal.TypeDelete, VChannel: "v1", TimeTick: 7, Payload: []byte("del")},
		{Type: wal.TypeInsert, VChannel: "v1", TimeTick: 7, Payload: []byte("ins")},
		{Type: wal.TypeInsert, VChannel: "v2", TimeTick: 7},
	}
	for n := 1; n <= len(msgs); n++ {
		got, err := wal.DecodeRecord(wal.EncodeRecord(msgs[:n]))
		require.NoError(t, err)
		require.Len(t, got, n)
		for i := range got {
			require.Equal(t, msgs[i].Type, got[i].Type)
			require.Equal(t, msgs[i].VChannel, got[i].VChannel)
			require.Equal(t, msgs[i].TimeTick, got[i].TimeTick)
			require.Equal(t, string(msgs[i].Payload), string(got[i].Payload))
		}
	}
	rec := wal.EncodeRecord(msgs)
	for cut := 0; cut < len(rec); cut++ {
		_, err := wal.DecodeRecord(rec[:cut])
		require.ErrorIs(t, err, wal.ErrBadMessage, "cut at %d", cut)
	}
}
