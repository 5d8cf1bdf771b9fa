"""Hand-written SQL on PostgreSQL: names read from the models, values prepared by the fields, rows back as instances.

For the few statements where it measurably pays (`chatbot.hotpath`: the claim, the store, the steps and the
answer), each a single statement that the ORM would build, compile and send as several. Everything else, and
every statement on SQLite, goes through the ORM, which stays the reference.

A module that writes such a statement names its tables and columns through `Names`, resolved from the models
once, when it is imported (`Model._meta`): a renamed column is followed, and a field the statement names that no
longer exists stops the import with `FieldDoesNotExist`. Fields the database fills itself (`db_default`) are
left out of an INSERT, as `save()` leaves them. `tests/test_hot_statements.py` plans every statement against the
migrated schema, so one a model change left behind fails there, by name.
"""

from collections.abc import Iterable, Sequence
from functools import cache

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import NOT_PROVIDED, Field, Model
from django.db.models.expressions import DatabaseDefault


def quote(name: str) -> str:
    """An identifier as PostgreSQL reads it."""
    return '"' + name.replace('"', '""') + '"'


class Names:
    """A model's table and columns as SQL text, looked up when first read (at the importing module's import):
    `Names(Message).table`, `Names(Message).processed_at` (the column of that field, quoted)."""

    def __init__(self, model: type[Model]) -> None:
        self.model, self.table = model, quote(model._meta.db_table)

    def __getattr__(self, name: str) -> str:
        if name.startswith("_"):
            raise AttributeError(name)
        column = quote(self.model._meta.get_field(name).column)  # FieldDoesNotExist names the model and field
        setattr(self, name, column)
        return column


def hot_cursor():
    """A cursor for the hand-written statements: prepared once per pooled connection (`plumbing.postgresql`)."""
    return database().prepared_cursor()


def database():
    """The default database's wrapper itself: `django.db.connection` is a proxy that looks it up again on each
    attribute read, dozens of times per statement built here."""
    return connections[DEFAULT_DB_ALIAS]


def _read_fields(model: type[Model], only: tuple[str, ...]) -> list[Field]:
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
        col = field.get_col(model._meta.db_table)
        convs = connection.ops.get_db_converters(col) + field.get_db_converters(connection)
        if convs:
            converters.append((position, convs, col))
    return [field.attname for field in fields], converters


def instances(rows: Iterable[Sequence], *models: type[Model], only: tuple[str, ...] = ()) -> list[list]:
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
def insert_fields(model: type[Model]) -> list[Field]:
    """The columns an INSERT of a new instance writes: all but the primary key and those the database fills."""
    return [field for field in model._meta.concrete_fields
            if not field.primary_key and field.db_default is NOT_PROVIDED]


def db_values(obj: Model, fields: Iterable[Field], add: bool) -> list:
    """The fields' values of `obj` as `save()` sends them (auto_now_add and defaults applied)."""
    db = database()
    return [field.get_db_prep_save(field.pre_save(obj, add), db) for field in fields]


def new_values(obj: Model) -> list:
    """The INSERT values of a new instance (`insert_fields`), as `save()` takes them: a foreign key set to an
    instance stored since is read from it, and an unsaved one is refused."""
    obj._prepare_related_fields_for_save(operation_name="insert")
    return db_values(obj, insert_fields(type(obj)), True)


@cache
def insert_sql(model: type[Model]) -> str:
    """INSERT of one new instance (parameters: `new_values`)."""
    fields = insert_fields(model)
    return (f"INSERT INTO {quote(model._meta.db_table)} ({', '.join(quote(f.column) for f in fields)}) "
            f"VALUES ({', '.join(['%s'] * len(fields))})")


def stored(obj: Model, pk: int) -> Model:
    """`obj` as `save()` leaves a new instance: with its primary key, no longer adding, on this database. A field
    the database filled (`db_default`) is left deferred: read when first used."""
    obj.pk = pk
    obj._state.adding, obj._state.db = False, DEFAULT_DB_ALIAS
    for name, value in list(vars(obj).items()):
        if isinstance(value, DatabaseDefault):
            del obj.__dict__[name]
    return obj


@cache
def update_sql_text(model: type[Model], field_names: tuple[str, ...]) -> str:
    """UPDATE of the named fields of a stored instance (like `save(update_fields=...)`, without signals); parameters:
    `update_values`."""
    assignments = ", ".join(f"{quote(model._meta.get_field(name).column)} = %s" for name in field_names)
    return f"UPDATE {quote(model._meta.db_table)} SET {assignments} WHERE {quote(model._meta.pk.column)} = %s"


def update_values(obj: Model, field_names: tuple[str, ...]) -> list:
    return [*db_values(obj, [obj._meta.get_field(name) for name in field_names], False), obj.pk]
