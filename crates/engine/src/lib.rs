//! I/O engines behind one trait, and the few host queries that need a raw
//! system call. This is the only crate that contains `unsafe`.

pub mod host;
