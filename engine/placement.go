package engine

import "math"

// PhysicalPartition returns which of a new table's physical partitions the
// PartitionKey pk lands in under a profile that provisions request units,
// and how many there are: the placement of the cosmos profile's container
// before any split, by the hash of the key. A reader of a run's hottest
// keys finds with it which of them share a partition's throughput. It
// returns 0 and 1 under a profile without request units.
func PhysicalPartition(p Profile, pk string) (i, n int) {
	if !p.RequestUnits() || p.PartitionRU <= 0 {
		return 0, 1
	}
	var c container
	c.init(&p, &Engine{cfg: Config{}}, &table{})
	pp := c.locate(pk)
	for j, q := range c.parts {
		if q == pp {
			return j, len(c.parts)
		}
	}
	return 0, max(1, int(math.Ceil(p.maxRU()/p.PartitionRU)))
}
