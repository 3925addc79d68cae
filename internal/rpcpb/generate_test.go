package rpcpb_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGeneratedCodeIsCurrent regenerates the code from the protos into a
// temporary directory and compares it with the committed files, byte for
// byte. It needs buf and the two plugins on PATH; without them it is
// skipped.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	for _, tool := range []string{"buf", "protoc-gen-go", "protoc-gen-go-grpc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: %v", tool, err)
		}
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	out := t.TempDir()
	cmd := exec.Command("buf", "generate", "--template", "buf.gen.yaml", "-o", out)
	cmd.Dir = root
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "buf generate: %s", msg)

	gen := map[string][]byte{}
	require.NoError(t, filepath.WalkDir(filepath.Join(out, "internal/rpcpb"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(filepath.Join(out, "internal/rpcpb"), p)
		gen[rel] = b
		return err
	}))
	require.NotEmpty(t, gen)
	committed := map[string]bool{}
	require.NoError(t, filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".go" || filepath.Dir(p) == "." {
			return err
		}
		committed[p] = true
		return nil
	}))
	for rel, want := range gen {
		got, err := os.ReadFile(rel)
		require.NoError(t, err, "%s is generated but not committed: run go generate ./internal/rpcpb", rel)
		require.True(t, bytes.Equal(want, got), "%s differs from what the protos generate: run go generate ./internal/rpcpb", rel)
		delete(committed, rel)
	}
	require.Empty(t, committed, "committed files no proto generates")
}
