//go:build !noasm

#include "textflag.h"

// func prefetch(p unsafe.Pointer)
// Hints the first two cache lines at p into all cache levels (PREFETCHT0).
// A prefetch never faults, so any address is allowed.
TEXT ·prefetch(SB), NOSPLIT|NOFRAME, $0-8
	MOVQ p+0(FP), AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	RET
