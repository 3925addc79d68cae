//go:build !noasm

#include "textflag.h"

// Matrix (many-query) dot-product tile kernel for AVX2 with FMA3; see
// matrix.go.

// STORE3 reduces the eight lanes of each of A, B, C (one query's three
// accumulators) and stores the three dot products at (AX). It clobbers
// X0..X2.
#define STORE3(A, B, C, XA, XB, XC) \
	VEXTRACTF128 $1, A, X0; \
	VEXTRACTF128 $1, B, X1; \
	VEXTRACTF128 $1, C, X2; \
	VADDPS       XA, X0, X0; \
	VADDPS       XB, X1, X1; \
	VADDPS       XC, X2, X2; \
	VHADDPS      X1, X0, X0; \
	VHADDPS      X2, X2, X2; \
	VHADDPS      X2, X0, X0; \
	VMOVSD       X0, (AX); \
	VEXTRACTPS   $2, X0, 8(AX)

// STEP multiplies the three row chunks in Y0..Y2 with the four query chunks
// at (DI), 32(DI), 64(DI) and 96(DI) into the accumulators Y4..Y15.
#define STEP \
	VMOVUPS     0(DI), Y3; \
	VFMADD231PS Y0, Y3, Y4; \
	VFMADD231PS Y1, Y3, Y5; \
	VFMADD231PS Y2, Y3, Y6; \
	VMOVUPS     32(DI), Y3; \
	VFMADD231PS Y0, Y3, Y7; \
	VFMADD231PS Y1, Y3, Y8; \
	VFMADD231PS Y2, Y3, Y9; \
	VMOVUPS     64(DI), Y3; \
	VFMADD231PS Y0, Y3, Y10; \
	VFMADD231PS Y1, Y3, Y11; \
	VFMADD231PS Y2, Y3, Y12; \
	VMOVUPS     96(DI), Y3; \
	VFMADD231PS Y0, Y3, Y13; \
	VFMADD231PS Y1, Y3, Y14; \
	VFMADD231PS Y2, Y3, Y15

// func dotTileAVX2(x []float32, dim int, q []float32, groups int, out []float32, ostride int, mask []int32)
// x holds three rows of dim floats; q holds groups packed groups of four
// queries (matrix.go, packQueries, 8 lanes); mask holds the VMASKMOVPS mask
// of the last dim%8 lanes. For query i of the groups and row j it stores the
// dot product at out[i*ostride+j].
TEXT ·dotTileAVX2(SB), NOSPLIT, $0-120
	MOVQ x_base+0(FP), R8
	MOVQ dim+24(FP), CX
	MOVQ q_base+32(FP), DI
	MOVQ groups+56(FP), SI
	MOVQ out_base+64(FP), DX
	MOVQ ostride+88(FP), R14
	MOVQ mask_base+96(FP), R11
	SHLQ $2, R14
	MOVQ CX, BX
	SHLQ $2, BX
	LEAQ (R8)(BX*1), R9
	LEAQ (R9)(BX*1), R10
	MOVQ CX, BX
	ANDQ $7, BX
	ANDQ $-8, CX
	SHLQ $2, CX
	TESTQ SI, SI
	JZ   done

group:
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15
	XORQ   AX, AX
	CMPQ   AX, CX
	JAE    tail

loop:
	VMOVUPS (R8)(AX*1), Y0
	VMOVUPS (R9)(AX*1), Y1
	VMOVUPS (R10)(AX*1), Y2
	STEP
	ADDQ    $32, AX
	ADDQ    $128, DI
	CMPQ    AX, CX
	JB      loop

tail:
	TESTQ      BX, BX
	JZ         store
	VMOVUPS    (R11), Y3
	VMASKMOVPS (R8)(AX*1), Y3, Y0
	VMASKMOVPS (R9)(AX*1), Y3, Y1
	VMASKMOVPS (R10)(AX*1), Y3, Y2
	STEP
	ADDQ       $128, DI

store:
	MOVQ    DX, AX
	STORE3(Y4, Y5, Y6, X4, X5, X6)
	ADDQ    R14, AX
	STORE3(Y7, Y8, Y9, X7, X8, X9)
	ADDQ    R14, AX
	STORE3(Y10, Y11, Y12, X10, X11, X12)
	ADDQ    R14, AX
	STORE3(Y13, Y14, Y15, X13, X14, X15)
	LEAQ    (DX)(R14*4), DX
	DECQ    SI
	JNZ     group

done:
	VZEROUPPER
	RET

// func firstBelowL2AVX2(dots, sq []float32, thr float32) int
// Scans the whole 16-float chunks of dots for the first j with
// sq[j] - 2*dots[j] <= thr (ordered: false for NaN) and returns it, or
// len(dots)&^15 when there is none. len(sq) >= len(dots).
TEXT ·firstBelowL2AVX2(SB), NOSPLIT, $0-64
	MOVQ         dots_base+0(FP), SI
	MOVQ         dots_len+8(FP), CX
	MOVQ         sq_base+24(FP), DI
	VBROADCASTSS thr+48(FP), Y1
	ANDQ         $-16, CX
	XORQ         AX, AX

below:
	CMPQ      AX, CX
	JAE       none
	VMOVUPS   (SI)(AX*4), Y2
	VMOVUPS   32(SI)(AX*4), Y4
	VADDPS    Y2, Y2, Y2
	VADDPS    Y4, Y4, Y4
	VMOVUPS   (DI)(AX*4), Y3
	VMOVUPS   32(DI)(AX*4), Y5
	VSUBPS    Y2, Y3, Y3
	VSUBPS    Y4, Y5, Y5
	VCMPPS    $0x12, Y1, Y3, Y3
	VCMPPS    $0x12, Y1, Y5, Y5
	VMOVMSKPS Y3, BX
	VMOVMSKPS Y5, DX
	SHLL      $8, DX
	ORL       DX, BX
	TESTL     BX, BX
	JNZ       found
	ADDQ      $16, AX
	JMP       below

found:
	BSFL BX, BX
	ADDQ BX, AX

none:
	MOVQ AX, ret+56(FP)
	VZEROUPPER
	RET
