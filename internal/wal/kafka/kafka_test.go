package kafka

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"go.uber.org/goleak"

	"github.com/strata-db/strata/internal/enginetest"
	"github.com/strata-db/strata/internal/wal"
	"github.com/strata-db/strata/internal/wal/waltest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// startCluster starts an in-process kfake cluster, closed when t ends.
func startCluster(t testing.TB) []string { return enginetest.Kafka(t) }

func testLogger(t *testing.T) *slog.Logger { return waltest.Logger(t) }

func TestConformance(t *testing.T) {
	waltest.RunConformance(t, waltest.Harness{
		Open: func(t *testing.T) wal.Log {
			l, err := Open(Config{Brokers: startCluster(t)}, testLogger(t))
			require.NoError(t, err)
			return l
		},
		Reopen: func(t *testing.T, old wal.Log) wal.Log {
			require.NoError(t, old.Close())
			l, err := Open(old.(*Log).cfg, testLogger(t))
			require.NoError(t, err)
			return l
		},
		TruncatesAfter: 1, // DeleteRecords moves the log start exactly
	})
}

// TestConformanceReplicated runs the suite on three brokers with topics
// replicated three times, so requests go to partition leaders and acks=all
// waits for every in-sync replica.
func TestConformanceReplicated(t *testing.T) {
	waltest.RunConformance(t, waltest.Harness{
		Open: func(t *testing.T) wal.Log {
			c, err := kfake.NewCluster(kfake.NumBrokers(3))
			require.NoError(t, err)
			t.Cleanup(c.Close)
			l, err := Open(Config{Brokers: c.ListenAddrs(), ReplicationFactor: 3}, testLogger(t))
			require.NoError(t, err)
			return l
		},
		TruncatesAfter: 1,
	})
}
