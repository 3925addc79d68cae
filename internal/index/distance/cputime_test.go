package distance

import "github.com/strata-db/strata/internal/cputime"

// threadCPUTime returns the CPU time consumed by the calling OS thread, or
// 0 if it cannot be read.
var threadCPUTime = cputime.Thread
