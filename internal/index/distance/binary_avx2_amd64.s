//go:build !noasm

#include "textflag.h"

// Bit counts of the nibbles 0..15, twice (one copy per 128-bit lane), for
// the VPSHUFB table lookup.
DATA popcntLUT<>+0(SB)/8, $0x0302020102010100
DATA popcntLUT<>+8(SB)/8, $0x0403030203020201
DATA popcntLUT<>+16(SB)/8, $0x0302020102010100
DATA popcntLUT<>+24(SB)/8, $0x0403030203020201
GLOBL popcntLUT<>(SB), RODATA|NOPTR, $32

DATA nibbleMask<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibbleMask<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibbleMask<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibbleMask<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL nibbleMask<>(SB), RODATA|NOPTR, $32

// POPCNT8 replaces the 32 bytes of V by the bit counts of its four
// quadwords: each nibble's count is looked up with VPSHUFB in Y14, the two
// counts of a byte are added, and VPSADBW against zero (Y13) sums the eight
// bytes of each quadword. T is scratch; Y15 holds the nibble mask.
#define POPCNT8(V, T) \
	VPSRLW  $4, V, T; \
	VPAND   Y15, V, V; \
	VPAND   Y15, T, T; \
	VPSHUFB V, Y14, V; \
	VPSHUFB T, Y14, T; \
	VPADDB  T, V, V; \
	VPSADBW Y13, V, V

// SETUP loads the lookup table, the nibble mask and zero, and clears the
// accumulators Y0 and Y1.
#define SETUP \
	VMOVDQU popcntLUT<>(SB), Y14; \
	VMOVDQU nibbleMask<>(SB), Y15; \
	VPXOR   Y13, Y13, Y13; \
	VPXOR   Y0, Y0, Y0; \
	VPXOR   Y1, Y1, Y1

// HSUM4 adds the four quadwords of YREG (low half XREG) into DST, using X12
// as scratch.
#define HSUM4(YREG, XREG, DST) \
	VEXTRACTI128 $1, YREG, X12; \
	VPADDQ       X12, XREG, XREG; \
	VPSHUFD      $0x4e, XREG, X12; \
	VPADDQ       X12, XREG, XREG; \
	VMOVQ        XREG, DST

// func hammingBlocksAVX2(a, b []byte) int
// Requires len(a) == len(b), len(a) a multiple of 32, and AVX2.
TEXT ·hammingBlocksAVX2(SB), NOSPLIT, $0-56
	MOVQ a_base+0(FP), SI
	MOVQ a_len+8(FP), CX
	MOVQ b_base+24(FP), DI
	SETUP
	CMPQ CX, $64
	JB   by32

by64:
	VMOVDQU (SI), Y2
	VMOVDQU 32(SI), Y3
	VPXOR   (DI), Y2, Y2
	VPXOR   32(DI), Y3, Y3
	POPCNT8(Y2, Y4)
	POPCNT8(Y3, Y5)
	VPADDQ  Y2, Y0, Y0
	VPADDQ  Y3, Y1, Y1
	ADDQ    $64, SI
	ADDQ    $64, DI
	SUBQ    $64, CX
	CMPQ    CX, $64
	JAE     by64

by32:
	CMPQ    CX, $32
	JB      reduce
	VMOVDQU (SI), Y2
	VPXOR   (DI), Y2, Y2
	POPCNT8(Y2, Y4)
	VPADDQ  Y2, Y0, Y0

reduce:
	VPADDQ Y1, Y0, Y0
	HSUM4(Y0, X0, AX)
	VZEROUPPER
	MOVQ   AX, ret+48(FP)
	RET

// func jaccardBlocksAVX2(a, b []byte) (inter, union int)
// Requires len(a) == len(b), len(a) a multiple of 32, and AVX2.
TEXT ·jaccardBlocksAVX2(SB), NOSPLIT, $0-64
	MOVQ a_base+0(FP), SI
	MOVQ a_len+8(FP), CX
	MOVQ b_base+24(FP), DI
	SETUP

by32:
	CMPQ    CX, $32
	JB      reduce
	VMOVDQU (SI), Y2
	VMOVDQU (DI), Y3
	VPAND   Y3, Y2, Y4
	VPOR    Y3, Y2, Y5
	POPCNT8(Y4, Y6)
	POPCNT8(Y5, Y7)
	VPADDQ  Y4, Y0, Y0
	VPADDQ  Y5, Y1, Y1
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $32, CX
	JMP     by32

reduce:
	HSUM4(Y0, X0, AX)
	HSUM4(Y1, X1, DX)
	VZEROUPPER
	MOVQ AX, inter+48(FP)
	MOVQ DX, union+56(FP)
	RET
