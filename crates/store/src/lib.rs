//! The SQLite history of runs and comparisons, with their provenance.
