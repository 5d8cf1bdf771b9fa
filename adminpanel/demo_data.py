"""The demo schools, their FAQ knowledge and example families: data in adminpanel/demo/*.yaml.

One file per school (`school`: the School's fields; `holidays`, `staff_day`, `faqs`, `families`, `callbacks`)
and every_school.yaml (the FAQ entries of every school). `manage.py seed_demo` loads them; the evaluation
suite builds its schools from a school's fields and FAQ. FAQ entries name their related topics by key; the
seed turns the keys into the related entries' questions. Each call returns a fresh copy, free to change.
"""

import copy
from functools import cache
from pathlib import Path

import yaml

DEMO = Path(__file__).with_name("demo")
SCHOOL_SLUGS = ("tampines", "riverside")  # the demo schools, in the order they are seeded
DESK_TOURS_PER_DAY = 2  # example tours on every open day of the desk's default week


@cache
def _load(name: str) -> dict:
    return yaml.safe_load((DEMO / f"{name}.yaml").read_text(encoding="utf-8"))


def school(slug: str) -> dict:
    """A demo school's file: its fields, holidays, staff day, FAQ entries, families and callbacks."""
    return copy.deepcopy(_load(slug))


def schools() -> list[dict]:
    """Every demo school, as `school()` gives it."""
    return [school(slug) for slug in SCHOOL_SLUGS]


def global_faqs() -> list[dict]:
    """The FAQ entries every school answers (they belong to no school)."""
    return copy.deepcopy(_load("every_school")["faqs"])
