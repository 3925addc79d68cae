//go:build !noasm

#include "textflag.h"

// Kernels of the IVF list scans; see kernels.go for the contracts and the
// pure-Go references. Every row kernel takes q (and scale) of length d, a
// multiple of 16, and codes holding len(out) rows of stride bytes (stride
// >= d); it reads the first d bytes of each row. Four rows run together so
// that each chunk of q and scale is loaded once per four rows and the four
// accumulators hide the FMA latency.

// Z-register horizontal sum of Z into the low lane of X, using ZT/YT/XT.
#define HSUM16(Z, Y, X, ZT, YT, XT) \
	VEXTRACTF64X4 $1, Z, YT; \
	VADDPS        YT, Y, Y; \
	VEXTRACTF128  $1, Y, XT; \
	VADDPS        XT, X, X; \
	VMOVHLPS      X, X, XT; \
	VADDPS        XT, X, X; \
	VMOVSHDUP     X, XT; \
	VADDSS        XT, X, X

// Y-register horizontal sum of Y into the low lane of X, using XT.
#define HSUM8(Y, X, XT) \
	VEXTRACTF128 $1, Y, XT; \
	VADDPS       XT, X, X; \
	VMOVHLPS     X, X, XT; \
	VADDPS       XT, X, X; \
	VMOVSHDUP    X, XT; \
	VADDSS       XT, X, X

// L2 step: ACC += (Q - S*float(code))^2 for the codes at PTR+AX.
#define L2STEP512(PTR, Q, S, T, ACC) \
	VPMOVZXBD    (PTR)(AX*1), T; \
	VCVTDQ2PS    T, T; \
	VFNMADD213PS Q, S, T; \
	VFMADD231PS  T, T, ACC

// Dot step: ACC += Q*float(code) for the codes at PTR+AX.
#define DOTSTEP512(PTR, Q, T, ACC) \
	VPMOVZXBD   (PTR)(AX*1), T; \
	VCVTDQ2PS   T, T; \
	VFMADD231PS Q, T, ACC

#define L2STEP256(PTR, Q, S, T, ACC) \
	VPMOVZXBD    (PTR)(AX*1), T; \
	VCVTDQ2PS    T, T; \
	VFNMADD213PS Q, S, T; \
	VFMADD231PS  T, T, ACC

#define DOTSTEP256(PTR, Q, T, ACC) \
	VPMOVZXBD   (PTR)(AX*1), T; \
	VCVTDQ2PS   T, T; \
	VFMADD231PS Q, T, ACC

// Argument loading shared by the kernels: DI = q, R12 = scale, CX = d,
// R8 = codes, BX = stride, DX = out, SI = rows.
#define ARGS \
	MOVQ q_base+0(FP), DI; \
	MOVQ q_len+8(FP), CX; \
	MOVQ scale_base+24(FP), R12; \
	MOVQ codes_base+48(FP), R8; \
	MOVQ stride+72(FP), BX; \
	MOVQ out_base+80(FP), DX; \
	MOVQ out_len+88(FP), SI

// func sq8L2AVX512(q, scale []float32, codes []byte, stride int, out []float32)
TEXT ·sq8L2AVX512(SB), NOSPLIT, $0-104
	ARGS
	CMPQ SI, $4
	JB   one

four:
	LEAQ   (R8)(BX*1), R9
	LEAQ   (R9)(BX*1), R10
	LEAQ   (R10)(BX*1), R11
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	XORQ   AX, AX

four16:
	VMOVUPS (DI)(AX*4), Z8
	VMOVUPS (R12)(AX*4), Z9
	L2STEP512(R8, Z8, Z9, Z10, Z0)
	L2STEP512(R9, Z8, Z9, Z11, Z1)
	L2STEP512(R10, Z8, Z9, Z12, Z2)
	L2STEP512(R11, Z8, Z9, Z13, Z3)
	ADDQ    $16, AX
	CMPQ    AX, CX
	JB      four16

	HSUM16(Z0, Y0, X0, Z4, Y4, X4)
	HSUM16(Z1, Y1, X1, Z5, Y5, X5)
	HSUM16(Z2, Y2, X2, Z6, Y6, X6)
	HSUM16(Z3, Y3, X3, Z7, Y7, X7)
	VMOVSS X0, (DX)
	VMOVSS X1, 4(DX)
	VMOVSS X2, 8(DX)
	VMOVSS X3, 12(DX)
	LEAQ   (R11)(BX*1), R8
	ADDQ   $16, DX
	SUBQ   $4, SI
	CMPQ   SI, $4
	JAE    four

