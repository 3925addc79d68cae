// Package version declares the version Strata reports and the build it was
// made from.
//
// Milvus is the Milvus API version Strata implements, the one GetVersion and
// Connect report to clients and `strata version` prints. The commit and
// date come from the Go toolchain's VCS stamp (runtime/debug.ReadBuildInfo:
// vcs.revision, vcs.time, vcs.modified) of a binary built inside a git
// checkout; a release build can set them instead with
//
//	go build -ldflags "-X github.com/strata-db/strata/internal/version.commit=$(git rev-parse HEAD) \
//	  -X github.com/strata-db/strata/internal/version.date=$(date -u +%Y-%m-%dT%H:%M:%SZ)" ./cmd/strata
package version

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Milvus is the Milvus API version Strata implements and reports.
const Milvus = "v2.6.6"

// commit and date override the VCS stamp when set with -ldflags -X.
var (
	commit string
	date   string
)

// Build describes the binary.
type Build struct {
	// Version is Milvus.
	Version string
	// Commit is the git revision the binary was built from ("unknown"
	// without a VCS stamp); a "+dirty" suffix marks uncommitted changes.
	Commit string
	// Date is the commit time (RFC 3339) of the VCS stamp, or the build date
	// set with -ldflags; "unknown" without either.
	Date string
	// Go is the toolchain version.
	Go string
}

// Get returns the running binary's build information.
func Get() Build {
	b := Build{Version: Milvus, Commit: commit, Date: date, Go: runtime.Version()}
	if info, ok := debug.ReadBuildInfo(); ok {
		b = fromBuildInfo(b, info.Settings)
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	if b.Date == "" {
		b.Date = "unknown"
	}
	return b
}

// fromBuildInfo fills b's empty Commit and Date from the VCS settings.
func fromBuildInfo(b Build, settings []debug.BuildSetting) Build {
	var rev, at string
	modified := false
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if b.Commit == "" && rev != "" {
		b.Commit = rev
		if modified {
			b.Commit += "+dirty"
		}
	}
	if b.Date == "" {
		b.Date = at
	}
	return b
}

// Write prints b as `strata version` does.
func (b Build) Write(w io.Writer) error {
	_, err := fmt.Fprintf(w, "strata %s\ncommit: %s\ndate:   %s\ngo:     %s\n", b.Version, b.Commit, b.Date, b.Go)
	return err
}
