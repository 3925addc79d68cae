package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/version"
)

// TestHelpExitsZero: every way of asking for help exits 0 and prints the
// command list or the command's flags; unknown commands exit 1.
func TestHelpExitsZero(t *testing.T) {
	subcommands := []string{"standalone", "run", "config", "binlog dump", "bench", "check", "repair", "version", "help"}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"-help"}, {"help"}, {"help", "help"}} {
		var out, errOut bytes.Buffer
		code, err := exitCode(run(args, &out, &errOut))
		require.Equal(t, 0, code, "%v: %v", args, err)
		require.NoError(t, err, args)
		for _, c := range subcommands {
			require.Contains(t, out.String(), "\n  "+c+" ", "%v lists %q", args, c)
		}
	}
	for cmd, flagName := range map[string]string{
		"standalone": "-data-dir", "run": "coordinator|proxy|querynode|datanode", "config": "-config", "binlog": "-max-rows", "bench": "-index",
		"check": "-data-dir", "repair": "-drop-segment", "version": "usage: strata version",
	} {
		// strata help CMD prints CMD's usage on stdout.
		var out, errOut bytes.Buffer
		code, err := exitCode(run([]string{"help", cmd}, &out, &errOut))
		require.Equal(t, 0, code, "help %s: %v", cmd, err)
		require.NoError(t, err)
		require.Contains(t, out.String(), flagName, "help %s", cmd)
		require.Contains(t, out.String(), "usage: strata "+cmd, "help %s", cmd)

		// strata CMD --help and -h print it on stderr.
		for _, h := range []string{"--help", "-h"} {
			out.Reset()
			errOut.Reset()
			code, err = exitCode(run([]string{cmd, h}, &out, &errOut))
			require.Equal(t, 0, code, "%s %s: %v", cmd, h, err)
			require.NoError(t, err)
			require.Contains(t, errOut.String(), flagName, "%s %s", cmd, h)
		}
	}
	var out bytes.Buffer
	code, err := exitCode(run([]string{"binlog", "dump", "--help"}, &out, &out))
	require.Equal(t, 0, code, err)
	require.Contains(t, out.String(), "-max-rows")

	for _, args := range [][]string{
		{"nosuch"},
		{"help", "nosuch"},
		{"standalone", "--nosuch"},
		{"binlog"},
		{"version", "x"},
		{"run"},
		{"run", "proxy2"},
		{"run", "querynode", "--nosuch"},
	} {
		code, err := exitCode(run(args, &out, &out))
		require.Equal(t, 1, code, args)
		require.Error(t, err, args)
	}
}

func TestVersionCommand(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run([]string{"version"}, &out, &out))
	b := version.Get()
	require.Equal(t, "strata "+version.Milvus+"\ncommit: "+b.Commit+"\ndate:   "+b.Date+"\ngo:     "+b.Go+"\n", out.String())
}

// TestRunRole: `strata run ROLE --help` lists the server flags with
// --internal-addr; a node role on the embedded engines is refused before
// anything starts, naming what it needs.
func TestRunRole(t *testing.T) {
	var out bytes.Buffer
	code, err := exitCode(run([]string{"run", "querynode", "--help"}, &out, &out))
	require.Equal(t, 0, code, err)
	require.Contains(t, out.String(), "usage: strata run querynode")
	require.Contains(t, out.String(), "-internal-addr")

	out.Reset()
	err = run([]string{"run", "datanode", "--data-dir", t.TempDir(), "--metrics-addr", ""}, &out, &out)
	require.Error(t, err)
	require.Contains(t, err.Error(), "engines.meta must be etcd, engines.wal kafka and engines.objects s3")
	require.Contains(t, err.Error(), "needs internalAddr (--internal-addr)")
}
