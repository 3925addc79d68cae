//go:build !noasm

#include "textflag.h"

// HSUM16 reduces the sixteen lanes of Z0 into the low lane of X0, using Z1.
#define HSUM16 \
	VEXTRACTF64X4 $1, Z0, Y1; \
	VADDPS        Y1, Y0, Y0; \
	VEXTRACTF128  $1, Y0, X1; \
	VADDPS        X1, X0, X0; \
	VMOVHLPS      X0, X0, X1; \
	VADDPS        X1, X0, X0; \
	VMOVSHDUP     X0, X1; \
	VADDSS        X1, X0, X0

// TAILMASK sets K1 to the low CX bits, selecting a tail of CX < 16 lanes.
// It clobbers AX.
#define TAILMASK \
	MOVQ  $1, AX; \
	SHLQ  CX, AX; \
	DECQ  AX; \
	KMOVW AX, K1

// func l2AVX512(a, b []float32) float32
// Requires len(a) == len(b).
TEXT ·l2AVX512(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   a_len+8(FP), CX
	MOVQ   b_base+24(FP), DI
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	CMPQ   CX, $64
	JB     by16

by64:
	VMOVUPS     (SI), Z4
	VMOVUPS     64(SI), Z5
	VMOVUPS     128(SI), Z6
	VMOVUPS     192(SI), Z7
	VSUBPS      (DI), Z4, Z4
	VSUBPS      64(DI), Z5, Z5
	VSUBPS      128(DI), Z6, Z6
	VSUBPS      192(DI), Z7, Z7
	VFMADD231PS Z4, Z4, Z0
	VFMADD231PS Z5, Z5, Z1
	VFMADD231PS Z6, Z6, Z2
	VFMADD231PS Z7, Z7, Z3
	ADDQ        $256, SI
	ADDQ        $256, DI
	SUBQ        $64, CX
	CMPQ        CX, $64
	JAE         by64

by16:
	CMPQ        CX, $16
	JB          tail
	VMOVUPS     (SI), Z4
	VSUBPS      (DI), Z4, Z4
	VFMADD231PS Z4, Z4, Z0
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $16, CX
	JMP         by16

tail:
	TESTQ       CX, CX
	JZ          reduce
	TAILMASK
	VMOVUPS.Z   (SI), K1, Z4
	VMOVUPS.Z   (DI), K1, Z5
	VSUBPS      Z5, Z4, Z4
	VFMADD231PS Z4, Z4, Z1

reduce:
	VADDPS Z1, Z0, Z0
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z0, Z0
	HSUM16
	VZEROUPPER
	MOVSS  X0, ret+48(FP)
	RET

// func dotAVX512(a, b []float32) float32
// Requires len(a) == len(b).
TEXT ·dotAVX512(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   a_len+8(FP), CX
	MOVQ   b_base+24(FP), DI
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	CMPQ   CX, $64
	JB     by16

by64:
	VMOVUPS     (SI), Z4
	VMOVUPS     64(SI), Z5
	VMOVUPS     128(SI), Z6
	VMOVUPS     192(SI), Z7
	VFMADD231PS (DI), Z4, Z0
	VFMADD231PS 64(DI), Z5, Z1
	VFMADD231PS 128(DI), Z6, Z2
	VFMADD231PS 192(DI), Z7, Z3
	ADDQ        $256, SI
	ADDQ        $256, DI
	SUBQ        $64, CX
	CMPQ        CX, $64
	JAE         by64

by16:
	CMPQ        CX, $16
	JB          tail
	VMOVUPS     (SI), Z4
	VFMADD231PS (DI), Z4, Z0
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $16, CX
	JMP         by16

tail:
	TESTQ       CX, CX
	JZ          reduce
	TAILMASK
	VMOVUPS.Z   (SI), K1, Z4
	VMOVUPS.Z   (DI), K1, Z5
	VFMADD231PS Z5, Z4, Z1

reduce:
	VADDPS Z1, Z0, Z0
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z0, Z0
	HSUM16
	VZEROUPPER
	MOVSS  X0, ret+48(FP)
	RET

// BATCH4_SETUP prepares a four-row batch kernel whose arguments are loaded
// as DI = query, CX = len(q), R8 = data, DX = out and SI = len(out). It sets
// SI = number of four-row groups, BX = row stride in bytes, R12 = bytes
// covered by 32-lane steps, R13 = bytes covered by 16-lane steps,
// R14 = tail length (0..15) and K1 = tail mask.
#define BATCH4_SETUP \
	SHRQ $2, SI; \
	MOVQ CX, BX; \
	SHLQ $2, BX; \
	MOVQ CX, R12; \
	ANDQ $-32, R12; \
	SHLQ $2, R12; \
	MOVQ CX, R13; \
	ANDQ $-16, R13; \
	SHLQ $2, R13; \
	ANDQ $15, CX; \
	MOVQ CX, R14; \
	TAILMASK

// BATCH4_ROWS points R9..R11 at rows 1..3 of the group and clears the eight
// accumulators: Z0..Z3 and Z4..Z7 hold rows 0..3.
#define BATCH4_ROWS \
	LEAQ   (R8)(BX*1), R9; \
	LEAQ   (R9)(BX*1), R10; \
	LEAQ   (R10)(BX*1), R11; \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7; \
	XORQ   AX, AX

// BATCH4_STORE folds the accumulators of rows 0..3 into four sums, stores
// them at (DX), and advances DX and R8 to the next group.
#define BATCH4_STORE \
	VADDPS        Z4, Z0, Z0; \
	VADDPS        Z5, Z1, Z1; \
	VADDPS        Z6, Z2, Z2; \
	VADDPS        Z7, Z3, Z3; \
	VEXTRACTF64X4 $1, Z0, Y4; \
	VEXTRACTF64X4 $1, Z1, Y5; \
	VEXTRACTF64X4 $1, Z2, Y6; \
	VEXTRACTF64X4 $1, Z3, Y7; \
	VADDPS        Y4, Y0, Y0; \
	VADDPS        Y5, Y1, Y1; \
	VADDPS        Y6, Y2, Y2; \
	VADDPS        Y7, Y3, Y3; \
	VHADDPS       Y1, Y0, Y8; \
	VHADDPS       Y3, Y2, Y9; \
	VHADDPS       Y9, Y8, Y8; \
	VEXTRACTF128  $1, Y8, X9; \
	VADDPS        X9, X8, X8; \
	VMOVUPS       X8, (DX); \
	ADDQ          $16, DX; \
	LEAQ          (R11)(BX*1), R8

// L2STEP accumulates the squared difference of query lanes Q and the row at
// PTR+OFF into ACC, using T.
#define L2STEP(OFF, PTR, Q, T, ACC) \
	VSUBPS      OFF(PTR)(AX*1), Q, T; \
	VFMADD231PS T, T, ACC

// func l2Batch4AVX512(q, data, out []float32)
// Requires len(q) > 0, len(out) % 4 == 0 and len(data) == len(q)*len(out).
TEXT ·l2Batch4AVX512(SB), NOSPLIT, $0-72
	MOVQ q_base+0(FP), DI
	MOVQ q_len+8(FP), CX
	MOVQ data_base+24(FP), R8
	MOVQ out_base+48(FP), DX
	MOVQ out_len+56(FP), SI
	BATCH4_SETUP
	TESTQ SI, SI
	JZ    done

group:
	BATCH4_ROWS
	CMPQ AX, R12
	JAE  by16

by32:
	VMOVUPS (DI)(AX*1), Z8
	VMOVUPS 64(DI)(AX*1), Z9
	L2STEP(0, R8, Z8, Z10, Z0)
	L2STEP(64, R8, Z9, Z11, Z4)
	L2STEP(0, R9, Z8, Z12, Z1)
	L2STEP(64, R9, Z9, Z13, Z5)
	L2STEP(0, R10, Z8, Z14, Z2)
	L2STEP(64, R10, Z9, Z15, Z6)
	L2STEP(0, R11, Z8, Z16, Z3)
	L2STEP(64, R11, Z9, Z17, Z7)
	ADDQ    $128, AX
	CMPQ    AX, R12
	JB      by32

by16:
	CMPQ    AX, R13
	JAE     tail
	VMOVUPS (DI)(AX*1), Z8
	L2STEP(0, R8, Z8, Z10, Z0)
	L2STEP(0, R9, Z8, Z11, Z1)
	L2STEP(0, R10, Z8, Z12, Z2)
	L2STEP(0, R11, Z8, Z13, Z3)
	ADDQ    $64, AX

tail:
	TESTQ       R14, R14
	JZ          store
	VMOVUPS.Z   (DI)(AX*1), K1, Z8
	VMOVUPS.Z   (R8)(AX*1), K1, Z10
	VMOVUPS.Z   (R9)(AX*1), K1, Z11
	VMOVUPS.Z   (R10)(AX*1), K1, Z12
	VMOVUPS.Z   (R11)(AX*1), K1, Z13
	VSUBPS      Z10, Z8, Z10
	VSUBPS      Z11, Z8, Z11
	VSUBPS      Z12, Z8, Z12
	VSUBPS      Z13, Z8, Z13
	VFMADD231PS Z10, Z10, Z4
	VFMADD231PS Z11, Z11, Z5
	VFMADD231PS Z12, Z12, Z6
	VFMADD231PS Z13, Z13, Z7

store:
	BATCH4_STORE
	DECQ SI
	JNZ  group

done:
	VZEROUPPER
	RET

// func dotBatch4AVX512(q, data, out []float32)
// Requires len(q) > 0, len(out) % 4 == 0 and len(data) == len(q)*len(out).
TEXT ·dotBatch4AVX512(SB), NOSPLIT, $0-72
	MOVQ q_base+0(FP), DI
	MOVQ q_len+8(FP), CX
	MOVQ data_base+24(FP), R8
	MOVQ out_base+48(FP), DX
	MOVQ out_len+56(FP), SI
	BATCH4_SETUP
	TESTQ SI, SI
	JZ    done

group:
	BATCH4_ROWS
	CMPQ AX, R12
	JAE  by16

by32:
	VMOVUPS     (DI)(AX*1), Z8
	VMOVUPS     64(DI)(AX*1), Z9
	VFMADD231PS (R8)(AX*1), Z8, Z0
	VFMADD231PS 64(R8)(AX*1), Z9, Z4
	VFMADD231PS (R9)(AX*1), Z8, Z1
	VFMADD231PS 64(R9)(AX*1), Z9, Z5
	VFMADD231PS (R10)(AX*1), Z8, Z2
	VFMADD231PS 64(R10)(AX*1), Z9, Z6
	VFMADD231PS (R11)(AX*1), Z8, Z3
	VFMADD231PS 64(R11)(AX*1), Z9, Z7
	ADDQ        $128, AX
	CMPQ        AX, R12
	JB          by32

by16:
	CMPQ        AX, R13
	JAE         tail
	VMOVUPS     (DI)(AX*1), Z8
	VFMADD231PS (R8)(AX*1), Z8, Z0
	VFMADD231PS (R9)(AX*1), Z8, Z1
	VFMADD231PS (R10)(AX*1), Z8, Z2
	VFMADD231PS (R11)(AX*1), Z8, Z3
	ADDQ        $64, AX

tail:
	TESTQ       R14, R14
	JZ          store
	VMOVUPS.Z   (DI)(AX*1), K1, Z8
	VMOVUPS.Z   (R8)(AX*1), K1, Z10
	VMOVUPS.Z   (R9)(AX*1), K1, Z11
	VMOVUPS.Z   (R10)(AX*1), K1, Z12
	VMOVUPS.Z   (R11)(AX*1), K1, Z13
	VFMADD231PS Z10, Z8, Z4
	VFMADD231PS Z11, Z8, Z5
	VFMADD231PS Z12, Z8, Z6
	VFMADD231PS Z13, Z8, Z7

store:
	BATCH4_STORE
	DECQ SI
	JNZ  group

done:
	VZEROUPPER
	RET
