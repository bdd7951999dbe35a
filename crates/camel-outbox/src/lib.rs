//! Transactional outbox with an ordered, clustered relay.
