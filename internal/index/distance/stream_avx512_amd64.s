//go:build !noasm

#include "textflag.h"

// Streaming sum, the read-bandwidth probe; see matrix.go (Sum).

// func sumAVX512(v []float32) float32
TEXT ·sumAVX512(SB), NOSPLIT, $0-28
	MOVQ   v_base+0(FP), SI
	MOVQ   v_len+8(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	CMPQ   CX, $128
	JB     by16

by128:
	VADDPS (SI), Z0, Z0
	VADDPS 64(SI), Z1, Z1
	VADDPS 128(SI), Z2, Z2
	VADDPS 192(SI), Z3, Z3
	VADDPS 256(SI), Z4, Z4
	VADDPS 320(SI), Z5, Z5
	VADDPS 384(SI), Z6, Z6
	VADDPS 448(SI), Z7, Z7
	ADDQ   $512, SI
	SUBQ   $128, CX
	CMPQ   CX, $128
	JAE    by128

by16:
	CMPQ   CX, $16
	JB     tail
	VADDPS (SI), Z0, Z0
	ADDQ   $64, SI
	SUBQ   $16, CX
	JMP    by16

tail:
	TESTQ     CX, CX
	JZ        reduce
	MOVQ      $1, AX
	SHLQ      CX, AX
	DECQ      AX
	KMOVW     AX, K1
	VMOVUPS.Z (SI), K1, Z8
	VADDPS    Z8, Z1, Z1

reduce:
	VADDPS        Z1, Z0, Z0
	VADDPS        Z3, Z2, Z2
	VADDPS        Z5, Z4, Z4
	VADDPS        Z7, Z6, Z6
	VADDPS        Z2, Z0, Z0
	VADDPS        Z6, Z4, Z4
	VADDPS        Z4, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPS        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VADDPS        X1, X0, X0
	VMOVHLPS      X0, X0, X1
	VADDPS        X1, X0, X0
	VMOVSHDUP     X0, X1
	VADDSS        X1, X0, X0
	VZEROUPPER
	MOVSS         X0, ret+24(FP)
	RET
