package datanode_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/msgpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/stacktest"
	"github.com/strata-db/strata/internal/wal"
)

// appendRaw appends records to the stack's only pchannel behind the
// proxy's back, as a buggy or older writer could have.
func appendRaw(t *testing.T, s *stacktest.Stack, records ...[]byte) {
	t.Helper()
	res := <-s.Log.AppendAsync(wal.PChannelOf(s.VChannels[0]), records)
	require.NoError(t, res.Err)
}

// A message the data node cannot apply (an insert whose columns do not fit
// the schema, a record that does not decode) is quarantined: counted,
// reported by Problems, and skipped, so the rows after it are still
// written, the node keeps running and a restart does not stop on it again.
func TestPoisonMessagesAreQuarantined(t *testing.T) {
	s := stacktest.New(t)
	seg := s.Insert(0, 10)
	require.NoError(t, s.QueryNode.Load(context.Background(), s.CollectionID, nil, 0, nil))
	// An insert of the segment that lacks the vector field, and bytes
	// that are no record at all.
	bad, err := proto.Marshal(&msgpb.InsertRequest{
		SegmentID: seg, CollectionID: s.CollectionID, NumRows: 2,
		RowIDs: []int64{1, 2}, Timestamps: []uint64{1, 1}, FieldsData: []*schemapb.FieldData{{
			FieldName: "id", FieldId: 100,
			Type: schemapb.DataType_Int64, Field: &schemapb.FieldData_Scalars{Scalars: &schemapb.ScalarField{
				Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: []int64{100, 101}}},
			}},
		}},
	})
	require.NoError(t, err)
	ts := uint64(time.Now().UnixMilli()) << 18
	m := wal.Message{Type: wal.TypeInsert, VChannel: s.VChannels[0], TimeTick: ts, Payload: bad}
	appendRaw(t, s, m.Encode(), []byte{0xff, 0xee})
	s.Insert(10, 20)
	require.EqualValues(t, 20, s.Count(), "the query node serves the rows around the poison")
	require.EqualValues(t, 2, s.QueryNode.Quarantined(), "the query node skipped the same two")
	require.Len(t, s.QueryNode.Problems(), 1, "one vchannel with quarantined messages")

	dn := s.NewDataNode()
	ids, flushTS := s.Seal()
	s.RunDataNode(dn, func() bool { return s.FlushState(ids, s.VChannels, flushTS) })
	require.EqualValues(t, 2, dn.Quarantined())
	problems := dn.Problems()
	require.Len(t, problems, 2, "%v", problems)
	var reasons []string
	for _, p := range problems {
		require.Equal(t, "datanode", p.Component)
		reasons = append(reasons, p.Subject+": "+p.Reason)
	}
	joined := strings.Join(reasons, "\n")
	require.Contains(t, joined, "vchannel "+s.VChannels[0])
	require.Contains(t, joined, `"vec"`)
	require.Contains(t, joined, "malformed message")

	keys := storedKeys(t, s, seg)
	slices.Sort(keys)
	require.Equal(t, keyRange(0, 20), keys, "the rows around the poison are written, the poison is not")
	// A restarted data node starts past them (the checkpoint moved on).
	dn = s.NewDataNode()
	s.RunDataNode(dn, func() bool { return true })
	require.Zero(t, dn.Quarantined())
}
