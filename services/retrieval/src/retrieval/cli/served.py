"""A command's requests sent to the ``retrieval serve`` that holds the data directory.

``ServedApplication`` stands in for ``Application`` in the commands that can be forwarded:
it has the services they call (``retrieval``, ``answers``, ``stats``, ``validation``,
``library``, ``local_files``), each made over gRPC. Local files go through the same use case
as in process (``retrieval.service.ingestion.local_files``), written by the server
(``retrieval.grpc.remote_intake``): one bad file fails alone, as it does in process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from retrieval.adapters.files.sync_scope import sync_scope
from retrieval.grpc.remote_intake import RemoteIntake
from retrieval.service.ingestion.local_files import LocalFiles

if TYPE_CHECKING:
    from retrieval.grpc.client import RetrievalClient
    from retrieval.settings import Settings


class ServedCalls:
    """The retrieval, answer, stats and validation calls, one attribute each."""

    def __init__(self, client: RetrievalClient) -> None:
        self.retrieve_query = client.retrieve_query
        self.answer = client.answer
        self.stream = client.answer_stream
        self.collect = client.stats
        self.validate = client.validate


class ServedApplication:
    """What the forwarded commands call, answered by the server ``client`` reaches."""

    def __init__(self, client: RetrievalClient, settings: Settings) -> None:
        calls = ServedCalls(client)
        self.settings = settings
        self.retrieval = self.answers = self.stats = self.validation = calls
        self.library = client
        self.local_files = LocalFiles(RemoteIntake(client), sync_scope)
