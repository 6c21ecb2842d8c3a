"""Every DocumentLedger honours one contract: the in-memory double and MongoDB."""

from __future__ import annotations

import uuid

import pytest
from pymongo import AsyncMongoClient

from retrieval.adapters.mongo.document_ledger import MongoDocumentLedger
from retrieval_testkit import InMemoryDocumentLedger
from retrieval_testkit.contracts.document_ledger import DocumentLedgerContract


class TestInMemoryDocumentLedger(DocumentLedgerContract):
    @pytest.fixture
    def make_ledger(self):
        return lambda lease_s: InMemoryDocumentLedger(lease_s=lease_s)


class TestMongoDocumentLedger(DocumentLedgerContract):
    @pytest.fixture
    async def make_ledger(self, mongo_client: AsyncMongoClient):
        collection = mongo_client[f"test_{uuid.uuid4().hex[:12]}"]["documents"]
        await MongoDocumentLedger(collection).ensure_indexes()
        return lambda lease_s: MongoDocumentLedger(collection, lease_s=lease_s)
