"""Builds ahead of time: Python environments on the login node, and the build cache job."""
