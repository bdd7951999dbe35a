//! The Resequencer EIP: reorders exchanges behind a continuation boundary.
