"""Django's PostgreSQL backend with a pool check that costs no round trip on a busy server (see base.py)."""
