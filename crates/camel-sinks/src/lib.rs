//! Batching sinks: many deliveries, one request.
