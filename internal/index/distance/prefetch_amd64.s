//go:build !noasm

#include "textflag.h"

// func prefetchLines(v []float32)
// Issues PREFETCHT0 for every 64-byte cache line that v touches.
TEXT ·prefetchLines(SB), NOSPLIT, $0-24
	MOVQ  v_base+0(FP), SI
	MOVQ  v_len+8(FP), CX
	TESTQ CX, CX
	JZ    pfdone
	LEAQ  -1(SI)(CX*4), CX
	ANDQ  $-64, CX

pfloop:
	PREFETCHT0 (SI)
	ADDQ       $64, SI
	CMPQ       SI, CX
	JBE        pfloop
	PREFETCHT0 (CX)

pfdone:
	RET
