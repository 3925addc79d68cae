package e2e

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// Loads and releases of one collection, concurrent with each other, never
// disturb the reads of another (the query node loads without its node-wide
// lock), and always end in a state the reads agree with: two Loads at once
// are one load; a Release racing a Load either unloads what the Load
// loaded or makes it fail with "released while loading"; nothing hangs.
func TestLoadReleaseChurnKeepsOtherReads(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	rng := rand.New(rand.NewPCG(21, 22))
	rows := map[string]int{"steady": 300, "churn": 1200}
	for _, name := range []string{"steady", "churn"} {
		require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(name, moviesSchema(name))))
		for i := 0; i < rows[name]; i += 300 { // one flushed segment per batch
			_, err := c.Insert(ctx, insertOption(name, genMovies(i, 300, rng)))
			require.NoError(t, err)
			ft, err := c.Flush(ctx, milvusclient.NewFlushOption(name))
			require.NoError(t, err)
			require.NoError(t, ft.Await(ctx))
		}
	}
	indexAndLoad(ctx, t, c, "steady", entity.L2)
	indexVectors(ctx, t, c, "churn", entity.L2)

	stop := make(chan struct{})
	readErr := make(chan error, 1)
	reads := 0
	go func() {
		defer close(readErr)
		for {
			select {
			case <-stop:
				return
			default:
			}
			n, err := countStrong(ctx, c, "steady")
			if err == nil && n != int64(rows["steady"]) {
				err = errors.New("steady lost rows")
			}
			if err != nil {
				readErr <- err
				return
			}
			reads++
		}
	}()

	load := func() error {
		_, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption("churn"))
		return err
	}
	for round := 0; round < 4; round++ {
		var wg sync.WaitGroup
		errs := make([]error, 3)
		wg.Go(func() { errs[0] = load() })
		wg.Go(func() { errs[1] = load() })
		if round%2 == 1 {
			wg.Go(func() { errs[2] = c.ReleaseCollection(ctx, milvusclient.NewReleaseCollectionOption("churn")) })
		}
		wg.Wait()
		require.NoError(t, errs[2], "round %d: release", round)
		for i, err := range errs[:2] {
			if err != nil {
				require.True(t, round%2 == 1 && strings.Contains(err.Error(), "released while loading"),
					"round %d: load %d: %v", round, i, err)
			}
		}
		st, err := c.GetLoadState(ctx, milvusclient.NewGetLoadStateOption("churn"))
		require.NoError(t, err)
		n, err := countStrong(ctx, c, "churn")
		if st.State == entity.LoadStateLoaded {
			require.NoError(t, err, "round %d: Loaded, so it reads", round)
			require.EqualValues(t, rows["churn"], n, "round %d: every row once", round)
		} else {
			require.Error(t, err, "round %d: %v, so it does not read", round, st.State)
			require.Contains(t, err.Error(), "collection not loaded")
		}
		require.NoError(t, c.ReleaseCollection(ctx, milvusclient.NewReleaseCollectionOption("churn")), "each round starts unloaded")
	}
	close(stop)
	require.NoError(t, <-readErr, "reads of steady during the loads and releases of churn")
	require.Positive(t, reads)
}

// countStrong returns count(*) of a collection read with Strong consistency.
func countStrong(ctx context.Context, c *milvusclient.Client, name string) (int64, error) {
	rs, err := c.Query(ctx, milvusclient.NewQueryOption(name).WithOutputFields("count(*)").
		WithConsistencyLevel(entity.ClStrong))
	if err != nil {
		return 0, err
	}
	return rs.GetColumn("count(*)").GetAsInt64(0)
}
