"""Screens: the dashboard, the log and diff viewers, dialogs, help, a memory entry."""
