"""Screens: the main screen, the full-screen tree, settings, pickers, help and dialogs."""
