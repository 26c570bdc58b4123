"""Keeping posts and the publishing API in sync: the lock, identity, plans, the engine and
pull. The functions here expect their caller (`toolkit.commands`) to hold the run lock
when they write."""
