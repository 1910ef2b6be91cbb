"""Writes: every change to memory goes through a function here (``<entity>_<action>``)."""
