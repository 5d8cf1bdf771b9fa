"""Rows of Django models in hand-written SQL: INSERT and UPDATE of instances, rows read back as instances.

For the statements a hot path runs many times (`chatbot.hotpath`, a new web visitor's contact): the ORM spends
0.3 to 3 ms of Python building and compiling each query; these about 0.1 ms. The SQL is portable (PostgreSQL,
and SQLite 3.35+ for RETURNING), table and column names come from the models (`_meta`) and values go through
the fields' own preparation and the backend's converters, so the models stay the schema. No signals are sent.
"""

import datetime as dt
from collections.abc import Iterable, Sequence
from functools import cache

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import Model


def hot_cursor():
    """A cursor for the hot path's statements: prepared once per pooled connection where the backend offers it
    (`plumbing.postgresql`), Django's own elsewhere."""
    prepared = getattr(connection, "prepared_cursor", None)
    return prepared() if prepared else connection.cursor()


def database():
    """The default database's wrapper itself: `django.db.connection` is a proxy that looks it up again on each
    attribute read, dozens of times per statement built here."""
    return connections[DEFAULT_DB_ALIAS]


@cache
def quote(name: str) -> str:
    return connection.ops.quote_name(name)


@cache
def table(model: type[Model]) -> str:
    return quote(model._meta.db_table)


def _read_fields(model: type[Model], only: tuple[str, ...]) -> list:
    return [field for field in model._meta.concrete_fields if not only or field.attname in only]


@cache
def columns(model: type[Model], alias: str, only: tuple[str, ...] = ()) -> str:
    """The model's concrete columns (those named in `only`, if given), qualified by `alias`, in
    `_meta.concrete_fields` order (what `instances` reads back)."""
    return ", ".join(f"{alias}.{quote(field.column)}" for field in _read_fields(model, only))


@cache
def _reader(model: type[Model], only: tuple[str, ...] = ()) -> tuple[list[str], list[tuple[int, list, object]]]:
    """The attribute names `from_db` takes, and (position, converters, column) of the columns needing conversion."""
    fields = _read_fields(model, only)
    converters = []
    for position, field in enumerate(fields):
        convs, col = _field_converters(field)
        if convs:
            converters.append((position, convs, col))
    return [field.attname for field in fields], converters


@cache
def _field_converters(field) -> tuple[list, object]:
    col = field.get_col(field.model._meta.db_table)
    return connection.ops.get_db_converters(col) + field.get_db_converters(connection), col


def from_db(field, value: object) -> object:
    """A column's raw value as the field reads it (what the ORM's converters make of it on this backend)."""
    converters, col = _field_converters(field)
    for converter in converters:
        value = converter(value, col, connection)
    return value


def instances(rows: Iterable[Sequence], *models: type[Model], only: tuple[str, ...] = ()) -> list[list[Model]]:
    """Each row, whose columns are `columns(model, alias, only)` of each model in turn (and then any extra
    values), as instances, then the extra values: [[instance, ..., extra, ...], ...]. Fields left out of
    `only` are deferred, as with `QuerySet.only()`: reading one costs a query."""
    out, db = [], database()
    for row in rows:
        values, start, built = list(row), 0, []
        for model in models:
            attnames, converters = _reader(model, only)
            chunk = values[start:start + len(attnames)]
            for position, convs, col in converters:
                for converter in convs:
                    chunk[position] = converter(chunk[position], col, db)
            built.append(model.from_db(db.alias, attnames, chunk))
            start += len(attnames)
        out.append(built + values[start:])
    return out


@cache
def insert_fields(model: type[Model]) -> list:
    return [field for field in model._meta.concrete_fields if not field.primary_key]


def db_values(obj: Model, fields: Iterable, add: bool) -> list:
    db = database()
    return [field.get_db_prep_save(field.pre_save(obj, add), db) for field in fields]


@cache
def insert_sql(model: type[Model], rows: int, returning: bool) -> str:
    fields = insert_fields(model)
    row = "(" + ", ".join(["%s"] * len(fields)) + ")"
    sql = (f"INSERT INTO {table(model)} ({', '.join(quote(f.column) for f in fields)}) "
           f"VALUES {', '.join([row] * rows)}")
    return sql + f" RETURNING {quote(model._meta.pk.column)}" if returning else sql


def stored(obj: Model, pk: int) -> Model:
    """`obj` as `save()` leaves a new instance: with its primary key, no longer adding, on this database."""
    obj.pk = pk
    obj._state.adding, obj._state.db = False, connection.alias
    return obj


def _new_values(obj: Model) -> list:
    """The INSERT values of a new instance, as `save()` takes them: a foreign key set to an instance stored
    since (a reply saved after its steps were made) is read from it, and an unsaved one is refused."""
    obj._prepare_related_fields_for_save(operation_name="insert")
    return db_values(obj, insert_fields(type(obj)), True)


def insert(obj: Model) -> Model:
    """INSERT one new instance (auto_now_add and defaults applied as `save()` would); sets its primary key."""
    with hot_cursor() as cursor:
        cursor.execute(insert_sql(type(obj), 1, True), _new_values(obj))
        return stored(obj, cursor.fetchone()[0])


def insert_many(objs: Sequence[Model]) -> None:
    """INSERT new instances of one model in one statement (their primary keys are not read back)."""
    if not objs:
        return
    values = [value for obj in objs for value in _new_values(obj)]
    with hot_cursor() as cursor:
        cursor.execute(insert_sql(type(objs[0]), len(objs), False), values)


def update_sql(obj: Model, field_names: Sequence[str]) -> tuple[str, list]:
    """UPDATE of the named fields of a stored instance (like `save(update_fields=...)`, without signals)."""
    sql, fields = _update(type(obj), tuple(field_names))
    return sql, [*db_values(obj, fields, False), obj.pk]


@cache
def _update(model: type[Model], field_names: tuple[str, ...]) -> tuple[str, list]:
    fields = [model._meta.get_field(name) for name in field_names]
    assignments = ", ".join(f"{quote(f.column)} = %s" for f in fields)
    return f"UPDATE {table(model)} SET {assignments} WHERE {quote(model._meta.pk.column)} = %s", fields


def when(value: dt.datetime) -> object:
    return database().ops.adapt_datetimefield_value(value)
