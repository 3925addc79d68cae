//go:build !noasm

#include "textflag.h"

// func hammingPOPCNT(a, b []byte) int
// Requires len(a) == len(b) and POPCNT.
TEXT ·hammingPOPCNT(SB), NOSPLIT, $0-56
	MOVQ a_base+0(FP), SI
	MOVQ a_len+8(FP), CX
	MOVQ b_base+24(FP), DI
	XORQ AX, AX
	XORQ R8, R8
	CMPQ CX, $32
	JB   words

by32:
	MOVQ    (SI), DX
	MOVQ    8(SI), BX
	MOVQ    16(SI), R9
	MOVQ    24(SI), R10
	XORQ    (DI), DX
	XORQ    8(DI), BX
	XORQ    16(DI), R9
	XORQ    24(DI), R10
	POPCNTQ DX, DX
	POPCNTQ BX, BX
	POPCNTQ R9, R9
	POPCNTQ R10, R10
	ADDQ    DX, AX
	ADDQ    BX, R8
	ADDQ    R9, AX
	ADDQ    R10, R8
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $32, CX
	CMPQ    CX, $32
	JAE     by32

words:
	CMPQ    CX, $8
	JB      bytes
	MOVQ    (SI), DX
	XORQ    (DI), DX
	POPCNTQ DX, DX
	ADDQ    DX, AX
	ADDQ    $8, SI
	ADDQ    $8, DI
	SUBQ    $8, CX
	JMP     words

bytes:
	TESTQ   CX, CX
	JZ      done
	MOVBQZX (SI), DX
	MOVBQZX (DI), BX
	XORQ    BX, DX
	POPCNTQ DX, DX
	ADDQ    DX, R8
	INCQ    SI
	INCQ    DI
	DECQ    CX
	JMP     bytes

done:
	ADDQ R8, AX
	MOVQ AX, ret+48(FP)
	RET

// func jaccardCountsPOPCNT(a, b []byte) (inter, union int)
// Requires len(a) == len(b) and POPCNT.
TEXT ·jaccardCountsPOPCNT(SB), NOSPLIT, $0-64
	MOVQ a_base+0(FP), SI
	MOVQ a_len+8(FP), CX
	MOVQ b_base+24(FP), DI
	XORQ AX, AX
	XORQ R8, R8
	CMPQ CX, $16
	JB   words

by16:
	MOVQ    (SI), DX
	MOVQ    8(SI), R9
	MOVQ    (DI), BX
	MOVQ    8(DI), R10
	MOVQ    DX, R11
	MOVQ    R9, R12
	ANDQ    BX, DX
	ANDQ    R10, R9
	ORQ     BX, R11
	ORQ     R10, R12
	POPCNTQ DX, DX
	POPCNTQ R9, R9
	POPCNTQ R11, R11
	POPCNTQ R12, R12
	ADDQ    DX, AX
	ADDQ    R9, AX
	ADDQ    R11, R8
	ADDQ    R12, R8
	ADDQ    $16, SI
	ADDQ    $16, DI
	SUBQ    $16, CX
	CMPQ    CX, $16
	JAE     by16

words:
	CMPQ    CX, $8
	JB      bytes
	MOVQ    (SI), DX
	MOVQ    (DI), BX
	MOVQ    DX, R11
	ANDQ    BX, DX
	ORQ     BX, R11
	POPCNTQ DX, DX
	POPCNTQ R11, R11
	ADDQ    DX, AX
	ADDQ    R11, R8
	ADDQ    $8, SI
	ADDQ    $8, DI
	SUBQ    $8, CX
	JMP     words

bytes:
	TESTQ   CX, CX
	JZ      done
	MOVBQZX (SI), DX
	MOVBQZX (DI), BX
	MOVQ    DX, R11
	ANDQ    BX, DX
	ORQ     BX, R11
	POPCNTQ DX, DX
	POPCNTQ R11, R11
	ADDQ    DX, AX
	ADDQ    R11, R8
	INCQ    SI
	INCQ    DI
	DECQ    CX
	JMP     bytes

done:
	MOVQ AX, inter+48(FP)
	MOVQ R8, union+56(FP)
	RET

// BYTEMASK sets K1 to the low CX bits, selecting a tail of CX < 64 bytes.
// It clobbers AX.
#define BYTEMASK \
	MOVQ  $1, AX; \
	SHLQ  CX, AX; \
	DECQ  AX; \
	KMOVQ AX, K1

// HSUMQ adds the eight quadwords of ZREG, whose low half is YREG, into GP
// register DST, using Y14 and Y15 as scratch.
#define HSUMQ(ZREG, YREG, DST) \
	VEXTRACTI64X4 $1, ZREG, Y15; \
	VPADDQ        Y15, YREG, Y14; \
	VEXTRACTI128  $1, Y14, X15; \
	VPADDQ        X15, X14, X14; \
	VPSHUFD       $0x4e, X14, X15; \
	VPADDQ        X15, X14, X14; \
	VMOVQ         X14, DST

// func hammingAVX512(a, b []byte) int
// Requires len(a) == len(b), AVX512F, AVX512BW and AVX512_VPOPCNTDQ.
TEXT ·hammingAVX512(SB), NOSPLIT, $0-56
	MOVQ   a_base+0(FP), SI
	MOVQ   a_len+8(FP), CX
	MOVQ   b_base+24(FP), DI
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	CMPQ   CX, $128
	JB     by64