one:
	TESTQ SI, SI
	JZ    done

one1:
	VPXORD Z0, Z0, Z0
	XORQ   AX, AX

one16:
	VMOVUPS (DI)(AX*4), Z8
	VMOVUPS (R12)(AX*4), Z9
	L2STEP512(R8, Z8, Z9, Z10, Z0)
	ADDQ    $16, AX
	CMPQ    AX, CX
	JB      one16

	HSUM16(Z0, Y0, X0, Z4, Y4, X4)
	VMOVSS X0, (DX)
	ADDQ   BX, R8
	ADDQ   $4, DX
	DECQ   SI
	JNZ    one1

done:
	VZEROUPPER
	RET

// func sq8DotAVX512(q, scale []float32, codes []byte, stride int, out []float32)
// scale is not read.
TEXT ·sq8DotAVX512(SB), NOSPLIT, $0-104
	ARGS
	CMPQ SI, $4
	JB   one

four:
	LEAQ   (R8)(BX*1), R9
	LEAQ   (R9)(BX*1), R10
	LEAQ   (R10)(BX*1), R11
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	XORQ   AX, AX

four16:
	VMOVUPS (DI)(AX*4), Z8
	DOTSTEP512(R8, Z8, Z10, Z0)
	DOTSTEP512(R9, Z8, Z11, Z1)
	DOTSTEP512(R10, Z8, Z12, Z2)
	DOTSTEP512(R11, Z8, Z13, Z3)
	ADDQ    $16, AX
	CMPQ    AX, CX
	JB      four16

	HSUM16(Z0, Y0, X0, Z4, Y4, X4)
	HSUM16(Z1, Y1, X1, Z5, Y5, X5)
	HSUM16(Z2, Y2, X2, Z6, Y6, X6)
	HSUM16(Z3, Y3, X3, Z7, Y7, X7)
	VMOVSS X0, (DX)
	VMOVSS X1, 4(DX)
	VMOVSS X2, 8(DX)
	VMOVSS X3, 12(DX)
	LEAQ   (R11)(BX*1), R8
	ADDQ   $16, DX
	SUBQ   $4, SI
	CMPQ   SI, $4
	JAE    four

one:
	TESTQ SI, SI
	JZ    done

one1:
	VPXORD Z0, Z0, Z0
	XORQ   AX, AX

one16:
	VMOVUPS (DI)(AX*4), Z8
	DOTSTEP512(R8, Z8, Z10, Z0)
	ADDQ    $16, AX
	CMPQ    AX, CX
	JB      one16

	HSUM16(Z0, Y0, X0, Z4, Y4, X4)
	VMOVSS X0, (DX)
	ADDQ   BX, R8
	ADDQ   $4, DX
	DECQ   SI
	JNZ    one1

done:
	VZEROUPPER
	RET

// func sq8L2AVX2(q, scale []float32, codes []byte, stride int, out []float32)
TEXT ·sq8L2AVX2(SB), NOSPLIT, $0-104
	ARGS
	CMPQ SI, $4
	JB   one

four:
	LEAQ   (R8)(BX*1), R9
	LEAQ   (R9)(BX*1), R10
	LEAQ   (R10)(BX*1), R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX

