package kafka

import (
	"errors"
	"fmt"
	"time"
)

// Default configuration values.
const (
	// DefaultMaxRecordBytes bounds the size of one record. Kafka brokers
	// default to about 1 MiB per message; topics this package creates get
	// max.message.bytes raised to fit (see Config.MaxRecordBytes).
	DefaultMaxRecordBytes = 64 << 20
	// DefaultReplicationFactor lets the broker choose (default.replication.factor).
	DefaultReplicationFactor = -1
	// DefaultDeliveryTimeout bounds how long an append may stay unacknowledged.
	DefaultDeliveryTimeout = 2 * time.Minute
	// DefaultCloseTimeout bounds how long Close waits for pending appends.
	DefaultCloseTimeout = 10 * time.Second
	// DefaultRequestTimeout bounds admin requests (topic creation, offsets, DeleteRecords).
	DefaultRequestTimeout = 30 * time.Second
	// batchOverhead is room for the record batch and record headers on top of
	// the record's bytes, so a record of MaxRecordBytes fits a batch alone.
	batchOverhead = 4 << 10
)

// ErrInvalidConfig reports a Config that fails Validate.
var ErrInvalidConfig = errors.New("wal/kafka: invalid config")

// Config configures a Kafka Log. Zero fields other than Brokers take their
// defaults (Open fills them in); Defaults returns them all.
type Config struct {
	// Brokers are the seed brokers, "host:port".
	Brokers []string `json:"brokers"`
	// TopicPrefix is prepended to a pchannel name to form its topic name
	// (empty: the topic is named like the pchannel, as in Milvus).
	TopicPrefix string `json:"topicPrefix"`
	// ReplicationFactor of created topics; -1 (the default) is the broker's
	// default.replication.factor.
	ReplicationFactor int16 `json:"replicationFactor"`
	// MaxRecordBytes is the largest record AppendAsync accepts. Topics the
	// Log creates get max.message.bytes = MaxRecordBytes + 4 KiB; brokers
	// must allow fetches (replica.fetch.max.bytes) of that size too.
	MaxRecordBytes int32 `json:"maxRecordBytes"`
	// Linger is how long the producer waits to batch records before sending;
	// 0 (the default) sends at once, batching only while requests are in flight.
	Linger time.Duration `json:"linger"`
	// DeliveryTimeout fails an append that the brokers have not acknowledged
	// within it (checked when the client retries, so it can take a few
	// seconds more); the append's result then carries the error, though
	// the records may still be durable. At least 1s.
	DeliveryTimeout time.Duration `json:"deliveryTimeout"`
	// CloseTimeout bounds how long Close waits for pending appends.
	CloseTimeout time.Duration `json:"closeTimeout"`
	// RequestTimeout bounds topic creation, offset listing and DeleteRecords.
	RequestTimeout time.Duration `json:"requestTimeout"`
	// ClientID names the Kafka client in broker logs ("strata" by default).
	ClientID string `json:"clientID"`
}

// Defaults returns the default configuration (without Brokers).
func Defaults() Config { return Config{}.withDefaults() }

// withDefaults returns c with every zero field (but Brokers) set to its default.
func (c Config) withDefaults() Config {
	if c.ReplicationFactor == 0 {
		c.ReplicationFactor = DefaultReplicationFactor
	}
	if c.MaxRecordBytes == 0 {
		c.MaxRecordBytes = DefaultMaxRecordBytes
	}
	if c.DeliveryTimeout == 0 {
		c.DeliveryTimeout = DefaultDeliveryTimeout
	}
	if c.CloseTimeout == 0 {
		c.CloseTimeout = DefaultCloseTimeout
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.ClientID == "" {
		c.ClientID = "strata"
	}
	return c
}

// maxMaxRecordBytes keeps a batch under franz-go's 1 GiB read limit.
const maxMaxRecordBytes = 512 << 20

// Validate reports whether c is usable.
func (c Config) Validate() error {
	switch {
	case len(c.Brokers) == 0:
		return fmt.Errorf("%w: brokers is empty", ErrInvalidConfig)
	case c.ReplicationFactor < -1 || c.ReplicationFactor == 0:
		return fmt.Errorf("%w: replicationFactor %d must be -1 or positive", ErrInvalidConfig, c.ReplicationFactor)
	case c.MaxRecordBytes <= 0 || c.MaxRecordBytes > maxMaxRecordBytes:
		return fmt.Errorf("%w: maxRecordBytes %d must be in (0, %d]", ErrInvalidConfig, c.MaxRecordBytes, maxMaxRecordBytes)
	case c.Linger < 0:
		return fmt.Errorf("%w: linger %v must not be negative", ErrInvalidConfig, c.Linger)
	case c.DeliveryTimeout < time.Second:
		return fmt.Errorf("%w: deliveryTimeout %v must be at least 1s", ErrInvalidConfig, c.DeliveryTimeout)
	case c.CloseTimeout <= 0:
		return fmt.Errorf("%w: closeTimeout %v must be positive", ErrInvalidConfig, c.CloseTimeout)
	case c.RequestTimeout <= 0:
		return fmt.Errorf("%w: requestTimeout %v must be positive", ErrInvalidConfig, c.RequestTimeout)
	}
	for _, b := range c.Brokers {
		if b == "" {
			return fmt.Errorf("%w: brokers has an empty address", ErrInvalidConfig)
		}
	}
	if err := validTopic(c.TopicPrefix + "x"); c.TopicPrefix != "" && err != nil {
		return fmt.Errorf("%w: topicPrefix: %w", ErrInvalidConfig, err)
	}
	return nil
}

// validTopic reports whether name is a legal Kafka topic name.
func validTopic(name string) error {
	if name == "" || len(name) > 249 || name == "." || name == ".." {
		return fmt.Errorf("topic name %q must be 1 to 249 characters and not \".\" or \"..\"", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("topic name %q has %q; only [a-zA-Z0-9._-] are allowed", name, r)
		}
	}
	return nil
}
