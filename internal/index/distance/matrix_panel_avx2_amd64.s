//go:build !noasm

#include "textflag.h"

// Many-query dot-product panel kernel for AVX2 with FMA3 (GEMM-style); see
// matrix.go. The accumulators hold queries in lanes: for each coordinate k,
// the 24 queries' k-th values (three ymm loads from the packed panel) are
// multiplied by the broadcast k-th value of each of four rows, 12 FMAs into
// 12 accumulators, so no horizontal reduction is needed; the finished
// 4-row x 24-query tile is transposed in registers and stored as four
// consecutive dot products per query.

// KSTEP does one coordinate: Q0..Q2 are the byte offsets from DI of the
// three query vectors, RO the byte offset of the coordinate from each row
// pointer plus AX. Accumulator for row r and query vector v is Y(4+4v+r).
#define KSTEP(Q0, Q1, Q2, RO) \
	VMOVUPS      Q0(DI), Y0; \
	VMOVUPS      Q1(DI), Y1; \
	VMOVUPS      Q2(DI), Y2; \
	VBROADCASTSS RO(R8)(AX*1), Y3; \
	VFMADD231PS  Y3, Y0, Y4; \
	VFMADD231PS  Y3, Y1, Y8; \
	VFMADD231PS  Y3, Y2, Y12; \
	VBROADCASTSS RO(R9)(AX*1), Y3; \
	VFMADD231PS  Y3, Y0, Y5; \
	VFMADD231PS  Y3, Y1, Y9; \
	VFMADD231PS  Y3, Y2, Y13; \
	VBROADCASTSS RO(R10)(AX*1), Y3; \
	VFMADD231PS  Y3, Y0, Y6; \
	VFMADD231PS  Y3, Y1, Y10; \
	VFMADD231PS  Y3, Y2, Y14; \
	VBROADCASTSS RO(R11)(AX*1), Y3; \
	VFMADD231PS  Y3, Y0, Y7; \
	VFMADD231PS  Y3, Y1, Y11; \
	VFMADD231PS  Y3, Y2, Y15

// STORE8 transposes the four accumulators A0..A3 (one query vector: eight
// queries, rows 0..3) with Y0..Y3 as scratch, so that 128-bit half h of Ac
// holds rows 0..3 of query 4h+c, and stores the four dot products of each
// of the eight queries at (R14), advancing R14 by one output row (BX bytes)
// per query. X0..X3 name the low halves of A0..A3.
#define STORE8(A0, A1, A2, A3, X0, X1, X2, X3) \
	VUNPCKLPS    A1, A0, Y0; \
	VUNPCKHPS    A1, A0, Y1; \
	VUNPCKLPS    A3, A2, Y2; \
	VUNPCKHPS    A3, A2, Y3; \
	VSHUFPS      $0x44, Y2, Y0, A0; \
	VSHUFPS      $0xEE, Y2, Y0, A1; \
	VSHUFPS      $0x44, Y3, Y1, A2; \
	VSHUFPS      $0xEE, Y3, Y1, A3; \
	VMOVUPS      X0, (R14); \
	ADDQ         BX, R14; \
	VMOVUPS      X1, (R14); \
	ADDQ         BX, R14; \
	VMOVUPS      X2, (R14); \
	ADDQ         BX, R14; \
	VMOVUPS      X3, (R14); \
	ADDQ         BX, R14; \
	VEXTRACTF128 $1, A0, (R14); \
	ADDQ         BX, R14; \
	VEXTRACTF128 $1, A1, (R14); \
	ADDQ         BX, R14; \
	VEXTRACTF128 $1, A2, (R14); \
	ADDQ         BX, R14; \
	VEXTRACTF128 $1, A3, (R14); \
	ADDQ         BX, R14

// func dotPanelAVX2(x []float32, dim int, q []float32, panels int, out []float32, ostride int, next []float32)
// x holds four rows of dim floats; q holds panels packed panels of 24
// queries (matrix.go, packPanels). For query i of the panels and row j it
// stores the dot product at out[i*ostride+j]. The coordinate loop does four
// coordinates per iteration and prefetches two cache lines of next (the
// following call's rows) until all of next is requested.
TEXT ·dotPanelAVX2(SB), NOSPLIT, $0-120
	MOVQ  next_base+96(FP), DX
	MOVQ  next_len+104(FP), CX
	LEAQ  (DX)(CX*4), R12
	MOVQ  x_base+0(FP), R8
	MOVQ  dim+24(FP), CX
	MOVQ  q_base+32(FP), DI
	MOVQ  panels+56(FP), SI
	MOVQ  out_base+64(FP), R14
	MOVQ  ostride+88(FP), BX
	SHLQ  $2, BX
	SHLQ  $2, CX
	LEAQ  (R8)(CX*1), R9
	LEAQ  (R9)(CX*1), R10
	LEAQ  (R10)(CX*1), R11
	LEAQ  -16(CX), R13
	TESTQ SI, SI
	JZ    done

panel:
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
	CMPQ   AX, R13
	JGT    one

loop4:
	KSTEP(0, 32, 64, 0)
	KSTEP(96, 128, 160, 4)
	KSTEP(192, 224, 256, 8)
	KSTEP(288, 320, 352, 12)
	ADDQ $16, AX
	ADDQ $384, DI
	CMPQ DX, R12
	JAE  nopf
	PREFETCHT0 (DX)
	PREFETCHT0 64(DX)
	ADDQ $128, DX

nopf:
	CMPQ AX, R13
	JLE  loop4

one:
	CMPQ AX, CX
	JAE  store
	KSTEP(0, 32, 64, 0)
	ADDQ $4, AX
	ADDQ $96, DI
	JMP  one

store:
	STORE8(Y4, Y5, Y6, Y7, X4, X5, X6, X7)
	STORE8(Y8, Y9, Y10, Y11, X8, X9, X10, X11)
	STORE8(Y12, Y13, Y14, Y15, X12, X13, X14, X15)
	DECQ SI
	JNZ  panel

done:
	VZEROUPPER
	RET
