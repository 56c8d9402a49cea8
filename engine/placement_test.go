package engine

import (
	"fmt"
	"testing"
)

// TestPhysicalPartitionIsTheContainers checks that PhysicalPartition places
// keys where the cosmos container charges them, over every partition.
func TestPhysicalPartitionIsTheContainers(t *testing.T) {
	p := Cosmos()
	var c container
	c.init(&p, &Engine{}, &table{})
	seen := map[int]int{}
	for k := range 5000 {
		pk := fmt.Sprintf("key-%d", k)
		i, n := PhysicalPartition(p, pk)
		if n != 10 || c.parts[i] != c.locate(pk) {
			t.Fatalf("%s: partition %d of %d, the container's is another", pk, i, n)
		}
		seen[i]++
	}
	if len(seen) != 10 {
		t.Fatalf("5,000 keys landed in %d of 10 partitions", len(seen))
	}
	if i, n := PhysicalPartition(Modern(), "k"); i != 0 || n != 1 {
		t.Fatalf("modern: partition %d of %d, want 0 of 1", i, n)
	}
}
