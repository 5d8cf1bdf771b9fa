"""`manage.py evaluate`: a tau-bench style scenario suite for the concierge.

Simulated parents (a scripted opening, then rule-driven answers from a persona)
talk to the real agent through `chatbot.services.receive`, each run in a fresh
school of its own; a run passes when the final database state is exactly what
the parent's goal implies (and nothing else changed) and the replies said what
they must. Each scenario runs k times: pass^1 and pass^k per flow.

- world.py      fixture schools, named dates, setup, cleanup
- parent.py     the simulated parent (persona, goal, rules)
- checks.py     snapshots, the state diff, expectations, reply checks
- scenarios.py  the suite
- runner.py     running, scoring, the JSON report

See docs/evaluation.md.
"""
