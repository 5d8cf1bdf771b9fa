"""Plumbing: what the apps run on and `config/` wires up (database rows and hops, Redis clients, transactions).

Apps import it; it imports no app.
"""
