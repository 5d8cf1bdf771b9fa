"""Plumbing: the machinery every app runs on (logging, health, database and Redis access); no business rules."""
