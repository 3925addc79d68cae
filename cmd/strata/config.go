package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/strata-db/strata/internal/app"
)

// fileConfig is the JSON document --config reads. Every field is optional;
// an absent field keeps its default. Durations are Go duration strings
// ("500ms", "2m"), sizes are bytes. Unknown fields are an error.
type fileConfig struct {
	DataCoord *struct {
		SegmentMaxSize     *int64    `json:"segmentMaxSize"`
		SealProportion     *float64  `json:"sealProportion"`
		MaxIdle            *duration `json:"maxIdle"`
		CheckInterval      *duration `json:"checkInterval"`
		GCInterval         *duration `json:"gcInterval"`
		DroppedRetention   *duration `json:"droppedRetention"`
		OrphanRetention    *duration `json:"orphanRetention"`
		GrowingMemoryLimit *int64    `json:"growingMemoryLimit"`
		Compaction         *struct {
			L0Count          *int      `json:"l0Count"`
			L0MaxAge         *duration `json:"l0MaxAge"`
			L0Size           *int64    `json:"l0Size"`
			SmallProportion  *float64  `json:"smallProportion"`
			MinSmallSegments *int      `json:"minSmallSegments"`
			DeletedRatio     *float64  `json:"deletedRatio"`
			ExpiryGrace      *duration `json:"expiryGrace"`
		} `json:"compaction"`
	} `json:"dataCoord"`
	DataNode *struct {
		SegmentBufferSize *int64    `json:"segmentBufferSize"`
		SyncPeriod        *duration `json:"syncPeriod"`
	} `json:"dataNode"`
	WAL *struct {
		SegmentSize *int64 `json:"segmentSize"`
	} `json:"wal"`
	Engines *fileEngines `json:"engines"`
	// MemoryLimit is the Go runtime's soft memory limit in bytes (0 = none);
	// absent, it is 3/4 of the memory available unless GOMEMLIMIT is set.
	MemoryLimit *int64 `json:"memoryLimit"`
	// Security is app.Config.Security (auth.Config's JSON keys), decoded
	// over the defaults.
	Security json.RawMessage `json:"security"`
	// Pprof enables /debug/pprof/ on the metrics port.
	Pprof *bool `json:"pprof"`
}

// fileEngines is the "engines" section: which implementation each storage
// port uses (app.Engines). An absent port keeps its embedded engine.
type fileEngines struct {
	Meta *struct {
		Type string `json:"type"` // "embedded" or "etcd"
		Etcd *struct {
			Endpoints   []string  `json:"endpoints"`
			Root        *string   `json:"root"`
			DialTimeout *duration `json:"dialTimeout"`
			Username    *string   `json:"username"`
			Password    *string   `json:"password"`
		} `json:"etcd"`
	} `json:"meta"`
	Objects *struct {
		Type string `json:"type"` // "local" or "s3"
		S3   *struct {
			Endpoint     *string `json:"endpoint"`
			Bucket       *string `json:"bucket"`
			AccessKey    *string `json:"accessKey"`
			SecretKey    *string `json:"secretKey"`
			UseSSL       *bool   `json:"useSSL"`
			Root         *string `json:"root"`
			Region       *string `json:"region"`
			CreateBucket *bool   `json:"createBucket"`
		} `json:"s3"`
	} `json:"objects"`
	WAL *struct {
		Type  string `json:"type"` // "local" or "kafka"
		Kafka *struct {
			Brokers           []string  `json:"brokers"`
			TopicPrefix       *string   `json:"topicPrefix"`
			ReplicationFactor *int16    `json:"replicationFactor"`
			MaxRecordBytes    *int32    `json:"maxRecordBytes"`
			Linger            *duration `json:"linger"`
			DeliveryTimeout   *duration `json:"deliveryTimeout"`
			CloseTimeout      *duration `json:"closeTimeout"`
			RequestTimeout    *duration `json:"requestTimeout"`
			ClientID          *string   `json:"clientID"`
		} `json:"kafka"`
	} `json:"wal"`
}

