"""Readers, writers and schemas of spcl's datasets."""