four8:
	VMOVUPS (DI)(AX*4), Y8
	VMOVUPS (R12)(AX*4), Y9
	L2STEP256(R8, Y8, Y9, Y10, Y0)
	L2STEP256(R9, Y8, Y9, Y11, Y1)
	L2STEP256(R10, Y8, Y9, Y12, Y2)
	L2STEP256(R11, Y8, Y9, Y13, Y3)
	ADDQ    $8, AX
	CMPQ    AX, CX
	JB      four8

	HSUM8(Y0, X0, X4)
	HSUM8(Y1, X1, X5)
	HSUM8(Y2, X2, X6)
	HSUM8(Y3, X3, X7)
	VMOVSS X0, (DX)
	VMOVSS X1, 4(DX)
	VMOVSS X2, 8(DX)
	VMOVSS X3, 12(DX)
	LEAQ   (R11)(BX*1), R8
	ADDQ   $16, DX
	SUBQ   $4, SI
	CMPQ   SI, $4
	JAE    four

one:
	TESTQ SI, SI
	JZ    done

one1:
	VXORPS Y0, Y0, Y0
	XORQ   AX, AX

one8:
	VMOVUPS (DI)(AX*4), Y8
	VMOVUPS (R12)(AX*4), Y9
	L2STEP256(R8, Y8, Y9, Y10, Y0)
	ADDQ    $8, AX
	CMPQ    AX, CX
	JB      one8

	HSUM8(Y0, X0, X4)
	VMOVSS X0, (DX)
	ADDQ   BX, R8
	ADDQ   $4, DX
	DECQ   SI
	JNZ    one1

done:
	VZEROUPPER
	RET

// func sq8DotAVX2(q, scale []float32, codes []byte, stride int, out []float32)
// scale is not read.
TEXT ·sq8DotAVX2(SB), NOSPLIT, $0-104
	ARGS
	CMPQ SI, $4
	JB   one

four:
	LEAQ   (R8)(BX*1), R9
	LEAQ   (R9)(BX*1), R10
	LEAQ   (R10)(BX*1), R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX

four8:
	VMOVUPS (DI)(AX*4), Y8
	DOTSTEP256(R8, Y8, Y10, Y0)
	DOTSTEP256(R9, Y8, Y11, Y1)
	DOTSTEP256(R10, Y8, Y12, Y2)
	DOTSTEP256(R11, Y8, Y13, Y3)
	ADDQ    $8, AX
	CMPQ    AX, CX
	JB      four8

	HSUM8(Y0, X0, X4)
	HSUM8(Y1, X1, X5)
	HSUM8(Y2, X2, X6)
	HSUM8(Y3, X3, X7)
	VMOVSS X0, (DX)
	VMOVSS X1, 4(DX)
	VMOVSS X2, 8(DX)
	VMOVSS X3, 12(DX)
	LEAQ   (R11)(BX*1), R8
	ADDQ   $16, DX
	SUBQ   $4, SI
	CMPQ   SI, $4
	JAE    four

one:
	TESTQ SI, SI
	JZ    done

one1:
	VXORPS Y0, Y0, Y0
	XORQ   AX, AX

one8:
	VMOVUPS (DI)(AX*4), Y8
	DOTSTEP256(R8, Y8, Y10, Y0)
	ADDQ    $8, AX
	CMPQ    AX, CX
	JB      one8

	HSUM8(Y0, X0, X4)
	VMOVSS X0, (DX)
	ADDQ   BX, R8
	ADDQ   $4, DX
	DECQ   SI
	JNZ    one1

done:
	VZEROUPPER
	RET

// func addAVX512(a, b, out []float32)
// out[i] = a[i] + b[i]; requires len(a) == len(b) == len(out), a multiple
// of 16.
TEXT ·addAVX512(SB), NOSPLIT, $0-72
	MOVQ  a_base+0(FP), SI
	MOVQ  b_base+24(FP), DI
	MOVQ  out_base+48(FP), DX
	MOVQ  out_len+56(FP), CX
	XORQ  AX, AX
	TESTQ CX, CX
	JZ    adone

aloop:
	VMOVUPS (SI)(AX*4), Z0
	VADDPS  (DI)(AX*4), Z0, Z0
	VMOVUPS Z0, (DX)(AX*4)
	ADDQ    $16, AX
	CMPQ    AX, CX
	JB      aloop

