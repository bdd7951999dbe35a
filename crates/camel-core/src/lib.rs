//! Route model, DSLs, compiler, context and built-in components.
