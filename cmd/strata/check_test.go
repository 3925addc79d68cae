package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCheckRepairExitCodes: bad arguments and unreadable dirs exit 2, an
// empty but valid dir is not a data dir (nothing to check: exit 2), --help
// exits 0, and help lists both commands.
func TestCheckRepairExitCodes(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(notDir, []byte("x"), 0o600))
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"check without dir", []string{"check"}, exitUnchecked},
		{"check of a missing dir", []string{"check", "--data-dir", filepath.Join(t.TempDir(), "absent")}, exitUnchecked},
		{"check of a file", []string{"check", "--data-dir", notDir}, exitUnchecked},
		{"check of a dir without a meta store", []string{"check", "--data-dir", t.TempDir()}, exitUnchecked},
		{"check help", []string{"check", "--help"}, exitClean},
		{"repair without action", []string{"repair", "--data-dir", t.TempDir()}, exitUnchecked},
		{"repair bad segment", []string{"repair", "--data-dir", t.TempDir(), "--drop-segment", "x"}, exitUnchecked},
		{"repair of a dir without a meta store", []string{"repair", "--data-dir", t.TempDir(), "--drop-segment", "7"}, exitDamaged},
		{"cut-wal of a dir without a meta store", []string{"repair", "--data-dir", t.TempDir(), "--cut-wal", "by-dev-rootcoord-dml_0"}, exitDamaged},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(tc.args, &out, &errOut)
			var ee *exitError
			require.ErrorAs(t, err, &ee, "err %v", err)
			require.Equal(t, tc.code, ee.code, "err %v; stdout %s", err, out.String())
		})
	}
	var out bytes.Buffer
	require.NoError(t, run([]string{"help"}, &out, &out))
	require.Contains(t, out.String(), "check --data-dir DIR")
	require.Contains(t, out.String(), "repair --data-dir DIR --drop-segment ID")
}
