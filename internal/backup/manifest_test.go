package backup

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	objlocal "github.com/strata-db/strata/internal/objstore/local"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestManifest: a written manifest reads back; List shows finished
// backups only; another version, a foreign name or a bad file key is refused.
func TestManifest(t *testing.T) {
	ctx := context.Background()
	store, err := objlocal.Open(t.TempDir())
	require.NoError(t, err)
	put := func(name string, m Manifest) {
		b, err := json.Marshal(m)
		require.NoError(t, err)
		require.NoError(t, store.Put(ctx, manifestKey(name), b))
	}
	ok := Manifest{Version: Version, Name: "b1", DB: "default", Collections: []Collection{{
		Name: "c", Schema: json.RawMessage(`{"name":"c"}`), Segments: []Segment{{ID: 1, Files: []File{{Key: "insert_log/1/2/3/0/4", Size: 1, SHA256: "x"}}}},
	}}}
	put("b1", ok)
	// A backup being written: files, no manifest.
	require.NoError(t, store.Put(ctx, dataKey("b2", "insert_log/1/2/3/0/4"), []byte("x")))
	got, err := ReadManifest(ctx, store, "b1")
	require.NoError(t, err)
	require.Equal(t, ok.Collections, got.Collections)
	list, err := List(ctx, store)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, "b1", list[0].Name)

	_, err = ReadManifest(ctx, store, "b2")
	require.ErrorContains(t, err, "no backup \"b2\"")
	_, err = ReadManifest(ctx, store, "../x")
	require.ErrorContains(t, err, "not valid")

	v2 := ok
	v2.Name, v2.Version = "v2", 2
	put("v2", v2)
	_, err = ReadManifest(ctx, store, "v2")
	require.ErrorContains(t, err, "version 2")

	put("other", ok)
	_, err = ReadManifest(ctx, store, "other")
	require.ErrorContains(t, err, `names the backup "b1"`)

	bad := ok
	bad.Name = "bad"
	bad.Collections = []Collection{{Name: "c", Segments: []Segment{{Files: []File{{Key: "../../etc/passwd"}}}}}}
	put("bad", bad)
	_, err = ReadManifest(ctx, store, "bad")
	require.ErrorContains(t, err, "bad file key")
}
