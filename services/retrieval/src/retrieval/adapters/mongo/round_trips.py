from __future__ import annotations

from pymongo import monitoring

from retrieval.observability.round_trips import store_round_trip


class MongoRoundTrips(monitoring.CommandListener):
    """Counts every command the client sends (a ``find``, each ``getMore``) as a round trip
    of the stage under way; PyMongo calls it in the task that sends the command."""

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        store_round_trip()

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass
