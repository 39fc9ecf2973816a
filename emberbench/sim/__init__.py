"""Scenarios and the simulator: random streams, the compiled grid, the fire, scenario files
and their rules, suites, the order of a step, what a policy sees and how it answers.
"""
