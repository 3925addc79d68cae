package membership

import (
	"errors"
	"fmt"
	"time"
)

// Config configures a Registry.
type Config struct {
	// Endpoints are the etcd client URLs (required).
	Endpoints []string `json:"endpoints"`
	// Root prefixes every key; it ends with "/". Default "strata/cluster/".
	Root string `json:"root"`
	// SessionTTL is the lease TTL of a node's session: how long after a
	// node's last keep-alive it is declared dead. etcd counts in whole
	// seconds (rounded up) and raises very short TTLs to its minimum
	// (about 2s with default heartbeats). Default 10s.
	SessionTTL time.Duration `json:"sessionTTL"`
	// DialTimeout bounds establishing the first connection and each probe
	// of it at start. Default 5s.
	DialTimeout time.Duration `json:"dialTimeout"`
	// StartTimeout is how long Open keeps probing an etcd that does not
	// answer (logging each failed probe) before it fails. Default 30s.
	StartTimeout time.Duration `json:"startTimeout"`
	// RequestTimeout bounds each request other than the blocking ones
	// (Campaign, watches), so a call fails rather than waits for an
	// unreachable etcd. Default 10s.
	RequestTimeout time.Duration `json:"requestTimeout"`
	// Username and Password enable etcd authentication when Username is set.
	Username string `json:"username"`
	// Password is Username's password.
	Password string `json:"password"`
}

// Defaults of Config.
const (
	DefaultRoot           = "strata/cluster/"
	DefaultSessionTTL     = 10 * time.Second
	DefaultDialTimeout    = 5 * time.Second
	DefaultStartTimeout   = 30 * time.Second
	DefaultRequestTimeout = 10 * time.Second
)

// Defaults returns the default configuration (without Endpoints).
func Defaults() Config { return Config{}.withDefaults() }

// withDefaults returns c with unset fields set to their defaults.
func (c Config) withDefaults() Config {
	if c.Root == "" {
		c.Root = DefaultRoot
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{
		{&c.SessionTTL, DefaultSessionTTL},
		{&c.DialTimeout, DefaultDialTimeout},
		{&c.StartTimeout, DefaultStartTimeout},
		{&c.RequestTimeout, DefaultRequestTimeout},
	} {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	return c
}

// Validate reports a Config that cannot work; unset fields take their
// defaults and are valid.
func (c Config) Validate() error {
	c = c.withDefaults()
	if len(c.Endpoints) == 0 {
		return errors.New("membership: config: no endpoints")
	}
	if c.Root[len(c.Root)-1] != '/' {
		return fmt.Errorf("membership: config: root %q does not end with /", c.Root)
	}
	if c.SessionTTL < time.Second {
		return fmt.Errorf("membership: config: sessionTTL %v is under 1s", c.SessionTTL)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"dialTimeout", c.DialTimeout}, {"startTimeout", c.StartTimeout}, {"requestTimeout", c.RequestTimeout}} {
		if d.v < 0 {
			return fmt.Errorf("membership: config: negative %s %v", d.name, d.v)
		}
	}
	return nil
}

// ttlSeconds is the session TTL in whole seconds, rounded up.
func (c Config) ttlSeconds() int64 {
	return int64((c.SessionTTL + time.Second - 1) / time.Second)
}
