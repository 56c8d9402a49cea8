package charts

import _ "embed"

// EChartsVersion is the version of the embedded echarts build, the one
// tools/package.json pins.
const EChartsVersion = "5.4.3"

// EChartsJS is echarts.min.js, embedded so a report is complete and offline
// wherever the binary runs; see assets/README.md.
//
//go:embed assets/echarts.min.js
var EChartsJS []byte
