package local

import (
	"errors"
	"fmt"
	"math"
	"os"
	"time"
)

// Default configuration values.
const (
	// DefaultSegmentSize is the size after which the active segment is sealed.
	DefaultSegmentSize = 64 << 20
	// DefaultMaxBatchBytes bounds the bytes written between two fsyncs.
	DefaultMaxBatchBytes = 8 << 20
	// DefaultMaxRecordBytes bounds the size of one record.
	DefaultMaxRecordBytes = 256 << 20
	// DefaultWriteBufferSize is the size of the buffered writer of each pchannel.
	DefaultWriteBufferSize = 1 << 20
	// DefaultReadBufferSize is the size of each reader's buffered reader.
	DefaultReadBufferSize = 256 << 10
	// DefaultRetryBackoff is the first wait after a failed append before a
	// pchannel repairs its active segment and writes again.
	DefaultRetryBackoff = 50 * time.Millisecond
)

// maxRetryBackoff caps the retry backoff at this multiple of
// Config.RetryBackoff (the backoff doubles after each failed try).
const maxRetryBackoff = 32

// ErrInvalidConfig reports a Config that fails Validate.
var ErrInvalidConfig = errors.New("wal: invalid config")

// Config configures a local Log. The zero value of every field but Dir
// means its default (Open fills them in); Defaults returns them all.
type Config struct {
	// Dir holds one sub-directory per pchannel; the app sets it
	// ({data-dir}/wal).
	Dir string `json:"-"`
	// SegmentSize is the size in bytes after which the active segment file
	// is sealed and a new one started (a segment exceeds it by at most one record).
	SegmentSize int64 `json:"segmentSize"`
	// MaxBatchBytes bounds the bytes one group commit writes before its fsync.
	// A single call larger than this is still written in one commit.
	MaxBatchBytes int64 `json:"maxBatchBytes"`
	// MaxRecordBytes is the largest record accepted by AppendAsync.
	MaxRecordBytes int64 `json:"maxRecordBytes"`
	// WriteBufferSize is the buffer size of each pchannel's writer.
	WriteBufferSize int `json:"writeBufferSize"`
	// ReadBufferSize is the buffer size of each Reader.
	ReadBufferSize int `json:"readBufferSize"`
	// RetryBackoff is how long a pchannel whose append failed (a full disk,
	// a failed fsync) fails further appends at once before it repairs its
	// active segment and tries to write again; it doubles after each failed
	// try, up to 32 times its value, and resets after a successful write.
	RetryBackoff time.Duration `json:"retryBackoff"`
	// VerifySealed makes Open read and CRC-check every sealed segment and
	// report the first damage (through Log.Problems and the log) before a
	// Reader reaches it. Otherwise damage in a sealed segment is reported by
	// the Reader that reaches it. Either way Open does not fail.
	VerifySealed bool `json:"verifySealed"`

	// sync makes a file or directory durable; nil means (*os.File).Sync.
	// Set only by tests in this package.
	sync func(*os.File) error
}

// Defaults returns the default configuration (with an empty Dir).
func Defaults() Config { return Config{}.withDefaults() }

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	if c.SegmentSize == 0 {
		c.SegmentSize = DefaultSegmentSize
	}
	if c.MaxBatchBytes == 0 {
		c.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if c.MaxRecordBytes == 0 {
		c.MaxRecordBytes = DefaultMaxRecordBytes
	}
	if c.WriteBufferSize == 0 {
		c.WriteBufferSize = DefaultWriteBufferSize
	}
	if c.ReadBufferSize == 0 {
		c.ReadBufferSize = DefaultReadBufferSize
	}
	if c.RetryBackoff == 0 {
		c.RetryBackoff = DefaultRetryBackoff
	}
	return c
}

// Validate reports whether c is usable.
func (c Config) Validate() error {
	switch {
	case c.Dir == "":
		return fmt.Errorf("%w: Dir is empty", ErrInvalidConfig)
	case c.SegmentSize <= 0:
		return fmt.Errorf("%w: SegmentSize %d must be positive", ErrInvalidConfig, c.SegmentSize)
	case c.MaxBatchBytes <= 0:
		return fmt.Errorf("%w: MaxBatchBytes %d must be positive", ErrInvalidConfig, c.MaxBatchBytes)
	case c.MaxRecordBytes <= 0 || c.MaxRecordBytes > math.MaxUint32:
		return fmt.Errorf("%w: MaxRecordBytes %d must be in (0, 2^32)", ErrInvalidConfig, c.MaxRecordBytes)
	case c.WriteBufferSize <= 0:
		return fmt.Errorf("%w: WriteBufferSize %d must be positive", ErrInvalidConfig, c.WriteBufferSize)
	case c.ReadBufferSize <= 0:
		return fmt.Errorf("%w: ReadBufferSize %d must be positive", ErrInvalidConfig, c.ReadBufferSize)
	case c.RetryBackoff <= 0:
		return fmt.Errorf("%w: RetryBackoff %v must be positive", ErrInvalidConfig, c.RetryBackoff)
	}
	return nil
}
