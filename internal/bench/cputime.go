package bench

import "github.com/strata-db/strata/internal/cputime"

// threadCPUTime is cputime.Thread.
var threadCPUTime = cputime.Thread
