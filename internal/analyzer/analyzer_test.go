package analyzer

import (
	"hash/crc32"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStandardTokens(t *testing.T) {
	a, err := New("")
	require.NoError(t, err)
	toks := a.Analyze("The Milvus vector database is built for scale!")
	var texts []string
	for _, tk := range toks {
		texts = append(texts, tk.Text)
	}
	require.Equal(t, []string{"the", "milvus", "vector", "database", "is", "built", "for", "scale"}, texts)
	require.Equal(t, Token{Text: "milvus", Start: 4, End: 10, Position: 1}, toks[1])
}

func TestHashReadsFirst100Bytes(t *testing.T) {
	long := strings.Repeat("a", 100)
	require.Equal(t, Hash(long), Hash(long+"tail"))
	require.Equal(t, crc32.ChecksumIEEE([]byte("milvus")), Hash("milvus"))
}
