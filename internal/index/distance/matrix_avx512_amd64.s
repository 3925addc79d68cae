//go:build !noasm

#include "textflag.h"

// Matrix (many-query) dot-product tile kernel for AVX-512F; see matrix.go.

// RED4 folds the sixteen lanes of each of A, B, C, D into one sum and leaves
// the four sums, in that order, in X0. It clobbers Y0..Y3.
#define RED4(A, B, C, D, YA, YB, YC, YD) \
	VEXTRACTF64X4 $1, A, Y0; \
	VEXTRACTF64X4 $1, B, Y1; \
	VEXTRACTF64X4 $1, C, Y2; \
	VEXTRACTF64X4 $1, D, Y3; \
	VADDPS        YA, Y0, Y0; \
	VADDPS        YB, Y1, Y1; \
	VADDPS        YC, Y2, Y2; \
	VADDPS        YD, Y3, Y3; \
	VHADDPS       Y1, Y0, Y0; \
	VHADDPS       Y3, Y2, Y2; \
	VHADDPS       Y2, Y0, Y0; \
	VEXTRACTF128  $1, Y0, X1; \
	VADDPS        X1, X0, X0

// STORE6 reduces the six accumulators of one query and stores the six dot
// products at (AX).
#define STORE6(A0, A1, A2, A3, A4, A5, YA0, YA1, YA2, YA3, YA4, YA5) \
	RED4(A0, A1, A2, A3, YA0, YA1, YA2, YA3); \
	VMOVUPS X0, (AX); \
	RED4(A4, A5, A4, A5, YA4, YA5, YA4, YA5); \
	VMOVSD  X0, 16(AX)

// STEP multiplies the six row chunks in Z0..Z5 with the four query chunks at
// (DI), 64(DI), 128(DI) and 192(DI) into the accumulators Z8..Z31; STEP2
// does the same with the next four chunks, at 256(DI)..448(DI).
#define STEP \
	VMOVUPS     0(DI), Z6; \
	VFMADD231PS Z0, Z6, Z8; \
	VFMADD231PS Z1, Z6, Z9; \
	VFMADD231PS Z2, Z6, Z10; \
	VFMADD231PS Z3, Z6, Z11; \
	VFMADD231PS Z4, Z6, Z12; \
	VFMADD231PS Z5, Z6, Z13; \
	VMOVUPS     64(DI), Z7; \
	VFMADD231PS Z0, Z7, Z14; \
	VFMADD231PS Z1, Z7, Z15; \
	VFMADD231PS Z2, Z7, Z16; \
	VFMADD231PS Z3, Z7, Z17; \
	VFMADD231PS Z4, Z7, Z18; \
	VFMADD231PS Z5, Z7, Z19; \
	VMOVUPS     128(DI), Z6; \
	VFMADD231PS Z0, Z6, Z20; \
	VFMADD231PS Z1, Z6, Z21; \
	VFMADD231PS Z2, Z6, Z22; \
	VFMADD231PS Z3, Z6, Z23; \
	VFMADD231PS Z4, Z6, Z24; \
	VFMADD231PS Z5, Z6, Z25; \
	VMOVUPS     192(DI), Z7; \
	VFMADD231PS Z0, Z7, Z26; \
	VFMADD231PS Z1, Z7, Z27; \
	VFMADD231PS Z2, Z7, Z28; \
	VFMADD231PS Z3, Z7, Z29; \
	VFMADD231PS Z4, Z7, Z30; \
	VFMADD231PS Z5, Z7, Z31

#define STEP2 \
	VMOVUPS     256(DI), Z6; \
	VFMADD231PS Z0, Z6, Z8; \
	VFMADD231PS Z1, Z6, Z9; \
	VFMADD231PS Z2, Z6, Z10; \
	VFMADD231PS Z3, Z6, Z11; \
	VFMADD231PS Z4, Z6, Z12; \
	VFMADD231PS Z5, Z6, Z13; \
	VMOVUPS     320(DI), Z7; \
	VFMADD231PS Z0, Z7, Z14; \
	VFMADD231PS Z1, Z7, Z15; \
	VFMADD231PS Z2, Z7, Z16; \
	VFMADD231PS Z3, Z7, Z17; \
	VFMADD231PS Z4, Z7, Z18; \
	VFMADD231PS Z5, Z7, Z19; \
	VMOVUPS     384(DI), Z6; \
	VFMADD231PS Z0, Z6, Z20; \
	VFMADD231PS Z1, Z6, Z21; \
	VFMADD231PS Z2, Z6, Z22; \
	VFMADD231PS Z3, Z6, Z23; \
	VFMADD231PS Z4, Z6, Z24; \
	VFMADD231PS Z5, Z6, Z25; \
	VMOVUPS     448(DI), Z7; \
	VFMADD231PS Z0, Z7, Z26; \
	VFMADD231PS Z1, Z7, Z27; \
	VFMADD231PS Z2, Z7, Z28; \
	VFMADD231PS Z3, Z7, Z29; \
	VFMADD231PS Z4, Z7, Z30; \
	VFMADD231PS Z5, Z7, Z31

