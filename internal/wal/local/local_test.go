package local

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/strata-db/strata/internal/wal"
	"github.com/strata-db/strata/internal/wal/waltest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func testLogger(t *testing.T) *slog.Logger { return waltest.Logger(t) }

func TestConformance(t *testing.T) {
	const segSize = 1 << 10 // about 40 small records per segment
	waltest.RunConformance(t, waltest.Harness{
		Open: func(t *testing.T) wal.Log {
			l, err := Open(Config{Dir: t.TempDir(), SegmentSize: segSize}, testLogger(t))
			require.NoError(t, err)
			return l
		},
		Reopen: func(t *testing.T, old wal.Log) wal.Log {
			require.NoError(t, old.Close())
			l, err := Open(old.(*Log).cfg, testLogger(t))
			require.NoError(t, err)
			return l
		},
		TruncatesAfter: 100,
	})
}
