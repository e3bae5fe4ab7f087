"""Showing runs: terminal tables and the self-contained HTML report."""