// set copies *v to *dst when v is present.
func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// apply copies the present fields of fe onto e.
func (fe *fileEngines) apply(e *app.Engines) {
	if m := fe.Meta; m != nil {
		e.MetaEngine = m.Type
		if c := m.Etcd; c != nil {
			if c.Endpoints != nil {
				e.Etcd.Endpoints = c.Endpoints
			}
			set(&e.Etcd.Root, c.Root)
			setDuration(&e.Etcd.DialTimeout, c.DialTimeout)
			set(&e.Etcd.Username, c.Username)
			set(&e.Etcd.Password, c.Password)
		}
	}
	if o := fe.Objects; o != nil {
		e.ObjectEngine = o.Type
		if c := o.S3; c != nil {
			set(&e.S3.Endpoint, c.Endpoint)
			set(&e.S3.Bucket, c.Bucket)
			set(&e.S3.AccessKey, c.AccessKey)
			set(&e.S3.SecretKey, c.SecretKey)
			set(&e.S3.UseSSL, c.UseSSL)
			set(&e.S3.Root, c.Root)
			set(&e.S3.Region, c.Region)
			set(&e.S3.CreateBucket, c.CreateBucket)
		}
	}
	if w := fe.WAL; w != nil {
		e.WALEngine = w.Type
		if c := w.Kafka; c != nil {
			if c.Brokers != nil {
				e.Kafka.Brokers = c.Brokers
			}
			set(&e.Kafka.TopicPrefix, c.TopicPrefix)
			set(&e.Kafka.ReplicationFactor, c.ReplicationFactor)
			set(&e.Kafka.MaxRecordBytes, c.MaxRecordBytes)
			setDuration(&e.Kafka.Linger, c.Linger)
			setDuration(&e.Kafka.DeliveryTimeout, c.DeliveryTimeout)
			setDuration(&e.Kafka.CloseTimeout, c.CloseTimeout)
			setDuration(&e.Kafka.RequestTimeout, c.RequestTimeout)
			set(&e.Kafka.ClientID, c.ClientID)
		}
	}
}

// setDuration sets *dst to v when v is present.
func setDuration(dst *time.Duration, v *duration) {
	if v != nil {
		*dst = time.Duration(*v)
	}
}

// duration is a time.Duration written as a Go duration string.
type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string such as \"500ms\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = duration(v)
	return nil
}

// processConfig holds the settings of the file that belong to the process
// rather than to the server (app.Config).
type processConfig struct {
	// MemoryLimit is the "memoryLimit" setting; nil when absent.
	MemoryLimit *int64
}

// loadConfigFile applies the JSON configuration file at path to cfg and,
// when proc is not nil, to proc.
func loadConfigFile(path string, cfg *app.Config, proc *processConfig) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var fc fileConfig
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&fc); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	if dc := fc.DataCoord; dc != nil {
		c := &cfg.DataCoord
		set(&c.SegmentMaxSize, dc.SegmentMaxSize)
		set(&c.SealProportion, dc.SealProportion)
		setDuration(&c.MaxIdle, dc.MaxIdle)
		setDuration(&c.CheckInterval, dc.CheckInterval)
		setDuration(&c.GCInterval, dc.GCInterval)
		setDuration(&c.DroppedRetention, dc.DroppedRetention)
		setDuration(&c.OrphanRetention, dc.OrphanRetention)
		set(&c.GrowingMemoryLimit, dc.GrowingMemoryLimit)
		if cc := dc.Compaction; cc != nil {
			set(&c.Compaction.L0Count, cc.L0Count)
			setDuration(&c.Compaction.L0MaxAge, cc.L0MaxAge)
			set(&c.Compaction.L0Size, cc.L0Size)
			set(&c.Compaction.SmallProportion, cc.SmallProportion)
			set(&c.Compaction.MinSmallSegments, cc.MinSmallSegments)
			set(&c.Compaction.DeletedRatio, cc.DeletedRatio)
			setDuration(&c.Compaction.ExpiryGrace, cc.ExpiryGrace)
		}
	}
	if dn := fc.DataNode; dn != nil {
		set(&cfg.DataNode.SegmentBufferSize, dn.SegmentBufferSize)
		setDuration(&cfg.DataNode.SyncPeriod, dn.SyncPeriod)
	}
	if w := fc.WAL; w != nil {
		set(&cfg.WAL.SegmentSize, w.SegmentSize)
	}
	if fc.Engines != nil {
		fc.Engines.apply(&cfg.Engines)
	}
	if len(fc.Security) > 0 {
		sec := json.NewDecoder(bytes.NewReader(fc.Security))
		sec.DisallowUnknownFields()
		if err := sec.Decode(&cfg.Security); err != nil {
			return fmt.Errorf("config %s: security: %w", path, err)
		}
	}
	set(&cfg.Pprof, fc.Pprof)
	if proc != nil {
		proc.MemoryLimit = fc.MemoryLimit
	}
	return nil
}

// applySecurityEnv applies the environment's security settings over the
// configuration file's: STRATA_AUTHORIZATION_ENABLED (a boolean) and
// STRATA_ROOT_PASSWORD (the root password of the first start).
func applySecurityEnv(cfg *app.Config, getenv func(string) string) error {
	if v := getenv("STRATA_AUTHORIZATION_ENABLED"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("STRATA_AUTHORIZATION_ENABLED=%q is not a boolean", v)
		}
		cfg.Security.AuthorizationEnabled = b
	}
	if v := getenv("STRATA_ROOT_PASSWORD"); v != "" {
		cfg.Security.DefaultRootPassword = v
	}
	return nil
}
