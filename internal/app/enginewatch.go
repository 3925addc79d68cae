package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/strata-db/strata/internal/health"
)

// pinger is a cluster engine that can say whether it answers (etcd.Store,
// walkafka.Log, s3.Store).
type pinger interface {
	Ping(ctx context.Context) error
}

// How often the engine watch probes each cluster engine, and how long a
// probe may take before the engine counts as not answering.
const (
	engineProbeInterval = 2 * time.Second
	engineProbeTimeout  = 2 * time.Second
)

// engineWatch probes the cluster engines (etcd, Kafka, S3) and reports each
// one that does not answer as a health problem (writes unavailable: DDL
// needs the meta store, writes the WAL, flushes the object store), logging
// when an engine stops and starts answering. The embedded engines report
// their own problems.
type engineWatch struct {
	logger   *slog.Logger
	probes   []engineProbe
	interval time.Duration
	timeout  time.Duration
	problems health.Set
}

// engineProbe is one watched engine.
type engineProbe struct {
	port, engine string // "meta", "etcd [http://…]"
	p            pinger
}

// newEngineWatch watches those of ports that can be pinged; name gives
// each port's engine for messages.
func newEngineWatch(logger *slog.Logger, ports map[string]any, name func(port string) string) *engineWatch {
	w := &engineWatch{logger: logger, interval: engineProbeInterval, timeout: engineProbeTimeout}
	for _, port := range []string{"meta", "wal", "objects"} {
		if p, ok := ports[port].(pinger); ok {
			w.probes = append(w.probes, engineProbe{port: port, engine: name(port), p: p})
		}
	}
	return w
}

// Problems implements health.Source.
func (w *engineWatch) Problems() []health.Problem { return w.problems.Problems() }

// run probes every interval until ctx ends.
func (w *engineWatch) run(ctx context.Context) error {
	if len(w.probes) == 0 {
		return nil
	}
	down := make([]bool, len(w.probes))
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		for i, pr := range w.probes {
			pctx, cancel := context.WithTimeout(ctx, w.timeout)
			err := pr.p.Ping(pctx)
			cancel()
			if ctx.Err() != nil {
				return nil
			}
			subject := fmt.Sprintf("%s %s", pr.port, pr.engine)
			switch {
			case err != nil:
				if !down[i] {
					w.logger.Warn("cluster engine not answering; writes to it fail until it does", "port", pr.port, "engine", pr.engine, "err", err)
				}
				down[i] = true
				w.problems.Report(health.Problem{
					Component: "engines", Subject: subject, WritesUnavailable: true,
					Reason: fmt.Sprintf("not answering: %v", err),
				})
			case down[i]:
				down[i] = false
				w.problems.Clear(subject)
				w.logger.Info("cluster engine answering again", "port", pr.port, "engine", pr.engine)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// engineName names the engine of a port for messages.
func engineName(cfg Config, port string) string {
	switch port {
	case "meta":
		return metaName(cfg)
	case "wal":
		if cfg.Engines.WAL.Type == EngineKafka {
			return fmt.Sprintf("kafka %v", cfg.Engines.WAL.Kafka.Brokers)
		}
	case "objects":
		if cfg.Engines.Objects.Type == EngineS3 {
			return fmt.Sprintf("s3 %s/%s", cfg.Engines.Objects.S3.Endpoint, cfg.Engines.Objects.S3.Bucket)
		}
	}
	return EngineLocal
}