adone:
	VZEROUPPER
	RET

// func addAVX2(a, b, out []float32)
// out[i] = a[i] + b[i]; requires len(a) == len(b) == len(out), a multiple
// of 16.
TEXT ·addAVX2(SB), NOSPLIT, $0-72
	MOVQ  a_base+0(FP), SI
	MOVQ  b_base+24(FP), DI
	MOVQ  out_base+48(FP), DX
	MOVQ  out_len+56(FP), CX
	XORQ  AX, AX
	TESTQ CX, CX
	JZ    adone

aloop:
	VMOVUPS (SI)(AX*4), Y0
	VADDPS  (DI)(AX*4), Y0, Y0
	VMOVUPS Y0, (DX)(AX*4)
	VMOVUPS 32(SI)(AX*4), Y1
	VADDPS  32(DI)(AX*4), Y1, Y1
	VMOVUPS Y1, 32(DX)(AX*4)
	ADDQ    $16, AX
	CMPQ    AX, CX
	JB      aloop

adone:
	VZEROUPPER
	RET

// func pqInnerAVX512(a, t, out []float32)
// out[c] = sum_d a[d]*t[d*len(out)+c]; requires len(out) to be a multiple
// of 16 and len(t) == len(a)*len(out).
TEXT ·pqInnerAVX512(SB), NOSPLIT, $0-72
	MOVQ a_base+0(FP), SI
	MOVQ a_len+8(FP), CX
	MOVQ t_base+24(FP), DI
	MOVQ out_base+48(FP), DX
	MOVQ out_len+56(FP), R8
	SHLQ $2, R8
	XORQ R9, R9

ichunk:
	CMPQ   R9, R8
	JAE    idone
	VPXORD Z0, Z0, Z0
	LEAQ   (DI)(R9*1), R10
	XORQ   AX, AX

idim:
	VBROADCASTSS (SI)(AX*4), Z8
	VFMADD231PS  (R10), Z8, Z0
	ADDQ         R8, R10
	INCQ         AX
	CMPQ         AX, CX
	JB           idim
	VMOVUPS      Z0, (DX)(R9*1)
	ADDQ         $64, R9
	JMP          ichunk

idone:
	VZEROUPPER
	RET

// func pqInnerAVX2(a, t, out []float32)
// out[c] = sum_d a[d]*t[d*len(out)+c]; requires len(out) to be a multiple
// of 16 and len(t) == len(a)*len(out).
TEXT ·pqInnerAVX2(SB), NOSPLIT, $0-72
	MOVQ a_base+0(FP), SI
	MOVQ a_len+8(FP), CX
	MOVQ t_base+24(FP), DI
	MOVQ out_base+48(FP), DX
	MOVQ out_len+56(FP), R8
	SHLQ $2, R8
	XORQ R9, R9

ichunk:
	CMPQ   R9, R8
	JAE    idone
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	LEAQ   (DI)(R9*1), R10
	XORQ   AX, AX

idim:
	VBROADCASTSS (SI)(AX*4), Y8
	VFMADD231PS  (R10), Y8, Y0
	VFMADD231PS  32(R10), Y8, Y1
	ADDQ         R8, R10
	INCQ         AX
	CMPQ         AX, CX
	JB           idim
	VMOVUPS      Y0, (DX)(R9*1)
	VMOVUPS      Y1, 32(DX)(R9*1)
	ADDQ         $64, R9
	JMP          ichunk

idone:
	VZEROUPPER
	RET

// One table look-up: ACC += tab[OFF/1024 + j][code[j+COFF]].
#define LOOKUP(COFF, OFF, R, ACC) \
	MOVBLZX COFF(SI), R; \
	ADDSS   OFF(R10)(R*4), ACC

