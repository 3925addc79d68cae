package storage

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseObjectKeyRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		root string
		key  string
		want ObjectKey
	}{
		{
			"insert", "files", InsertLogKey("files", 1, 2, 3, 100, 449),
			ObjectKey{Kind: KindInsertLog, CollectionID: 1, PartitionID: 2, SegmentID: 3, FieldID: 100, LogID: 449},
		},
		{
			"insert default root", "", InsertLogKey("", 1, 2, 3, 0, 5),
			ObjectKey{Kind: KindInsertLog, CollectionID: 1, PartitionID: 2, SegmentID: 3, LogID: 5},
		},
		{
			"nested root", "a/b", InsertLogKey("a/b", 1, 2, 3, 0, 5),
			ObjectKey{Kind: KindInsertLog, CollectionID: 1, PartitionID: 2, SegmentID: 3, LogID: 5},
		},
		{
			"stats", "files", StatsLogKey("files", 1, 2, 3, 100, 449),
			ObjectKey{Kind: KindStatsLog, CollectionID: 1, PartitionID: 2, SegmentID: 3, FieldID: 100, LogID: 449},
		},
		{
			"compound stats", "files", CompoundStatsLogKey("files", 1, 2, 3, 100),
			ObjectKey{Kind: KindStatsLog, CollectionID: 1, PartitionID: 2, SegmentID: 3, FieldID: 100, LogID: CompoundStatsLogID},
		},
		{
			"delta of all partitions", "files", DeltaLogKey("files", 1, -1, 3, 449),
			ObjectKey{Kind: KindDeltaLog, CollectionID: 1, PartitionID: -1, SegmentID: 3, LogID: 449},
		},
		{
			"index", "files", IndexFileKey("files", 7, 1, 2, 3, "HNSW_0"),
			ObjectKey{Kind: KindIndexFile, BuildID: 7, Version: 1, PartitionID: 2, SegmentID: 3, Name: "HNSW_0"},
		},
		{
			"index nested name", "files", IndexFileKey("files", 7, 1, 2, 3, "x/y"),
			ObjectKey{Kind: KindIndexFile, BuildID: 7, Version: 1, PartitionID: 2, SegmentID: 3, Name: "x/y"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseObjectKey(tc.root, tc.key)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.key, got.Key(tc.root))
		})
	}
}

func TestParseObjectKeyRejects(t *testing.T) {
	for _, key := range []string{
		"files/insert_log/1/2/3/100",                     // too short
		"files/insert_log/1/2/3/100/5/6",                 // too long
		"files/insert_log/1/2/x/100/5",                   // not an ID
		"files/insert_log/1/2/03/100/5",                  // leading zero
		"files/insert_log/1/2/+3/100/5",                  // sign
		"files/delta_log/1/2/3",                          // too short
		"files/delta_log/1/2/3/4/5",                      // too long
		"files/index_files/7/1/2/3",                      // no name
		"files/index_files/7/1/2/3/a/../b",               // not canonical
		"files/other_log/1/2/3/4",                        // unknown kind
		"elsewhere/insert_log/1/2/3/100/5",               // other root
		"files/insert_log/1/2/3/100/5.tmp",               // suffix
		"files/stats_log/1/2/3/100/99999999999999999999", // overflow
	} {
		t.Run(key, func(t *testing.T) {
			_, err := ParseObjectKey("files", key)
			require.Error(t, err)
		})
	}
}

func TestKindPrefix(t *testing.T) {
	require.Equal(t, "files/insert_log/", KindPrefix("", KindInsertLog))
	require.Equal(t, "r/index_files/", KindPrefix("r", KindIndexFile))
	require.Equal(t, "delta_log", KindDeltaLog.String())
}
