"""One evaluation: stages, judging, the run directory, journal and resume."""
