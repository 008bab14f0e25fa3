"""The domain: documents, blocks, candidates and queries (model), request parameters, outcomes and
errors (outcomes), refs.
"""
