"""Manifests and result artifacts: the schedule of episodes an evaluation plays, the
artifact's writer and fail-closed loader, its streaming reader and verifier, and the
pairing of two results.
"""
