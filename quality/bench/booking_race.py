"""booking_race: many parents booking the same few seats at the same instant.

100 threads (each its own contact, its own database connection, opened first) wait for a start signal, then call
`bookings.services.book_tour` at once on a handful of slots of 3 seats each, about 20 attempts per slot.
Every seat must be sold and none twice: seats sold / seats available must be exactly 1.0, the booking rows
must match the seat counters, and every refusal must be a clean `slot_full`. On SQLite the writes are
serialised by the database lock, so it runs but proves little about row-level concurrency; it says so.
"""

import threading
import time
from collections import Counter

from django.db import OperationalError, close_old_connections, connection
from django.test import override_settings

from quality.bench.common import (
    Context,
    Result,
    Row,
    bench_school,
    database_pool,
    is_postgres,
    make_contact,
    next_open_day,
)

NAME = "booking_race"
TITLE = "Concurrent bookings on the last seats"
ATTEMPTS_PER_SLOT = 20
CONNECT_TIMEOUT = 30.0
START_TIMEOUT = 60.0


def _connect() -> bool:
    """Open this thread's database connection, retrying while the server is at max_connections."""
    deadline = time.monotonic() + CONNECT_TIMEOUT
    while True:
        try:
            connection.ensure_connection()
            return True
        except OperationalError:
            connection.close()
            if time.monotonic() > deadline:
                return False
            time.sleep(0.2)


def _slots(school, count: int) -> list[tuple]:
    import datetime as dt

    times = [dt.time.fromisoformat(t) for t in school.tour_start_times]
    slots, day_index = [], 0
    while len(slots) < count:
        day = next_open_day(school, 3, day_index)
        slots += [(day, t) for t in times][: count - len(slots)]
        day_index += 1
    return slots


def run(ctx: Context) -> Result:
    from bookings.models import TourBooking, TourSlot
    from bookings.services import BookingError, book_tour

    options = ctx.options
    threads = options.race_threads
    slot_count = max(1, threads // ATTEMPTS_PER_SLOT)
    result = Result(NAME, TITLE)
    on_postgres = is_postgres()
    # Every thread holds its own connection through the race, as separate processes would: the pool (if
    # any) must not make threads queue for connections instead of racing for seats.
    pool = connection.settings_dict["OPTIONS"].get("pool")
    race_pool = {**pool, "max_size": threads + pool.get("max_size", 1)} if pool else None  # + this thread's
    with override_settings(PIPEDRIVE_API_TOKEN=""), database_pool(race_pool), \
            bench_school(ctx, NAME, seats_per_tour=options.seats_per_slot) as school:
        contacts = [make_contact(school, n) for n in range(threads)]
        slots = _slots(school, slot_count)
        ctx.progress.say(f"booking_race: {threads} threads on {slot_count} slot(s) of {options.seats_per_slot} "
                         f"seats ({connection.vendor})")
        go = threading.Event()
        ready = Counter()
        ready_lock = threading.Lock()
        outcomes: list[str] = ["" for _ in range(threads)]
        durations: list[float] = [0.0] * threads

        def attempt(index: int) -> None:
            day, start = slots[index % slot_count]
            try:
                connected = _connect()
                with ready_lock:
                    ready["connected" if connected else "not_connected"] += 1
                if not connected:
                    outcomes[index] = "no_connection"
                    return
                if not go.wait(START_TIMEOUT):
                    outcomes[index] = "error: never started"
                    return
                began = time.perf_counter()
                try:
                    book_tour(school=school, contact=contacts[index], parent_name=f"Bench Parent {index}",
                              parent_phone=f"+6591{index:06d}", child_name=f"Child {index}", child_age=5,
                              local_date=day, local_time=start)
                    outcomes[index] = "booked"
                except BookingError as exc:
                    outcomes[index] = exc.code
                durations[index] = time.perf_counter() - began
            except Exception as exc:  # any other failure is an error of the race
                outcomes[index] = f"error: {type(exc).__name__}: {exc}"[:200]
            finally:
                close_old_connections()
                connection.close()

        connection.close()  # this thread's connection goes back to the pool for a racer: 100 threads fit 100
        workers = [threading.Thread(target=attempt, args=(i,), name=f"bench-race-{i}") for i in range(threads)]
        wall_start = time.perf_counter()
        for worker in workers:
            worker.start()
        # Everyone holds an open connection before the start: the race is the bookings, not the logins.
        deadline = time.monotonic() + CONNECT_TIMEOUT + 5
        while sum(ready.values()) < threads and time.monotonic() < deadline:
            time.sleep(0.02)
        go.set()
        for worker in workers:
            worker.join(START_TIMEOUT + 60)
        wall = time.perf_counter() - wall_start
        stuck = sum(1 for worker in workers if worker.is_alive())
        race_seconds = max(durations) if any(durations) else 0.0
        slot_rows = list(TourSlot.objects.filter(school=school))
        available = slot_count * options.seats_per_slot
        seats_taken = sum(slot.seats_taken for slot in slot_rows)
        booked_rows = TourBooking.objects.filter(school=school, status=TourBooking.Status.SCHEDULED).count()
    kinds = Counter(outcome if not outcome.startswith("error") else "error" for outcome in outcomes)
    errors = [o for o in outcomes if o.startswith("error") or o not in ("booked", "slot_full", "no_connection")]
    not_connected = kinds.get("no_connection", 0)
    sold = kinds.get("booked", 0)
    sold_ratio = round(sold / available, 3) if available else None
    consistent = sold == seats_taken == booked_rows
    result.figures = {
        "database": connection.vendor,
        "threads": threads,
        "threads_racing": threads - not_connected,
        "threads_without_connection": not_connected,
        "slots": slot_count,
        "seats_available": available,
        "seats_sold": sold,
        "sold_ratio": sold_ratio,
        "seat_counters": seats_taken,
        "booking_rows": booked_rows,
        "refused_slot_full": kinds.get("slot_full", 0),
        "errors": len(errors) + stuck,
        "error_samples": errors[:3],
        "race_seconds": round(race_seconds, 3),
        "wall_seconds": round(wall, 3),
        "consistent": consistent,
    }
    note = "" if on_postgres else "SQLite: writes serialised by the database lock, not a row-level race"
    result.rows = [
        Row("seats sold / available", f"{sold} / {available}", "1.00 expected",
            f"{sold_ratio:.2f}x" if sold_ratio is not None else "n/a",
            f"{threads - not_connected} threads racing, {slot_count} slot(s) x {options.seats_per_slot} seats"
            + (f" ({not_connected} got no database connection)" if not_connected else "")
            + (f"; {note}" if note else "")),
        Row("time taken", f"{race_seconds * 1000:.0f} ms", "", "", f"slowest attempt after the start; wall "
                                                                  f"{wall:.2f} s incl. connecting"),
        Row("refused / errors", f"{kinds.get('slot_full', 0)} slot_full / {len(errors) + stuck} errors", "0 errors",
            "", f"counters {seats_taken}, booking rows {booked_rows}"),
    ]
    if sold_ratio != 1.0 or not consistent or errors or stuck:
        result.status = "failed"
        result.reason = (f"sold {sold}/{available}, counters {seats_taken}, rows {booked_rows}, "
                         f"{len(errors) + stuck} error(s)")
    elif not on_postgres:
        result.reason = note
    return result
