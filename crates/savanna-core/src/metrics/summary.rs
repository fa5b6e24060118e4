//! summary.json writer (being written).
