"""The coordinator's Django templates (admin, API docs).

A package only so that a wheel carries them beside the apps; settings.py
points TEMPLATES at this directory.
"""
