package auth

import (
	"errors"
	"fmt"
)

// TLS modes of the API port (Milvus's tls mode / common.security.tlsMode).
const (
	// TLSOff serves cleartext.
	TLSOff = 0
	// TLSOneWay serves TLS with the server certificate; clients are not asked for one.
	TLSOneWay = 1
	// TLSMutual serves TLS and requires a client certificate signed by the CA.
	TLSMutual = 2
)

// Config is the "security" section of the configuration file: the keys of
// Milvus's common.security and tls sections, in camelCase.
type Config struct {
	// AuthorizationEnabled turns on authentication and privilege checks
	// (common.security.authorizationEnabled). Off, every request is served
	// as today and credentials are still stored.
	AuthorizationEnabled bool `json:"authorizationEnabled"`
	// DefaultRootPassword is the password the root user gets when the meta
	// store has no users yet (first start); later starts ignore it.
	// Empty means Milvus's default, "Milvus".
	DefaultRootPassword string `json:"defaultRootPassword"`
	// TLSMode is 0 (cleartext), 1 (one-way TLS) or 2 (mutual TLS) on the API port.
	TLSMode int `json:"tlsMode"`
	// ServerPemPath is the server certificate (PEM) for TLS modes 1 and 2.
	ServerPemPath string `json:"serverPemPath"`
	// ServerKeyPath is the server private key (PEM) for TLS modes 1 and 2.
	ServerKeyPath string `json:"serverKeyPath"`
	// CaPemPath is the CA bundle (PEM) that signs client certificates in TLS mode 2.
	CaPemPath string `json:"caPemPath"`
	// MinPasswordLength and MaxPasswordLength bound new passwords
	// (proxy.minPasswordLength / maxPasswordLength: 6 and 256, as Milvus 2.6).
	MinPasswordLength int `json:"minPasswordLength"`
	MaxPasswordLength int `json:"maxPasswordLength"`
	// MaxUsernameLength bounds user names (proxy.maxUsernameLength, 32).
	MaxUsernameLength int `json:"maxUsernameLength"`
	// MaxUserNum and MaxRoleNum bound how many users and custom roles exist
	// (proxy.maxUserNum 100, proxy.maxRoleNum 10).
	MaxUserNum int `json:"maxUserNum"`
	MaxRoleNum int `json:"maxRoleNum"`
	// BcryptCost is the bcrypt work factor of stored password hashes.
	BcryptCost int `json:"bcryptCost"`
	// RootShouldBindRole makes root's requests pass the privilege checks
	// only through the roles bound to root, like any user's
	// (common.security.rootShouldBindRole, false: root may do anything).
	RootShouldBindRole bool `json:"rootShouldBindRole"`
}

// DefaultRootPassword is Milvus's default password of the root user.
const DefaultRootPassword = "Milvus"

// Defaults returns the default configuration: authorization off, no TLS.
func Defaults() Config {
	return Config{
		MinPasswordLength: 6, MaxPasswordLength: 256, MaxUsernameLength: 32,
		MaxUserNum: 100, MaxRoleNum: 10, BcryptCost: 10,
	}
}

// Validate checks the configuration (file presence is checked when the
// TLS listener is built, so the error names the file).
func (c Config) Validate() error {
	var errs []error
	if c.TLSMode < TLSOff || c.TLSMode > TLSMutual {
		errs = append(errs, fmt.Errorf("auth: tlsMode %d is not 0, 1 or 2", c.TLSMode))
	}
	if c.TLSMode >= TLSOneWay && (c.ServerPemPath == "" || c.ServerKeyPath == "") {
		errs = append(errs, fmt.Errorf("auth: tlsMode %d needs serverPemPath and serverKeyPath", c.TLSMode))
	}
	if c.TLSMode == TLSMutual && c.CaPemPath == "" {
		errs = append(errs, errors.New("auth: tlsMode 2 needs caPemPath"))
	}
	if c.MinPasswordLength < 1 || c.MaxPasswordLength < c.MinPasswordLength || c.MaxPasswordLength > 256 {
		errs = append(errs, fmt.Errorf("auth: password length bounds [%d, %d] must satisfy 1 <= min <= max <= 256",
			c.MinPasswordLength, c.MaxPasswordLength))
	}
	if c.DefaultRootPassword != "" && (len(c.DefaultRootPassword) < c.MinPasswordLength || len(c.DefaultRootPassword) > c.MaxPasswordLength) {
		errs = append(errs, fmt.Errorf("auth: defaultRootPassword must be %d to %d bytes long", c.MinPasswordLength, c.MaxPasswordLength))
	}
	if c.BcryptCost != 0 && (c.BcryptCost < 4 || c.BcryptCost > 31) {
		errs = append(errs, fmt.Errorf("auth: bcryptCost %d is not in [4, 31]", c.BcryptCost))
	}
	return errors.Join(errs...)
}
