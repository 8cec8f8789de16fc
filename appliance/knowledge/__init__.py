"""The knowledge base: the operator's documents, and the passages that answer a customer's question.

A part (DESIGN.md): it imports the leaves and its own folder only; the store and the encoder are
handed to it. One module per concept:

* :mod:`.document` and one reader per format (:mod:`.markdown`, :mod:`.html`, :mod:`.pdf`, :mod:`.text`),
* :mod:`.chunk`: chunks that follow the document's structure, sized in the responder's tokens,
* :mod:`.ingest`: add, upload, sync and remove, each document replaced in one transaction,
* :mod:`.index`: the chunks' vectors as one matrix in memory, :mod:`.subject`: what the conversation is about,
* :mod:`.retrieve`: dense and lexical rankings fused by rank, :mod:`.fetch`: seed 003's fetch check,
* :mod:`.base`: :class:`Knowledge`, which the composition root builds and the turn consults.
"""

from appliance.knowledge.base import Knowledge
from appliance.knowledge.ingest import Report
from appliance.knowledge.retrieve import Query, Retrieval

__all__ = ["Knowledge", "Query", "Report", "Retrieval"]
