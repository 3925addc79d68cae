package storage

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestObjectKeys(t *testing.T) {
	cases := []struct {
		name string
		got  string
		want string
	}{
		{"insert", InsertLogKey("files", 1, 2, 3, 100, 449), "files/insert_log/1/2/3/100/449"},
		{"insert default root", InsertLogKey("", 1, 2, 3, 0, 5), "files/insert_log/1/2/3/0/5"},
		{"insert custom root", InsertLogKey("/data/milvus/", 1, 2, 3, 1, 5), "/data/milvus/insert_log/1/2/3/1/5"},
		{"stats", StatsLogKey("files", 1, 2, 3, 100, 449), "files/stats_log/1/2/3/100/449"},
		{"compound stats", CompoundStatsLogKey("files", 1, 2, 3, 100), "files/stats_log/1/2/3/100/1"},
		{"delta", DeltaLogKey("files", 1, 2, 3, 449), "files/delta_log/1/2/3/449"},
		{"negative id", DeltaLogKey("r", -1, 2, 3, 4), "r/delta_log/-1/2/3/4"},
		{"index", IndexFileKey("files", 7, 1, 2, 3, "HNSW_0"), "files/index_files/7/1/2/3/HNSW_0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.got)
		})
	}
}