// func dotTileAVX512(x []float32, dim int, q []float32, groups int, out []float32, ostride int, next []float32)
// x holds six rows of dim floats; q holds groups packed groups of four
// queries (matrix.go, packQueries, 16 lanes). For query i of the groups and
// row j it stores the dot product at out[i*ostride+j]. Meanwhile it
// prefetches next (the following tile's rows) into the L2 cache, one cache
// line per step, so that the next call finds its rows there. The main loop
// does two steps (32 coordinates) per iteration.
TEXT ·dotTileAVX512(SB), NOSPLIT, $16-120
	MOVQ  next_base+96(FP), R15
	MOVQ  next_len+104(FP), AX
	LEAQ  (R15)(AX*4), AX
	MOVQ  AX, pfend-8(SP)
	MOVQ  x_base+0(FP), R8
	MOVQ  dim+24(FP), CX
	MOVQ  q_base+32(FP), DI
	MOVQ  groups+56(FP), SI
	MOVQ  out_base+64(FP), DX
	MOVQ  ostride+88(FP), R14
	SHLQ  $2, R14
	MOVQ  CX, BX
	SHLQ  $2, BX
	LEAQ  (R8)(BX*1), R9
	LEAQ  (R9)(BX*1), R10
	LEAQ  (R10)(BX*1), R11
	LEAQ  (R11)(BX*1), R12
	LEAQ  (R12)(BX*1), R13
	MOVQ  CX, BX
	ANDQ  $15, BX
	ANDQ  $-16, CX
	SHLQ  $2, CX
	XCHGQ BX, CX
	MOVQ  $1, AX
	SHLQ  CX, AX
	DECQ  AX
	KMOVW AX, K1
	XCHGQ BX, CX
	LEAQ  -128(CX), AX
	MOVQ  AX, lim2-16(SP)
	TESTQ SI, SI
	JZ    done

group:
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	VPXORD Z24, Z24, Z24
	VPXORD Z25, Z25, Z25
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27
	VPXORD Z28, Z28, Z28
	VPXORD Z29, Z29, Z29
	VPXORD Z30, Z30, Z30
	VPXORD Z31, Z31, Z31
	XORQ   AX, AX
	CMPQ   AX, lim2-16(SP)
	JGT    one

loop:
	VMOVUPS (R8)(AX*1), Z0
	VMOVUPS (R9)(AX*1), Z1
	VMOVUPS (R10)(AX*1), Z2
	VMOVUPS (R11)(AX*1), Z3
	VMOVUPS (R12)(AX*1), Z4
	VMOVUPS (R13)(AX*1), Z5
	STEP
	VMOVUPS 64(R8)(AX*1), Z0
	VMOVUPS 64(R9)(AX*1), Z1
	VMOVUPS 64(R10)(AX*1), Z2
	VMOVUPS 64(R11)(AX*1), Z3
	VMOVUPS 64(R12)(AX*1), Z4
	VMOVUPS 64(R13)(AX*1), Z5
	STEP2
	CMPQ    R15, pfend-8(SP)
	JAE     nopf
	PREFETCHT1 (R15)
	PREFETCHT1 64(R15)
	ADDQ    $128, R15

nopf:
	ADDQ    $128, AX
	ADDQ    $512, DI
	CMPQ    AX, lim2-16(SP)
	JLE     loop

one:
	CMPQ    AX, CX
	JAE     tail
	VMOVUPS (R8)(AX*1), Z0
	VMOVUPS (R9)(AX*1), Z1
	VMOVUPS (R10)(AX*1), Z2
	VMOVUPS (R11)(AX*1), Z3
	VMOVUPS (R12)(AX*1), Z4
	VMOVUPS (R13)(AX*1), Z5
	STEP
	ADDQ    $64, AX
	ADDQ    $256, DI

tail:
	TESTQ     BX, BX
	JZ        store
	VMOVUPS.Z (R8)(AX*1), K1, Z0
	VMOVUPS.Z (R9)(AX*1), K1, Z1
	VMOVUPS.Z (R10)(AX*1), K1, Z2
	VMOVUPS.Z (R11)(AX*1), K1, Z3
	VMOVUPS.Z (R12)(AX*1), K1, Z4
	VMOVUPS.Z (R13)(AX*1), K1, Z5
	STEP
	ADDQ      $256, DI

store:
	MOVQ    DX, AX
	STORE6(Z8, Z9, Z10, Z11, Z12, Z13, Y8, Y9, Y10, Y11, Y12, Y13)
	ADDQ    R14, AX
	STORE6(Z14, Z15, Z16, Z17, Z18, Z19, Y14, Y15, Y16, Y17, Y18, Y19)
	ADDQ    R14, AX
	STORE6(Z20, Z21, Z22, Z23, Z24, Z25, Y20, Y21, Y22, Y23, Y24, Y25)
	ADDQ    R14, AX
	STORE6(Z26, Z27, Z28, Z29, Z30, Z31, Y26, Y27, Y28, Y29, Y30, Y31)
	LEAQ    (DX)(R14*4), DX
	DECQ    SI
	JNZ     group

done:
	VZEROUPPER
	RET
