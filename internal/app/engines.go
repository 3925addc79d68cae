package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/metastore/embedded"
	"github.com/strata-db/strata/internal/metastore/etcd"
	"github.com/strata-db/strata/internal/objstore"
	objlocal "github.com/strata-db/strata/internal/objstore/local"
	"github.com/strata-db/strata/internal/objstore/s3"
	"github.com/strata-db/strata/internal/wal"
	walkafka "github.com/strata-db/strata/internal/wal/kafka"
	wallocal "github.com/strata-db/strata/internal/wal/local"
)

// Engine names, the values of the Engines.*Engine fields.
const (
	// EngineEmbedded is the bbolt meta store in {data-dir}/meta.db.
	EngineEmbedded = "embedded"
	// EngineEtcd is the etcd meta store (Engines.Etcd).
	EngineEtcd = "etcd"
	// EngineLocal is the local object store ({data-dir}/storage) or the
	// local WAL ({data-dir}/wal), depending on the port.
	EngineLocal = "local"
	// EngineS3 is the S3 object store (Engines.S3).
	EngineS3 = "s3"
	// EngineKafka is the Kafka WAL (Engines.Kafka).
	EngineKafka = "kafka"
)

// Engines selects the implementation behind each of the three storage
// ports ("cluster engines"). The defaults are the embedded ones, which keep
// everything under the data directory; each port can instead use its
// cluster engine: etcd for meta, S3 for objects, Kafka for the WAL. The
// settings of an engine that is not selected are ignored.
type Engines struct {
	// MetaEngine is EngineEmbedded (default) or EngineEtcd.
	MetaEngine string
	// Etcd configures the etcd meta store.
	Etcd etcd.Config
	// ObjectEngine is EngineLocal (default) or EngineS3.
	ObjectEngine string
	// S3 configures the S3 object store.
	S3 s3.Config
	// WALEngine is EngineLocal (default) or EngineKafka.
	WALEngine string
	// Kafka configures the Kafka WAL.
	Kafka walkafka.Config
}

// Defaults returns e with empty engine names set to the embedded engines and
// the selected engines' zero settings set to their defaults.
func (e Engines) Defaults() Engines {
	if e.MetaEngine == "" {
		e.MetaEngine = EngineEmbedded
	}
	if e.ObjectEngine == "" {
		e.ObjectEngine = EngineLocal
	}
	if e.WALEngine == "" {
		e.WALEngine = EngineLocal
	}
	e.Etcd.Defaults()
	e.S3.Defaults()
	e.Kafka = e.Kafka.Defaults()
	return e
}

// Validate checks the engine names and the selected engines' settings;
// call it after Defaults.
func (e Engines) Validate() error {
	ports := []struct {
		port, engine      string // "meta", e.MetaEngine
		embedded, cluster string // the two engine names
		validate          func() error
	}{
		{"meta", e.MetaEngine, EngineEmbedded, EngineEtcd, e.Etcd.Validate},
		{"objects", e.ObjectEngine, EngineLocal, EngineS3, e.S3.Validate},
		{"wal", e.WALEngine, EngineLocal, EngineKafka, e.Kafka.Validate},
	}
	var errs []error
	for _, p := range ports {
		switch p.engine {
		case p.embedded:
		case p.cluster:
			if err := p.validate(); err != nil {
				errs = append(errs, fmt.Errorf("app: engines.%s.%s: %w", p.port, p.cluster, err))
			}
		default:
			errs = append(errs, fmt.Errorf("app: engines.%s.type %q: want %q or %q", p.port, p.engine, p.embedded, p.cluster))
		}
	}
	return errors.Join(errs...)
}

// openMeta opens the selected meta store.
func openMeta(ctx context.Context, cfg Config, logger *slog.Logger) (metastore.KV, error) {
	if cfg.Engines.MetaEngine == EngineEtcd {
		return etcd.Open(ctx, cfg.Engines.Etcd, logger)
	}
	return embedded.Open(filepath.Join(cfg.DataDir, "meta.db"), logger)
}

// metaName names the meta store for messages: its file, or etcd's endpoints.
func metaName(cfg Config) string {
	if cfg.Engines.MetaEngine == EngineEtcd {
		return fmt.Sprintf("etcd %v", cfg.Engines.Etcd.Endpoints)
	}
	return filepath.Join(cfg.DataDir, "meta.db")
}

// openObjects opens the selected object store; close releases it.
func openObjects(ctx context.Context, cfg Config, logger *slog.Logger) (store objstore.Store, close func() error, err error) {
	if cfg.Engines.ObjectEngine == EngineS3 {
		s, err := s3.Open(ctx, cfg.Engines.S3, logger)
		if err != nil {
			return nil, nil, err
		}
		return s, s.Close, nil
	}
	s, err := objlocal.Open(filepath.Join(cfg.DataDir, "storage"))
	if err != nil {
		return nil, nil, err
	}
	return s, func() error { return nil }, nil
}

// openWAL opens the selected WAL.
func openWAL(cfg Config, logger *slog.Logger) (wal.Log, error) {
	if cfg.Engines.WALEngine == EngineKafka {
		return walkafka.Open(cfg.Engines.Kafka, logger)
	}
	walCfg := cfg.WAL
	walCfg.Dir = filepath.Join(cfg.DataDir, "wal")
	return wallocal.Open(walCfg, logger)
}
