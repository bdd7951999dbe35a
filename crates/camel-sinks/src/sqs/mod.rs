//! SQS batching sink (in progress).
