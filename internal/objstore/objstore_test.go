package objstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/strata-db/strata/internal/objstore"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestValidateKey(t *testing.T) {
	tests := []struct {
		key string
		ok  bool
	}{
		{key: "a", ok: true},
		{key: "files/insert_log/1/2/3/100/7", ok: true},
		{key: "a/.b/c..d/...", ok: true},
		{key: ""},
		{key: "/a"},
		{key: "a/"},
		{key: "a//b"},
		{key: ".."},
		{key: "a/.."},
		{key: "./a"},
		{key: "a\x00"},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			err := objstore.ValidateKey(tc.key)
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, objstore.ErrInvalidKey)
			}
		})
	}
}

func TestValidatePrefix(t *testing.T) {
	tests := []struct {
		prefix string
		ok     bool
	}{
		{prefix: "", ok: true},
		{prefix: "a", ok: true},
		{prefix: "a/", ok: true},
		{prefix: "a/1", ok: true},
		{prefix: "a/.", ok: true},
		{prefix: "/"},
		{prefix: "/a"},
		{prefix: "a//"},
		{prefix: "../x"},
		{prefix: "a\x00"},
	}
	for _, tc := range tests {
		t.Run(tc.prefix, func(t *testing.T) {
			err := objstore.ValidatePrefix(tc.prefix)
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, objstore.ErrInvalidKey)
			}
		})
	}
}
