#include "textflag.h"

// func Prefetch(p unsafe.Pointer, n uintptr)
TEXT ·Prefetch(SB), NOSPLIT, $0-16
	MOVQ	p+0(FP), AX
	MOVQ	n+8(FP), CX
	TESTQ	CX, CX
	JEQ	done
	LEAQ	-1(AX)(CX*1), CX // the last byte
loop:
	PREFETCHT0	(AX)
	ADDQ	$64, AX
	CMPQ	AX, CX
	JLS	loop
	PREFETCHT0	(CX)
done:
	RET
