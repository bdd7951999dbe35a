//! Enterprise Integration Patterns as tower services and layers.
