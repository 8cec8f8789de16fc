"""What a route may ask for: the parts and limits that ``create_app`` keeps on ``app.state``, and the
caller, once it may take the route's action.

A route names what it needs in its signature (``appliance: ApplianceDep``) and declares the action
it takes with ``who: Annotated[Principal, Depends(require("talk"))]``. That dependency refuses a
role without the right (403) and another client's session (404, as for an unknown one: ids are not
confirmed to strangers), the session taken from the path's ``session_id``, before the route reads
anything; each refusal is counted in ``/metrics`` by its reason.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, TypeVar

from fastapi import Depends, Request

from appliance.app import Appliance
from appliance.serve.auth import Access, Action, Principal, principal
from appliance.serve.events import EventHub
from appliance.serve.lanes import Lanes
from appliance.serve.limits import Limits, QueueShare, SessionRate
from appliance.serve.metrics import Metrics, Reading
from appliance.serve.provenance import describe
from appliance.serve.readiness import DatabaseReadiness
from appliance.types import FLOOR_STATES

T = TypeVar("T")


@dataclass(frozen=True)
class Api:
    """What the routes share, built once by ``create_app`` and kept on ``app.state.api``."""

    appliance: Appliance
    metrics: Metrics
    access: Access
    limits: Limits
    rate: SessionRate
    lanes: Lanes
    hung_after_s: float
    readiness: DatabaseReadiness
    hub: EventHub
    bundle: str  # the signed manifest this process was installed from, read at its start

    @classmethod
    def build(cls, appliance: Appliance, *, request_timeout_s: float | None, hung_after_s: float | None) -> Api:
        """From ``settings.server``, with ``request_timeout_s`` and ``hung_after_s`` overriding theirs."""
        cfg = appliance.settings.server
        metrics = Metrics()
        limits = Limits.of(appliance.settings)
        share = QueueShare(cfg.queue_max, cfg.queue_share, cfg.retry_after_s)
        timeout_s = cfg.request_timeout_s if request_timeout_s is None else request_timeout_s
        floor = appliance.settings.floor
        hub = EventHub(
            appliance.store,
            queue_size=floor.listener_queue,
            max_listeners=floor.max_listeners,
            ping_s=floor.ping_s,
            accepting=appliance.queue.alive,
        )
        appliance.store.after_events.append(hub.notify)
        metrics.more += [hub.readings, lambda: [floor_reading(appliance.store.floor_counts())]]
        return cls(
            appliance=appliance,
            metrics=metrics,
            # Access counts a refusal's reason; the error handler counts its status.
            access=Access(lambda reason, status: metrics.refused(reason), appliance.store),
            limits=limits,
            rate=SessionRate(cfg.sessions_per_minute),
            lanes=Lanes(appliance, limits, share, timeout_s),
            hung_after_s=cfg.hung_after_s if hung_after_s is None else hung_after_s,
            readiness=DatabaseReadiness(appliance.store),
            hub=hub,
            bundle=describe(),
        )


def floor_reading(counts: dict[str, int]) -> Reading:
    """The sessions-by-state gauge (every state, zero included)."""
    by = {state: float(counts.get(state, 0)) for state in FLOOR_STATES}
    help_text = "Stored sessions by state (bot, needs_person, with_person, closed)."
    return Reading("appliance_sessions", "gauge", help_text, label="state", by=by)


def api_of(request: Request) -> Api:
    """The :class:`Api` that ``create_app`` kept on the request's app."""
    api: Api = request.app.state.api
    return api


def _part(get: Callable[[Api], T]) -> Callable[[Request], Awaitable[T]]:
    """A dependency that hands a route one part of the :class:`Api` (async: nothing in it blocks)."""

    async def part(request: Request) -> T:
        return get(api_of(request))

    return part


ApiDep = Annotated[Api, Depends(_part(lambda api: api))]
ApplianceDep = Annotated[Appliance, Depends(_part(lambda api: api.appliance))]
MetricsDep = Annotated[Metrics, Depends(_part(lambda api: api.metrics))]
AccessDep = Annotated[Access, Depends(_part(lambda api: api.access))]
LimitsDep = Annotated[Limits, Depends(_part(lambda api: api.limits))]
RateDep = Annotated[SessionRate, Depends(_part(lambda api: api.rate))]
LanesDep = Annotated[Lanes, Depends(_part(lambda api: api.lanes))]
HubDep = Annotated[EventHub, Depends(_part(lambda api: api.hub))]


def require(action: Action) -> Callable[[Request], Principal]:
    """A dependency: the caller, once it may take ``action`` (on the path's session, when it names one).

    Not async: for a kiosk or integration token, the session's owner may be read from the store.
    """

    def allowed(request: Request) -> Principal:
        who = principal(request)
        api_of(request).access.check(who, action, request.path_params.get("session_id"))
        return who

    return allowed
