#include "textflag.h"

// func Prefetch(p unsafe.Pointer, n uintptr)
//
// It counts the lines rather than compare addresses, so that a p near the
// top of the address space, where p+64 wraps, still ends; and it takes at
// most 4 KB (see prefetch_amd64.go).
TEXT ·Prefetch(SB), NOSPLIT, $0-16
	MOVQ	p+0(FP), AX
	MOVQ	n+8(FP), CX
	TESTQ	CX, CX
	JEQ	done
	CMPQ	CX, $4096
	JLS	lines
	MOVQ	$4096, CX
lines:
	// (p%64 + n + 63) / 64 lines, from p's
	MOVQ	AX, DX
	ANDQ	$63, DX
	LEAQ	63(CX)(DX*1), CX
	SHRQ	$6, CX
loop:
	PREFETCHT0	(AX)
	ADDQ	$64, AX
	DECQ	CX
	JNE	loop
done:
	RET

// func prefetchAt(p, n uintptr)
//
// Prefetch by address: the same arguments, word for word.
TEXT ·prefetchAt(SB), NOSPLIT, $0-16
	JMP	·Prefetch(SB)
