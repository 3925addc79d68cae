package app

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/strata-db/strata/internal/config"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestDefaultsValidate(t *testing.T) {
	require.NoError(t, Defaults().Validate())
}

// TestValidateEveryComponent: app.Validate checks each component's
// configuration, as the app passes it on.
func TestValidateEveryComponent(t *testing.T) {
	for name, tc := range map[string]struct {
		edit func(*Config)
		want string
	}{
		"data dir":        {func(c *Config) { c.DataDir = "" }, "data dir is required"},
		"root path":       {func(c *Config) { c.RootPath = "" }, `rootPath ""`},
		"bad root path":   {func(c *Config) { c.RootPath = "a//b" }, `rootPath "a//b"`},
		"root coord":      {func(c *Config) { c.RootCoord.PChannels = 0 }, "rootcoord: pchannels"},
		"data coord":      {func(c *Config) { c.DataCoord.SegmentMaxSize = 0 }, "datacoord: segment max size"},
		"compaction":      {func(c *Config) { c.DataCoord.Compaction.L0Count = 0 }, "l0Count"},
		"data node":       {func(c *Config) { c.DataNode.SyncPeriod = 0 }, "datanode: sizes and periods"},
		"proxy":           {func(c *Config) { c.Proxy.MaxRequestBytes = 0 }, "proxy: maxRequestBytes"},
		"proxy staleness": {func(c *Config) { c.Proxy.BoundedStaleness = -time.Second }, "proxy: boundedStaleness"},
		"wal writer":      {func(c *Config) { c.Writer.TickInterval = 0 }, "TickInterval"},
		"local wal":       {func(c *Config) { c.WAL.SegmentSize = -1 }, "SegmentSize -1"},
		"engine name":     {func(c *Config) { c.Engines.Meta.Type = "zk" }, `engines.meta.type "zk"`},
		"selected engine": {func(c *Config) { c.Engines.Objects.Type = EngineS3 }, "engines.objects.s3: objstore/s3: config: Endpoint is required"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := Defaults()
			tc.edit(&cfg)
			require.ErrorContains(t, cfg.Validate(), tc.want)
		})
	}
	// The local WAL's settings do not matter when Kafka is the WAL.
	cfg := Defaults()
	cfg.WAL.SegmentSize = -1
	cfg.Engines.WAL.Type, cfg.Engines.WAL.Kafka.Brokers = EngineKafka, []string{"k:9092"}
	require.NoError(t, cfg.Validate())
	// "" is the embedded engine, as when the document leaves "type" out.
	cfg = Defaults()
	cfg.Engines.Meta.Type, cfg.Engines.Objects.Type, cfg.Engines.WAL.Type = "", "", ""
	require.NoError(t, cfg.Validate())
}

// TestRootPathReachesComponents: the one RootPath is what the data
// coordinator, the data node and the query node get; the data node consumes
// every pchannel.
func TestRootPathReachesComponents(t *testing.T) {
	cfg := Defaults()
	cfg.RootPath = "data/v1"
	cfg.RootCoord.PChannels, cfg.RootCoord.ChannelPrefix = 3, "c"
	require.NoError(t, cfg.Validate())
	require.Equal(t, "data/v1", cfg.dataCoord().RootPath)
	require.Equal(t, "data/v1", cfg.dataNode().RootPath)
	require.Equal(t, "data/v1", cfg.queryNode().RootPath)
	require.Equal(t, []string{"c-rootcoord-dml_0", "c-rootcoord-dml_1", "c-rootcoord-dml_2"}, cfg.dataNode().PChannels)
	require.Equal(t, filepath.Join(cfg.DataDir, "wal"), cfg.localWAL().Dir)
}

// TestConfigFieldsTagged: every exported field of the configuration, at any
// depth, declares its document key (or "-") with a json tag, so the key is
// written down once, next to the field.
func TestConfigFieldsTagged(t *testing.T) {
	var untagged []string
	var walk func(path string, typ reflect.Type)
	walk = func(path string, typ reflect.Type) {
		if typ.Kind() != reflect.Struct || typ == reflect.TypeFor[time.Time]() {
			return
		}
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() {
				continue
			}
			tag := f.Tag.Get("json")
			if tag == "" {
				untagged = append(untagged, path+"."+f.Name)
				continue
			}
			if tag != "-" {
				walk(path+"."+f.Name, f.Type)
			}
		}
	}
	walk("Config", reflect.TypeFor[Config]())
	require.Empty(t, untagged)
}

// TestDefaultsDocumentRoundTrip: the defaults written as a document read
// back, onto an empty Config, to the defaults (but for the fields the app
// sets itself).
func TestDefaultsDocumentRoundTrip(t *testing.T) {
	doc, err := config.Encode(Defaults())
	require.NoError(t, err)
	require.Contains(t, string(doc), `"maxIdle": "10m"`)
	var got Config
	require.NoError(t, config.Decode(doc, &got))
	want := Defaults()
	want.DataCoord.RootPath, want.DataNode.RootPath, want.QueryNode.RootPath, want.Proxy.Version = "", "", "", ""
	require.Equal(t, want, got)
	require.NotContains(t, string(doc), `"version"`, "the proxy's version is not a setting")
}

// TestProxyRoleNeeds: a proxy process needs etcd, an internal address and
// cluster.enabled; it needs no Kafka or S3.
func TestProxyRoleNeeds(t *testing.T) {
	cfg := Defaults()
	cfg.Role, cfg.Cluster.Enabled = RoleProxy, false
	err := cfg.Validate()
	for _, want := range []string{"engines.meta must be etcd", "needs internalAddr", "needs cluster.enabled"} {
		require.ErrorContains(t, err, want)
	}
	cfg.Engines.Meta.Type, cfg.Engines.Meta.Etcd.Endpoints = EngineEtcd, []string{"127.0.0.1:2379"}
	cfg.InternalAddr, cfg.Cluster.Enabled = "127.0.0.1:0", true
	require.NoError(t, cfg.Validate())
}
