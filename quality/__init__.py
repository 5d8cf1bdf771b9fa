"""Quality tooling: the bench (speed and load) and the evaluation suite (conversations graded on the database)."""