// func pqScan8Asm(tab []float32, codes []byte, m, stride int, out []float32)
// out[i] += (a0+a1) + (a2+a3), where a_r sums, in ascending j, the look-ups
// tab[j*256 + codes[i*stride+j]] of the sub-spaces j < m with j%4 == r among
// the first m&^3, and a0 also those of the last m%4: the additions of
// pqScan8Generic, in its order, so the results are identical.
// Requires len(tab) >= m*256 and codes to hold len(out) rows of stride
// bytes, the last at least m.
TEXT ·pqScan8Asm(SB), NOSPLIT, $0-88
	MOVQ  tab_base+0(FP), DI
	MOVQ  codes_base+24(FP), R14
	MOVQ  m+48(FP), CX
	MOVQ  stride+56(FP), R13
	MOVQ  out_base+64(FP), DX
	MOVQ  out_len+72(FP), R8
	TESTQ R8, R8
	JZ    pdone

prow:
	XORPS X0, X0
	XORPS X1, X1
	XORPS X2, X2
	XORPS X3, X3
	MOVQ  R14, SI
	MOVQ  DI, R10
	MOVQ  CX, R9
	CMPQ  R9, $4
	JB    p1

p4:
	LOOKUP(0, 0, AX, X0)
	LOOKUP(1, 1024, BX, X1)
	LOOKUP(2, 2048, R11, X2)
	LOOKUP(3, 3072, R12, X3)
	ADDQ $4, SI
	ADDQ $4096, R10
	SUBQ $4, R9
	CMPQ R9, $4
	JAE  p4

p1:
	TESTQ R9, R9
	JZ    psum
	LOOKUP(0, 0, AX, X0)
	INCQ  SI
	ADDQ  $1024, R10
	DECQ  R9
	JMP   p1

psum:
	ADDSS X1, X0
	ADDSS X3, X2
	ADDSS X2, X0
	ADDSS (DX), X0
	MOVSS X0, (DX)
	ADDQ  R13, R14
	ADDQ  $4, DX
	DECQ  R8
	JNZ   prow

pdone:
	RET

// LOOKUP2 does look-up COFF of two rows, whose codes are at SI and SI+R13
// (R13 = stride), into ACC and ACC2.
#define LOOKUP2(COFF, OFF, R, S, ACC, ACC2) \
	MOVBLZX COFF(SI), R; \
	MOVBLZX COFF(SI)(R13*1), S; \
	ADDSS   OFF(R10)(R*4), ACC; \
	ADDSS   OFF(R10)(S*4), ACC2

// func pqScan8x2Asm(tab []float32, codes []byte, m, stride int, out []float32)
// pqScan8Asm over two rows at a time (same additions, same order), which
// shares the table pointer and loop overhead and gives more independent
// loads. Requires len(out) even and the bounds of pqScan8Asm.
TEXT ·pqScan8x2Asm(SB), NOSPLIT, $0-88
	MOVQ tab_base+0(FP), DI
	MOVQ codes_base+24(FP), R14
	MOVQ m+48(FP), CX
	MOVQ stride+56(FP), R13
	MOVQ out_base+64(FP), DX
	MOVQ out_len+72(FP), R8
	SHRQ $1, R8
	JZ   qdone
	LEAQ (R13)(R13*1), R15

qrow:
	XORPS X0, X0
	XORPS X1, X1
	XORPS X2, X2
	XORPS X3, X3
	XORPS X4, X4
	XORPS X5, X5
	XORPS X6, X6
	XORPS X7, X7
	MOVQ  R14, SI
	MOVQ  DI, R10
	MOVQ  CX, R9
	CMPQ  R9, $4
	JB    q1

q4:
	LOOKUP2(0, 0, AX, BX, X0, X4)
	LOOKUP2(1, 1024, R11, R12, X1, X5)
	LOOKUP2(2, 2048, AX, BX, X2, X6)
	LOOKUP2(3, 3072, R11, R12, X3, X7)
	ADDQ $4, SI
	ADDQ $4096, R10
	SUBQ $4, R9
	CMPQ R9, $4
	JAE  q4

q1:
	TESTQ R9, R9
	JZ    qsum
	LOOKUP2(0, 0, AX, BX, X0, X4)
	INCQ  SI
	ADDQ  $1024, R10
	DECQ  R9
	JMP   q1

