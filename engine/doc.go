// Package engine is tablebench's in-tree table engine: an account of tables
// whose entities are stored, validated, queried and transacted with the Table
// service's semantics, and a performance model of the service behind them
// (range partitions hosted by partition servers, per-key and per-account
// throttling, a load balancer and a staged latency model).
//
// The engine is the default target of every tablebench run, so that the
// published case study can be reproduced without an account; engine/rest
// serves it over the Table REST API to any client. Three profiles select the
// model: WA2010 (calibrated to the 2010 case study, the default), Modern
// (today's targets) and None (the raw engine, no latency and no throttling).
//
// All modelled time comes from one clock.Clock: a clock.Virtual, on which time
// passes only when every participant waits (the suite's default, exact and
// as fast as the CPU allows), or a clock.Scaled in wall time, whose time-scale
// factor compresses every modelled duration and rate. Each request's queueing
// and service are computed arithmetically and the caller sleeps once per
// request.
package engine
