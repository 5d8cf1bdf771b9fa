"""Plumbing: what the apps run on and `config/` wires up (logging, health, database rows and hops, Redis clients,
transactions); no business rules. Apps import it; it imports no app.
"""
