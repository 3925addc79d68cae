//go:build !noasm

#include "textflag.h"

// func cpuidECX1() uint32
// Returns ECX of CPUID leaf 1 (feature bits; bit 29 is F16C).
TEXT ·cpuidECX1(SB), NOSPLIT, $0-4
	MOVL $1, AX
	XORL CX, CX
	CPUID
	MOVL CX, ret+0(FP)
	RET

// func float16ToFloat32F16C(dst []float32, src []byte)
// Requires len(dst) a multiple of 8, len(src) == 2*len(dst), AVX and F16C.
TEXT ·float16ToFloat32F16C(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ src_base+24(FP), SI
	CMPQ CX, $32
	JB   by8

by32:
	VCVTPH2PS (SI), Y0
	VCVTPH2PS 16(SI), Y1
	VCVTPH2PS 32(SI), Y2
	VCVTPH2PS 48(SI), Y3
	VMOVUPS   Y0, (DI)
	VMOVUPS   Y1, 32(DI)
	VMOVUPS   Y2, 64(DI)
	VMOVUPS   Y3, 96(DI)
	ADDQ      $64, SI
	ADDQ      $128, DI
	SUBQ      $32, CX
	CMPQ      CX, $32
	JAE       by32

by8:
	TESTQ     CX, CX
	JZ        done
	VCVTPH2PS (SI), Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	SUBQ      $8, CX
	JMP       by8

done:
	VZEROUPPER
	RET

// func bfloat16ToFloat32AVX2(dst []float32, src []byte)
// Requires len(dst) a multiple of 8, len(src) == 2*len(dst), and AVX2.
// Each value is zero-extended to 32 bits and shifted into the high half.
TEXT ·bfloat16ToFloat32AVX2(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ src_base+24(FP), SI

loop:
	TESTQ     CX, CX
	JZ        done
	VPMOVZXWD (SI), Y0
	VPSLLD    $16, Y0, Y0
	VMOVDQU   Y0, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	SUBQ      $8, CX
	JMP       loop

done:
	VZEROUPPER
	RET

// func int8ToFloat32AVX2(dst []float32, src []byte)
// Requires len(dst) a multiple of 8, len(src) == len(dst), and AVX2.
TEXT ·int8ToFloat32AVX2(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ src_base+24(FP), SI

loop:
	TESTQ     CX, CX
	JZ        done
	VPMOVSXBD (SI), Y0
	VCVTDQ2PS Y0, Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $8, SI
	ADDQ      $32, DI
	SUBQ      $8, CX
	JMP       loop

done:
	VZEROUPPER
	RET
