//! Google Pub/Sub batching sink (in progress).
