"""The peer `bench --peer` measures beside our turn: LangGraph's prebuilt ReAct agent with AsyncPostgresSaver.

`environment.py` installs it on demand in its own virtualenv (`.bench/peer-venv`, git-ignored); the script
`langgraph_turn.py` runs there, in a subprocess, and never imports Django. LangGraph is not a dependency of
the product: it is in `requirements.txt` beside this file, not in `requirements/`.
"""
