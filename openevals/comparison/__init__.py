"""Comparing two runs: paired statistics, head-to-head judging, a report and a CI gate."""
