package storage

import (
	"bytes"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
)

func TestDump(t *testing.T) {
	insert := func(field *schemapb.FieldSchema, col column.Column) func(t *testing.T) []byte {
		return func(t *testing.T) []byte {
			data, err := EncodeInsertLog(testDesc(), field, col)
			require.NoError(t, err)
			return data
		}
	}
	vec := make([]float32, 2*32)
	for i := range vec {
		vec[i] = float32(i)
	}
	cases := []struct {
		name    string
		data    func(t *testing.T) []byte
		maxRows int
		want    []string
		notWant []string
	}{
		{
			"int64", insert(fieldOf(101, schemapb.DataType_Int64), &column.Ints{T: schemapb.DataType_Int64, Data: []int64{5, 6, 7}}), 2,
			[]string{
				"magic: BCFAFF00", "collection=449 partition=450 segment=451 field=101", "payload_type=Int64(5)",
				`extras={"nullable":false,"original_size":"25"}`, "type=Insert(1)", "rows=3", "0\t5\n", "1\t6\n", "... 1 more",
			},
			[]string{"2\t7"},
		},
		{
			"nullable varchar", insert(fieldOf(102, schemapb.DataType_VarChar, nullable), &column.Strings{Nulls: column.Nulls{Valid: []bool{true, false}}, T: schemapb.DataType_VarChar, Data: []string{"héllo", ""}}), -1,
			[]string{"0\t\"héllo\"", "1\tnull", `"nullable":true`},
			nil,
		},
		{
			"float vector abbreviated", insert(fieldOf(103, schemapb.DataType_FloatVector, dim(32)), &column.FloatVectors{Dim: 32, Data: vec}), -1,
			[]string{"0\t[0, 1, 2, 3, 4, 5, 6, 7, … (32 total)]", "1\t[32, 33,"},
			nil,
		},
		{"delta", func(t *testing.T) []byte {
			data, err := EncodeDeltaLog(Descriptor{CollectionID: 1, PartitionID: 2, SegmentID: 3}, schemapb.DataType_Int64,
				&column.Ints{T: schemapb.DataType_Int64, Data: []int64{30400, 30401}}, []uint64{200, 201})
			require.NoError(t, err)
			return data
		}, 10, []string{"type=Delete(2)", "next_position=-1", "deletes: 2", "0\tpk=30400\tts=200", "1\tpk=30401\tts=201"}, nil},
		{"stats", func(t *testing.T) []byte {
			s := NewPKStats(100, schemapb.DataType_VarChar, 10)
			s.AddString("a")
			s.AddString("q")
			data, err := MarshalCompoundStats([]*PKStats{s})
			require.NoError(t, err)
			return data
		}, 10, []string{"compound stats log: 1 entries", "field=100 pk_type=VarChar min=a max=q bf_type=BasicBF bf=m="}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, Dump(&out, tc.data(t), tc.maxRows))
			for _, w := range tc.want {
				require.Contains(t, out.String(), w)
			}
			for _, w := range tc.notWant {
				require.NotContains(t, out.String(), w)
			}
		})
	}
}

func TestDumpErrors(t *testing.T) {
	var out bytes.Buffer
	require.ErrorIs(t, Dump(&out, []byte("nope"), 1), ErrCorrupt)
	good, err := EncodeInsertLog(testDesc(), fieldOf(100, schemapb.DataType_Int64), &column.Ints{T: schemapb.DataType_Int64, Data: []int64{1}})
	require.NoError(t, err)
	out.Reset()
	require.ErrorIs(t, Dump(&out, encryptedCopy(t, good), 1), ErrEncrypted)
	require.Contains(t, out.String(), `"edek":"key"`, out.String())
}
