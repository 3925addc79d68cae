package membership

import (
	"fmt"
	"time"
)

// Config configures a Registry. The etcd connection is not part of it: the
// Registry uses the caller's client (in a Strata process, the meta store's).
type Config struct {
	// Root prefixes every key; it ends with "/". Default "strata/cluster/".
	Root string `json:"root"`
	// SessionTTL is the lease TTL of a node's session: how long after a
	// node's last keep-alive it is declared dead. etcd counts in whole
	// seconds (rounded up) and raises very short TTLs to its minimum
	// (about 2s with default heartbeats). Default 10s.
	SessionTTL time.Duration `json:"sessionTTL"`
	// RequestTimeout bounds each request other than the blocking ones
	// (Campaign, watches), so a call fails rather than waits for an
	// unreachable etcd. Default 10s.
	RequestTimeout time.Duration `json:"requestTimeout"`
}

// Defaults of Config.
const (
	DefaultRoot           = "strata/cluster/"
	DefaultSessionTTL     = 10 * time.Second
	DefaultRequestTimeout = 10 * time.Second
)

// Defaults returns the default configuration.
func Defaults() Config { return Config{}.withDefaults() }

// withDefaults returns c with unset fields set to their defaults.
func (c Config) withDefaults() Config {
	if c.Root == "" {
		c.Root = DefaultRoot
	}
	if c.SessionTTL == 0 {
		c.SessionTTL = DefaultSessionTTL
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	return c
}

// Validate reports a Config that cannot work; unset fields take their
// defaults and are valid.
func (c Config) Validate() error {
	c = c.withDefaults()
	if c.Root[len(c.Root)-1] != '/' {
		return fmt.Errorf("membership: config: root %q does not end with /", c.Root)
	}
	if c.SessionTTL < time.Second {
		return fmt.Errorf("membership: config: sessionTTL %v is under 1s", c.SessionTTL)
	}
	if c.RequestTimeout < 0 {
		return fmt.Errorf("membership: config: negative requestTimeout %v", c.RequestTimeout)
	}
	return nil
}

// ttlSeconds is the session TTL in whole seconds, rounded up.
func (c Config) ttlSeconds() int64 {
	return int64((c.SessionTTL + time.Second - 1) / time.Second)
}