qsum:
	ADDSS X1, X0
	ADDSS X3, X2
	ADDSS X2, X0
	ADDSS (DX), X0
	MOVSS X0, (DX)
	ADDSS X5, X4
	ADDSS X7, X6
	ADDSS X6, X4
	ADDSS 4(DX), X4
	MOVSS X4, 4(DX)
	ADDQ  R15, R14
	ADDQ  $8, DX
	DECQ  R8
	JNZ   qrow

qdone:
	RET

// Lane indices 0..15 of the two argmin chains.
DATA argminIota<>+0(SB)/4, $0
DATA argminIota<>+4(SB)/4, $1
DATA argminIota<>+8(SB)/4, $2
DATA argminIota<>+12(SB)/4, $3
DATA argminIota<>+16(SB)/4, $4
DATA argminIota<>+20(SB)/4, $5
DATA argminIota<>+24(SB)/4, $6
DATA argminIota<>+28(SB)/4, $7
DATA argminIota<>+32(SB)/4, $8
DATA argminIota<>+36(SB)/4, $9
DATA argminIota<>+40(SB)/4, $10
DATA argminIota<>+44(SB)/4, $11
DATA argminIota<>+48(SB)/4, $12
DATA argminIota<>+52(SB)/4, $13
DATA argminIota<>+56(SB)/4, $14
DATA argminIota<>+60(SB)/4, $15
GLOBL argminIota<>(SB), RODATA|NOPTR, $64

// func argminL2AVX2(dots, norms []float32, vals *[16]float32, idx *[16]int32)
// Over the whole 16-float chunks of dots, lane l (0..15) keeps the least
// key norms[c] - 2*dots[c] of the c = l mod 16 and the first c that has it
// (ordered compares: a NaN key never wins); a lane with no key below +Inf
// keeps +Inf and index 0. It stores the sixteen minima at vals and their
// indices at idx. Two chains of eight lanes (Y4/Y8 and Y5/Y9) hide the
// compare latency. len(norms) >= len(dots).
TEXT ·argminL2AVX2(SB), NOSPLIT, $0-64
	MOVQ         dots_base+0(FP), SI
	MOVQ         dots_len+8(FP), CX
	MOVQ         norms_base+24(FP), DI
	ANDQ         $-16, CX
	MOVL         $0x7f800000, AX
	MOVD         AX, X4
	VPBROADCASTD X4, Y4
	VMOVDQA      Y4, Y5
	MOVL         $16, AX
	MOVD         AX, X10
	VPBROADCASTD X10, Y10
	VMOVDQU      argminIota<>+0(SB), Y6
	VMOVDQU      argminIota<>+32(SB), Y7
	VPXOR        Y8, Y8, Y8
	VPXOR        Y9, Y9, Y9
	XORQ         AX, AX

amloop:
	CMPQ      AX, CX
	JAE       amdone
	VMOVUPS   (SI)(AX*4), Y0
	VMOVUPS   32(SI)(AX*4), Y1
	VADDPS    Y0, Y0, Y0
	VADDPS    Y1, Y1, Y1
	VMOVUPS   (DI)(AX*4), Y2
	VMOVUPS   32(DI)(AX*4), Y3
	VSUBPS    Y0, Y2, Y2
	VSUBPS    Y1, Y3, Y3
	VCMPPS    $0x11, Y4, Y2, Y11
	VCMPPS    $0x11, Y5, Y3, Y12
	VMINPS    Y4, Y2, Y4
	VMINPS    Y5, Y3, Y5
	VBLENDVPS Y11, Y6, Y8, Y8
	VBLENDVPS Y12, Y7, Y9, Y9
	VPADDD    Y10, Y6, Y6
	VPADDD    Y10, Y7, Y7
	ADDQ      $16, AX
	JMP       amloop

amdone:
	MOVQ    vals+48(FP), SI
	MOVQ    idx+56(FP), DI
	VMOVUPS Y4, (SI)
	VMOVUPS Y5, 32(SI)
	VMOVDQU Y8, (DI)
	VMOVDQU Y9, 32(DI)
	VZEROUPPER
	RET
