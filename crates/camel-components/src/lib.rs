//! The built-in components: direct, seda, timer, log, file, mock.
