"""Judge calibration against human labels (agreement figures with bootstrap intervals)."""
