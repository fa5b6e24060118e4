//! Parquet writers (being written).
