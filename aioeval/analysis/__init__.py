"""Reading finished runs: tallies, paired statistics, comparisons."""
