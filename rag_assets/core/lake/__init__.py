"""The data lake: layout and keys, sidecars, Parquet IO, file locks, schemas,
loading a version back."""
