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

// Engine names, the values of the Type fields of Engines.
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
	// Meta selects the meta store.
	Meta MetaEngine `json:"meta"`
	// Objects selects the object store.
	Objects ObjectEngine `json:"objects"`
	// WAL selects the WAL.
	WAL WALEngine `json:"wal"`
}

// MetaEngine selects and configures the meta store.
type MetaEngine struct {
	// Type is EngineEmbedded (default; "" means it too) or EngineEtcd.
	Type string `json:"type"`
	// Etcd configures the etcd meta store.
	Etcd etcd.Config `json:"etcd"`
}

// ObjectEngine selects and configures the object store.
type ObjectEngine struct {
	// Type is EngineLocal (default; "" means it too) or EngineS3.
	Type string `json:"type"`
	// S3 configures the S3 object store.
	S3 s3.Config `json:"s3"`
}

// WALEngine selects and configures the WAL.
type WALEngine struct {
	// Type is EngineLocal (default; "" means it too, and Config.WAL
	// configures it) or EngineKafka.
	Type string `json:"type"`
	// Kafka configures the Kafka WAL.
	Kafka walkafka.Config `json:"kafka"`
}

// defaultEngines returns the embedded engines, with every cluster engine's
// default settings.
func defaultEngines() Engines {
	return Engines{
		Meta:    MetaEngine{Type: EngineEmbedded, Etcd: etcd.Defaults()},
		Objects: ObjectEngine{Type: EngineLocal, S3: s3.Defaults()},
		WAL:     WALEngine{Type: EngineLocal, Kafka: walkafka.Defaults()},
	}
}

// Validate checks the engine names and the selected engines' settings.
func (e Engines) Validate() error {
	ports := []struct {
		port, engine      string // "meta", e.Meta.Type
		embedded, cluster string // the two engine names
		validate          func() error
	}{
		{"meta", e.Meta.Type, EngineEmbedded, EngineEtcd, e.Meta.Etcd.Validate},
		{"objects", e.Objects.Type, EngineLocal, EngineS3, e.Objects.S3.Validate},
		{"wal", e.WAL.Type, EngineLocal, EngineKafka, e.WAL.Kafka.Validate},
	}
	var errs []error
	for _, p := range ports {
		switch p.engine {
		case "", p.embedded:
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
	if cfg.Engines.Meta.Type == EngineEtcd {
		return etcd.Open(ctx, cfg.Engines.Meta.Etcd, logger)
	}
	return embedded.Open(filepath.Join(cfg.DataDir, "meta.db"), logger)
}

// metaName names the meta store for messages: its file, or etcd's endpoints.
func metaName(cfg Config) string {
	if cfg.Engines.Meta.Type == EngineEtcd {
		return fmt.Sprintf("etcd %v", cfg.Engines.Meta.Etcd.Endpoints)
	}
	return filepath.Join(cfg.DataDir, "meta.db")
}

// openObjects opens the selected object store; close releases it.
func openObjects(ctx context.Context, cfg Config, logger *slog.Logger) (store objstore.Store, close func() error, err error) {
	if cfg.Engines.Objects.Type == EngineS3 {
		s, err := s3.Open(ctx, cfg.Engines.Objects.S3, logger)
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
	if cfg.Engines.WAL.Type == EngineKafka {
		return walkafka.Open(cfg.Engines.WAL.Kafka, logger)
	}
	return wallocal.Open(cfg.localWAL(), logger)
}

// openData opens the data ports, object storage and the WAL; close
// closes both (the WAL first).
func openData(ctx context.Context, cfg Config, logger *slog.Logger) (objstore.Store, wal.Log, func() error, error) {
	objects, closeObjects, err := openObjects(ctx, cfg, logger)
	if err != nil {
		return nil, nil, nil, err
	}
	log, err := openWAL(cfg, logger)
	if err != nil {
		return nil, nil, nil, errors.Join(err, closeObjects())
	}
	return objects, log, func() error { return errors.Join(log.Close(), closeObjects()) }, nil
}

// OpenObjectStore opens the object store a server with cfg uses (its data
// directory's, or S3), for tools that read or write a server's objects
// (strata backup); close releases it.
func OpenObjectStore(ctx context.Context, cfg Config, logger *slog.Logger) (store objstore.Store, close func() error, err error) {
	if err := cfg.Engines.Validate(); err != nil {
		return nil, nil, err
	}
	return openObjects(ctx, cfg, logger)
}

// OpenDirectory opens a local directory as an object store (a backup
// location), creating it when absent.
func OpenDirectory(dir string) (objstore.Store, error) {
	return objlocal.Open(dir)
}
