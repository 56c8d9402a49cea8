package workloads

import (
	"fmt"
	"slices"
	"testing"
)

// TestRowKeys checks the RowKeys a thread writes: zero padded to ten
// digits so that their order is the order written, the same one by one and
// in batches, and still distinct past ten digits.
func TestRowKeys(t *testing.T) {
	one := &keys{prefix: "tb_1_2_"}
	many := &keys{prefix: "tb_1_2_"}
	var got []string
	for len(got) < 1000 {
		got = many.rowKeys(got, 7)
	}
	for i, rk := range got {
		want := fmt.Sprintf("tb_1_2_%010d", i)
		if rk != want || one.rowKey() != want {
			t.Fatalf("key %d: %q, want %q", i, rk, want)
		}
	}
	if !slices.IsSorted(got) {
		t.Fatal("keys out of order")
	}
	far := &keys{prefix: "p_", index: 9_999_999_999}
	if a, b := far.rowKey(), far.rowKey(); a != "p_9999999999" || b != "p_10000000000" {
		t.Fatalf("past ten digits: %q, %q", a, b)
	}
}
