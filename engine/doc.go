// Package engine is tablebench's in-tree table engine: an account of tables
// whose entities are stored, validated, queried and transacted with the Table
// service's semantics, and a performance model of the service behind them
// (range partitions hosted by partition servers, per-key and per-account
// throttling, a load balancer and a staged latency model).
//
// The engine is the default target of every tablebench run, so that the
// published case study can be reproduced without an account. Three profiles
// select the model: ProfileWA2010 (calibrated to the 2010 case study, the
// default), ProfileModern (today's targets) and ProfileNone (the raw engine,
// no latency and no throttling).
//
// All modelled time comes from one Clock. A time-scale factor compresses every
// modelled duration and rate, so a 60 s experiment can run in 6 s of wall
// time; each request's queueing and service are computed arithmetically and
// the caller sleeps once per request, so compressed runs stay accurate.
package engine
