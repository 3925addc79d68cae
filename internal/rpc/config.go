package rpc

import (
	"errors"
	"fmt"
	"time"
)

// ServerConfig configures an internal RPC server.
type ServerConfig struct {
	// MaxMessageSize bounds a request or response in bytes (search results
	// with output fields can be large).
	MaxMessageSize int `json:"maxMessageSize"`
}

// ServerDefaults returns the default server configuration.
func ServerDefaults() ServerConfig { return ServerConfig{MaxMessageSize: 256 << 20} }

// Validate checks the configuration.
func (c ServerConfig) Validate() error {
	if c.MaxMessageSize <= 0 {
		return fmt.Errorf("rpc: maxMessageSize %d must be positive", c.MaxMessageSize)
	}
	return nil
}

// ClientConfig configures the client side of internal RPC: deadlines,
// retries and message size.
type ClientConfig struct {
	// Timeout is the deadline of a call whose context has none.
	Timeout time.Duration `json:"timeout"`
	// MaxAttempts bounds the tries of one call, the first included
	// (1 = no retries).
	MaxAttempts int `json:"maxAttempts"`
	// BackoffBase is the backoff before the second attempt; it doubles each
	// attempt up to BackoffMax. Each sleep is drawn uniformly from
	// [0, backoff) (full jitter).
	BackoffBase time.Duration `json:"backoffBase"`
	BackoffMax  time.Duration `json:"backoffMax"`
	// MaxMessageSize bounds a request or response in bytes.
	MaxMessageSize int `json:"maxMessageSize"`
}

// ClientDefaults returns the default client configuration: 30 s per call,
// 4 attempts, backoff from 50 ms up to 2 s.
func ClientDefaults() ClientConfig {
	return ClientConfig{
		Timeout: 30 * time.Second, MaxAttempts: 4,
		BackoffBase: 50 * time.Millisecond, BackoffMax: 2 * time.Second,
		MaxMessageSize: 256 << 20,
	}
}

// Validate checks the configuration.
func (c ClientConfig) Validate() error {
	var errs []error
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("rpc: timeout %s must be positive", c.Timeout))
	}
	if c.MaxAttempts < 1 {
		errs = append(errs, fmt.Errorf("rpc: maxAttempts %d must be at least 1", c.MaxAttempts))
	}
	if c.BackoffBase <= 0 || c.BackoffMax < c.BackoffBase {
		errs = append(errs, fmt.Errorf("rpc: backoff %s..%s must be positive and increasing", c.BackoffBase, c.BackoffMax))
	}
	if c.MaxMessageSize <= 0 {
		errs = append(errs, errors.New("rpc: maxMessageSize must be positive"))
	}
	return errors.Join(errs...)
}
