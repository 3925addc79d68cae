package wal_test

import (
	"context"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/msgpb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/wal"
)

func TestPositionRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name     string
		pos      wal.Position
		vchannel string
	}{
		{"Zero", wal.Position{PChannel: "by-dev-rootcoord-dml_0", Offset: 0, TimeTick: 1}, "by-dev-rootcoord-dml_0_451v0"},
		{"Large", wal.Position{PChannel: "by-dev-rootcoord-dml_15", Offset: 1 << 40, TimeTick: 449999 << 18}, "by-dev-rootcoord-dml_15_7v3"},
		{"PChannelOnly", wal.Position{PChannel: "by-dev-rootcoord-dml_2", Offset: 9, TimeTick: 5}, "by-dev-rootcoord-dml_2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.pos.MsgPosition(tc.vchannel)
			require.Equal(t, tc.vchannel, m.GetChannelName())
			require.Len(t, m.GetMsgID(), 8)
			require.Equal(t, tc.pos.TimeTick, m.GetTimestamp())
			got, err := wal.PositionFromMsg(m)
			require.NoError(t, err)
			require.Equal(t, tc.pos, got)
		})
	}
}

func TestPositionFromMsgErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    *msgpb.MsgPosition
	}{
		{"Nil", nil},
		{"ShortID", &msgpb.MsgPosition{ChannelName: "p_1v0", MsgID: []byte{1, 2}}},
		{"NegativeOffset", &msgpb.MsgPosition{ChannelName: "p_1v0", MsgID: []byte{0, 0, 0, 0, 0, 0, 0, 0x80}}},
		{"NoChannel", &msgpb.MsgPosition{MsgID: make([]byte, 8)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := wal.PositionFromMsg(tc.m)
			require.ErrorIs(t, err, wal.ErrBadPosition)
		})
	}
}

func TestChannelNames(t *testing.T) {
	require.Equal(t, "by-dev-rootcoord-dml_3", wal.PChannelName("", 3))
	require.Equal(t, "strata-rootcoord-dml_0", wal.PChannelName("strata", 0))
	for _, tc := range []struct {
		vchannel string
		pchannel string
		coll     int64
		ok       bool
	}{
		{wal.VChannelName("by-dev-rootcoord-dml_3", 449, 1), "by-dev-rootcoord-dml_3", 449, true},
		{"by-dev-rootcoord-dml_3_449v1", "by-dev-rootcoord-dml_3", 449, true},
		{"by-dev-rootcoord-dml_3", "by-dev-rootcoord-dml_3", 0, false},
		{"plain", "plain", 0, false},
		{"p_12vx", "p_12vx", 0, false},
		{"_1v0", "_1v0", 0, false},
	} {
		t.Run(tc.vchannel, func(t *testing.T) {
			require.Equal(t, tc.pchannel, wal.PChannelOf(tc.vchannel))
			coll, err := wal.CollectionIDOf(tc.vchannel)
			if !tc.ok {
				require.ErrorIs(t, err, wal.ErrBadVChannel)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.coll, coll)
		})
	}
}

func TestScannerBadMessage(t *testing.T) {
	l := openLog(t)
	good := (&wal.Message{Type: wal.TypeInsert, VChannel: "p_1v0", TimeTick: 42, Payload: []byte("x")}).Encode()
	res := <-l.AppendAsync("p", [][]byte{good, []byte("garbage"), good})
	require.NoError(t, res.Err)
	ctx := context.Background()
	s, err := wal.OpenScanner(ctx, l, "p", 0)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	e, err := s.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, wal.Position{PChannel: "p", Offset: 0, TimeTick: 42}, e.Position)
	require.Equal(t, []byte("x"), e.Message.Payload)
	_, err = s.Next(ctx)
	require.ErrorIs(t, err, wal.ErrBadMessage)
	require.ErrorContains(t, err, "offset 1")
	e, err = s.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(2), e.Position.Offset)
}

func TestScannerMarksMultiMessageRecords(t *testing.T) {
	l := openLog(t)
	rec := wal.EncodeRecord([]wal.Message{
		{Type: wal.TypeDelete, VChannel: "p_1v0", TimeTick: 7},
		{Type: wal.TypeInsert, VChannel: "p_1v0", TimeTick: 7},
	})
	single := (&wal.Message{Type: wal.TypeInsert, VChannel: "p_1v0", TimeTick: 8}).Encode()
	res := <-l.AppendAsync("p", [][]byte{rec, single})
	require.NoError(t, res.Err)
	ctx := context.Background()
	s, err := wal.OpenScanner(ctx, l, "p", 0)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	for _, want := range []struct {
		off  int64
		typ  wal.MessageType
		more bool
	}{{0, wal.TypeDelete, true}, {0, wal.TypeInsert, false}, {1, wal.TypeInsert, false}} {
		e, err := s.Next(ctx)
		require.NoError(t, err)
		require.Equal(t, want.off, e.Position.Offset)
		require.Equal(t, want.typ, e.Message.Type)
		require.Equal(t, want.more, e.More, "offset %d %v", want.off, want.typ)
	}
}
