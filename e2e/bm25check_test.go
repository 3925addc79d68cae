//go:build bm25check

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBM25AgainstBM25s runs tools/bm25check/check.py: Strata's full-text
// search over the apt package descriptions against bm25s on the same
// tokens, growing, flushed, in 4 segments, compacted and after a restart
// (docs/bench/bm25.md). Opt-in, it needs apt-cache and a Python with
// tools/bm25check/requirements.txt:
//
//	STRATA_BM25_PYTHON=/tmp/bm25venv/bin/python go test -tags bm25check -run TestBM25AgainstBM25s -timeout 30m ./e2e/
func TestBM25AgainstBM25s(t *testing.T) {
	py := os.Getenv("STRATA_BM25_PYTHON")
	require.NotEmpty(t, py, "set STRATA_BM25_PYTHON to a python with tools/bm25check/requirements.txt installed")
	bin := buildBinary(t)
	root := moduleRoot(t)
	args := []string{
		filepath.Join(root, "tools", "bm25check", "check.py"), "--bin", bin,
		"--port", strconv.Itoa(freePort(t)), "--mport", strconv.Itoa(freePort(t)), "--out", t.TempDir(),
	}
	if n := os.Getenv("STRATA_BM25_DOCS"); n != "" {
		args = append(args, "--docs", n)
	}
	cmd := exec.Command(py, args...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	require.NoError(t, err, "check.py found mismatches or failed")
}
