//go:build !noasm

#include "textflag.h"

// Many-query dot-product panel kernel for AVX-512F (GEMM-style); see
// matrix.go. The accumulators hold queries in lanes: for each coordinate k,
// the 48 queries' k-th values (three zmm loads from the packed panel) are
// multiplied by the broadcast k-th value of each of eight rows, 24 FMAs into
// 24 accumulators, so no horizontal reduction is needed; the finished
// 8-row x 48-query tile is transposed in registers and stored as eight
// consecutive dot products per query.

// KSTEP does one coordinate: Q0..Q2 are the byte offsets from DI of the
// three query vectors, RO the byte offset of the coordinate from each row
// pointer plus AX. Accumulator for row r and query vector v is Z(8+8v+r).

#define KSTEP(Q0, Q1, Q2, RO) \
	VMOVUPS      Q0(DI), Z0; \
	VMOVUPS      Q1(DI), Z1; \
	VMOVUPS      Q2(DI), Z2; \
	VBROADCASTSS RO(R8)(AX*1), Z3; \
	VFMADD231PS  Z3, Z0, Z8; \
	VFMADD231PS  Z3, Z1, Z16; \
	VFMADD231PS  Z3, Z2, Z24; \
	VBROADCASTSS RO(R9)(AX*1), Z4; \
	VFMADD231PS  Z4, Z0, Z9; \
	VFMADD231PS  Z4, Z1, Z17; \
	VFMADD231PS  Z4, Z2, Z25; \
	VBROADCASTSS RO(R10)(AX*1), Z5; \
	VFMADD231PS  Z5, Z0, Z10; \
	VFMADD231PS  Z5, Z1, Z18; \
	VFMADD231PS  Z5, Z2, Z26; \
	VBROADCASTSS RO(R11)(AX*1), Z6; \
	VFMADD231PS  Z6, Z0, Z11; \
	VFMADD231PS  Z6, Z1, Z19; \
	VFMADD231PS  Z6, Z2, Z27; \
	VBROADCASTSS RO(R12)(AX*1), Z7; \
	VFMADD231PS  Z7, Z0, Z12; \
	VFMADD231PS  Z7, Z1, Z20; \
	VFMADD231PS  Z7, Z2, Z28; \
	VBROADCASTSS RO(R13)(AX*1), Z3; \
	VFMADD231PS  Z3, Z0, Z13; \
	VFMADD231PS  Z3, Z1, Z21; \
	VFMADD231PS  Z3, Z2, Z29; \
	VBROADCASTSS RO(R14)(AX*1), Z4; \
	VFMADD231PS  Z4, Z0, Z14; \
	VFMADD231PS  Z4, Z1, Z22; \
	VFMADD231PS  Z4, Z2, Z30; \
	VBROADCASTSS RO(R15)(AX*1), Z5; \
	VFMADD231PS  Z5, Z0, Z15; \
	VFMADD231PS  Z5, Z1, Z23; \
	VFMADD231PS  Z5, Z2, Z31

// TR8 transposes 4x4 blocks of the eight accumulators A0..A7 (one query
// vector, rows 0..7) in place, with Z0..Z7 as scratch: afterwards, 128-bit
// block b of Ac (c < 4) holds rows 0..3 of query 4b+c and block b of A(4+c)
// holds rows 4..7 of that query.
#define TR8(A0, A1, A2, A3, A4, A5, A6, A7) \
	VUNPCKLPS A1, A0, Z0; \
	VUNPCKHPS A1, A0, Z1; \
	VUNPCKLPS A3, A2, Z2; \
	VUNPCKHPS A3, A2, Z3; \
	VUNPCKLPS A5, A4, Z4; \
	VUNPCKHPS A5, A4, Z5; \
	VUNPCKLPS A7, A6, Z6; \
	VUNPCKHPS A7, A6, Z7; \
	VSHUFPS   $0x44, Z2, Z0, A0; \
	VSHUFPS   $0xEE, Z2, Z0, A1; \
	VSHUFPS   $0x44, Z3, Z1, A2; \
	VSHUFPS   $0xEE, Z3, Z1, A3; \
	VSHUFPS   $0x44, Z6, Z4, A4; \
	VSHUFPS   $0xEE, Z6, Z4, A5; \
	VSHUFPS   $0x44, Z7, Z5, A6; \
	VSHUFPS   $0xEE, Z7, Z5, A7

// STQ stores the eight dot products of one query (block B of AC and of AC4)
// at (AX) and advances AX by one output row (BX bytes).
#define STQ(B, AC, AC4) \
	VEXTRACTF32X4 $B, AC, (AX); \
	VEXTRACTF32X4 $B, AC4, 16(AX); \
	ADDQ          BX, AX

