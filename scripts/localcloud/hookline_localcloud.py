"""The local cloud hookline's tests and benchmarks run on.

ministack's ASGI app (what scripts/local-up.sh serves with hypercorn), with
one rule of AWS Lambda that ministack stores and ignores made real: an event
source mapping's batching window, MaximumBatchingWindowInSeconds. On AWS a
mapping with a window W gathers records until it has a full batch (BatchSize)
or its first record has waited W, then invokes the function. ministack's
poller invokes as soon as it finds one record. Here, before each pass of the
poller, a mapping with a window whose source holds fewer records than its
batch, the first of them waiting less than W, is left out of the pass, and
the poller is woken when the window ends. A mapping without a window (every
hookline mapping by default) is untouched.

The payload limit (6 MB a batch) also ends a window on AWS; hookline's
batches stay far below it, so it is not modelled. docs/local-cloud.md lists
this beside the other differences.
"""

import threading
import time

from ministack.app import app  # noqa: F401  (the ASGI app hypercorn serves)
from ministack.core.arn import ArnParseError, parse_arn
from ministack.services import dynamodb as _ddb
from ministack.services import lambda_svc as _lambda
from ministack.services import sqs as _sqs

# A stream's records carry their creation time in whole seconds only, too
# coarse for a window of one: a mapping's first sight of the records at its
# position is kept instead, by mapping and position. The poller is woken by
# every stream write, so that is within a pass of their creation.
_first_seen: dict[str, tuple[int, float]] = {}
# The time a timer will wake the poller for a mapping.
_wakes: dict[str, float] = {}
_lock = threading.Lock()


def _waiting(esm: dict, now: float):
    """(records waiting in the mapping's source, when the first began to
    wait), or None when the source is not one whose window is modelled."""
    try:
        spec = parse_arn(esm.get("EventSourceArn", ""))
    except ArnParseError:
        return None
    if spec.service == "sqs":
        name = _lambda._sqs_queue_name_from_arn_spec(spec)
        if not name:
            return None
        with _sqs._queues_lock:
            q = _sqs._queues.get(_sqs._queue_url(name))
            if not q or q.get("is_fifo"):
                return None
            # A message not yet received may lack visible_at (ministack
            # fills it in at the first receive, from sent_at).
            shown = (m.get("visible_at", m.get("sent_at", now)) for m in q["messages"])
            since = [t for t in shown if t <= now]
        return len(since), min(since, default=now)
    if spec.service == "dynamodb":
        table = _lambda._dynamodb_stream_table_from_arn_spec(spec)
        pos = _lambda._dynamodb_stream_positions.get(esm["UUID"])
        if table is None or pos is None:
            return None  # the poller places a new mapping first
        n = len(_ddb.stream_records_since(table[0], pos, int(esm.get("BatchSize") or 100)))
        with _lock:
            seen_pos, seen_at = _first_seen.get(esm["UUID"], (None, now))
            if seen_pos != pos or n == 0:
                seen_at = now
            _first_seen[esm["UUID"]] = (pos, seen_at)
        return n, seen_at
    return None


def _wake_at(esm_id: str, due: float) -> None:
    with _lock:
        pending = _wakes.get(esm_id, 0)
        if time.time() < pending <= due:
            return
        _wakes[esm_id] = due
    t = threading.Timer(max(0.0, due - time.time()), _lambda._esm_wake.set)
    t.daemon = True
    t.start()


def _held(esm: dict, now: float) -> bool:
    """Whether the mapping waits out its window this pass."""
    window = float(esm.get("MaximumBatchingWindowInSeconds") or 0)
    if window <= 0 or not esm.get("Enabled", True):
        return False
    seen = _waiting(esm, now)
    if seen is None:
        return False
    n, first = seen
    if n == 0:
        # Nothing to take: left out, so that a record arriving between
        # this look and the poller's own is not taken alone at once. Its
        # arrival wakes the poller for another look.
        return True
    if n >= int(esm.get("BatchSize") or 10):
        return False
    due = first + window
    if now >= due:
        return False
    _wake_at(esm["UUID"], due)
    return True


_iter_all_esms = _lambda._iter_all_esms


def _iter_ready_esms():
    """ministack's _iter_all_esms without the mappings inside their window."""
    for acct_id, region, esm in _iter_all_esms():
        now = time.time()
        account = _lambda._request_account_id.set(acct_id)
        region_token = _lambda._request_region.set(region)
        try:
            held = _held(esm, now)
        finally:
            _lambda._request_account_id.reset(account)
            _lambda._request_region.reset(region_token)
        if not held:
            yield acct_id, region, esm


_lambda._iter_all_esms = _iter_ready_esms
