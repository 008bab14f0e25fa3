"""A search, in request order: query understanding and the search service (search), the provider
chain (providers).
"""
