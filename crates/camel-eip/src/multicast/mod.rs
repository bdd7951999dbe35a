//! Multicast: send one exchange to several processors and aggregate the results.
