package s3_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/strata-db/strata/internal/enginetest"
	"github.com/strata-db/strata/internal/objstore"
	"github.com/strata-db/strata/internal/objstore/objtest"
	"github.com/strata-db/strata/internal/objstore/s3"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// startFakeS3 serves an in-memory S3 until the test ends and returns its host:port.
func startFakeS3(t *testing.T) string { return enginetest.S3(t) }

func open(t *testing.T, cfg s3.Config) *s3.Store {
	t.Helper()
	s, err := s3.Open(context.Background(), cfg, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

func TestConformance(t *testing.T) {
	for _, root := range []string{"", "strata/data"} {
		t.Run(fmt.Sprintf("root=%q", root), func(t *testing.T) {
			endpoint := startFakeS3(t)
			n := 0
			objtest.RunConformance(t, func(t *testing.T) objstore.Store {
				n++ // a fresh bucket per test
				return open(t, s3.Config{
					Endpoint: endpoint, Bucket: fmt.Sprintf("bucket-%d", n),
					AccessKey: "key", SecretKey: "secret", Root: root, CreateBucket: true,
				})
			})
		})
	}
}

func TestRootIsolation(t *testing.T) {
	ctx := context.Background()
	endpoint := startFakeS3(t)
	cfg := s3.Config{Endpoint: endpoint, Bucket: "shared", AccessKey: "k", SecretKey: "s", CreateBucket: true}
	whole := open(t, cfg)
	cfg.Root = "/tenant/a/"
	tenant := open(t, cfg)

	require.NoError(t, tenant.Put(ctx, "x/1", []byte("t")))
	require.NoError(t, whole.Put(ctx, "x/1", []byte("w")))

	infos, err := whole.List(ctx, "")
	require.NoError(t, err)
	require.Len(t, infos, 2)
	require.Equal(t, "tenant/a/x/1", infos[0].Key)
	require.Equal(t, "x/1", infos[1].Key)

	infos, err = tenant.List(ctx, "")
	require.NoError(t, err)
	require.Len(t, infos, 1)
	require.Equal(t, "x/1", infos[0].Key)
	got, err := tenant.Get(ctx, "x/1")
	require.NoError(t, err)
	require.Equal(t, "t", string(got))
}

func TestMissingBucket(t *testing.T) {
	endpoint := startFakeS3(t)
	_, err := s3.Open(context.Background(), s3.Config{Endpoint: endpoint, Bucket: "absent", AccessKey: "k", SecretKey: "s"}, nil)
	require.Error(t, err)
}

func TestConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  s3.Config
		ok   bool
	}{
		{name: "ok", cfg: s3.Config{Endpoint: "h:9000", Bucket: "b", AccessKey: "a", SecretKey: "s", Root: "/r/"}, ok: true},
		{name: "anonymous", cfg: s3.Config{Endpoint: "h:9000", Bucket: "b"}, ok: true},
		{name: "no endpoint", cfg: s3.Config{Bucket: "b"}},
		{name: "no bucket", cfg: s3.Config{Endpoint: "h"}},
		{name: "half credentials", cfg: s3.Config{Endpoint: "h", Bucket: "b", AccessKey: "a"}},
		{name: "bad root", cfg: s3.Config{Endpoint: "h", Bucket: "b", Root: "a//b"}},
	}
	require.Equal(t, s3.DefaultRegion, s3.Defaults().Region)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			if tc.ok {
				require.NoError(t, cfg.Validate())
			} else {
				require.Error(t, cfg.Validate())
			}
		})
	}
}

// TestPing: Ping answers nil while the bucket exists, and an error naming
// the bucket when it cannot ask.
func TestPing(t *testing.T) {
	addr := startFakeS3(t)
	s := open(t, s3.Config{Endpoint: addr, Bucket: "pinged", AccessKey: "a", SecretKey: "b", CreateBucket: true})
	require.NoError(t, s.Ping(context.Background()))
	other := open(t, s3.Config{Endpoint: addr, Bucket: "pinged", AccessKey: "a", SecretKey: "b"})
	require.NoError(t, other.Ping(context.Background()))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorContains(t, s.Ping(ctx), `ping bucket "pinged"`)
}
