package version

import (
	"bytes"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestFromBuildInfo(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "abc123"},
		{Key: "vcs.time", Value: "2026-12-01T10:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	b := fromBuildInfo(Build{Version: Milvus}, vcs)
	require.Equal(t, "abc123+dirty", b.Commit)
	require.Equal(t, "2026-12-01T10:00:00Z", b.Date)

	// Values set with -ldflags -X win over the stamp.
	b = fromBuildInfo(Build{Commit: "release", Date: "2027-01-01"}, vcs)
	require.Equal(t, "release", b.Commit)
	require.Equal(t, "2027-01-01", b.Date)

	b = fromBuildInfo(Build{}, nil)
	require.Empty(t, b.Commit)
}

func TestGetAndWrite(t *testing.T) {
	b := Get()
	require.Equal(t, Milvus, b.Version)
	require.NotEmpty(t, b.Commit) // "unknown" in a test binary without a VCS stamp
	require.NotEmpty(t, b.Date)
	var out bytes.Buffer
	require.NoError(t, b.Write(&out))
	require.Contains(t, out.String(), "strata "+Milvus+"\ncommit: "+b.Commit+"\ndate:   "+b.Date+"\n")
}
