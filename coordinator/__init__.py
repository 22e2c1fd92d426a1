"""The Django project: settings, the root URL map and the WSGI entry point.

It sits above every app and may import them all; no app imports it
(docs/architecture.md).
"""
