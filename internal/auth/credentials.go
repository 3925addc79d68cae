package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// Back-off of repeated authentication failures for one user name.
const (
	failuresBeforeBackoff = 5
	backoffBase           = time.Second
	backoffMax            = 60 * time.Second
	maxTrackedFailures    = 10000
)

// credentials verifies passwords against bcrypt hashes with a cache of
// verified passwords and a per-user back-off after failures.
type credentials struct {
	now       func() time.Time
	cost      int
	dummyOnce sync.Once
	dummy     []byte // bcrypt hash compared for unknown users, made at the first such check

	mu       sync.Mutex
	verified map[string][32]byte // user → SHA-256(user, password) of the last verified password
	fails    map[string]failure
}

type failure struct {
	count int
	until time.Time // refused without a check before this
}

func newCredentials(cost int, now func() time.Time) *credentials {
	return &credentials{now: now, cost: cost, verified: map[string][32]byte{}, fails: map[string]failure{}}
}

// dummyHash is a hash of the store's cost that no password matches in practice.
func (c *credentials) dummyHash() []byte {
	c.dummyOnce.Do(func() {
		c.dummy, _ = bcrypt.GenerateFromPassword([]byte("strata-dummy-password"), c.cost)
	})
	return c.dummy
}

// bcryptInput is what bcrypt hashes for password: the password itself up to
// bcrypt's 72 bytes; a longer one (Milvus allows 256) is reduced to a marker
// and the base64 of its SHA-256, so that every byte counts.
func bcryptInput(password string) []byte {
	if len(password) <= 72 {
		return []byte(password)
	}
	sum := sha256.Sum256([]byte(password))
	return append([]byte("\x00sha256:"), base64.StdEncoding.EncodeToString(sum[:])...)
}

// hashPassword returns the bcrypt hash stored for password.
func hashPassword(password string, cost int) (string, error) {
	h, err := bcrypt.GenerateFromPassword(bcryptInput(password), cost)
	return string(h), err
}

func digest(user, password string) [32]byte {
	return sha256.Sum256([]byte(user + "\x00" + password))
}

// verify checks password against hash ("" for an unknown user).
func (c *credentials) verify(user, password, hash string) bool {
	now := c.now()
	d := digest(user, password)
	c.mu.Lock()
	if f := c.fails[user]; now.Before(f.until) {
		c.mu.Unlock()
		return false
	}
	cached, ok := c.verified[user]
	if ok && hash != "" && subtle.ConstantTimeCompare(cached[:], d[:]) == 1 {
		// A success ends a run of failures, from the cache as from bcrypt:
		// the back-off is for consecutive failures.
		delete(c.fails, user)
		c.mu.Unlock()
		return true
	}
	c.mu.Unlock()
	target := []byte(hash)
	if hash == "" {
		target = c.dummyHash()
	}
	good := bcrypt.CompareHashAndPassword(target, bcryptInput(password)) == nil && hash != ""
	c.mu.Lock()
	defer c.mu.Unlock()
	if good {
		c.verified[user] = d
		delete(c.fails, user)
		return true
	}
	if len(c.fails) >= maxTrackedFailures {
		c.fails = map[string]failure{}
	}
	f := c.fails[user]
	f.count++
	if n := f.count - failuresBeforeBackoff; n >= 0 {
		wait := backoffMax
		if n < 6 {
			wait = min(backoffBase<<n, backoffMax)
		}
		f.until = now.Add(wait)
	}
	c.fails[user] = f
	return false
}

// forget drops user's cached password (its password changed or it was deleted).
func (c *credentials) forget(user string) {
	c.mu.Lock()
	delete(c.verified, user)
	delete(c.fails, user)
	c.mu.Unlock()
}

// reset drops every cached password.
func (c *credentials) reset() {
	c.mu.Lock()
	c.verified = map[string][32]byte{}
	c.mu.Unlock()
}