// STORE16 transposes and stores the tile of one query vector (16 queries).
#define STORE16(A0, A1, A2, A3, A4, A5, A6, A7) \
	TR8(A0, A1, A2, A3, A4, A5, A6, A7); \
	STQ(0, A0, A4); \
	STQ(0, A1, A5); \
	STQ(0, A2, A6); \
	STQ(0, A3, A7); \
	STQ(1, A0, A4); \
	STQ(1, A1, A5); \
	STQ(1, A2, A6); \
	STQ(1, A3, A7); \
	STQ(2, A0, A4); \
	STQ(2, A1, A5); \
	STQ(2, A2, A6); \
	STQ(2, A3, A7); \
	STQ(3, A0, A4); \
	STQ(3, A1, A5); \
	STQ(3, A2, A6); \
	STQ(3, A3, A7)

// func dotPanelAVX512(x []float32, dim int, q []float32, panels int, out []float32, ostride int, next []float32)
// x holds eight rows of dim floats; q holds panels packed panels of 48
// queries (matrix.go, packPanels). For query i of the panels and row j it
// stores the dot product at out[i*ostride+j]. The coordinate loop does four
// coordinates per iteration and prefetches two cache lines of next (the
// following call's rows) into the L2 cache until all of next is requested.
TEXT ·dotPanelAVX512(SB), NOSPLIT, $24-120
	MOVQ next_base+96(FP), DX
	MOVQ next_len+104(FP), CX
	LEAQ (DX)(CX*4), AX
	MOVQ AX, pfend-16(SP)
	MOVQ x_base+0(FP), R8
	MOVQ dim+24(FP), CX
	MOVQ q_base+32(FP), DI
	MOVQ panels+56(FP), SI
	MOVQ out_base+64(FP), AX
	MOVQ AX, outp-24(SP)
	MOVQ ostride+88(FP), BX
	SHLQ $2, BX
	SHLQ $2, CX
	LEAQ (R8)(CX*1), R9
	LEAQ (R9)(CX*1), R10
	LEAQ (R10)(CX*1), R11
	LEAQ (R11)(CX*1), R12
	LEAQ (R12)(CX*1), R13
	LEAQ (R13)(CX*1), R14
	LEAQ (R14)(CX*1), R15
	LEAQ -16(CX), AX
	MOVQ AX, lim4-8(SP)
	TESTQ SI, SI
	JZ    done

panel:
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
	CMPQ   AX, lim4-8(SP)
	JGT    one

loop4:
	KSTEP(0, 64, 128, 0)
	KSTEP(192, 256, 320, 4)
	KSTEP(384, 448, 512, 8)
	KSTEP(576, 640, 704, 12)
	ADDQ $16, AX
	ADDQ $768, DI
	CMPQ DX, pfend-16(SP)
	JAE  nopf
	PREFETCHT1 (DX)
	PREFETCHT1 64(DX)
	ADDQ $128, DX

nopf:
	CMPQ AX, lim4-8(SP)
	JLE  loop4

one:
	CMPQ AX, CX
	JAE  store
	KSTEP(0, 64, 128, 0)
	ADDQ $4, AX
	ADDQ $192, DI
	JMP  one

store:
	MOVQ outp-24(SP), AX
	STORE16(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	STORE16(Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)
	STORE16(Z24, Z25, Z26, Z27, Z28, Z29, Z30, Z31)
	MOVQ AX, outp-24(SP)
	DECQ SI
	JNZ  panel

done:
	VZEROUPPER
	RET

// func firstBelowL2AVX512(dots, sq []float32, thr float32) int
// Scans the whole 16-float chunks of dots for the first j with
// sq[j] - 2*dots[j] <= thr (ordered: false for NaN) and returns it, or
// len(dots)&^15 when there is none. len(sq) >= len(dots).
TEXT ·firstBelowL2AVX512(SB), NOSPLIT, $0-64
	MOVQ         dots_base+0(FP), SI
	MOVQ         dots_len+8(FP), CX
	MOVQ         sq_base+24(FP), DI
	VBROADCASTSS thr+48(FP), Z1
	ANDQ         $-16, CX
	XORQ         AX, AX

below:
	CMPQ     AX, CX
	JAE      none
	VMOVUPS  (SI)(AX*4), Z2
	VADDPS   Z2, Z2, Z2
	VMOVUPS  (DI)(AX*4), Z3
	VSUBPS   Z2, Z3, Z3
	VCMPPS   $0x12, Z1, Z3, K1
	KORTESTW K1, K1
	JNZ      found
	ADDQ     $16, AX
	JMP      below

found:
	KMOVW  K1, BX
	BSFL   BX, BX
	ADDQ   BX, AX

none:
	MOVQ AX, ret+56(FP)
	VZEROUPPER
	RET
