package storage

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
)

func TestPKStatsJSONKeyOrder(t *testing.T) {
	cases := []struct {
		name    string
		pkType  schemapb.DataType
		keys    []any
		wantPre string
		wantEnd string
	}{
		{
			"int64", schemapb.DataType_Int64,
			[]any{int64(7), int64(-3), int64(42)},
			`{"fieldID":100,"max":42,"min":-3,"bfType":3,"bf":{"m":`, `,"pkType":5,"maxPk":42,"minPk":-3}`,
		},
		{
			"varchar", schemapb.DataType_VarChar,
			[]any{"m", "b", "x"},
			`{"fieldID":100,"max":0,"min":0,"bfType":3,"bf":{"m":`, `,"pkType":21,"maxPk":"x","minPk":"b"}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewPKStats(100, tc.pkType, 16)
			for _, k := range tc.keys {
				require.NoError(t, s.Add(k))
			}
			b, err := MarshalStats(s)
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(string(b), tc.wantPre), string(b))
			require.True(t, strings.HasSuffix(string(b), tc.wantEnd), string(b))

			got, err := UnmarshalStats(b)
			require.NoError(t, err)
			require.Len(t, got, 1)
			require.Equal(t, s.Min(), got[0].Min())
			require.Equal(t, s.Max(), got[0].Max())
			require.Equal(t, BasicBF, got[0].BFType)
			for _, k := range tc.keys {
				require.True(t, got[0].MayContain(k))
			}
			again, err := MarshalStats(got[0])
			require.NoError(t, err)
			require.Equal(t, string(b), string(again))
		})
	}
}

// TestBasicBFEncoding checks the library's JSON against the spec:
// {"m":M,"k":K,"b":"<base64-URL of [uint64 BE bit length][uint64 BE words…]>"}.
func TestBasicBFEncoding(t *testing.T) {
	s := NewPKStats(100, schemapb.DataType_Int64, 1000)
	s.AddInt64(30400)
	raw, err := json.Marshal(s.BF)
	require.NoError(t, err)
	var bf struct {
		M uint   `json:"m"`
		K uint   `json:"k"`
		B string `json:"b"`
	}
	require.NoError(t, json.Unmarshal(raw, &bf))
	require.Equal(t, s.BF.Cap(), bf.M)
	require.Equal(t, s.BF.K(), bf.K)
	bits, err := base64.URLEncoding.DecodeString(bf.B)
	require.NoError(t, err)
	require.Equal(t, uint64(bf.M), binary.BigEndian.Uint64(bits))
	words := s.BF.BitSet().Words()
	require.Len(t, bits, 8+8*len(words))
	for i, w := range words {
		require.Equal(t, w, binary.BigEndian.Uint64(bits[8+8*i:]))
	}
	// The key hashed is the 8-byte little-endian encoding of the int64.
	require.True(t, s.BF.Test([]byte{0xC0, 0x76, 0, 0, 0, 0, 0, 0}))
}

func TestPKStatsFalsePositiveRate(t *testing.T) {
	const n = 10000
	s := NewPKStats(100, schemapb.DataType_Int64, n)
	for i := int64(0); i < n; i++ {
		s.AddInt64(i * 2)
	}
	for i := int64(0); i < n; i++ {
		require.True(t, s.MayContain(i*2))
	}
	fp := 0
	for i := int64(0); i < n; i++ {
		if s.MayContain(i*2 + 1) {
			fp++
		}
	}
	require.Less(t, fp, n/200, "false positives %d of %d", fp, n) // FPR 0.001 target, 0.5% bound
	require.False(t, s.MayContain(int64(-1)))
	require.False(t, s.MayContain(int64(2*n)))
	require.False(t, s.MayContain("1"))
}

func TestCompoundStats(t *testing.T) {
	a := NewPKStats(100, schemapb.DataType_Int64, 4)
	a.AddInt64(1)
	b := NewPKStats(100, schemapb.DataType_Int64, 4)
	b.AddInt64(9)
	one, err := MarshalCompoundStats([]*PKStats{a})
	require.NoError(t, err)
	require.Equal(t, byte('['), one[0])
	require.Equal(t, byte(']'), one[len(one)-1])
	two, err := MarshalCompoundStats([]*PKStats{a, b})
	require.NoError(t, err)
	got, err := UnmarshalStats(two)
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.True(t, got[0].MayContain(int64(1)))
	require.True(t, got[1].MayContain(int64(9)))
	require.False(t, got[0].MayContain(int64(9)))
}

func TestUnmarshalStatsVariants(t *testing.T) {
	cases := []struct {
		name    string
		json    string
		pkType  schemapb.DataType
		bfType  BloomFilterType
		min     any
		max     any
		contain any
	}{
		{"legacy int64 no pkType", `{"fieldID":100,"max":9,"min":2,"bfType":2,"bf":null}`, schemapb.DataType_Int64, AlwaysTrueBF, int64(2), int64(9), int64(5)},
		{"always true varchar", `{"fieldID":101,"max":0,"min":0,"bfType":2,"bf":{},"pkType":21,"maxPk":"z","minPk":"a"}`, schemapb.DataType_VarChar, AlwaysTrueBF, "a", "z", "q"},
		{"blocked treated as always true", `{"fieldID":100,"bfType":4,"bf":{"k":3,"b":["AAAA"]},"pkType":5,"maxPk":5,"minPk":1}`, schemapb.DataType_Int64, BlockedBF, int64(1), int64(5), int64(3)},
		{"undecodable basic bf", `{"fieldID":100,"bf":"garbage","pkType":5,"maxPk":5,"minPk":1}`, schemapb.DataType_Int64, BasicBF, int64(1), int64(5), int64(4)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := UnmarshalStats([]byte(tc.json))
			require.NoError(t, err)
			require.Len(t, got, 1)
			s := got[0]
			require.Equal(t, tc.pkType, s.PKType)
			require.Equal(t, tc.bfType, s.BFType)
			require.Equal(t, tc.min, s.Min())
			require.Equal(t, tc.max, s.Max())
			require.True(t, s.MayContain(tc.contain))
			_, err = MarshalStats(s)
			require.NoError(t, err)
		})
	}
	_, err := UnmarshalStats([]byte(`{"fieldID":`))
	require.ErrorIs(t, err, ErrBadStats)
	_, err = UnmarshalStats(nil)
	require.ErrorIs(t, err, ErrBadStats)
}

func TestPKStatsAddTypeErrors(t *testing.T) {
	s := NewPKStats(100, schemapb.DataType_Int64, 1)
	require.ErrorIs(t, s.Add("x"), ErrTypeMismatch)
	require.ErrorIs(t, s.Add(3.5), ErrTypeMismatch)
	require.Nil(t, s.Min())
	v := NewPKStats(100, schemapb.DataType_VarChar, 1)
	require.ErrorIs(t, v.Add(int64(1)), ErrTypeMismatch)
	b, err := MarshalStats(v)
	require.NoError(t, err)
	require.NotContains(t, string(b), "maxPk", "empty stats: %s", b)
}
