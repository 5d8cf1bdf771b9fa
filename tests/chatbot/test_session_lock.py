"""The session lock's two Redis steps: take it (or queue the message for the turn holding it), and release it
(learning whether a message was queued meanwhile). Each is one script, so a message queued as a turn ends is
never missed: either the release sees it, or the message's own turn takes the lock."""

from asgiref.sync import async_to_sync

from chatbot.agent import memory
from plumbing.redis import get_redis


def _lock():
    """A lock object (its own client is the asyncio one; these steps name only its key)."""

    async def make():
        return memory.session_lock(1, 2)

    return async_to_sync(make)()


async def _take(lock, entry: str = "") -> tuple[bool, str | None]:
    return await memory.take_session(lock, 1, 2, entry)


def test_a_free_lock_is_taken_with_the_active_context():
    memory.ActiveContext(1, 2, task_type="book_tour").save()
    lock = _lock()

    taken, context = async_to_sync(_take)(lock)

    assert taken and memory.ActiveContext.from_json(1, 2, context).task_type == "book_tour"
    assert get_redis().get(memory.lock_key(1, 2)) == lock.local.token.decode()


def test_a_message_for_a_running_turn_is_queued_and_its_release_says_so():
    running = _lock()
    assert memory.take_session_now(running, 1, 2)[0]
    entry = memory.queue_entry(7, "and the fees?")

    taken, context = memory.take_session_now(_lock(), 1, 2, entry)

    assert (taken, context) == (False, None)
    assert get_redis().lrange(memory.queue_key(1, 2), 0, -1) == [entry]
    active = memory.ActiveContext(1, 2, task_type="faq")
    assert memory.save_and_release(active, running) == (True, None)  # go round once more for the queued message
    assert get_redis().get(memory.lock_key(1, 2)) is None
    assert memory.ActiveContext.load(1, 2).task_type == "faq"
    assert [entry["message_id"] for entry in memory.drain_queue(1, 2)] == [7]


def test_a_release_with_nothing_queued_says_so_and_leaves_a_lock_it_no_longer_holds():
    lock = _lock()
    memory.take_session_now(lock, 1, 2)
    assert memory.save_and_release(memory.ActiveContext(1, 2), lock) == (False, None)

    other = _lock()
    memory.take_session_now(other, 1, 2)
    lock.local.token = b"expired-token"  # this turn's lock expired and another turn took it
    memory.save_and_release(memory.ActiveContext(1, 2), lock)
    assert get_redis().get(memory.lock_key(1, 2)) == other.local.token.decode()


def test_asking_without_a_message_queues_nothing():
    memory.take_session_now(_lock(), 1, 2)

    assert memory.take_session_now(_lock(), 1, 2) == (False, None)
    assert get_redis().exists(memory.queue_key(1, 2), memory.flag_key(1, 2)) == 0


def test_the_release_reads_the_sorted_set_it_is_given_in_the_same_step():
    """A web reply's other-process sockets are read with the release, after the reply was stored."""
    get_redis().zadd("asgi:group:chat_1_v", {"specific.abc!x": 100, "specific.def!y": 10})
    lock = _lock()
    memory.take_session_now(lock, 1, 2)

    assert memory.save_and_release(memory.ActiveContext(1, 2), lock, ("asgi:group:chat_1_v", 50)) == (
        False, ["specific.abc!x"])
