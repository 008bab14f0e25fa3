"""The ranking pipeline: candidates in, ordered and explained results out."""