by128:
	VMOVDQU64 (SI), Z2
	VMOVDQU64 64(SI), Z3
	VPXORQ    (DI), Z2, Z2
	VPXORQ    64(DI), Z3, Z3
	VPOPCNTQ  Z2, Z2
	VPOPCNTQ  Z3, Z3
	VPADDQ    Z2, Z0, Z0
	VPADDQ    Z3, Z1, Z1
	ADDQ      $128, SI
	ADDQ      $128, DI
	SUBQ      $128, CX
	CMPQ      CX, $128
	JAE       by128

by64:
	CMPQ      CX, $64
	JB        tail
	VMOVDQU64 (SI), Z2
	VPXORQ    (DI), Z2, Z2
	VPOPCNTQ  Z2, Z2
	VPADDQ    Z2, Z0, Z0
	ADDQ      $64, SI
	ADDQ      $64, DI
	SUBQ      $64, CX

tail:
	TESTQ       CX, CX
	JZ          reduce
	BYTEMASK
	VMOVDQU8.Z  (SI), K1, Z2
	VMOVDQU8.Z  (DI), K1, Z3
	VPXORQ      Z3, Z2, Z2
	VPOPCNTQ    Z2, Z2
	VPADDQ      Z2, Z1, Z1

reduce:
	VPADDQ Z1, Z0, Z0
	HSUMQ(Z0, Y0, AX)
	VZEROUPPER
	MOVQ   AX, ret+48(FP)
	RET

// func jaccardCountsAVX512(a, b []byte) (inter, union int)
// Requires len(a) == len(b), AVX512F, AVX512BW and AVX512_VPOPCNTDQ.
TEXT ·jaccardCountsAVX512(SB), NOSPLIT, $0-64
	MOVQ   a_base+0(FP), SI
	MOVQ   a_len+8(FP), CX
	MOVQ   b_base+24(FP), DI
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	CMPQ   CX, $64
	JB     tail

by64:
	VMOVDQU64 (SI), Z2
	VMOVDQU64 (DI), Z3
	VPANDQ    Z3, Z2, Z4
	VPORQ     Z3, Z2, Z5
	VPOPCNTQ  Z4, Z4
	VPOPCNTQ  Z5, Z5
	VPADDQ    Z4, Z0, Z0
	VPADDQ    Z5, Z1, Z1
	ADDQ      $64, SI
	ADDQ      $64, DI
	SUBQ      $64, CX
	CMPQ      CX, $64
	JAE       by64

tail:
	TESTQ      CX, CX
	JZ         reduce
	BYTEMASK
	VMOVDQU8.Z (SI), K1, Z2
	VMOVDQU8.Z (DI), K1, Z3
	VPANDQ     Z3, Z2, Z4
	VPORQ      Z3, Z2, Z5
	VPOPCNTQ   Z4, Z4
	VPOPCNTQ   Z5, Z5
	VPADDQ     Z4, Z0, Z0
	VPADDQ     Z5, Z1, Z1

reduce:
	HSUMQ(Z0, Y0, AX)
	HSUMQ(Z1, Y1, DX)
	VZEROUPPER
	MOVQ AX, inter+48(FP)
	MOVQ DX, union+56(FP)
	RET

// func hammingBatchAVX512(q, data []byte, out []float32)
// out[i] = popcount(q XOR row i), where data holds len(out) rows of len(q)
// bytes. Requires len(q) > 0, len(data) == len(q)*len(out), AVX512F,
// AVX512BW and AVX512_VPOPCNTDQ. Each row is counted in 64-byte blocks and
// a byte-masked tail (the mask, for len(q)%64 bytes, is set once).
TEXT ·hammingBatchAVX512(SB), NOSPLIT, $0-72
	MOVQ q_base+0(FP), R8
	MOVQ q_len+8(FP), R9
	MOVQ data_base+24(FP), DI
	MOVQ out_base+48(FP), R10
	MOVQ out_len+56(FP), R11
	MOVQ R9, CX
	ANDQ $63, CX
	MOVQ CX, R13 // tail bytes
	BYTEMASK
	MOVQ R9, R12
	SHRQ $6, R12 // whole blocks per row

row:
	TESTQ  R11, R11
	JZ     done
	MOVQ   R8, SI
	MOVQ   R12, CX
	VPXORQ Z0, Z0, Z0

block:
	TESTQ     CX, CX
	JZ        tail
	VMOVDQU64 (SI), Z2
	VPXORQ    (DI), Z2, Z2
	VPOPCNTQ  Z2, Z2
	VPADDQ    Z2, Z0, Z0
	ADDQ      $64, SI
	ADDQ      $64, DI
	DECQ      CX
	JMP       block

tail:
	TESTQ      R13, R13
	JZ         store
	VMOVDQU8.Z (SI), K1, Z2
	VMOVDQU8.Z (DI), K1, Z3
	VPXORQ     Z3, Z2, Z2
	VPOPCNTQ   Z2, Z2
	VPADDQ     Z2, Z0, Z0
	ADDQ       R13, DI

store:
	HSUMQ(Z0, Y0, AX)
	VCVTSI2SSQ AX, X1, X1
	VMOVSS     X1, (R10)
	ADDQ       $4, R10
	DECQ       R11
	JMP        row

done:
	VZEROUPPER
	RET
