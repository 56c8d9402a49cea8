package rest

import (
	"maps"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tablebench/tablebench/engine/rest/faults"
	"github.com/tablebench/tablebench/tables"
)

// promMetrics are a server's Prometheus counters: requests by operation and
// outcome, injected faults by kind, and the latency of each operation.
// They count requests only; no key, entity or name reaches them.
type promMetrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	injected *prometheus.CounterVec
	// children holds the vectors' children by label, found once: a vector
	// hashes its labels on every lookup. The map is keyed by the labels
	// themselves, not a string joined from them, so a lookup allocates
	// nothing; it is replaced, never changed, when a label pair is first
	// seen (a few dozen times in a server's life), so a lookup takes no
	// lock and writes no shared memory.
	mu       sync.Mutex // held to replace children
	children atomic.Pointer[map[labels]child]
}

// labels are a request's operation and outcome.
type labels struct{ op, outcome string }

// child is the request counter and the latency observer of one set of
// labels.
type child struct {
	count prometheus.Counter
	time  prometheus.Observer
}

func newMetrics() *promMetrics {
	m := &promMetrics{reg: prometheus.NewRegistry()}
	m.children.Store(&map[labels]child{})
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tablebench_requests_total",
		Help: "Requests served, by operation (insert, get, query, batch, update, delete, table, service, other) and outcome (success, throttled, client_error, server_error, injected)."},
		[]string{"op", "outcome"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "tablebench_request_duration_seconds",
		Help:    "Time from a request's arrival to its answer, by operation.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 18)}, // 0.5 ms to about 65 s
		[]string{"op"})
	m.injected = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tablebench_faults_injected_total",
		Help: "Faults injected, by kind (status, delay, reset, truncate, unavailable)."}, []string{"kind"})
	m.reg.MustRegister(m.requests, m.latency, m.injected)
	for _, k := range []string{faults.KindStatus, faults.KindDelay, faults.KindReset, faults.KindTruncate, faults.KindUnavailable} {
		m.injected.WithLabelValues(k)
	}
	for _, o := range []string{"success", "throttled"} {
		for _, op := range []string{faults.OpInsert, faults.OpGet, faults.OpQuery, faults.OpBatch, faults.OpUpdate, faults.OpDelete, faults.OpTable} {
			m.requests.WithLabelValues(op, o)
		}
	}
	return m
}

// Metrics returns the server's Prometheus endpoint, to mount at /promMetrics.
func (s *Server) Metrics() http.Handler {
	return promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{})
}

// child returns the counter and latency observer of requests of op with
// outcome.
func (m *promMetrics) child(op, outcome string) child {
	key := labels{op, outcome}
	if c, ok := (*m.children.Load())[key]; ok {
		return c
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	old := *m.children.Load()
	if c, ok := old[key]; ok {
		return c
	}
	c := child{count: m.requests.WithLabelValues(op, outcome), time: m.latency.WithLabelValues(op)}
	next := maps.Clone(old)
	next[key] = c
	m.children.Store(&next)
	return c
}

// statusWriter remembers the status a handler answered.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// observe counts a finished request.
func (m *promMetrics) observe(q *request, sw *statusWriter, start time.Time) {
	op := q.op
	if op == "" {
		op = "other"
	}
	outcome := "success"
	var code string
	if v := sw.Header()["X-Ms-Error-Code"]; len(v) > 0 {
		code = v[0]
	}
	switch {
	case q.injected == faults.KindStatus || q.injected == faults.KindReset || q.injected == faults.KindTruncate:
		outcome = "injected"
	case code == tables.CodeServerBusy || code == tables.CodeOperationTimedOut:
		outcome = "throttled"
	case sw.status >= 500:
		outcome = "server_error"
	case sw.status >= 400:
		outcome = "client_error"
	}
	c := m.child(op, outcome)
	c.count.Inc()
	c.time.Observe(time.Since(start).Seconds())
	if q.injected != "" {
		m.injected.WithLabelValues(q.injected).Inc()
	}
}
