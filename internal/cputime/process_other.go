//go:build !linux

package cputime

import "time"

// Process returns 0: this platform's process CPU time is not read here.
func Process() time.Duration { return 0 }
